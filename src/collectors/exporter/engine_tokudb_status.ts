/**
 * exporter.engine_tokudb_status — mysqld_exporter's `engine_tokudb_status` scraper: every
 * row of `SHOW ENGINE TOKUDB STATUS` (Type, Name, Status) whose Status reads as a number
 * (parseStatus) becomes `mysql_engine_tokudb_<name>`, untyped, no labels.
 *
 * The name is lowercased, `>`, `,`, `:`, `(` and `)` are dropped, space and `-` become `_`,
 * `+` and `/` become `and` (`cachetable: size current` → `cachetable_size_current`). A name
 * that is still no valid metric name after that is skipped, and so is a second row giving
 * a name already served.
 *
 * TokuDB exists only in Percona Server (up to 8.0) and MariaDB before 10.6; elsewhere the
 * statement fails (unknown storage engine) and so does the scrape.
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, family, parseStatus, sample, upstreamHelp, type Family } from './common.js';

export const DOMAIN = 'exporter.engine_tokudb_status';

export const SQL = 'SHOW ENGINE TOKUDB STATUS';

const PREFIX = 'mysql_engine_tokudb_';
const HELP = 'Generic metric from SHOW ENGINE TOKUDB STATUS.';
const VALID_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/** A TokuDB status name as a metric name suffix. */
export function sanitizeTokudbName(name: string): string {
  return name
    .toLowerCase()
    .replace(/[>,:()]/g, '')
    .replace(/[ -]/g, '_')
    .replace(/[+/]/g, 'and');
}

const families = new Map<string, Family>();

function tokudbFamily(name: string): Family {
  let f = families.get(name);
  if (f === undefined) {
    f = family(name, HELP, 'untyped');
    families.set(name, f);
  }
  return f;
}

/** SHOW ENGINE TOKUDB STATUS rows (Type, Name, Status by position) → samples. */
export function tokudbSamples(rows: readonly Row[], out: MetricValue[]): void {
  const seen = new Set<string>();
  for (const row of rows) {
    const [, key, status] = Object.values(row);
    const value = parseStatus(status);
    if (value === undefined) continue;
    const name = PREFIX + sanitizeTokudbName(key ?? '');
    if (!VALID_NAME.test(name) || seen.has(name)) continue;
    seen.add(name);
    out.push(sample(tokudbFamily(name), value));
  }
}

export class EngineTokudbStatusCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    tokudbSamples(await this.db.query(SQL, [], { signal }), out);
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, { sources: [SQL], families: [] }),
  create: (ctx) => new EngineTokudbStatusCollector(ctx),
};
