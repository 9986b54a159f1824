/**
 * exporter.engine_innodb_status — mysqld_exporter's `engine_innodb_status` scraper: three
 * gauges read from the text of `SHOW ENGINE INNODB STATUS` (the Status column of its first
 * row):
 * - `N queries inside InnoDB, M queries in queue` → mysql_engine_innodb_queries_inside_innodb
 *   and mysql_engine_innodb_queries_in_queue (MySQL; MariaDB 10.6+ no longer prints the line);
 * - `N read views open inside InnoDB` → mysql_engine_innodb_read_views_open_inside_innodb.
 * A line missing from the text gives no sample. Each line is read once: should the text hold
 * it twice, the first wins (two samples of one series would break the exposition).
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, family, sample, upstreamHelp } from './common.js';

export const DOMAIN = 'exporter.engine_innodb_status';

export const SQL = 'SHOW ENGINE INNODB STATUS';

const P = 'mysql_engine_innodb_';
const INSIDE = family(`${P}queries_inside_innodb`, 'Queries inside InnoDB.', 'gauge');
const QUEUE = family(`${P}queries_in_queue`, 'Queries in queue.', 'gauge');
const VIEWS = family(`${P}read_views_open_inside_innodb`, 'Read views open inside InnoDB.', 'gauge');

const QUERIES_RE = /(\d+) queries inside InnoDB, (\d+) queries in queue/;
const VIEWS_RE = /(\d+) read views open inside InnoDB/;

/** The status text of the first row → samples (pure; exported for recorded result sets). */
export function innodbStatusSamples(rows: readonly Row[], out: MetricValue[]): void {
  const first = rows[0];
  const text = first === undefined ? '' : (Object.values(first)[2] ?? '');
  let queries = false;
  let views = false;
  for (const line of text.split('\n')) {
    const q = QUERIES_RE.exec(line);
    if (q !== null) {
      if (!queries) out.push(sample(INSIDE, Number(q[1])), sample(QUEUE, Number(q[2])));
      queries = true;
      continue;
    }
    const v = VIEWS_RE.exec(line);
    if (v !== null && !views) {
      out.push(sample(VIEWS, Number(v[1])));
      views = true;
    }
  }
}

export class EngineInnodbStatusCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    innodbStatusSamples(await this.db.query(SQL, [], { signal }), out);
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, { sources: [SQL], families: [INSIDE, QUEUE, VIEWS] }),
  create: (ctx) => new EngineInnodbStatusCollector(ctx),
};
