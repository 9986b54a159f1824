import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MetricType, type MetricValue } from '../core/metrics.js';
import { exposition } from './exposition.js';
import {
  chronosphereName,
  gcacheSizeBytes,
  hasPromTranslator,
  sanitize,
  statusInfoSamples,
  translateBlip,
  translateForExporter,
  variablesInfoSamples,
} from './translate.js';

const C = MetricType.CumulativeCounter;
const G = MetricType.Gauge;
const v = (name: string, value: number, type: MetricType = C, meta?: Record<string, string>): MetricValue =>
  meta === undefined ? { name, value, type } : { name, value, type, meta };

describe('translateBlip', () => {
  it('renders status, variables and innodb values exactly as Blip names them', () => {
    assert.equal(
      exposition(translateBlip('status.global', [v('com_select', 2)])),
      '# HELP mysql_global_status_commands_total Total number of executed MySQL commands.\n' +
        '# TYPE mysql_global_status_commands_total counter\n' +
        'mysql_global_status_commands_total{command="select"} 2\n',
    );
    assert.equal(
      exposition(translateBlip('status.global', [v('threads_running', 1, G)])),
      '# HELP mysql_global_status_threads_running Generic gauge metric from SHOW GLOBAL STATUS.\n' +
        '# TYPE mysql_global_status_threads_running gauge\n' +
        'mysql_global_status_threads_running 1\n',
    );
    assert.equal(
      exposition(translateBlip('status.global', [v('bytes_sent', 1379287523)])),
      '# HELP mysql_global_status_bytes_sent Generic counter metric from SHOW GLOBAL STATUS.\n' +
        '# TYPE mysql_global_status_bytes_sent counter\n' +
        'mysql_global_status_bytes_sent 1.379287523e+09\n',
    );
    assert.equal(
      exposition(translateBlip('status.global', [v('innodb_buffer_pool_pages_misc', 77)])),
      '# HELP mysql_global_status_buffer_pool_pages Innodb buffer pool pages by state.\n' +
        '# TYPE mysql_global_status_buffer_pool_pages gauge\n' +
        'mysql_global_status_buffer_pool_pages{state="misc"} 77\n',
    );
    assert.equal(
      exposition(translateBlip('var.global', [v('port', 3306, G)])),
      '# HELP mysql_global_variables_port Generic gauge metric.\n' +
        '# TYPE mysql_global_variables_port gauge\n' +
        'mysql_global_variables_port 3306\n',
    );
    assert.equal(
      exposition(translateBlip('innodb', [v('trx_rseg_history_len', 0, G, { subsystem: 'transaction' })])),
      '# HELP mysql_info_schema_innodb_metrics_transaction_trx_rseg_history_len_total Generic gauge metric from SHOW GLOBAL STATUS.\n' +
        '# TYPE mysql_info_schema_innodb_metrics_transaction_trx_rseg_history_len_total gauge\n' +
        'mysql_info_schema_innodb_metrics_transaction_trx_rseg_history_len_total 0\n',
    );
    assert.equal(
      exposition(translateBlip('innodb', [v('buffer_pool_pages_free', 3755, G, { subsystem: 'buffer' })])),
      '# HELP mysql_info_schema_innodb_metrics_buffer_pool_pages Total number of buffer pool pages by state.\n' +
        '# TYPE mysql_info_schema_innodb_metrics_buffer_pool_pages gauge\n' +
        'mysql_info_schema_innodb_metrics_buffer_pool_pages{state="free"} 3755\n',
    );
  });

  it('maps every status.global special family with its label and fixed TYPE', () => {
    const out = translateBlip('status.global', [
      v('handler_read_key', 1),
      v('connection_errors_accept', 2),
      v('innodb_buffer_pool_pages_data', 3, C),
      v('innodb_buffer_pool_pages_old', 4),
      v('innodb_buffer_pool_pages_dirty', 5, G),
      v('innodb_buffer_pool_pages_total', 6, G),
      v('innodb_buffer_pool_pages_flushed', 7),
      v('innodb_rows_read', 8),
      v('performance_schema_mutex_instances_lost', 9),
      v('compression', 0, G),
      v('com_stmt_execute', 10),
    ]);
    assert.deepEqual(
      out.map((s) => [s.name, s.type, s.labels ?? {}, s.value]),
      [
        ['mysql_global_status_handlers_total', 'counter', { handler: 'read_key' }, 1],
        ['mysql_global_status_connection_errors_total', 'counter', { error: 'accept' }, 2],
        ['mysql_global_status_buffer_pool_pages', 'gauge', { state: 'data' }, 3],
        ['mysql_global_status_buffer_pool_pages', 'gauge', { state: 'old' }, 4],
        ['mysql_global_status_buffer_pool_dirty_pages', 'gauge', {}, 5],
        ['mysql_global_status_buffer_pool_page_changes_total', 'counter', { operation: 'flushed' }, 7],
        ['mysql_global_status_innodb_row_ops_total', 'counter', { operation: 'read' }, 8],
        [
          'mysql_global_status_performance_schema_lost_total',
          'counter',
          { instrumentation: 'mutex_instances_lost' },
          9,
        ],
        ['mysql_global_status_compression', 'gauge', {}, 0],
        ['mysql_global_status_commands_total', 'counter', { command: 'stmt_execute' }, 10],
      ],
    );
  });

  it('skips delta counters, bools and events, and domains without a translation', () => {
    const vals = [
      v('a', 1, MetricType.DeltaCounter),
      v('b', 1, MetricType.Bool),
      v('c', 1, MetricType.Event),
    ];
    assert.deepEqual(translateBlip('status.global', vals), []);
    assert.deepEqual(translateBlip('var.global', vals), []);
    assert.deepEqual(translateBlip('custom.plugin', [v('running', 1, G)]), []);
    assert.deepEqual(translateForExporter('custom.plugin', [v('running', 1, G)]), []);
    assert.equal(hasPromTranslator('innodb'), true);
    assert.equal(hasPromTranslator('innodb.buffer-pool'), true);
    assert.equal(hasPromTranslator('custom.plugin'), false);
  });

  it('translates innodb with Blip rules: buffer_page_io, dropped rows, verbatim subsystem, _total always', () => {
    const out = translateBlip('innodb', [
      v('buffer_page_read_index_leaf', 10, C, { subsystem: 'buffer_page_io' }),
      v('buffer_page_written_undo_log', 11, C, { subsystem: 'buffer_page_io' }),
      v('buffer_page_other', 12, C, { subsystem: 'buffer_page_io' }),
      v('buffer_pool_pages_total', 13, G, { subsystem: 'buffer' }),
      v('buffer_pool_pages_dirty', 14, G, { subsystem: 'buffer' }),
      v('buffer_lru_get_free_search', 15, C, { subsystem: 'Buffer' }),
      v('lock_timeouts', 16, C, { subsystem: 'lock' }),
      v('no_subsystem', 17, C),
    ]);
    assert.deepEqual(
      out.map((s) => [s.name, s.type, s.labels ?? {}, s.help]),
      [
        [
          'mysql_info_schema_innodb_metrics_buffer_page_read_total',
          'counter',
          { type: 'index_leaf' },
          'Total number of buffer pages read total.',
        ],
        [
          'mysql_info_schema_innodb_metrics_buffer_page_written_total',
          'counter',
          { type: 'undo_log' },
          'Total number of buffer pages written total.',
        ],
        [
          'mysql_info_schema_innodb_metrics_buffer_pool_dirty_pages',
          'gauge',
          {},
          'Total number of dirty pages in the buffer pool.',
        ],
        [
          'mysql_info_schema_innodb_metrics_Buffer_buffer_lru_get_free_search_total',
          'counter',
          {},
          'Generic counter metric from SHOW GLOBAL STATUS.',
        ],
        [
          'mysql_info_schema_innodb_metrics_lock_lock_timeouts_total',
          'counter',
          {},
          'Generic counter metric from SHOW GLOBAL STATUS.',
        ],
      ],
    );
  });
});

describe('translateForExporter (mysqld_exporter 0.14 names)', () => {
  it('translates each value by its own name and type, whatever was at its position the call before', () => {
    const names = (vals: MetricValue[]): string[] =>
      translateForExporter('status.global', vals).map((s) => `${s.name}${JSON.stringify(s.labels ?? {})}`);
    const select = 'mysql_global_status_commands_total{"command":"select"}';
    const running = 'mysql_global_status_threads_running{}';
    assert.deepEqual(names([v('com_select', 1), v('threads_running', 2, G)]), [select, running]);
    assert.deepEqual(names([v('com_select', 3), v('threads_running', 4, G)]), [select, running]);
    assert.deepEqual(names([v('threads_running', 2, G), v('com_select', 1)]), [running, select]);
    assert.deepEqual(names([v('threads_running', 2, MetricType.Bool), v('com_select', 1)]), [select]);
    assert.deepEqual(names([v('threads_running', 2, G)]), [running]);
    assert.deepEqual(
      translateForExporter('var.global', [v('com_select', 5, G)]).map((s) => s.name),
      ['mysql_global_variables_com_select'],
    );
  });

  it('makes generic status metrics untyped with the upstream HELP, whatever the Blip type', () => {
    assert.equal(
      exposition(
        translateForExporter('status.global', [v('threads_running', 1, G), v('bytes_sent', 4931584)]),
      ),
      '# HELP mysql_global_status_bytes_sent Generic metric from SHOW GLOBAL STATUS.\n' +
        '# TYPE mysql_global_status_bytes_sent untyped\n' +
        'mysql_global_status_bytes_sent 4.931584e+06\n' +
        '# HELP mysql_global_status_threads_running Generic metric from SHOW GLOBAL STATUS.\n' +
        '# TYPE mysql_global_status_threads_running untyped\n' +
        'mysql_global_status_threads_running 1\n',
    );
  });

  it('keeps the special status families exactly as Blip (they match upstream)', () => {
    const vals = [
      v('com_select', 2),
      v('innodb_buffer_pool_pages_dirty', 5, G),
      v('innodb_buffer_pool_pages_total', 6, G),
      v('innodb_buffer_pool_pages_lru_flushed', 7),
    ];
    assert.deepEqual(translateForExporter('status.global', vals), translateBlip('status.global', vals));
  });

  it('gives variables the upstream HELP', () => {
    assert.equal(
      exposition(translateForExporter('var.global', [v('max_connections', 151, G)])),
      '# HELP mysql_global_variables_max_connections Generic gauge metric from SHOW GLOBAL VARIABLES.\n' +
        '# TYPE mysql_global_variables_max_connections gauge\n' +
        'mysql_global_variables_max_connections 151\n',
    );
  });

  it("gives the RocksDB variables mysqld_exporter's own HELP texts", () => {
    const [s] = translateForExporter('var.global', [v('rocksdb_block_size', 4096, G)]);
    assert.equal(s?.name, 'mysql_global_variables_rocksdb_block_size');
    assert.equal(s?.help, 'Size of the data block for reading sst files.');
    const [other] = translateForExporter('var.global', [v('rocksdb_not_listed', 1, G)]);
    assert.equal(other?.help, 'Generic gauge metric from SHOW GLOBAL VARIABLES.');
  });

  it('names innodb metrics from NAME/TYPE/COMMENT meta like upstream', () => {
    const out = translateForExporter('innodb', [
      v('buffer_lru_batch_flush_total_pages', 3, C, {
        subsystem: 'buffer',
        name: 'buffer_LRU_batch_flush_total_pages',
        type: 'status_counter',
        comment: 'Total pages flushed as part of LRU batches',
      }),
      v('trx_rseg_history_len', 4, G, {
        subsystem: 'transaction',
        name: 'trx_rseg_history_len',
        type: 'value',
        comment: 'Length of the TRX_RSEG_HISTORY list',
      }),
      // Blip says counter, the server says value: upstream makes it a gauge without _total
      v('lock_timeouts', 0, C, {
        subsystem: 'lock',
        name: 'lock_timeouts',
        type: 'value',
        comment: 'Number of lock timeouts',
      }),
      // Blip says gauge, the server says counter
      v('os_pending_reads', 0, G, {
        subsystem: 'os',
        name: 'os_pending_reads',
        type: 'counter',
        comment: 'Number of reads pending',
      }),
      v('buffer_lru_get_free_search', 9, C, {
        subsystem: 'Buffer',
        name: 'buffer_LRU_get_free_search',
        type: 'counter',
        comment: 'Number of searches performed for a clean page',
      }),
      v('buffer_pool_pages_data', 8, G, {
        subsystem: 'buffer',
        name: 'buffer_pool_pages_data',
        type: 'value',
        comment: 'x',
      }),
      v('buffer_page_read_index_leaf', 10, C, {
        subsystem: 'buffer_page_io',
        name: 'buffer_page_read_index_leaf',
        type: 'counter',
        comment: 'x',
      }),
      v('negative', -1, C, { subsystem: 'server', name: 'negative', type: 'counter', comment: 'n' }),
    ]);
    assert.deepEqual(
      out.map((s) => [s.name, s.type, s.help, s.labels ?? {}]),
      [
        [
          'mysql_info_schema_innodb_metrics_buffer_buffer_LRU_batch_flush_total_pages_total',
          'counter',
          'Total pages flushed as part of LRU batches',
          {},
        ],
        [
          'mysql_info_schema_innodb_metrics_transaction_trx_rseg_history_len',
          'gauge',
          'Length of the TRX_RSEG_HISTORY list',
          {},
        ],
        ['mysql_info_schema_innodb_metrics_lock_lock_timeouts', 'gauge', 'Number of lock timeouts', {}],
        [
          'mysql_info_schema_innodb_metrics_os_os_pending_reads_total',
          'counter',
          'Number of reads pending',
          {},
        ],
        [
          'mysql_info_schema_innodb_metrics_Buffer_buffer_LRU_get_free_search_total',
          'counter',
          'Number of searches performed for a clean page',
          {},
        ],
        [
          'mysql_info_schema_innodb_metrics_buffer_pool_pages',
          'gauge',
          'Total number of buffer pool pages by state.',
          { state: 'data' },
        ],
        [
          'mysql_info_schema_innodb_metrics_buffer_page_read_total',
          'counter',
          'Total number of buffer pages read total.',
          { type: 'index_leaf' },
        ],
        ['mysql_info_schema_innodb_metrics_server_negative', 'gauge', 'n', {}],
      ],
    );
  });

  it('falls back to the Blip type and a generic HELP without INNODB_METRICS meta', () => {
    const out = translateForExporter('innodb', [
      v('lock_timeouts', 1, C, { subsystem: 'lock' }),
      v('trx_rseg_history_len', 2, G, { subsystem: 'transaction' }),
    ]);
    assert.deepEqual(
      out.map((s) => [s.name, s.type, s.help]),
      [
        [
          'mysql_info_schema_innodb_metrics_lock_lock_timeouts_total',
          'counter',
          'Generic metric from information_schema.innodb_metrics.',
        ],
        [
          'mysql_info_schema_innodb_metrics_transaction_trx_rseg_history_len',
          'gauge',
          'Generic metric from information_schema.innodb_metrics.',
        ],
      ],
    );
  });
});

describe('text-valued families', () => {
  it('always emits mysql_version_info from the variables, plus isolation and Galera info when set', () => {
    assert.equal(
      exposition(
        variablesInfoSamples({
          version: '10.11.19-MariaDB-0+deb12u1',
          version_comment: 'Debian 12',
          transaction_isolation: 'REPEATABLE-READ',
          wsrep_cluster_name: 'my_wsrep_cluster',
          wsrep_provider_options: 'base_dir = /var/lib/mysql/; gcache.size = 128M; gcache.page_size = 128M;',
        }),
      ),
      '# HELP mysql_galera_gcache_size_bytes PXC/Galera gcache size.\n' +
        '# TYPE mysql_galera_gcache_size_bytes gauge\n' +
        'mysql_galera_gcache_size_bytes 1.34217728e+08\n' +
        '# HELP mysql_galera_variables_info PXC/Galera variables information.\n' +
        '# TYPE mysql_galera_variables_info gauge\n' +
        'mysql_galera_variables_info{wsrep_cluster_name="my_wsrep_cluster"} 1\n' +
        '# HELP mysql_transaction_isolation MySQL transaction isolation.\n' +
        '# TYPE mysql_transaction_isolation gauge\n' +
        'mysql_transaction_isolation{level="REPEATABLE-READ"} 1\n' +
        '# HELP mysql_version_info MySQL version and distribution.\n' +
        '# TYPE mysql_version_info gauge\n' +
        'mysql_version_info{innodb_version="",version="10.11.19-MariaDB-0+deb12u1",version_comment="Debian 12"} 1\n',
    );
    assert.deepEqual(
      variablesInfoSamples({ tx_isolation: 'READ-COMMITTED' }).map((s) => [s.name, s.labels]),
      [
        ['mysql_version_info', { innodb_version: '', version: '', version_comment: '' }],
        ['mysql_transaction_isolation', { level: 'READ-COMMITTED' }],
      ],
    );
  });

  it('parses gcache.size like upstream', () => {
    assert.equal(gcacheSizeBytes('gcache.size = 2G; x'), 2 * 1024 ** 3);
    assert.equal(gcacheSizeBytes('gcache.size = 1024;'), 1024);
    assert.equal(gcacheSizeBytes('gcache.page_size = 1M;'), 0);
  });

  it('emits mysql_galera_evs_repl_latency_* from the five numbers of wsrep_evs_repl_latency', () => {
    const out = statusInfoSamples({
      wsrep_local_state_uuid: 'u1',
      wsrep_evs_repl_latency: '0.000172/0.000322/0.000756/8.1e-05/27',
    });
    assert.deepEqual(
      out.map((x) => [x.name, x.type, x.value, x.help]),
      [
        ['mysql_galera_status_info', 'gauge', 1, 'PXC/Galera status information.'],
        [
          'mysql_galera_evs_repl_latency_min_seconds',
          'gauge',
          0.000172,
          'PXC/Galera group communication latency. Min value.',
        ],
        [
          'mysql_galera_evs_repl_latency_avg_seconds',
          'gauge',
          0.000322,
          'PXC/Galera group communication latency. Avg value.',
        ],
        [
          'mysql_galera_evs_repl_latency_max_seconds',
          'gauge',
          0.000756,
          'PXC/Galera group communication latency. Max value.',
        ],
        [
          'mysql_galera_evs_repl_latency_stdev',
          'gauge',
          8.1e-5,
          'PXC/Galera group communication latency. Standard Deviation.',
        ],
        [
          'mysql_galera_evs_repl_latency_sample_size',
          'gauge',
          27,
          'PXC/Galera group communication latency. Sample Size.',
        ],
      ],
    );
    // Anything but five numbers gives none of them.
    for (const bad of ['', '1/2/3/4', '1/2/3/4/5/6', '1/2/x/4/5', '1/2/ 3/4/5'])
      assert.deepEqual(
        statusInfoSamples({ wsrep_evs_repl_latency: bad }).map((x) => x.name),
        [],
        bad,
      );
  });

  it('emits mysql_galera_status_info only on a Galera node', () => {
    assert.deepEqual(statusInfoSamples({ wsrep_local_state_uuid: '' }), []);
    assert.deepEqual(
      statusInfoSamples({ wsrep_local_state_uuid: 'u1', wsrep_provider_version: '26.4' })[0]?.labels,
      {
        wsrep_local_state_uuid: 'u1',
        wsrep_cluster_state_uuid: '',
        wsrep_provider_version: '26.4',
      },
    );
  });
});

describe('names', () => {
  it('sanitizes like Blip', () => {
    assert.equal(sanitize('Aria.pagecache-blocks'), 'aria_pagecache_blocks');
  });
  it('builds chronosphere names as mysql_<short domain>_<metric>', () => {
    assert.equal(chronosphereName('status.global', 'threads_running'), 'mysql_status_threads_running');
    assert.equal(chronosphereName('var.global', 'max_connections'), 'mysql_var_max_connections');
    assert.equal(chronosphereName('innodb', 'trx_rseg_history_len'), 'mysql_innodb_trx_rseg_history_len');
    assert.equal(chronosphereName('innodb', 'buffer_LRU-x'), 'mysql_innodb_buffer_lru_x');
    assert.equal(chronosphereName('repl', 'running'), undefined);
  });
});
