/**
 * The source table's rows for the `exporter.*` domains (sources.ts spreads them into
 * SOURCE_TABLE). mysqld_exporter gates almost none of its scrapers by flavor or version: it
 * runs the query and reports the failure. These rows do the same (a source on both flavors)
 * except where the server cannot have the source at all.
 */
import type { SourceRule } from './source-rule.js';

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
  'exporter.info_schema.clientstats': both('client_statistics'),
  'exporter.info_schema.innodb_cmp': both('innodb_cmp'),
  'exporter.info_schema.innodb_cmpmem': both('innodb_cmpmem'),
  'exporter.info_schema.innodb_tablespaces': [
    { flavor: 'mysql', min: '5.7.0', unknown: true, source: 'innodb_sys_tablespaces' },
    {
      flavor: 'mysql',
      unsupported:
        'no FILE_SIZE or ALLOCATED_SIZE before MySQL 5.7 (mysqld_exporter skips the scraper there)',
    },
    // MariaDB 10.5 dropped the SPACE_TYPE column.
    { flavor: 'mariadb', min: '10.5.0', unknown: true, source: 'innodb_sys_tablespaces:no_space_type' },
    { flavor: 'mariadb', source: 'innodb_sys_tablespaces' },
  ],
  'exporter.info_schema.processlist': both('processlist'),
  'exporter.info_schema.query_response_time': both('query_response_time'),
  'exporter.info_schema.rocksdb_perf_context': both('rocksdb_perf_context'),
  'exporter.info_schema.schemastats': both('table_statistics'),
  'exporter.info_schema.tables': both('tables'),
  'exporter.info_schema.tablestats': both('table_statistics'),
  'exporter.info_schema.userstats': both('user_statistics'),
  'exporter.perf_schema.eventsstatements': [
    // SUM_CPU_TIME and the QUANTILE_* columns, as mysqld_exporter reads them from 8.0.28.
    { flavor: 'mysql', min: '8.0.28', source: 'events_statements_summary_by_digest:quantiles' },
    { flavor: 'mysql', source: 'events_statements_summary_by_digest' },
    { flavor: 'mariadb', source: 'events_statements_summary_by_digest' },
  ],
  'exporter.perf_schema.eventsstatementssum': both('events_statements_summary_by_digest'),
  'exporter.perf_schema.eventswaits': both('events_waits_summary_global_by_event_name'),
  'exporter.perf_schema.file_events': both('file_summary_by_event_name'),
  'exporter.perf_schema.file_instances': both('file_summary_by_instance'),
  'exporter.perf_schema.indexiowaits': both('table_io_waits_summary_by_index_usage'),
  'exporter.perf_schema.memory_events': [
    { flavor: 'mysql', min: '5.7.0', unknown: true, source: 'memory_summary_global_by_event_name' },
    {
      flavor: 'mysql',
      unsupported:
        'performance_schema.memory_summary_global_by_event_name exists only in MySQL 5.7 and later',
    },
    { flavor: 'mariadb', min: '10.5.0', unknown: true, source: 'memory_summary_global_by_event_name' },
    {
      flavor: 'mariadb',
      unsupported:
        'performance_schema.memory_summary_global_by_event_name exists only in MariaDB 10.5 and later',
    },
  ],
  'exporter.perf_schema.tableiowaits': both('table_io_waits_summary_by_table'),
  'exporter.perf_schema.tablelocks': both('table_lock_waits_summary_by_table'),
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
  'exporter.sys.user_summary': both('sys.x$user_summary'),
};
