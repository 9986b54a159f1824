/**
 * tls — whether the server accepts TLS connections.
 *
 * Two sources, picked from the source table by flavor and version:
 * - `have_ssl`: `SELECT @@have_ssl` → `YES` 1, `DISABLED`/`NO` 0 (MySQL up to 8.3, MariaDB);
 * - `tls_channel_status`: the `Enabled` property of the `mysql_main` channel in
 *   performance_schema (MySQL 8.0.21+; the only way on MySQL 8.4+, which removed have_ssl).
 * Where the table lists both (MySQL 8.0.21–8.3, unknown versions) have_ssl is read first;
 * if the server says the variable is unknown (1193) the collector switches to the P_S table
 * for good. Blip stops at the 1193 and fails every interval on 8.4.
 */
import type {
  CollectError,
  CollectResult,
  Collector,
  CollectorContext,
  CollectorHelp,
  CollectorRegistration,
} from '../../core/collector.js';
import type { Db, Row, ServerInfo } from '../../core/db.js';
import { errnoOf } from '../../core/errors.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import type { Plan } from '../../core/plan.js';
import { ER_NO_SUCH_TABLE, ER_UNKNOWN_SYSTEM_VARIABLE } from '../../db/errnos.js';
import { parseValue } from '../../db/values.js';
import { field, levelPlans, queryError } from '../kit/common.js';
import { sourceFor, sourceList, unsupportedError } from '../kit/sources.js';

export const DOMAIN = 'tls';

export type TlsSource = 'have_ssl' | 'tls_channel_status';

export const HAVE_SSL_SQL = 'SELECT @@have_ssl';
export const TLS_CHANNEL_SQL =
  "SELECT VALUE FROM performance_schema.tls_channel_status WHERE CHANNEL='mysql_main' AND PROPERTY='Enabled'";

export const help: CollectorHelp = {
  domain: DOMAIN,
  description: 'Whether the server has TLS enabled',
  sources: [HAVE_SSL_SQL, `${TLS_CHANNEL_SQL} (MySQL 8.4 and later, or when have_ssl is unknown)`],
  options: [],
  errors: [],
  groups: [],
  meta: [],
  metrics: [
    {
      name: 'enabled',
      type: MetricType.Bool,
      description: '1 when the server accepts TLS connections, 0 when TLS is disabled or unavailable',
    },
  ],
};

/** Check one level's metric list: exactly `enabled`. Throws the Prepare error otherwise. */
export function checkTlsMetrics(metrics: readonly string[]): void {
  if (metrics.length !== 1 || metrics[0]?.toLowerCase() !== 'enabled') {
    throw new Error(`invalid metrics: [${metrics.join(', ')}] (tls collects exactly: enabled)`);
  }
}

/**
 * Pure part of collect(): one source's rows → `enabled`, or undefined when the source has no
 * answer (no `mysql_main` row: performance_schema is off, so TLS state cannot be read).
 */
export function tlsValue(source: TlsSource, rows: readonly Row[]): MetricValue | undefined {
  const row = rows[0];
  let value: number;
  if (source === 'have_ssl') {
    // YES → 1, DISABLED/NO → 0 (parseValue); anything unexpected counts as "not enabled".
    value = row === undefined ? 0 : (parseValue(Object.values(row)[0] ?? null) ?? 0);
  } else {
    if (row === undefined) return undefined;
    value = field(row, 'VALUE') === 'Yes' ? 1 : 0;
  }
  return { name: 'enabled', value, type: MetricType.Bool };
}

export class TlsCollector implements Collector {
  readonly domain = DOMAIN;
  readonly #db: Db;
  #levels = new Set<string>();
  #info: ServerInfo | undefined;
  /** Sources still worth trying, in order; the first is the one in use. */
  #sources: TlsSource[] = [];
  /** Set once the domain is known not to work on this server. */
  #unsupported: CollectError | undefined;

  constructor(ctx: CollectorContext) {
    this.#db = ctx.db;
  }

  async prepare(plan: Plan, signal: AbortSignal): Promise<void> {
    const levels = new Set<string>();
    for (const [level, dp] of levelPlans(plan, DOMAIN)) {
      checkTlsMetrics(dp.metrics);
      levels.add(level);
    }
    this.#levels = levels;
    this.#unsupported = undefined;
    this.#sources = [];
    if (levels.size === 0) return;
    const info = await this.#db.serverInfo({ signal });
    this.#info = info;
    const choice = sourceFor(DOMAIN, info);
    if ('unsupported' in choice) this.#unsupported = unsupportedError(DOMAIN, info, choice.unsupported);
    else this.#sources = sourceList(choice.source) as TlsSource[];
  }

  /** The source collect() reads now (for status and tests). */
  source(): TlsSource | undefined {
    return this.#sources[0];
  }

  async collect(level: string, signal: AbortSignal): Promise<CollectResult> {
    if (!this.#levels.has(level)) return { values: [] };
    for (;;) {
      if (this.#unsupported !== undefined) return { values: [], error: this.#unsupported };
      const source = this.#sources[0];
      const info = this.#info;
      if (source === undefined || info === undefined) return { values: [] };
      let rows: Row[];
      try {
        rows = await this.#db.query(source === 'have_ssl' ? HAVE_SSL_SQL : TLS_CHANNEL_SQL, [], { signal });
      } catch (err) {
        const missing =
          errnoOf(err) === (source === 'have_ssl' ? ER_UNKNOWN_SYSTEM_VARIABLE : ER_NO_SUCH_TABLE);
        if (!missing) return { values: [], error: queryError(err, { what: 'tls.enabled' }) };
        if (this.#sources.length > 1) {
          this.#sources.shift(); // e.g. have_ssl removed (MySQL 8.4+): the next source from now on
          continue;
        }
        if (source === 'have_ssl') return { values: [], error: queryError(err, { what: 'tls.enabled' }) };
        this.#unsupported = unsupportedError(
          DOMAIN,
          info,
          'neither @@have_ssl nor performance_schema.tls_channel_status exists',
        );
        continue;
      }
      const value = tlsValue(source, rows);
      if (value !== undefined) return { values: [value] };
      this.#unsupported = unsupportedError(
        DOMAIN,
        info,
        "performance_schema.tls_channel_status has no 'Enabled' row for channel mysql_main (is performance_schema on?)",
      );
    }
  }
}

export const registration: CollectorRegistration = {
  help,
  create: (ctx) => new TlsCollector(ctx),
};
