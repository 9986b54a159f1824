/**
 * The `exporter.*` domains: one per mysqld_exporter scraper that sonde's own domains do
 * not already serve (global_status, global_variables and info_schema.innodb_metrics are
 * status.global, var.global and innodb). Adding one is one file here plus one line below.
 */
import type { CollectorRegistration } from '../../core/collector.js';
import { registration as infoSchemaClientStats } from './info_schema_clientstats.js';
import { registration as infoSchemaInnodbCmp } from './info_schema_innodb_cmp.js';
import { registration as infoSchemaInnodbCmpMem } from './info_schema_innodb_cmpmem.js';
import { registration as infoSchemaInnodbTablespaces } from './info_schema_innodb_tablespaces.js';
import { registration as infoSchemaProcesslist } from './info_schema_processlist.js';
import { registration as infoSchemaQueryResponseTime } from './info_schema_query_response_time.js';
import { registration as infoSchemaRocksdbPerfContext } from './info_schema_rocksdb_perf_context.js';
import { registration as infoSchemaSchemaStats } from './info_schema_schemastats.js';
import { registration as infoSchemaTables } from './info_schema_tables.js';
import { registration as infoSchemaTableStats } from './info_schema_tablestats.js';
import { registration as infoSchemaUserStats } from './info_schema_userstats.js';
import { registration as perfSchemaEventsStatements } from './perf_schema_eventsstatements.js';
import { registration as perfSchemaEventsStatementsSum } from './perf_schema_eventsstatementssum.js';
import { registration as perfSchemaEventsWaits } from './perf_schema_eventswaits.js';
import { registration as perfSchemaFileEvents } from './perf_schema_file_events.js';
import { registration as perfSchemaFileInstances } from './perf_schema_file_instances.js';
import { registration as perfSchemaIndexIOWaits } from './perf_schema_indexiowaits.js';
import { registration as perfSchemaMemoryEvents } from './perf_schema_memory_events.js';
import { registration as perfSchemaTableIOWaits } from './perf_schema_tableiowaits.js';
import { registration as perfSchemaTableLocks } from './perf_schema_tablelocks.js';
import { registration as slaveStatus } from './slave_status.js';
import { registration as sysUserSummary } from './sys_user_summary.js';

export const EXPORTER_BUILTIN: readonly CollectorRegistration[] = [
  infoSchemaClientStats,
  infoSchemaInnodbCmp,
  infoSchemaInnodbCmpMem,
  infoSchemaInnodbTablespaces,
  infoSchemaProcesslist,
  infoSchemaQueryResponseTime,
  infoSchemaRocksdbPerfContext,
  infoSchemaSchemaStats,
  infoSchemaTables,
  infoSchemaTableStats,
  infoSchemaUserStats,
  perfSchemaEventsStatements,
  perfSchemaEventsStatementsSum,
  perfSchemaEventsWaits,
  perfSchemaFileEvents,
  perfSchemaFileInstances,
  perfSchemaIndexIOWaits,
  perfSchemaMemoryEvents,
  perfSchemaTableIOWaits,
  perfSchemaTableLocks,
  slaveStatus,
  sysUserSummary,
];
