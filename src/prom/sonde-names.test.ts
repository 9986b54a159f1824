import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { MetricType, type MetricValue } from '../core/metrics.js';
import { BUILTIN } from '../collectors/implementations.js';
import { BUFFER_POOL_COLUMNS } from '../collectors/innodb.buffer-pool/index.js';
import { COLUMNS as WAIT_IO_COLUMNS } from '../collectors/wait.io.table/index.js';
import { EXPORTER_DOMAIN_PREFIX } from '../core/upstream.js';
import { exposition, type PromSample } from './exposition.js';
import { SONDE_PROM_DOMAINS, sondeSample } from './sonde-names.js';
import { hasPromTranslator, translateBlip, translateForExporter, translateSonde } from './translate.js';

const C = MetricType.CumulativeCounter;
const D = MetricType.DeltaCounter;
const G = MetricType.Gauge;
const B = MetricType.Bool;

function val(name: string, value: number, type: MetricType, group?: Record<string, string>): MetricValue {
  return group === undefined ? { name, value, type } : { name, value, type, group };
}

/** The exporter's text for one domain; the prom-pushgateway translation must be the same. */
function text(domain: string, values: MetricValue[]): string {
  const out = exposition(translateForExporter(domain, values));
  assert.equal(
    exposition(translateBlip(domain, values)),
    out,
    `${domain}: exporter and Blip flavours differ`,
  );
  return out;
}

const lines = (...l: string[]): string => `${l.join('\n')}\n`;

describe('sonde domains in Prometheus: one rule for every domain', () => {
  it('names every built-in domain except status.global, var.global, innodb, exporter.* and aws.rds', () => {
    // aws.rds values are CloudWatch points with their own past time: not for an exposition.
    const expected = BUILTIN.map((r) => r.help.domain)
      .filter((d) => !['status.global', 'var.global', 'innodb', 'aws.rds'].includes(d))
      .filter((d) => !d.startsWith(EXPORTER_DOMAIN_PREFIX))
      .sort();
    assert.deepEqual([...SONDE_PROM_DOMAINS], expected);
    for (const d of expected) assert.equal(hasPromTranslator(d), true, d);
  });

  it('has a HELP of its own (not the generic one) for every metric a collector documents', () => {
    for (const reg of BUILTIN) {
      const { domain, metrics } = reg.help;
      if (!SONDE_PROM_DOMAINS.includes(domain)) continue;
      const names =
        domain === 'innodb.buffer-pool'
          ? [...BUFFER_POOL_COLUMNS.keys()]
          : domain === 'wait.io.table'
            ? [...WAIT_IO_COLUMNS]
            : metrics.map((m) => (m.name === 'pN' ? 'p99' : m.name));
      assert.ok(names.length > 0, domain);
      for (const name of names) {
        const s = sondeSample(domain, val(name, 1, G));
        assert.ok(s, `${domain}.${name}`);
        assert.doesNotMatch(s.help, /^sonde metric /, `${domain}.${name} has only the generic HELP`);
        assert.match(s.name, /^mysql_[a-z0-9_]+$/, `${domain}.${name}`);
      }
    }
  });

  it('renders every domain into text promtool accepts without lint findings', () => {
    const samples: PromSample[] = [];
    for (const reg of BUILTIN) {
      const { domain, groups, metrics } = reg.help;
      if (!SONDE_PROM_DOMAINS.includes(domain)) continue;
      const group = groups.length === 0 ? undefined : Object.fromEntries(groups.map((g) => [g.key, 'x']));
      const names =
        domain === 'innodb.buffer-pool'
          ? [...BUFFER_POOL_COLUMNS.keys()]
          : domain === 'wait.io.table'
            ? [...WAIT_IO_COLUMNS]
            : metrics.map((m) => (m.name === 'pN' ? 'p99' : m.name));
      const type = (n: string): MetricType =>
        domain === 'innodb.buffer-pool'
          ? (BUFFER_POOL_COLUMNS.get(n) ?? G)
          : domain.startsWith('error.')
            ? C
            : G;
      const typed = (n: string): MetricType => (domain === 'wait.io.table' ? C : type(n));
      samples.push(
        ...translateForExporter(
          domain,
          names.map((n) => val(n, 1, typed(n), group)),
        ),
      );
    }
    const body = exposition(samples);
    const r = spawnSync('/usr/bin/promtool', ['check', 'metrics'], { input: body, encoding: 'utf8' });
    assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
    assert.equal(`${r.stdout}${r.stderr}`.trim(), '');
  });

  it('passes negative "not measured" markers through unconverted and converts the rest', () => {
    assert.deepEqual(
      translateSonde('repl.lag', [val('current', -1, G), val('current', 250, G, { channel: 'c1' })]).map(
        (s) => [s.name, s.labels ?? {}, s.value],
      ),
      [
        ['mysql_repl_lag_current_seconds', {}, -1],
        ['mysql_repl_lag_current_seconds', { channel: 'c1' }, 0.25],
      ],
    );
  });

  it('caches one template per name and group: the same labels object every time', () => {
    const a = translateForExporter('size.table', [val('bytes', 1, G, { db: 'cache', tbl: 't' })]);
    const b = translateForExporter('size.table', [val('bytes', 2, G, { db: 'cache', tbl: 't' })]);
    const c = translateForExporter('size.table', [val('bytes', 3, G, { db: 'cache', tbl: 'u' })]);
    assert.ok(a[0]?.labels !== undefined && a[0].labels === b[0]?.labels);
    assert.notEqual(a[0]?.labels, c[0]?.labels);
    assert.deepEqual(c[0]?.labels, { db: 'cache', tbl: 'u' });
    assert.deepEqual([a[0]?.value, b[0]?.value, c[0]?.value], [1, 2, 3]);
  });

  it('gives nothing for delta counters, events and unknown types, and for other domains', () => {
    assert.deepEqual(translateSonde('wait.io.table', [val('count_read', 5, D, { db: 'a', tbl: 'b' })]), []);
    assert.deepEqual(translateSonde('error.global', [val('raised', 5, D)]), []);
    assert.deepEqual(translateSonde('trx', [val('oldest', 5, MetricType.Event)]), []);
    assert.deepEqual(translateSonde('trx', [val('oldest', 5, MetricType.Unknown)]), []);
    assert.deepEqual(translateSonde('status.global', [val('uptime', 5, C)]), []);
    assert.deepEqual(translateSonde('exporter.slave_status', [val('mysql_slave_status_x', 5, G)]), []);
  });
});

describe('sonde domains in Prometheus, per domain', () => {
  it('repl: mysql_repl_running, -1 kept, meta not a label', () => {
    assert.equal(
      text('repl', [{ name: 'running', value: -1, type: G, meta: { source: 'db1' } }]),
      lines(
        '# HELP mysql_repl_running Replication state from SHOW SLAVE/REPLICA STATUS: 1 = both threads running without error, 0 = stopped, connecting or broken, -1 = not a replica.',
        '# TYPE mysql_repl_running gauge',
        'mysql_repl_running -1',
      ),
    );
  });

  it('repl.lag: milliseconds → seconds, percent → ratio, channel label', () => {
    const grp = { channel: 'ch1' };
    assert.equal(
      text('repl.lag', [
        val('current', 1234, G, grp),
        val('backlog', 7, G, grp),
        val('worker_usage', 25, G, grp),
      ]),
      lines(
        '# HELP mysql_repl_lag_backlog Transactions received but not yet applied.',
        '# TYPE mysql_repl_lag_backlog gauge',
        'mysql_repl_lag_backlog{channel="ch1"} 7',
        '# HELP mysql_repl_lag_current_seconds Replication lag in seconds from the heartbeat (or Performance Schema); -1 = no heartbeat or not a replica.',
        '# TYPE mysql_repl_lag_current_seconds gauge',
        'mysql_repl_lag_current_seconds{channel="ch1"} 1.234',
        '# HELP mysql_repl_lag_worker_usage_ratio Fraction (0-1) of applier workers busy.',
        '# TYPE mysql_repl_lag_worker_usage_ratio gauge',
        'mysql_repl_lag_worker_usage_ratio{channel="ch1"} 0.25',
      ),
    );
  });

  it('size.database, size.table, size.binlog: bytes, db/tbl labels, "" for the total', () => {
    assert.equal(
      text('size.database', [val('bytes', 49152, G, { db: 'app' }), val('bytes', 65536, G, { db: '' })]),
      lines(
        '# HELP mysql_size_database_bytes Data plus index bytes of all tables of the database ("" = total).',
        '# TYPE mysql_size_database_bytes gauge',
        'mysql_size_database_bytes{db=""} 65536',
        'mysql_size_database_bytes{db="app"} 49152',
      ),
    );
    assert.equal(
      text('size.table', [val('bytes', 16384, G, { db: 'app', tbl: 'users' })]),
      lines(
        '# HELP mysql_size_table_bytes Data plus index bytes of the table ("" = total).',
        '# TYPE mysql_size_table_bytes gauge',
        'mysql_size_table_bytes{db="app",tbl="users"} 16384',
      ),
    );
    assert.equal(
      text('size.binlog', [val('bytes', 1e9, G)]),
      lines(
        '# HELP mysql_size_binlog_bytes Total size of the binary log files.',
        '# TYPE mysql_size_binlog_bytes gauge',
        'mysql_size_binlog_bytes 1e+09',
      ),
    );
  });

  it('trx: mysql_trx_oldest_seconds', () => {
    assert.equal(
      text('trx', [val('oldest', 42, G)]),
      lines(
        '# HELP mysql_trx_oldest_seconds Age of the oldest open InnoDB transaction (0 when none).',
        '# TYPE mysql_trx_oldest_seconds gauge',
        'mysql_trx_oldest_seconds 42',
      ),
    );
  });

  it('query analytics: lock waits by type, digest sums per schema in seconds; delta counts left out', () => {
    assert.equal(
      text('lock.wait', [
        val('waits', 2, G, { type: 'row' }),
        val('oldest_wait_seconds', 7.5, G, { type: 'row' }),
      ]),
      lines(
        '# HELP mysql_lock_wait_oldest_wait_seconds How long the longest current lock wait has lasted (0 when none).',
        '# TYPE mysql_lock_wait_oldest_wait_seconds gauge',
        'mysql_lock_wait_oldest_wait_seconds{type="row"} 7.5',
        '# HELP mysql_lock_wait_waits Connections waiting for a lock now, by lock type (row, metadata).',
        '# TYPE mysql_lock_wait_waits gauge',
        'mysql_lock_wait_waits{type="row"} 2',
      ),
    );
    assert.equal(
      text('stmt.schema', [val('sum_timer_wait', 2.5e12, MetricType.CumulativeCounter, { db: 'app' })]),
      lines(
        '# HELP mysql_stmt_schema_sum_timer_wait_seconds_total Time spent running statements in the schema, over its statement digests.',
        '# TYPE mysql_stmt_schema_sum_timer_wait_seconds_total counter',
        'mysql_stmt_schema_sum_timer_wait_seconds_total{db="app"} 2.5',
      ),
    );
    assert.equal(text('query.top', [val('calls', 1000, MetricType.DeltaCounter)]), '');
  });

  it('autoinc: a ratio with db, tbl, col, data_type labels', () => {
    assert.equal(
      text('autoinc', [val('usage', 0.5, G, { db: 'a', tbl: 't', col: 'id', data_type: 'int unsigned' })]),
      lines(
        '# HELP mysql_autoinc_usage_ratio Fraction of the auto-increment column type range used; near 1 = full.',
        '# TYPE mysql_autoinc_usage_ratio gauge',
        'mysql_autoinc_usage_ratio{col="id",data_type="int unsigned",db="a",tbl="t"} 0.5',
      ),
    );
  });

  it('tls: a bool becomes a 0/1 gauge', () => {
    assert.equal(
      text('tls', [val('enabled', 1, B)]),
      lines(
        '# HELP mysql_tls_enabled 1 when the server accepts TLS connections, 0 when TLS is disabled or unavailable.',
        '# TYPE mysql_tls_enabled gauge',
        'mysql_tls_enabled 1',
      ),
    );
  });

  it('stmt.current: microseconds → seconds; the count stays a count', () => {
    assert.equal(
      text('stmt.current', [val('slowest', 2_500_000, G), val('slow', 3, G)]),
      lines(
        '# HELP mysql_stmt_current_slow Running statements whose run time so far is at least slow-threshold.',
        '# TYPE mysql_stmt_current_slow gauge',
        'mysql_stmt_current_slow 3',
        '# HELP mysql_stmt_current_slowest_seconds Run time so far of the longest-running statement (0 when none).',
        '# TYPE mysql_stmt_current_slowest_seconds gauge',
        'mysql_stmt_current_slowest_seconds 2.5',
      ),
    );
  });

  it('innodb.buffer-pool: running totals are counters with _total, the rest gauges', () => {
    assert.equal(
      text('innodb.buffer-pool', [
        val('pool_size', 8192, G),
        val('number_pages_read', 140, C),
        val('hit_rate', 998, G),
      ]),
      lines(
        '# HELP mysql_innodb_buffer_pool_hit_rate Buffer pool hit rate per thousand page gets (1000 = all from memory), since the last InnoDB monitor printout.',
        '# TYPE mysql_innodb_buffer_pool_hit_rate gauge',
        'mysql_innodb_buffer_pool_hit_rate 998',
        '# HELP mysql_innodb_buffer_pool_number_pages_read_total Pages read into the buffer pool.',
        '# TYPE mysql_innodb_buffer_pool_number_pages_read_total counter',
        'mysql_innodb_buffer_pool_number_pages_read_total 140',
        '# HELP mysql_innodb_buffer_pool_pool_size Buffer pool size in pages.',
        '# TYPE mysql_innodb_buffer_pool_pool_size gauge',
        'mysql_innodb_buffer_pool_pool_size 8192',
      ),
    );
  });

  it('wait.io.table: counts _total, summed timers seconds _total, min/avg/max timers seconds gauges', () => {
    const g = { db: 'app', tbl: 'users' };
    assert.equal(
      text('wait.io.table', [
        val('count_read', 10, C, g),
        val('sum_timer_read', 2e12, C, g),
        val('max_timer_read', 5e11, C, g),
      ]),
      lines(
        '# HELP mysql_wait_io_table_count_read_total Table I/O wait events (read operations).',
        '# TYPE mysql_wait_io_table_count_read_total counter',
        'mysql_wait_io_table_count_read_total{db="app",tbl="users"} 10',
        '# HELP mysql_wait_io_table_max_timer_read_seconds Longest table I/O wait (read operations).',
        '# TYPE mysql_wait_io_table_max_timer_read_seconds gauge',
        'mysql_wait_io_table_max_timer_read_seconds{db="app",tbl="users"} 0.5',
        '# HELP mysql_wait_io_table_sum_timer_read_seconds_total Total time waited on table I/O (read operations).',
        '# TYPE mysql_wait_io_table_sum_timer_read_seconds_total counter',
        'mysql_wait_io_table_sum_timer_read_seconds_total{db="app",tbl="users"} 2',
      ),
    );
  });

  it('query.response-time and percona.response-time: one family, the percentile as a label, seconds', () => {
    assert.equal(
      text('query.response-time', [val('p99', 1500, G), val('p999', 25_000, G)]),
      lines(
        '# HELP mysql_query_response_time_seconds Statement latency percentile from the performance_schema statement histogram, by percentile (p99, p999, ...).',
        '# TYPE mysql_query_response_time_seconds gauge',
        'mysql_query_response_time_seconds{percentile="p99"} 0.0015',
        'mysql_query_response_time_seconds{percentile="p999"} 0.025',
      ),
    );
    assert.equal(
      text('percona.response-time', [{ name: 'p95', value: 100, type: G, meta: { p95: '95.3' } }]),
      lines(
        '# HELP mysql_percona_response_time_seconds Query latency percentile from the QUERY_RESPONSE_TIME plugin (mean of the bucket reached), by percentile (p99, p999, ...).',
        '# TYPE mysql_percona_response_time_seconds gauge',
        'mysql_percona_response_time_seconds{percentile="p95"} 0.0001',
      ),
    );
  });

  it('error.*: one counter family per scope, the group as labels', () => {
    const err = { error_number: '1146', error_name: 'ER_NO_SUCH_TABLE' };
    assert.equal(
      text('error.global', [
        val('raised', 4, C, err),
        val('raised', 4, C, { error_number: '', error_name: '' }),
      ]),
      lines(
        '# HELP mysql_error_global_raised_total Server errors raised, by error ("" = total).',
        '# TYPE mysql_error_global_raised_total counter',
        'mysql_error_global_raised_total{error_name="",error_number=""} 4',
        'mysql_error_global_raised_total{error_name="ER_NO_SUCH_TABLE",error_number="1146"} 4',
      ),
    );
    const scopes: Array<[string, Record<string, string>]> = [
      ['error.account', { error_user: 'app', error_host: '%' }],
      ['error.host', { error_host: '10.0.0.1' }],
      ['error.user', { error_user: 'app' }],
      ['error.thread', { error_thread: '42' }],
    ];
    for (const [domain, entity] of scopes) {
      const [s] = translateForExporter(domain, [val('raised', 1, C, { ...err, ...entity })]);
      assert.equal(s?.name, `mysql_${domain.replace('.', '_')}_raised_total`);
      assert.equal(s?.type, 'counter');
      assert.deepEqual(s?.labels, { ...err, ...entity });
    }
  });
});
