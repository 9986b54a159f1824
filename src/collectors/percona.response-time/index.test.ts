import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CollectError } from '../../core/collector.js';
import { type DbError, type Row } from '../../core/db.js';
import { MetricType } from '../../core/metrics.js';
import { type PooledDb } from '../../db/pool.js';
import { parseServerVersion } from '../../db/flavor.js';
import { startMariaDB, type MariaDB, connectAs } from '../../../test/helpers/mariadb.js';
import { sourceFor } from '../kit/sources.js';
import { FakeDb, NO_SIGNAL, planOf } from '../kit/test-helpers.js';
import {
  DOMAIN,
  FLUSH_QUERY,
  PerconaResponseTimeCollector,
  QRT_QUERY,
  help,
  parseQrtRows,
  qrtPercentile,
  qrtValues,
} from './index.js';

/** `      0.000100` — the plugin right-aligns TIME and TOTAL in 14 characters. */
const pad = (s: string) => s.padStart(14, ' ');

/**
 * A recorded QUERY_RESPONSE_TIME answer (range base 10, 13 buckets, TOO LONG filtered out),
 * deliberately out of order. 100 queries.
 */
const ROWS: Row[] = [
  ['1.000000', 1, '0.400000'],
  ['0.000001', 0, '0.000000'],
  ['0.000010', 10, '0.000050'],
  ['0.000100', 60, '0.003000'],
  ['0.001000', 20, '0.010000'],
  ['0.010000', 6, '0.030000'],
  ['0.100000', 3, '0.150000'],
  ['10.000000', 0, '0.000000'],
  ['100.000000', 0, '0.000000'],
  ['1000.000000', 0, '0.000000'],
  ['10000.000000', 0, '0.000000'],
  ['100000.000000', 0, '0.000000'],
  ['1000000.000000', 0, '0.000000'],
].map(([time, count, total]) => ({
  time: pad(String(time)),
  count: String(count),
  total: pad(String(total)),
}));

const close = (a: number | undefined, b: number) =>
  a !== undefined && Math.abs(a - b) <= 1e-9 * Math.max(1, b);

function dbErr(message: string, errno: number): DbError {
  const e: DbError = new Error(message);
  e.errno = errno;
  return e;
}

async function prepared(
  db: FakeDb | PooledDb,
  metrics: string[],
  options: Record<string, string> = {},
  errors: Record<string, string> = {},
) {
  const c = new PerconaResponseTimeCollector({ monitorId: 'm', db });
  await c.prepare(planOf({ l: { 'percona.response-time': { metrics, options, errors } } }), NO_SIGNAL);
  return c;
}

void describe('percona.response-time from recorded plugin rows', () => {
  void it('parses right-aligned text and sorts buckets by time', () => {
    const b = parseQrtRows('l', ROWS);
    assert.equal(b.length, 13);
    assert.deepEqual(b[0], { time: 0.000001, count: 0, total: 0 });
    assert.deepEqual(b[3], { time: 0.001, count: 20, total: 0.01 });
    assert.deepEqual(b[6], { time: 1, count: 1, total: 0.4 });
    assert.throws(
      () => parseQrtRows('lvl', [{ time: 'TOO LONG', count: '1', total: '1' }]),
      /^Error: lvl: qrt: time couldn't be parsed into a valid float: TOO LONG$/,
    );
  });

  void it('each percentile is the mean latency of the bucket where the cumulative count reaches N×q', () => {
    const b = parseQrtRows('l', ROWS);
    // By hand, N = 100. Cumulative counts: 0, 10, 70, 90, 96, 99, 100.
    // q=0.10 → target 10 → bucket ≤10µs (cum 10): 0.000050 s / 10 = 5 µs, real 0.10
    // q=0.50 → target 50 → bucket ≤100µs (cum 70): 0.003 s / 60 = 50 µs, real 0.70
    // q=0.90 → target 90 → bucket ≤1ms (cum 90): 0.01 s / 20 = 500 µs, real 0.90
    // q=0.99 → target 99 → bucket ≤100ms (cum 99): 0.15 s / 3 = 50 ms, real 0.99
    // q=0.999 → target 99.9 → bucket ≤1s (cum 100): 0.4 s / 1 = 400 ms, real 1.00
    const expected: [number, number, number][] = [
      [0.1, 0.000005, 0.1],
      [0.5, 0.00005, 0.7],
      [0.9, 0.0005, 0.9],
      [0.99, 0.05, 0.99],
      [0.999, 0.4, 1],
    ];
    for (const [q, seconds, real] of expected) {
      const [v, r] = qrtPercentile(b, q);
      assert.ok(close(v, seconds), `q=${q}: ${v} ≠ ${seconds}`);
      assert.ok(close(r, real), `q=${q}: real ${r} ≠ ${real}`);
    }
    assert.deepEqual(qrtPercentile([], 0.99), [0, 0]);
  });

  void it('values are µs gauges with the real percentile as meta; N = 0 gives nothing', () => {
    const b = parseQrtRows('l', ROWS);
    const values = qrtValues(
      b,
      [
        { name: 'p50', q: 0.5 },
        { name: 'p999', q: 0.999 },
      ],
      true,
    );
    assert.deepEqual(
      values.map((v) => [v.name, v.type, v.meta]),
      [
        ['p50', MetricType.Gauge, { p50: '70.0' }],
        ['p999', MetricType.Gauge, { p999: '100.0' }],
      ],
    );
    assert.ok(close(values[0]?.value, 50));
    assert.ok(close(values[1]?.value, 400000));
    assert.equal(qrtValues(b, [{ name: 'p50', q: 0.5 }], false)[0]?.meta, undefined);
    const empty = parseQrtRows(
      'l',
      ROWS.map((r) => ({ ...r, count: '0', total: pad('0.000000') })),
    );
    assert.deepEqual(qrtValues(empty, [{ name: 'p99', q: 0.99 }], true), []);
  });

  void it('collects, then flushes; a failed flush keeps the values and reports the error', async () => {
    let flushFails = false;
    const db = new FakeDb('5.7.44-48-log', (sql) => {
      if (sql === FLUSH_QUERY && flushFails)
        throw dbErr('Access denied; you need (at least one of) the SUPER privilege(s)', 1227);
      return sql === QRT_QUERY ? ROWS : [];
    });
    const c = await prepared(db, ['p90']);
    const ok = await c.collect('l', NO_SIGNAL);
    assert.equal(ok.error, undefined);
    assert.ok(close(ok.values[0]?.value, 500));
    assert.deepEqual(
      db.queries.map((x) => x.sql),
      [QRT_QUERY, FLUSH_QUERY],
    );
    flushFails = true;
    const bad = await c.collect('l', NO_SIGNAL);
    assert.ok(close(bad.values[0]?.value, 500));
    assert.match(bad.error?.message ?? '', /^flush failed: Access denied/);
  });

  void it('flush: no never flushes', async () => {
    const db = new FakeDb('5.7.44', () => ROWS);
    const c = await prepared(db, ['p99'], { flush: 'no' });
    await c.collect('l', NO_SIGNAL);
    assert.deepEqual(
      db.queries.map((x) => x.sql),
      [QRT_QUERY],
    );
  });

  void it('MySQL 8 has no plugin: not supported, without asking', async () => {
    assert.deepEqual(sourceFor(DOMAIN, parseServerVersion('8.0.36')), {
      unsupported: 'MySQL 8.0 and later have no QUERY_RESPONSE_TIME plugin',
    });
    for (const v of ['5.7.44', '10.11.19-MariaDB']) {
      const choice = sourceFor(DOMAIN, parseServerVersion(v));
      assert.equal('source' in choice ? choice.source : choice.unsupported, 'query_response_time');
    }
    const db = new FakeDb('8.0.36', () => ROWS);
    const res = await (await prepared(db, ['p99'])).collect('l', NO_SIGNAL);
    assert.equal(res.error?.unsupported, true);
    assert.equal(
      res.error?.message,
      'percona.response-time: not supported on mysql 8.0.36: MySQL 8.0 and later have no QUERY_RESPONSE_TIME plugin',
    );
    assert.deepEqual(db.queries, []);
  });

  void it('names the unknown-table policy, so a plan setting it governs 1109 (zero: every percentile as 0)', async () => {
    const db = new FakeDb('5.7.44', () => {
      throw dbErr("Unknown table 'QUERY_RESPONSE_TIME' in information_schema", 1109);
    });
    const c = await prepared(db, ['p99', 'p50']);
    const res = await c.collect('l', NO_SIGNAL);
    assert.ok(res.error instanceof CollectError);
    assert.equal(res.error.unsupported, true);
    assert.equal(res.error.policy, 'unknown-table');
    assert.equal(res.error.errno, 1109);
    assert.equal(
      res.error.message,
      "percona.response-time: not supported on mysql 5.7.44: no QUERY_RESPONSE_TIME plugin loaded (Unknown table 'QUERY_RESPONSE_TIME' in information_schema)",
    );
    assert.deepEqual(res.error.zero, [
      { name: 'p99', value: 0, type: MetricType.Gauge },
      { name: 'p50', value: 0, type: MetricType.Gauge },
    ]);
    assert.equal(db.queries.length, 1);
  });

  void it('declares its options, the unknown-table error and pN', () => {
    assert.deepEqual(
      help.options.map((o) => [o.name, o.default, Object.keys(o.values ?? {})]),
      [
        ['real-percentiles', 'yes', ['yes', 'no']],
        ['flush', 'yes', ['yes', 'no']],
      ],
    );
    assert.deepEqual(
      help.errors.map((e) => [e.name, e.errnos]),
      [['unknown-table', [1109]]],
    );
  });
});

void describe('percona.response-time against MariaDB with the query_response_time plugin', () => {
  let server: MariaDB;
  let db: PooledDb;

  before(async () => {
    server = await startMariaDB({
      args: ['--plugin-load-add=query_response_time', '--query-response-time-stats=ON'],
    });
    await server.createUser('mon', 'mon-pass-7', ['PROCESS ON *.*', 'SUPER ON *.*']);
    db = connectAs(server, 'mon', 'mon-pass-7');
  });
  after(async () => {
    await db.close();
    await server.stop();
  });

  /** The slowest non-empty bucket as the plugin reports it: [upper bound s, count, total s]. */
  async function slowest(): Promise<[number, number, number]> {
    const rows = await server.query(QRT_QUERY);
    const b = rows
      .map(
        (r) =>
          [Number(String(r.time).trim()), Number(r.count), Number(String(r.total).trim())] as [
            number,
            number,
            number,
          ],
      )
      .filter(([, count]) => count > 0)
      .sort((x, y) => x[0] - y[0]);
    const last = b[b.length - 1];
    assert.ok(last !== undefined);
    return last;
  }

  void it('reports real latencies and flushes the histogram', async () => {
    const c = await prepared(db, ['p50', 'p100']);
    await c.collect('l', NO_SIGNAL); // whatever happened since start, then flushed

    for (let i = 0; i < 3; i++) await server.query('SELECT SLEEP(0.3)');
    for (let i = 0; i < 10; i++) await server.query('SELECT 1');
    const [bound, count, total] = await slowest();
    assert.deepEqual([bound, count], [1, 3], 'three 0.3 s statements in the 0.1–1 s bucket');

    const res = await c.collect('l', NO_SIGNAL);
    assert.equal(res.error, undefined);
    const [p50, p100] = res.values;
    // p100 is the mean of the slowest bucket: exactly what the plugin says about it.
    assert.equal(p100?.name, 'p100');
    assert.ok(close(p100?.value, (total / count) * 1e6), `${p100?.value} vs ${(total / count) * 1e6}`);
    assert.ok((p100?.value ?? 0) >= 300_000 && (p100?.value ?? 0) < 400_000);
    assert.deepEqual(p100?.meta, { p100: '100.0' });
    // 10+ fast statements against 3 slow ones: the median is fast.
    assert.equal(p50?.name, 'p50');
    assert.ok((p50?.value ?? Infinity) < 1000, `p50 ${p50?.value} µs`);

    // Flushed: the slow statements are gone.
    const after = await server.query(QRT_QUERY);
    const slow = after.find((r) => Number(String(r.time).trim()) === 1);
    assert.equal(Number(slow?.count), 0);
  });

  void it('without the plugin: not supported, saying how to load it', async () => {
    await server.query("UNINSTALL SONAME 'query_response_time'");
    const c = await prepared(db, ['p99']);
    const res = await c.collect('l', NO_SIGNAL);
    assert.deepEqual(res.values, []);
    assert.equal(res.error?.unsupported, true);
    assert.match(
      res.error?.message ?? '',
      /^percona\.response-time: not supported on mariadb 10\.11\.\d+: plugin query_response_time not loaded \(INSTALL SONAME 'query_response_time'\) \(Unknown table 'QUERY_RESPONSE_TIME' in information_schema\)$/,
    );
  });
});
