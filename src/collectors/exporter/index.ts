/**
 * The `exporter.*` domains: one per mysqld_exporter scraper that sonde's own domains do
 * not already serve (global_status, global_variables and info_schema.innodb_metrics are
 * status.global, var.global and innodb). Adding one is one file here plus one line below.
 */
import type { CollectorRegistration } from '../../core/collector.js';
import { registration as autoIncrementColumns } from './auto_increment_columns.js';
import { registration as binlogSize } from './binlog_size.js';
import { registration as engineInnodbStatus } from './engine_innodb_status.js';
import { registration as engineTokudbStatus } from './engine_tokudb_status.js';
import { registration as heartbeat } from './heartbeat.js';
import { registration as infoSchemaClientstats } from './info_schema_clientstats.js';
import { registration as infoSchemaInnodbCmp } from './info_schema_innodb_cmp.js';
import { registration as infoSchemaInnodbCmpmem } from './info_schema_innodb_cmpmem.js';
import { registration as infoSchemaInnodbTablespaces } from './info_schema_innodb_tablespaces.js';
import { registration as infoSchemaProcesslist } from './info_schema_processlist.js';
import { registration as infoSchemaQueryResponseTime } from './info_schema_query_response_time.js';
import { registration as infoSchemaReplicaHost } from './info_schema_replica_host.js';
import { registration as infoSchemaRocksdbPerfContext } from './info_schema_rocksdb_perf_context.js';
import { registration as infoSchemaSchemastats } from './info_schema_schemastats.js';
import { registration as infoSchemaTables } from './info_schema_tables.js';
import { registration as infoSchemaTablestats } from './info_schema_tablestats.js';
import { registration as infoSchemaUserstats } from './info_schema_userstats.js';
import { registration as mysqlUser } from './mysql_user.js';
import { registration as perfSchemaEventsstatements } from './perf_schema_eventsstatements.js';
import { registration as perfSchemaEventsstatementssum } from './perf_schema_eventsstatementssum.js';
import { registration as perfSchemaEventswaits } from './perf_schema_eventswaits.js';
import { registration as perfSchemaFileEvents } from './perf_schema_file_events.js';
import { registration as perfSchemaFileInstances } from './perf_schema_file_instances.js';
import { registration as perfSchemaIndexiowaits } from './perf_schema_indexiowaits.js';
import { registration as perfSchemaMemoryEvents } from './perf_schema_memory_events.js';
import { registration as perfSchemaReplicationApplierStatusByWorker } from './perf_schema_replication_applier_status_by_worker.js';
import { registration as perfSchemaReplicationGroupMemberStats } from './perf_schema_replication_group_member_stats.js';
import { registration as perfSchemaReplicationGroupMembers } from './perf_schema_replication_group_members.js';
import { registration as perfSchemaTableiowaits } from './perf_schema_tableiowaits.js';
import { registration as perfSchemaTablelocks } from './perf_schema_tablelocks.js';
import { registration as slaveHosts } from './slave_hosts.js';
import { registration as slaveStatus } from './slave_status.js';
import { registration as sysUserSummary } from './sys_user_summary.js';

export const EXPORTER_BUILTIN: readonly CollectorRegistration[] = [
  autoIncrementColumns,
  binlogSize,
  engineInnodbStatus,
  engineTokudbStatus,
  heartbeat,
  infoSchemaClientstats,
  infoSchemaInnodbCmp,
  infoSchemaInnodbCmpmem,
  infoSchemaInnodbTablespaces,
  infoSchemaProcesslist,
  infoSchemaQueryResponseTime,
  infoSchemaReplicaHost,
  infoSchemaRocksdbPerfContext,
  infoSchemaSchemastats,
  infoSchemaTables,
  infoSchemaTablestats,
  infoSchemaUserstats,
  mysqlUser,
  perfSchemaEventsstatements,
  perfSchemaEventsstatementssum,
  perfSchemaEventswaits,
  perfSchemaFileEvents,
  perfSchemaFileInstances,
  perfSchemaIndexiowaits,
  perfSchemaMemoryEvents,
  perfSchemaReplicationApplierStatusByWorker,
  perfSchemaReplicationGroupMemberStats,
  perfSchemaReplicationGroupMembers,
  perfSchemaTableiowaits,
  perfSchemaTablelocks,
  slaveHosts,
  slaveStatus,
  sysUserSummary,
];
