/**
 * exporter.perf_schema.replication_group_member_stats — mysqld_exporter's
 * `perf_schema.replication_group_member_stats` scraper: this member's Group Replication
 * counters, from `SELECT * FROM performance_schema.replication_group_member_stats WHERE
 * MEMBER_ID=@@server_uuid`.
 *
 * Eight columns are served, no labels (MySQL 5.7 has the first four, 8.0 all eight); the
 * others are ignored. A served column whose value is no number fails the scrape (the
 * samples before it are kept). MariaDB has no Group Replication and no such table.
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, family, parseGoFloat, sample, upstreamHelp, type Family } from './common.js';

export const DOMAIN = 'exporter.perf_schema.replication_group_member_stats';

export const SQL =
  'SELECT * FROM performance_schema.replication_group_member_stats WHERE MEMBER_ID=@@server_uuid';

const P = 'mysql_perf_schema_';

/** Column (exact spelling) → family. */
export const STATS_COLUMNS: ReadonlyMap<string, Family> = new Map([
  [
    'COUNT_TRANSACTIONS_IN_QUEUE',
    family(
      `${P}transactions_in_queue`,
      'The number of transactions in the queue pending conflict detection checks.',
      'gauge',
    ),
  ],
  [
    'COUNT_TRANSACTIONS_CHECKED',
    family(
      `${P}transactions_checked_total`,
      'The number of transactions that have been checked for conflicts.',
      'counter',
    ),
  ],
  [
    'COUNT_CONFLICTS_DETECTED',
    family(
      `${P}conflicts_detected_total`,
      'The number of transactions that have not passed the conflict detection check.',
      'counter',
    ),
  ],
  [
    'COUNT_TRANSACTIONS_ROWS_VALIDATING',
    family(
      `${P}transactions_rows_validating_total`,
      'Number of transaction rows which can be used for certification, but have not been garbage collected.',
      'counter',
    ),
  ],
  [
    'COUNT_TRANSACTIONS_REMOTE_IN_APPLIER_QUEUE',
    family(
      `${P}transactions_remote_in_applier_queue`,
      'The number of transactions that this member has received from the replication group which are waiting to be applied.',
      'gauge',
    ),
  ],
  [
    'COUNT_TRANSACTIONS_REMOTE_APPLIED',
    family(
      `${P}transactions_remote_applied_total`,
      'Number of transactions this member has received from the group and applied.',
      'counter',
    ),
  ],
  [
    'COUNT_TRANSACTIONS_LOCAL_PROPOSED',
    family(
      `${P}transactions_local_proposed_total`,
      'Number of transactions which originated on this member and were sent to the group.',
      'counter',
    ),
  ],
  [
    'COUNT_TRANSACTIONS_LOCAL_ROLLBACK',
    family(
      `${P}transactions_local_rollback_total`,
      'Number of transactions which originated on this member and were rolled back by the group.',
      'counter',
    ),
  ],
]);

/** replication_group_member_stats rows → samples of the known columns, in column order. */
export function memberStatsSamples(rows: readonly Row[], out: MetricValue[]): void {
  for (const row of rows) {
    for (const [column, text] of Object.entries(row)) {
      const f = STATS_COLUMNS.get(column);
      if (f === undefined) continue;
      const value = parseGoFloat(text ?? '');
      if (value === undefined)
        throw new Error(`replication_group_member_stats: ${column} ${JSON.stringify(text)} is no number`);
      out.push(sample(f, value));
    }
  }
}

export class ReplicationGroupMemberStatsCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    if (this.source === 'none') return; // MySQL before 5.7: the scraper does not run there
    memberStatsSamples(await this.db.query(SQL, [], { signal }), out);
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: ['performance_schema.replication_group_member_stats (MySQL)'],
    families: [...STATS_COLUMNS.values()],
  }),
  create: (ctx) => new ReplicationGroupMemberStatsCollector(ctx),
};
