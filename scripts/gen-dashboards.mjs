// Writes the Grafana dashboards of monitoring/grafana/ from the panel lists below.
//   node scripts/gen-dashboards.mjs           write the files
//   node scripts/gen-dashboards.mjs --check   exit 1 when a file differs from what would be written
// Every query goes to the `${datasource}` variable (type prometheus) and is limited by the
// `job` and `instance` variables; nothing names a data source uid or an instance.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const OUT = join(dirname(fileURLToPath(import.meta.url)), '..', 'monitoring', 'grafana');
const DS = { type: 'prometheus', uid: '${datasource}' };
const S = 'job=~"$job", instance=~"$instance"';
const RI = '$__rate_interval';

/** `rate(<metric>{S}[$__rate_interval])` */
const rate = (m, extra = '') => `rate(${m}{${S}${extra}}[${RI}])`;
/** `<metric>{S}` */
const sel = (m, extra = '') => `${m}{${S}${extra}}`;

const variables = [
  {
    name: 'datasource',
    label: 'Data source',
    type: 'datasource',
    query: 'prometheus',
    current: {},
    hide: 0,
    refresh: 1,
    options: [],
  },
  {
    name: 'job',
    label: 'Job',
    type: 'query',
    datasource: DS,
    query: { query: 'label_values(mysql_up, job)', refId: 'job' },
    definition: 'label_values(mysql_up, job)',
    refresh: 2,
    multi: true,
    includeAll: true,
    allValue: '.+',
    current: {},
    options: [],
    sort: 1,
    hide: 0,
  },
  {
    name: 'instance',
    label: 'Instance',
    type: 'query',
    datasource: DS,
    query: { query: 'label_values(mysql_up{job=~"$job"}, instance)', refId: 'instance' },
    definition: 'label_values(mysql_up{job=~"$job"}, instance)',
    refresh: 2,
    multi: true,
    includeAll: true,
    allValue: '.+',
    current: {},
    options: [],
    sort: 1,
    hide: 0,
  },
];

/** A panel: [title, unit, [[expr, legend], …], kind]; kind `stat` or time series. */
function panel(id, [title, unit, queries, kind], pos) {
  const type = kind === 'stat' ? 'stat' : 'timeseries';
  const options =
    type === 'stat'
      ? { reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false }, colorMode: 'value' }
      : { legend: { displayMode: 'list', placement: 'bottom' }, tooltip: { mode: 'multi', sort: 'desc' } };
  return {
    id,
    type,
    title,
    datasource: DS,
    gridPos: pos,
    fieldConfig: { defaults: { unit }, overrides: [] },
    options,
    targets: queries.map(([expr, legendFormat], i) => ({
      refId: String.fromCharCode(65 + i),
      datasource: DS,
      expr,
      legendFormat,
    })),
  };
}

function dashboard(uid, title, description, stats, series) {
  const panels = [];
  let id = 1;
  stats.forEach((p, i) => panels.push(panel(id++, [...p, 'stat'], { x: i * 6, y: 0, w: 6, h: 4 })));
  const top = stats.length > 0 ? 4 : 0;
  series.forEach((p, i) =>
    panels.push(panel(id++, p, { x: (i % 2) * 12, y: top + Math.floor(i / 2) * 8, w: 12, h: 8 })),
  );
  return {
    uid,
    title,
    description,
    tags: ['mysql', 'sonde'],
    editable: true,
    timezone: 'browser',
    schemaVersion: 39,
    time: { from: 'now-6h', to: 'now' },
    refresh: '1m',
    annotations: { list: [] },
    templating: { list: variables },
    panels,
  };
}

const L = '{{instance}}';

const overview = dashboard(
  'sonde-mysql-overview',
  'MySQL / Overview',
  'Server health, connections, query mix, temporary objects, caches (sonde exporter or mysqld_exporter).',
  [
    ['Up', 'none', [[sel('mysql_up'), L]]],
    ['Uptime', 's', [[sel('mysql_global_status_uptime'), L]]],
    ['Queries per second', 'reqps', [[rate('mysql_global_status_queries'), L]]],
    ['InnoDB buffer pool', 'bytes', [[sel('mysql_global_variables_innodb_buffer_pool_size'), L]]],
  ],
  [
    [
      'Connections',
      'short',
      [
        [sel('mysql_global_status_threads_connected'), `connected ${L}`],
        [sel('mysql_global_status_max_used_connections'), `max used ${L}`],
        [sel('mysql_global_variables_max_connections'), `max_connections ${L}`],
      ],
    ],
    ['Connections used', 'percentunit', [[sel('instance:mysql_connections_used:ratio'), L]]],
    [
      'Client threads',
      'short',
      [
        [sel('mysql_global_status_threads_connected'), `connected ${L}`],
        [sel('mysql_global_status_threads_running'), `running ${L}`],
      ],
    ],
    ['Questions', 'reqps', [[rate('mysql_global_status_questions'), L]]],
    ['Transactions (commit + rollback)', 'ops', [[sel('job:mysql_transactions:rate5m'), L]]],
    ['Slow queries', 'ops', [[rate('mysql_global_status_slow_queries'), L]]],
    [
      'Thread cache',
      'short',
      [
        [sel('mysql_global_variables_thread_cache_size'), `thread_cache_size ${L}`],
        [sel('mysql_global_status_threads_cached'), `cached ${L}`],
        [rate('mysql_global_status_threads_created'), `created/s ${L}`],
      ],
    ],
    [
      'Temporary objects',
      'ops',
      [
        [rate('mysql_global_status_created_tmp_tables'), `tables ${L}`],
        [rate('mysql_global_status_created_tmp_disk_tables'), `disk tables ${L}`],
        [rate('mysql_global_status_created_tmp_files'), `files ${L}`],
      ],
    ],
    [
      'Select types',
      'ops',
      ['select_full_join', 'select_full_range_join', 'select_range', 'select_range_check', 'select_scan'].map(
        (m) => [rate(`mysql_global_status_${m}`), `${m} ${L}`],
      ),
    ],
    [
      'Sorts',
      'ops',
      ['sort_rows', 'sort_range', 'sort_merge_passes', 'sort_scan'].map((m) => [
        rate(`mysql_global_status_${m}`),
        `${m} ${L}`,
      ]),
    ],
    [
      'Aborted connections',
      'ops',
      [
        [rate('mysql_global_status_aborted_connects'), `connects ${L}`],
        [rate('mysql_global_status_aborted_clients'), `clients ${L}`],
      ],
    ],
    [
      'Table locks',
      'ops',
      [
        [rate('mysql_global_status_table_locks_immediate'), `immediate ${L}`],
        [rate('mysql_global_status_table_locks_waited'), `waited ${L}`],
      ],
    ],
    [
      'Network traffic',
      'Bps',
      [
        [rate('mysql_global_status_bytes_received'), `received ${L}`],
        [rate('mysql_global_status_bytes_sent'), `sent ${L}`],
      ],
    ],
    [
      'Internal memory',
      'bytes',
      [
        [
          `${sel('mysql_global_status_innodb_page_size')} * on (instance, job) ${sel('mysql_global_status_buffer_pool_pages', ', state="data"')}`,
          `InnoDB data ${L}`,
        ],
        [sel('mysql_global_variables_innodb_log_buffer_size'), `InnoDB log buffer ${L}`],
        [sel('mysql_global_status_innodb_mem_adaptive_hash'), `adaptive hash ${L}`],
        [sel('mysql_global_status_innodb_mem_dictionary'), `dictionary ${L}`],
        [sel('mysql_global_variables_key_buffer_size'), `key buffer ${L}`],
        [sel('mysql_global_variables_query_cache_size'), `query cache ${L}`],
      ],
    ],
    [
      'Top commands',
      'ops',
      [[`topk(5, ${rate('mysql_global_status_commands_total')} > 0)`, `{{command}} ${L}`]],
    ],
    [
      'Handlers',
      'ops',
      [
        [
          rate('mysql_global_status_handlers_total', ', handler!~"commit|rollback|savepoint.*|prepare"'),
          `{{handler}} ${L}`,
        ],
      ],
    ],
    [
      'Transaction handlers',
      'ops',
      [
        [
          rate('mysql_global_status_handlers_total', ', handler=~"commit|rollback|savepoint.*|prepare"'),
          `{{handler}} ${L}`,
        ],
      ],
    ],
    ['Process states', 'short', [[sel('mysql_info_schema_processlist_threads'), `{{state}} ${L}`]]],
    [
      'Running statements (sonde stmt.current)',
      'short',
      [
        [sel('mysql_stmt_current_slow'), `slow ${L}`],
        [sel('mysql_stmt_current_slowest_seconds'), `slowest (s) ${L}`],
      ],
    ],
    [
      'Query cache',
      'short',
      [
        [rate('mysql_global_status_qcache_hits'), `hits/s ${L}`],
        [rate('mysql_global_status_qcache_inserts'), `inserts/s ${L}`],
        [rate('mysql_global_status_qcache_not_cached'), `not cached/s ${L}`],
        [rate('mysql_global_status_qcache_lowmem_prunes'), `low-memory prunes/s ${L}`],
        [sel('mysql_global_status_qcache_queries_in_cache'), `queries in cache ${L}`],
      ],
    ],
    [
      'Query cache memory',
      'bytes',
      [
        [sel('mysql_global_status_qcache_free_memory'), `free ${L}`],
        [sel('mysql_global_variables_query_cache_size'), `query_cache_size ${L}`],
      ],
    ],
    [
      'Open files',
      'short',
      [
        [sel('mysql_global_status_open_files'), `open ${L}`],
        [sel('mysql_global_variables_open_files_limit'), `open_files_limit ${L}`],
        [sel('mysql_global_status_innodb_num_open_files'), `InnoDB open ${L}`],
        [rate('mysql_global_status_opened_files'), `opened/s ${L}`],
      ],
    ],
    [
      'Table open cache',
      'short',
      [
        [sel('mysql_global_status_open_tables'), `open ${L}`],
        [sel('mysql_global_variables_table_open_cache'), `table_open_cache ${L}`],
        [rate('mysql_global_status_opened_tables'), `opened/s ${L}`],
        [rate('mysql_global_status_table_open_cache_hits'), `hits/s ${L}`],
        [rate('mysql_global_status_table_open_cache_misses'), `misses/s ${L}`],
        [rate('mysql_global_status_table_open_cache_overflows'), `overflows/s ${L}`],
      ],
    ],
    [
      'Table definition cache',
      'short',
      [
        [sel('mysql_global_status_open_table_definitions'), `open ${L}`],
        [sel('mysql_global_variables_table_definition_cache'), `table_definition_cache ${L}`],
        [rate('mysql_global_status_opened_table_definitions'), `opened/s ${L}`],
      ],
    ],
  ],
);

const replication = dashboard(
  'sonde-mysql-replication',
  'MySQL / Replication',
  'Replication threads and lag from SHOW SLAVE STATUS, pt-heartbeat and sonde (repl, repl.lag), binary logs.',
  [
    ['Replicating (sonde repl)', 'none', [[sel('mysql_repl_running'), L]]],
    ['IO thread', 'none', [[sel('mysql_slave_status_slave_io_running'), L]]],
    ['SQL thread', 'none', [[sel('mysql_slave_status_slave_sql_running'), L]]],
    ['Lag (sonde heartbeat)', 's', [[sel('instance:mysql_repl_lag_seconds'), L]]],
  ],
  [
    [
      'Replica lag, every source',
      's',
      [
        [sel('instance:mysql_repl_lag_seconds'), `sonde heartbeat ${L}`],
        [sel('instance:mysql_slave_lag_seconds'), `SHOW SLAVE STATUS ${L}`],
        [sel('instance:mysql_heartbeat_lag_seconds'), `pt-heartbeat ${L}`],
      ],
    ],
    ['sonde heartbeat lag by channel', 's', [[sel('mysql_repl_lag_current_seconds'), `{{channel}} ${L}`]]],
    [
      'Seconds behind master and configured delay',
      's',
      [
        [sel('mysql_slave_status_seconds_behind_master'), `behind ${L}`],
        [sel('mysql_slave_status_sql_delay'), `SQL_Delay ${L}`],
      ],
    ],
    [
      'Replication state',
      'short',
      [
        [sel('mysql_repl_running'), `sonde repl ${L}`],
        [sel('mysql_slave_status_slave_io_running'), `IO ${L}`],
        [sel('mysql_slave_status_slave_sql_running'), `SQL ${L}`],
      ],
    ],
    ['Last SQL error number', 'none', [[sel('mysql_slave_status_last_errno'), L]]],
    ['Relay log space', 'bytes', [[sel('mysql_slave_status_relay_log_space'), L]]],
    [
      'Applier backlog and workers (MySQL 8 pfs writer)',
      'short',
      [
        [sel('mysql_repl_lag_backlog'), `backlog trx {{channel}} ${L}`],
        [sel('mysql_repl_lag_worker_usage_ratio'), `workers busy {{channel}} ${L}`],
      ],
    ],
    [
      'Applied GTID sequence (MariaDB)',
      'short',
      [[sel('mysql_slave_status_gtid_slave_pos'), `domain {{domain_id}} server {{server_id}} ${L}`]],
    ],
    ['Binary log size', 'bytes', [[sel('mysql_size_binlog_bytes'), L]]],
    ['Binary log growth', 'Bps', [[`deriv(${sel('mysql_size_binlog_bytes')}[15m])`, L]]],
  ],
);

const innodb = dashboard(
  'sonde-mysql-innodb',
  'MySQL / InnoDB',
  'Buffer pool, log, rows, locks, I/O and transactions.',
  [
    ['Buffer pool size', 'bytes', [[sel('mysql_global_variables_innodb_buffer_pool_size'), L]]],
    [
      'Buffer pool hit ratio',
      'percentunit',
      [[sel('instance:mysql_innodb_buffer_pool_hit:ratio_rate5m'), L]],
    ],
    ['Oldest transaction', 's', [[sel('mysql_trx_oldest_seconds'), L]]],
    ['Log waits', 'ops', [[rate('mysql_global_status_innodb_log_waits'), L]]],
  ],
  [
    [
      'Buffer pool pages',
      'short',
      [
        [sel('mysql_global_status_buffer_pool_pages'), `{{state}} ${L}`],
        [sel('mysql_global_status_buffer_pool_dirty_pages'), `dirty ${L}`],
      ],
    ],
    [
      'Buffer pool hit ratio',
      'percentunit',
      [
        [sel('instance:mysql_innodb_buffer_pool_hit:ratio_rate5m'), `from status ${L}`],
        [`${sel('mysql_innodb_buffer_pool_hit_rate')} / 1000`, `INNODB_BUFFER_POOL_STATS ${L}`],
      ],
    ],
    [
      'Logical reads and disk reads',
      'ops',
      [
        [rate('mysql_global_status_innodb_buffer_pool_read_requests'), `read requests ${L}`],
        [rate('mysql_global_status_innodb_buffer_pool_reads'), `from disk ${L}`],
      ],
    ],
    [
      'Pages read, created, written (sonde innodb.buffer-pool)',
      'ops',
      [
        [rate('mysql_innodb_buffer_pool_number_pages_read_total'), `read ${L}`],
        [rate('mysql_innodb_buffer_pool_number_pages_created_total'), `created ${L}`],
        [rate('mysql_innodb_buffer_pool_number_pages_written_total'), `written ${L}`],
      ],
    ],
    [
      'Redo log',
      'short',
      [
        [rate('mysql_global_status_innodb_log_waits'), `waits/s ${L}`],
        [rate('mysql_global_status_innodb_os_log_written'), `bytes written/s ${L}`],
      ],
    ],
    ['Row operations', 'ops', [[rate('mysql_global_status_innodb_row_ops_total'), `{{operation}} ${L}`]]],
    [
      'Row lock waits',
      'short',
      [
        [rate('mysql_global_status_innodb_row_lock_waits'), `waits/s ${L}`],
        [sel('mysql_global_status_innodb_row_lock_current_waits'), `waiting now ${L}`],
      ],
    ],
    [
      'Data file I/O',
      'ops',
      [
        [rate('mysql_global_status_innodb_data_reads'), `reads ${L}`],
        [rate('mysql_global_status_innodb_data_writes'), `writes ${L}`],
        [rate('mysql_global_status_innodb_data_fsyncs'), `fsyncs ${L}`],
      ],
    ],
    [
      'History list length',
      'short',
      [[sel('mysql_info_schema_innodb_metrics_transaction_trx_rseg_history_len'), L]],
    ],
    ['Oldest open transaction', 's', [[sel('mysql_trx_oldest_seconds'), L]]],
  ],
);

const tables = dashboard(
  'sonde-mysql-tables',
  'MySQL / Tables',
  'Table and database sizes and growth, auto-increment headroom, table I/O, temporary tables.',
  [
    ['Largest table', 'bytes', [[`max(${sel('mysql_size_table_bytes', ', tbl!=""')})`, 'largest']]],
    ['All databases', 'bytes', [[`sum(${sel('mysql_size_database_bytes', ', db!=""')})`, 'total']]],
    ['Fullest auto-increment', 'percentunit', [[`max(${sel('mysql_autoinc_usage_ratio')})`, 'fullest']]],
    ['Temporary tables on disk', 'percentunit', [[sel('instance:mysql_tmp_tables_on_disk:ratio_rate5m'), L]]],
  ],
  [
    [
      'Largest tables',
      'bytes',
      [[`topk(10, ${sel('mysql_size_table_bytes', ', tbl!=""')})`, `{{db}}.{{tbl}} ${L}`]],
    ],
    [
      'Fastest-growing tables',
      'Bps',
      [[`topk(10, deriv(${sel('mysql_size_table_bytes', ', tbl!=""')}[1h]))`, `{{db}}.{{tbl}} ${L}`]],
    ],
    ['Database sizes', 'bytes', [[sel('mysql_size_database_bytes', ', db!=""'), `{{db}} ${L}`]]],
    [
      'Auto-increment columns nearest their limit',
      'percentunit',
      [[`topk(10, ${sel('mysql_autoinc_usage_ratio')})`, `{{db}}.{{tbl}}.{{col}} ({{data_type}}) ${L}`]],
    ],
    [
      'Table I/O waits, busiest tables',
      'ops',
      [[`topk(10, ${rate('mysql_wait_io_table_count_star_total')})`, `{{db}}.{{tbl}} ${L}`]],
    ],
    [
      'Table I/O wait time, slowest tables',
      's',
      [[`topk(10, ${rate('mysql_wait_io_table_sum_timer_wait_seconds_total')})`, `{{db}}.{{tbl}} ${L}`]],
    ],
    [
      'Temporary tables',
      'ops',
      [
        [rate('mysql_global_status_created_tmp_tables'), `in memory or disk ${L}`],
        [rate('mysql_global_status_created_tmp_disk_tables'), `on disk ${L}`],
      ],
    ],
    [
      'Open tables',
      'short',
      [
        [sel('mysql_global_status_open_tables'), `open ${L}`],
        [sel('mysql_global_variables_table_open_cache'), `table_open_cache ${L}`],
        [rate('mysql_global_status_opened_tables'), `opened/s ${L}`],
      ],
    ],
  ],
);

const FILES = {
  'mysql-overview.json': overview,
  'mysql-replication.json': replication,
  'mysql-innodb.json': innodb,
  'mysql-tables.json': tables,
};

const check = process.argv.includes('--check');
let stale = 0;
for (const [name, d] of Object.entries(FILES)) {
  const text = `${JSON.stringify(d, null, 2)}\n`;
  const path = join(OUT, name);
  if (!check) writeFileSync(path, text);
  else {
    let old = '';
    try {
      old = readFileSync(path, 'utf8');
    } catch {
      old = '';
    }
    if (old !== text) {
      console.error(`${path} is not what scripts/gen-dashboards.mjs writes; run it`);
      stale++;
    }
  }
}
process.exit(stale > 0 ? 1 : 0);
