/**
 * The source table's rows for the `exporter.*` domains (sources.ts spreads them into
 * SOURCE_TABLE). mysqld_exporter gates almost none of its scrapers by flavor or version: it
 * runs the query and reports the failure. These rows do the same (a source on both flavors)
 * except where the server cannot have the source at all.
 */
import type { SourceRule } from '../sources.js';

const both = (source: string): SourceRule[] => [
  { flavor: 'mysql', source },
  { flavor: 'mariadb', source },
];

/** Skipped where MySQL is older than `min` (source `none`: nothing served), absent on MariaDB. */
const mysqlOnly = (min: string, source: string, mariadb: string): SourceRule[] => [
  { flavor: 'mysql', min, unknown: true, source },
  { flavor: 'mysql', source: 'none' },
  { flavor: 'mariadb', unsupported: mariadb },
];

const NO_GROUP_REPLICATION = 'MariaDB has no Group Replication (MySQL 5.7+ only)';

export const EXPORTER_SOURCES: Readonly<Record<string, readonly SourceRule[]>> = {
  'exporter.auto_increment.columns': both('columns'),
  'exporter.binlog_size': both('show-binary-logs'),
  'exporter.engine_innodb_status': both('show-engine-innodb-status'),
  'exporter.engine_tokudb_status': [
    { flavor: 'mysql', source: 'show-engine-tokudb-status' },
    { flavor: 'mariadb', min: '10.6.0', unsupported: 'MariaDB 10.6 and later have no TokuDB engine' },
    { flavor: 'mariadb', source: 'show-engine-tokudb-status' },
  ],
  'exporter.heartbeat': both('heartbeat-table'),
  'exporter.info_schema.replica_host': both('replica_host_status'),
  'exporter.mysql.user': both('mysql.user'),
  'exporter.perf_schema.replication_applier_status_by_worker': mysqlOnly(
    '8.0.0',
    'replication_applier_status_by_worker',
    "MariaDB's replication_applier_status_by_worker has no transaction timestamp columns (MySQL 8.0+ only)",
  ),
  'exporter.perf_schema.replication_group_member_stats': mysqlOnly(
    '5.7.0',
    'replication_group_member_stats',
    NO_GROUP_REPLICATION,
  ),
  'exporter.perf_schema.replication_group_members': mysqlOnly(
    '5.7.0',
    'replication_group_members',
    NO_GROUP_REPLICATION,
  ),
  'exporter.slave_hosts': both('show-slave-hosts'),
  'exporter.slave_status': both('show-slave-status'),
};
