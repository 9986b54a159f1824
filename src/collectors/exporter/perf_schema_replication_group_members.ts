/**
 * exporter.perf_schema.replication_group_members — mysqld_exporter's
 * `perf_schema.replication_group_members` scraper: one info series (value 1) per member of
 * the MySQL Group Replication group, from
 * `SELECT * FROM performance_schema.replication_group_members`.
 *
 * Every column is a label, named by the column in lowercase (channel_name, member_id,
 * member_host, member_port, member_state, and member_role, member_version,
 * member_communication_stack where the server has them); NULL is the empty value. MariaDB has
 * no Group Replication and no such table.
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, family, sample, upstreamHelp } from './common.js';

export const DOMAIN = 'exporter.perf_schema.replication_group_members';

export const SQL = 'SELECT * FROM performance_schema.replication_group_members';

const INFO = family(
  'mysql_perf_schema_replication_group_member_info',
  'Information about the replication group member: channel_name, member_id, member_host, member_port, member_state. (member_role and member_version where available)',
  'gauge',
);

/** replication_group_members rows → one info sample each (pure; for recorded result sets). */
export function groupMemberSamples(rows: readonly Row[], out: MetricValue[]): void {
  for (const row of rows) {
    const labels: Record<string, string> = {};
    for (const [column, value] of Object.entries(row)) labels[column.toLowerCase()] = value ?? '';
    out.push(sample(INFO, 1, labels));
  }
}

export class ReplicationGroupMembersCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    if (this.source === 'none') return; // MySQL before 5.7: the scraper does not run there
    groupMemberSamples(await this.db.query(SQL, [], { signal }), out);
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: ['performance_schema.replication_group_members (MySQL)'],
    families: [INFO],
    labels: [
      'channel_name',
      'member_id',
      'member_host',
      'member_port',
      'member_state',
      'member_role',
      'member_version',
    ],
  }),
  create: (ctx) => new ReplicationGroupMembersCollector(ctx),
};
