/**
 * The built-in collectors as the agent registers them: every domain with its static help
 * (help.json, written from the implementations by scripts/gen-docs.mjs and checked against
 * them by registry.test.ts), and a loader that imports the domain's implementation the first
 * time a plan collects it. `--print-domains`, `/registered`, plan validation and the docs
 * read the help alone; a monitor with the default plan imports 8 of the 55 domains.
 *
 * Adding a domain: one folder under collectors/, one line in implementations.ts, one line
 * below, then `node scripts/gen-docs.mjs`.
 */
import type { CollectorHelp, CollectorRegistration } from '../core/collector.js';
import HELP from './help.json' with { type: 'json' };
import { CollectorRegistry } from './registry.js';

/** The default plan's eight domains, one module (see default-plan-domains.ts). */
const defaultPlanDomains = () => import('./default-plan-domains.js');

/** Domain → its implementation's registration, imported on first use. */
export const LOADERS: Readonly<Record<string, () => Promise<CollectorRegistration>>> = {
  'status.global': async () => (await defaultPlanDomains()).statusGlobal,
  'var.global': async () => (await defaultPlanDomains()).varGlobal,
  innodb: async () => (await defaultPlanDomains()).innodb,
  'innodb.buffer-pool': async () => (await import('./innodb.buffer-pool/index.js')).registration,
  repl: async () => (await defaultPlanDomains()).repl,
  'repl.lag': async () => (await defaultPlanDomains()).replLag,
  trx: async () => (await import('./trx/index.js')).registration,
  tls: async () => (await import('./tls/index.js')).registration,
  'stmt.current': async () => (await import('./stmt.current/index.js')).registration,
  'stmt.schema': async () => (await import('./stmt.schema/index.js')).registration,
  'query.top': async () => (await import('./query.top/index.js')).registration,
  'query.sample': async () => (await import('./query.sample/index.js')).registration,
  'query.plan': async () => (await import('./query.plan/index.js')).registration,
  'lock.wait': async () => (await import('./lock.wait/index.js')).registration,
  'size.binlog': async () => (await defaultPlanDomains()).sizeBinlog,
  'size.database': async () => (await defaultPlanDomains()).sizeDatabase,
  'size.table': async () => (await defaultPlanDomains()).sizeTable,
  autoinc: async () => (await import('./autoinc/index.js')).registration,
  'query.response-time': async () => (await import('./query.response-time/index.js')).registration,
  'percona.response-time': async () => (await import('./percona.response-time/index.js')).registration,
  'wait.io.table': async () => (await import('./wait.io.table/index.js')).registration,
  'error.global': async () => (await import('./error.global/index.js')).registration,
  'error.account': async () => (await import('./error.account/index.js')).registration,
  'error.host': async () => (await import('./error.host/index.js')).registration,
  'error.user': async () => (await import('./error.user/index.js')).registration,
  'error.thread': async () => (await import('./error.thread/index.js')).registration,
  'aws.rds': async () => (await import('./aws.rds/index.js')).registration,
  'exporter.auto_increment.columns': async () =>
    (await import('./exporter/auto_increment_columns.js')).registration,
  'exporter.binlog_size': async () => (await import('./exporter/binlog_size.js')).registration,
  'exporter.engine_innodb_status': async () =>
    (await import('./exporter/engine_innodb_status.js')).registration,
  'exporter.engine_tokudb_status': async () =>
    (await import('./exporter/engine_tokudb_status.js')).registration,
  'exporter.heartbeat': async () => (await import('./exporter/heartbeat.js')).registration,
  'exporter.info_schema.clientstats': async () =>
    (await import('./exporter/info_schema_clientstats.js')).registration,
  'exporter.info_schema.innodb_cmp': async () =>
    (await import('./exporter/info_schema_innodb_cmp.js')).registration,
  'exporter.info_schema.innodb_cmpmem': async () =>
    (await import('./exporter/info_schema_innodb_cmpmem.js')).registration,
  'exporter.info_schema.innodb_tablespaces': async () =>
    (await import('./exporter/info_schema_innodb_tablespaces.js')).registration,
  'exporter.info_schema.processlist': async () =>
    (await import('./exporter/info_schema_processlist.js')).registration,
  'exporter.info_schema.query_response_time': async () =>
    (await import('./exporter/info_schema_query_response_time.js')).registration,
  'exporter.info_schema.replica_host': async () =>
    (await import('./exporter/info_schema_replica_host.js')).registration,
  'exporter.info_schema.rocksdb_perf_context': async () =>
    (await import('./exporter/info_schema_rocksdb_perf_context.js')).registration,
  'exporter.info_schema.schemastats': async () =>
    (await import('./exporter/info_schema_schemastats.js')).registration,
  'exporter.info_schema.tables': async () => (await import('./exporter/info_schema_tables.js')).registration,
  'exporter.info_schema.tablestats': async () =>
    (await import('./exporter/info_schema_tablestats.js')).registration,
  'exporter.info_schema.userstats': async () =>
    (await import('./exporter/info_schema_userstats.js')).registration,
  'exporter.mysql.user': async () => (await import('./exporter/mysql_user.js')).registration,
  'exporter.perf_schema.eventsstatements': async () =>
    (await import('./exporter/perf_schema_eventsstatements.js')).registration,
  'exporter.perf_schema.eventsstatementssum': async () =>
    (await import('./exporter/perf_schema_eventsstatementssum.js')).registration,
  'exporter.perf_schema.eventswaits': async () =>
    (await import('./exporter/perf_schema_eventswaits.js')).registration,
  'exporter.perf_schema.file_events': async () =>
    (await import('./exporter/perf_schema_file_events.js')).registration,
  'exporter.perf_schema.file_instances': async () =>
    (await import('./exporter/perf_schema_file_instances.js')).registration,
  'exporter.perf_schema.indexiowaits': async () =>
    (await import('./exporter/perf_schema_indexiowaits.js')).registration,
  'exporter.perf_schema.memory_events': async () =>
    (await import('./exporter/perf_schema_memory_events.js')).registration,
  'exporter.perf_schema.replication_applier_status_by_worker': async () =>
    (await import('./exporter/perf_schema_replication_applier_status_by_worker.js')).registration,
  'exporter.perf_schema.replication_group_member_stats': async () =>
    (await import('./exporter/perf_schema_replication_group_member_stats.js')).registration,
  'exporter.perf_schema.replication_group_members': async () =>
    (await import('./exporter/perf_schema_replication_group_members.js')).registration,
  'exporter.perf_schema.tableiowaits': async () =>
    (await import('./exporter/perf_schema_tableiowaits.js')).registration,
  'exporter.perf_schema.tablelocks': async () =>
    (await import('./exporter/perf_schema_tablelocks.js')).registration,
  'exporter.slave_hosts': async () => (await import('./exporter/slave_hosts.js')).registration,
  'exporter.slave_status': async () => (await import('./exporter/slave_status.js')).registration,
  'exporter.sys.user_summary': async () => (await import('./exporter/sys_user_summary.js')).registration,
};

/** Every built-in domain's static help, in registration order. */
export const BUILTIN_HELP = HELP as readonly CollectorHelp[];

/** A registry holding every built-in collector; none of them is imported yet. */
export function builtinCollectors(): CollectorRegistry {
  const registry = new CollectorRegistry();
  for (const help of BUILTIN_HELP) {
    const load = LOADERS[help.domain];
    if (load === undefined) throw new Error(`collector for domain ${help.domain} has no loader`);
    registry.register({ help, load });
  }
  return registry;
}
