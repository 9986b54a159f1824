/**
 * Every metric the monitoring/ rules and dashboards read is served by sonde's exporter: a
 * throwaway MariaDB primary and replica (heartbeat written on the primary, performance_schema
 * on), the built agent with one legacy exporter per server and a plan with the collectors
 * the rules and dashboards need, one scrape of each. The metrics of mysqld_exporter's mixin
 * (its alerts, recording rules and overview dashboard) are checked the same way.
 *
 * Names that cannot be served yet or not by this server are listed below with the reason;
 * a listed name that is served fails the test, so the lists only ever shrink.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startReplicationPair, type ReplicationPair } from '../helpers/replication.js';
import { startAgent, type Agent } from '../helpers/agent.js';
import { freePort } from '../helpers/mariadb.js';
import { HEARTBEAT_TABLE_DDL } from '../../src/heartbeat/table.js';
import { allRules, dashboard, dashboardExprs, dashboardFiles, metricNames } from './files.js';

const PASSWORD = 'Monitoring-live-pw-7';

/** Served where the server has them, but not by this MariaDB 10.11 primary/replica pair. */
const NOT_ON_THIS_SERVER: ReadonlyMap<string, string> = new Map([
  ['mysql_global_status_wsrep_local_state', 'Galera nodes only'],
  ['mysql_global_status_wsrep_local_recv_queue', 'Galera nodes only'],
  ['mysql_repl_lag_backlog', 'repl.lag writer pfs only (MySQL 8.0+)'],
  ['mysql_repl_lag_worker_usage_ratio', 'repl.lag writer pfs only (MySQL 8.0+)'],
  ['mysql_global_status_innodb_row_ops_total', 'MySQL only: MariaDB 10.11 has no Innodb_rows_* status'],
  [
    'mysql_global_variables_innodb_additional_mem_pool_size',
    'variable removed in MySQL 5.7 and MariaDB 10.2',
  ],
  ['mysql_global_variables_tokudb_cache_size', 'TokuDB servers only'],
]);

/**
 * The metrics mysqld_exporter's mixin reads: its alerts (general, galera), its recording
 * rules and its overview dashboard.
 */
const MIXIN_METRICS: readonly string[] = [
  'mysql_up',
  'mysql_global_status_wsrep_ready',
  'mysql_global_status_wsrep_local_state',
  'mysql_global_variables_wsrep_desync',
  'mysql_global_status_wsrep_local_recv_queue',
  'mysql_slave_status_slave_io_running',
  'mysql_slave_status_slave_sql_running',
  'mysql_slave_status_seconds_behind_master',
  'mysql_slave_status_sql_delay',
  'mysql_heartbeat_now_timestamp_seconds',
  'mysql_heartbeat_stored_timestamp_seconds',
  'mysql_global_status_innodb_log_waits',
  'mysql_global_status_commands_total',
  'mysql_global_status_uptime',
  'mysql_global_status_queries',
  'mysql_global_variables_innodb_buffer_pool_size',
  'mysql_global_status_threads_connected',
  'mysql_global_status_max_used_connections',
  'mysql_global_variables_max_connections',
  'mysql_global_status_threads_running',
  'mysql_global_status_questions',
  'mysql_global_variables_thread_cache_size',
  'mysql_global_status_threads_cached',
  'mysql_global_status_threads_created',
  'mysql_global_status_created_tmp_tables',
  'mysql_global_status_created_tmp_disk_tables',
  'mysql_global_status_created_tmp_files',
  'mysql_global_status_select_full_join',
  'mysql_global_status_select_full_range_join',
  'mysql_global_status_select_range',
  'mysql_global_status_select_range_check',
  'mysql_global_status_select_scan',
  'mysql_global_status_sort_rows',
  'mysql_global_status_sort_range',
  'mysql_global_status_sort_merge_passes',
  'mysql_global_status_sort_scan',
  'mysql_global_status_slow_queries',
  'mysql_global_status_aborted_connects',
  'mysql_global_status_aborted_clients',
  'mysql_global_status_table_locks_immediate',
  'mysql_global_status_table_locks_waited',
  'mysql_global_status_bytes_received',
  'mysql_global_status_bytes_sent',
  'mysql_global_status_innodb_page_size',
  'mysql_global_status_buffer_pool_pages',
  'mysql_global_variables_innodb_log_buffer_size',
  'mysql_global_variables_innodb_additional_mem_pool_size',
  'mysql_global_status_innodb_mem_dictionary',
  'mysql_global_variables_key_buffer_size',
  'mysql_global_variables_query_cache_size',
  'mysql_global_status_innodb_mem_adaptive_hash',
  'mysql_global_variables_tokudb_cache_size',
  'mysql_global_status_handlers_total',
  'mysql_info_schema_processlist_threads',
  'mysql_global_status_qcache_free_memory',
  'mysql_global_status_qcache_hits',
  'mysql_global_status_qcache_inserts',
  'mysql_global_status_qcache_not_cached',
  'mysql_global_status_qcache_lowmem_prunes',
  'mysql_global_status_qcache_queries_in_cache',
  'mysql_global_status_opened_files',
  'mysql_global_status_open_files',
  'mysql_global_variables_open_files_limit',
  'mysql_global_status_innodb_num_open_files',
  'mysql_global_status_opened_tables',
  'mysql_global_status_table_open_cache_hits',
  'mysql_global_status_table_open_cache_misses',
  'mysql_global_status_table_open_cache_overflows',
  'mysql_global_status_open_tables',
  'mysql_global_variables_table_open_cache',
  'mysql_global_status_open_table_definitions',
  'mysql_global_variables_table_definition_cache',
  'mysql_global_status_opened_table_definitions',
];

/** The exporter plan: what the rules and dashboards need. */
const PLAN = `prom:
  freq: 10s
  collect:
    status.global:
      options:
        all: "yes"
    var.global:
      options:
        all: "yes"
    innodb:
      options:
        all: enabled
    exporter.slave_status: {}
    exporter.heartbeat: {}
    exporter.info_schema.processlist: {}
    repl:
      metrics: [running]
    repl.lag:
      options:
        writer: blip
    size.database: {}
    size.table: {}
    size.binlog: {}
    trx:
      metrics: [oldest]
    autoinc: {}
    stmt.current:
      metrics: [slowest, slow]
    innodb.buffer-pool:
      options:
        all: "yes"
    wait.io.table:
      options:
        all: "yes"
        truncate-table: "no"
`;

/** The names the rules and dashboards read (recording rule outputs left out). */
function usedNames(): Map<string, string> {
  const used = new Map<string, string>();
  for (const r of allRules())
    for (const n of metricNames(r.expr)) if (!n.includes(':')) used.set(n, `rule ${r.alert ?? r.record}`);
  for (const f of dashboardFiles())
    for (const e of dashboardExprs(dashboard(f)))
      for (const n of metricNames(e)) if (!n.includes(':')) used.set(n, `dashboard ${f}`);
  return used;
}

/** Family names of an exposition (its `# TYPE` lines). */
function families(body: string): Set<string> {
  return new Set([...body.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1] ?? ''));
}

function value(body: string, name: string): number | undefined {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(body);
  return m ? Number(m[1]) : undefined;
}

let pair: ReplicationPair;
let agent: Agent;
const ports = { primary: 0, replica: 0 };
const bodies = { primary: '', replica: '' };

async function scrape(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  assert.equal(res.status, 200);
  return res.text();
}

describe('every metric the monitoring rules and dashboards read, in a live scrape of sonde', () => {
  before(async () => {
    pair = await startReplicationPair({
      args: ['--performance-schema=ON', '--performance-schema-consumer-events-statements-current=ON'],
    });
    const { primary } = pair;
    await primary.query('CREATE DATABASE blip');
    await primary.query(HEARTBEAT_TABLE_DDL.replace('heartbeat', 'blip.heartbeat'));
    // pt-heartbeat's table, read by mysqld_exporter's heartbeat scraper
    await primary.query('CREATE DATABASE heartbeat');
    await primary.query(
      'CREATE TABLE heartbeat.heartbeat (ts varchar(26) NOT NULL, server_id int unsigned NOT NULL PRIMARY KEY)',
    );
    await primary.query(
      "INSERT INTO heartbeat.heartbeat VALUES (DATE_FORMAT(NOW(6), '%Y-%m-%dT%H:%i:%s.%f'), 1)",
    );
    await primary.query('CREATE DATABASE app');
    await primary.query('CREATE TABLE app.users (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(40))');
    await primary.query("INSERT INTO app.users (name) VALUES ('a'), ('b'), ('c')");
    await primary.createUser('sonde', PASSWORD, [
      'SELECT, PROCESS, SLAVE MONITOR, BINLOG MONITOR ON *.*',
      'INSERT, UPDATE, DELETE ON blip.*',
    ]);
    await pair.waitCaughtUp();
    ports.primary = await freePort();
    ports.replica = await freePort();
    const monitor = (id: string, port: number, exporterPort: number): string => `  - id: ${id}
    hostname: 127.0.0.1:${port}
    exporter:
      mode: legacy
      plan: prom.yaml
      flags:
        web.listen-address: 127.0.0.1:${exporterPort}
`;
    agent = await startAgent(
      `api:
  bind: {{API}}
mysql:
  username: sonde
  password: ${PASSWORD}
heartbeat:
  freq: 1s
plans:
  files: [prom.yaml]
monitors:
${monitor('primary', pair.primary.port, ports.primary)}${monitor('replica', pair.replica.port, ports.replica)}`,
      { files: { 'prom.yaml': PLAN } },
    );
    // The replica's lag appears once the first heartbeat has replicated.
    bodies.replica = await agent.until(
      'the replica exporter serving sonde heartbeat lag',
      async () => {
        const b = await scrape(ports.replica).catch(() => '');
        return value(b, 'mysql_repl_lag_current_seconds') !== undefined ? b : undefined;
      },
      30_000,
    );
    bodies.primary = await agent.until('the primary exporter up', async () => {
      const b = await scrape(ports.primary).catch(() => '');
      return value(b, 'mysql_up') === 1 && families(b).has('mysql_size_binlog_bytes') ? b : undefined;
    });
  });

  after(async () => {
    await agent?.stop();
    await pair?.stop();
  });

  it('serves every name the rules and dashboards use, except the listed ones', () => {
    const served = new Set([...families(bodies.primary), ...families(bodies.replica)]);
    const missing = [...usedNames()]
      .filter(([n]) => !served.has(n) && !NOT_ON_THIS_SERVER.has(n))
      .map(([n, where]) => `${n} (${where})`);
    assert.deepEqual(missing, []);
  });

  it('serves every name of the mysqld_exporter mixin, except the listed ones', () => {
    const served = new Set([...families(bodies.primary), ...families(bodies.replica)]);
    const missing = MIXIN_METRICS.filter((n) => !served.has(n) && !NOT_ON_THIS_SERVER.has(n));
    assert.deepEqual(missing, []);
  });

  it('lists no name that is served (empty the lists as scrapers land)', () => {
    const served = new Set([...families(bodies.primary), ...families(bodies.replica)]);
    for (const n of [...NOT_ON_THIS_SERVER.keys()])
      assert.ok(!served.has(n), `${n} is served now: remove it from NOT_ON_THIS_SERVER`);
    const used = usedNames();
    for (const n of [...NOT_ON_THIS_SERVER.keys()])
      assert.ok(used.has(n) || MIXIN_METRICS.includes(n), `${n} is listed but nothing reads it`);
  });

  it("reports replication from sonde's own domains: running, heartbeat lag in seconds", () => {
    assert.equal(value(bodies.replica, 'mysql_repl_running'), 1);
    assert.equal(value(bodies.replica, 'mysql_slave_status_slave_io_running'), 1);
    const lag = value(bodies.replica, 'mysql_repl_lag_current_seconds');
    assert.ok(lag !== undefined && lag >= 0, `lag ${lag}`); // a measured lag, not the -1 marker
    assert.match(bodies.replica, /^mysql_size_table_bytes\{db="app",tbl="users"\} \d+$/m);
    assert.match(bodies.primary, /^# TYPE mysql_innodb_buffer_pool_number_pages_read_total counter$/m);
  });
});
