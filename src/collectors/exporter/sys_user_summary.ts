/**
 * exporter.sys.user_summary — mysqld_exporter's `sys.user_summary` scraper (off by default
 * upstream; newer than mysqld_exporter 0.14).
 *
 * Every user of the sys schema's `x$user_summary` view (raw numbers; `background` for the
 * server's own threads): statements, statement latency, table scans, file I/O, connections,
 * hosts and memory, labelled user. Latencies are picoseconds in the view, served in seconds.
 * The sys schema ships with MySQL 5.7.7 and MariaDB 10.6 and later.
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, family, upstreamHelp } from './common.js';
import { num, push, seconds, text } from './perf_schema_common.js';

export const DOMAIN = 'exporter.sys.user_summary';

const PREFIX = 'mysql_sys_';

/** Column → family and whether it is a picosecond timer. */
const COLUMNS = [
  [
    'statements',
    family(`${PREFIX}statements_total`, ' The total number of statements for the user', 'counter'),
    false,
  ],
  [
    'statement_latency',
    family(`${PREFIX}statement_latency`, 'The total wait time of timed statements for the user', 'counter'),
    true,
  ],
  [
    'table_scans',
    family(`${PREFIX}table_scans_total`, 'The total number of table scans for the user', 'counter'),
    false,
  ],
  [
    'file_ios',
    family(`${PREFIX}file_ios_total`, 'The total number of file I/O events for the user', 'counter'),
    false,
  ],
  [
    'file_io_latency',
    family(
      `${PREFIX}file_io_seconds_total`,
      'The total wait time of timed file I/O events for the user',
      'counter',
    ),
    true,
  ],
  [
    'current_connections',
    family(`${PREFIX}current_connections`, 'The current number of connections for the user', 'gauge'),
    false,
  ],
  [
    'total_connections',
    family(`${PREFIX}connections_total`, 'The total number of connections for the user', 'counter'),
    false,
  ],
  [
    'unique_hosts',
    family(
      `${PREFIX}unique_hosts_total`,
      'The number of distinct hosts from which connections for the user have originated',
      'counter',
    ),
    false,
  ],
  [
    'current_memory',
    family(`${PREFIX}current_memory_bytes`, 'The current amount of allocated memory for the user', 'gauge'),
    false,
  ],
  [
    'total_memory_allocated',
    family(
      `${PREFIX}memory_allocated_bytes_total`,
      'The total amount of allocated memory for the user',
      'counter',
    ),
    false,
  ],
] as const;

export const QUERY = `SELECT user, ${COLUMNS.map(([c]) => c).join(', ')} FROM sys.x$user_summary`;

/** User rows → samples (pure; exported for recorded result sets). */
export function userSummarySamples(rows: readonly Row[], out: MetricValue[]): void {
  for (const row of rows) {
    const labels = { user: text(row.user) };
    for (const [column, fam, timer] of COLUMNS)
      push(out, fam, timer ? seconds(row[column]) : num(row[column]), labels);
  }
}

export class UserSummaryCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    userSummarySamples(await this.db.query(QUERY, [], { signal }), out);
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: ['sys.x$user_summary'],
    families: COLUMNS.map(([, fam]) => fam),
    labels: ['user'],
  }),
  create: (ctx) => new UserSummaryCollector(ctx),
};
