import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CollectError } from '../../core/collector.js';
import type { DbError, Row } from '../../core/db.js';
import { MetricType } from '../../core/metrics.js';
import { parseServerVersion } from '../../db/flavor.js';
import { sourceFor } from '../kit/sources.js';
import { FakeDb, NO_SIGNAL, planOf } from '../kit/test-helpers.js';
import { DOMAIN, QueryResponseTimeCollector, help, percentileQuery, percentileValue } from './index.js';

/**
 * A MySQL 8.0 events_statements_histogram_global result set, in the server's shape: bucket
 * n spans [10µs·10^((n−1)/50), 10µs·10^(n/50)) in picoseconds, and BUCKET_QUANTILE is
 * COUNT_BUCKET_AND_LOWER / total. 1000 statements; buckets not listed are empty.
 */
const HISTOGRAM: Row[] = [
  [0, '0', '10000000', 120, 120, '0.120000'],
  [1, '10000000', '10471285', 380, 500, '0.500000'],
  [2, '10471285', '10964781', 200, 700, '0.700000'],
  [3, '10964781', '11481536', 0, 700, '0.700000'],
  [4, '11481536', '12022644', 250, 950, '0.950000'],
  [50, '95499258', '100000000', 40, 990, '0.990000'],
  [100, '954992586', '1000000000', 8, 998, '0.998000'],
  [150, '9549925860', '10000000000', 1, 999, '0.999000'],
  [200, '95499258602', '100000000000', 1, 1000, '1.000000'],
].map(([n, low, high, count, cum, quantile]) => ({
  BUCKET_NUMBER: String(n),
  BUCKET_TIMER_LOW: String(low),
  BUCKET_TIMER_HIGH: String(high),
  COUNT_BUCKET: String(count),
  COUNT_BUCKET_AND_LOWER: String(cum),
  BUCKET_QUANTILE: String(quantile),
}));

/** The same table right after TRUNCATE: every bucket empty, quantile 0. */
const EMPTY: Row[] = HISTOGRAM.map((r) => ({
  ...r,
  COUNT_BUCKET: '0',
  COUNT_BUCKET_AND_LOWER: '0',
  BUCKET_QUANTILE: '0.000000',
}));

/**
 * What MySQL answers to the percentile query over a histogram: the first bucket (by number)
 * whose quantile reaches q, as `p` = ROUND(quantile*100, 1) (a DOUBLE: `50`, `99.9`) and
 * `us` = ROUND(high/1000000, 3) (a DECIMAL: `10.471`). Test scaffolding standing in for the
 * server; the expected values below are worked out by hand, not with this function.
 */
function answer(histogram: Row[], sql: string): Row[] {
  const m = /WHERE bucket_quantile >= (\d\.\d{6}) ORDER BY bucket_number LIMIT 1$/.exec(sql);
  if (m === null) throw new Error(`unexpected query: ${sql}`);
  const q = Number(m[1]);
  const hit = histogram
    .filter((r) => Number(r.BUCKET_QUANTILE) >= q)
    .sort((a, b) => Number(a.BUCKET_NUMBER) - Number(b.BUCKET_NUMBER))[0];
  if (hit === undefined) return [];
  const high = BigInt(hit.BUCKET_TIMER_HIGH ?? '0');
  const thousandths = (high + 500n) / 1000n; // ps → ns, rounded: µs with 3 decimals
  const us = `${thousandths / 1000n}.${String(thousandths % 1000n).padStart(3, '0')}`;
  return [{ p: String(Math.round(Number(hit.BUCKET_QUANTILE) * 1000) / 10), us }];
}

const TRUNCATE = 'TRUNCATE TABLE performance_schema.events_statements_histogram_global';

function dbErr(message: string, errno: number): DbError {
  const e: DbError = new Error(message);
  e.errno = errno;
  return e;
}

const NO_TABLE = dbErr("Table 'performance_schema.events_statements_histogram_global' doesn't exist", 1146);

async function prepared(
  db: FakeDb,
  metrics: string[],
  options: Record<string, string> = {},
  errors: Record<string, string> = {},
) {
  const c = new QueryResponseTimeCollector({ monitorId: 'm', db });
  await c.prepare(planOf({ l: { 'query.response-time': { metrics, options, errors } } }), NO_SIGNAL);
  return c;
}

void describe('query.response-time source by flavor', () => {
  void it('only MySQL 8.0.1+ has the histogram (source table)', () => {
    const source = (v: string) => sourceFor(DOMAIN, parseServerVersion(v));
    const yes = { source: 'events_statements_histogram_global' };
    assert.deepEqual(source('8.0.1'), yes);
    assert.deepEqual(source('8.4.3'), yes);
    assert.deepEqual(source('9.1.0'), yes);
    assert.deepEqual(source('8.0.0-dmr'), {
      unsupported:
        'performance_schema.events_statements_histogram_global exists only in MySQL 8.0.1 and later',
    });
    assert.ok('unsupported' in source('5.7.44-log'));
    assert.deepEqual(source('10.11.19-MariaDB-0+deb12u1-log'), {
      unsupported: 'MariaDB has no performance_schema.events_statements_histogram_global (MySQL 8.0.1+ only)',
    });
    // A version that could not be read: the query decides.
    assert.deepEqual(source('weird'), yes);
  });

  void it('prints q with 6 decimals', () => {
    assert.equal(
      percentileQuery(0.999),
      'SELECT ROUND(bucket_quantile * 100, 1) AS p, ROUND(bucket_timer_high / 1000000, 3) AS us FROM performance_schema.events_statements_histogram_global WHERE bucket_quantile >= 0.999000 ORDER BY bucket_number LIMIT 1',
    );
    assert.match(percentileQuery(0.5), / >= 0\.500000 /);
  });

  void it('a row becomes µs with the real percentile as meta; no row, nothing', () => {
    const p = { name: 'p99', q: 0.99 };
    assert.deepEqual(percentileValue(p, { p: '99.2', us: '1023.456' }, true), {
      name: 'p99',
      value: 1023.456,
      type: MetricType.Gauge,
      meta: { p99: '99.2' },
    });
    assert.deepEqual(percentileValue(p, { p: '100', us: '5.000' }, true)?.meta, { p99: '100.0' });
    assert.deepEqual(percentileValue(p, { p: '99.2', us: '1023.456' }, false), {
      name: 'p99',
      value: 1023.456,
      type: MetricType.Gauge,
    });
    assert.equal(percentileValue(p, undefined, true), undefined);
  });

  void it('declares its options, errors and the pN gauge', () => {
    assert.deepEqual(
      help.options.map((o) => [o.name, o.default, Object.keys(o.values ?? {})]),
      [
        ['real-percentiles', 'yes', ['yes', 'no']],
        ['truncate-table', 'yes', ['yes', 'no']],
        ['truncate-timeout', '250ms', []],
      ],
    );
    assert.deepEqual(
      help.errors.map((e) => [e.name, e.errnos]),
      [
        ['table-not-exist', [1146]],
        ['truncate-timeout', undefined],
      ],
    );
    assert.deepEqual(help.metrics, [
      { name: 'pN', type: MetricType.Gauge, description: help.metrics[0]?.description },
    ]);
  });
});

void describe('query.response-time on recorded MySQL 8 histograms', () => {
  void it('each percentile is the upper bound of the first bucket reaching it, in µs', async () => {
    const db = new FakeDb('8.0.36', (sql) => (sql === TRUNCATE ? [] : answer(HISTOGRAM, sql)));
    const c = await prepared(db, ['p50', 'p75', 'p95', 'p99', 'p99.5', 'p999', 'p100']);
    const res = await c.collect('l', NO_SIGNAL);
    assert.equal(res.error, undefined);
    // By hand: q=0.50 → bucket 1 (quantile 0.5), high 10471285 ps = 10.471285 µs → 10.471;
    // 0.75 → bucket 4 (0.7 < 0.75 ≤ 0.95), 12022644 ps → 12.023, really the 95th;
    // 0.95 → bucket 4; 0.99 → bucket 50, 1e8 ps = 100 µs; 0.995 → bucket 100 (0.998), 1000 µs;
    // 0.999 → bucket 150, 10000 µs; 1.0 → bucket 200, 100000 µs.
    assert.deepEqual(
      res.values.map((v) => [v.name, v.value, v.type, v.meta]),
      [
        ['p50', 10.471, MetricType.Gauge, { p50: '50.0' }],
        ['p75', 12.023, MetricType.Gauge, { p75: '95.0' }],
        ['p95', 12.023, MetricType.Gauge, { p95: '95.0' }],
        ['p99', 100, MetricType.Gauge, { p99: '99.0' }],
        ['p995', 1000, MetricType.Gauge, { p995: '99.8' }],
        ['p999', 10000, MetricType.Gauge, { p999: '99.9' }],
        ['p100', 100000, MetricType.Gauge, { p100: '100.0' }],
      ],
    );
    // One query per percentile, then the truncate (MySQL: no SET STATEMENT), bounded by the
    // default 250ms deadline.
    assert.equal(db.queries.length, 8);
    assert.match(db.queries[0]?.sql ?? '', / >= 0\.500000 /);
    assert.match(db.queries[6]?.sql ?? '', / >= 1\.000000 /);
    assert.equal(db.queries[7]?.sql, TRUNCATE);
  });

  void it('right after a truncate the histogram is empty: no values, no error', async () => {
    const db = new FakeDb('8.0.36', (sql) => (sql === TRUNCATE ? [] : answer(EMPTY, sql)));
    const c = await prepared(db, ['p99', 'p999']);
    assert.deepEqual(await c.collect('l', NO_SIGNAL), { values: [] });
  });

  void it('real-percentiles: no drops meta; truncate-table: no never truncates', async () => {
    const db = new FakeDb('8.0.36', (sql) => answer(HISTOGRAM, sql));
    const c = await prepared(db, ['p999'], {
      'real-percentiles': 'no',
      'truncate-table': 'no',
      'truncate-timeout': 'x',
    });
    assert.deepEqual(await c.collect('l', NO_SIGNAL), {
      values: [{ name: 'p999', value: 10000, type: MetricType.Gauge }],
    });
    assert.equal(
      db.queries.some((q) => q.sql.startsWith('TRUNCATE')),
      false,
    );
  });

  void it('truncate failures are typed truncate-timeout errors, zeroed values ready for a zero policy', async () => {
    let failTruncate = true;
    const db = new FakeDb('8.0.36', (sql) => {
      if (sql !== TRUNCATE) return answer(HISTOGRAM, sql);
      if (failTruncate) throw dbErr('Lock wait timeout exceeded; try restarting transaction', 1205);
      return [];
    });
    const c = await prepared(db, ['p99']);
    const first = await c.collect('l', NO_SIGNAL);
    assert.deepEqual(
      first.values.map((v) => v.value),
      [100],
    ); // row 2: values kept
    assert.ok(first.error instanceof CollectError);
    assert.equal(first.error.policy, 'truncate-timeout');
    assert.equal(first.error.errno, 1205);
    assert.deepEqual(first.error.zero, []);
    const second = await c.collect('l', NO_SIGNAL);
    assert.deepEqual(second.values, []); // row 3: dropped unless the policy zeroes them
    assert.equal(second.error?.policy, 'truncate-timeout');
    assert.deepEqual(second.error?.zero, [{ name: 'p99', value: 0, type: MetricType.Gauge }]); // meta gone
    failTruncate = false;
    const third = await c.collect('l', NO_SIGNAL); // row 4: nothing to report, same values choice
    assert.deepEqual([third.values, third.error?.quiet], [[], true]);
    assert.deepEqual(third.error?.zero, [{ name: 'p99', value: 0, type: MetricType.Gauge }]);
    assert.equal((await c.collect('l', NO_SIGNAL)).values[0]?.value, 100); // row 1
  });

  void it('an unexpected query error fails the whole domain for the interval', async () => {
    const db = new FakeDb('8.0.36', () => {
      throw dbErr(
        "SELECT command denied to user 'mon'@'%' for table 'events_statements_histogram_global'",
        1142,
      );
    });
    const c = await prepared(db, ['p99', 'p999']);
    const res = await c.collect('l', NO_SIGNAL);
    assert.deepEqual(res.values, []);
    assert.equal(res.error?.errno, 1142);
    assert.equal(res.error?.unsupported, false);
    assert.equal(db.queries.length, 1);
  });

  void it('no metrics listed: the 99.9th percentile, p999, as Blip', async () => {
    const db = new FakeDb('8.0.36', (sql) => (sql === TRUNCATE ? [] : answer(HISTOGRAM, sql)));
    const c = await prepared(db, []);
    assert.deepEqual((await c.collect('l', NO_SIGNAL)).values, [
      { name: 'p999', value: 10000, type: MetricType.Gauge, meta: { p999: '99.9' } },
    ]);
    assert.match(db.queries[0]?.sql ?? '', / >= 0\.999000 /);
  });

  void it('prepare refuses q outside (0, 1] and a bad truncate-timeout', async () => {
    const db = new FakeDb('8.0.36', () => []);
    await assert.rejects(prepared(db, ['p0']), /must be greater than 0/);
    await assert.rejects(
      prepared(db, ['p99'], { 'truncate-timeout': 'soon' }),
      /^Error: Invalid truncate duration: /,
    );
  });
});

void describe('query.response-time where the table does not exist', () => {
  void it('MariaDB: not supported, reported without querying', async () => {
    const db = new FakeDb('10.11.19-MariaDB-0+deb12u1', () => {
      throw NO_TABLE;
    });
    const c = await prepared(db, ['p99']);
    const res = await c.collect('l', NO_SIGNAL);
    assert.deepEqual(res.values, []);
    assert.equal(res.error?.unsupported, true);
    assert.equal(
      res.error?.message,
      'query.response-time: not supported on mariadb 10.11.19: MariaDB has no performance_schema.events_statements_histogram_global (MySQL 8.0.1+ only)',
    );
    assert.deepEqual(db.queries, []);
  });

  void it('names the table-not-exist policy, so a plan setting it governs the error (zero: the percentile being read)', async () => {
    const db = new FakeDb('5.7.44', () => {
      throw NO_TABLE;
    });
    const c = await prepared(db, ['p99', 'p999']);
    const res = await c.collect('l', NO_SIGNAL);
    assert.deepEqual(res.values, []);
    assert.ok(res.error instanceof CollectError);
    assert.equal(res.error.unsupported, true);
    assert.equal(res.error.policy, 'table-not-exist');
    assert.deepEqual(res.error.zero, [{ name: 'p99', value: 0, type: MetricType.Gauge }]);
    assert.deepEqual(db.queries, [], 'the source table already knows: no query');
  });

  void it('a MySQL 8 that answers 1146 anyway is reported as not supported, with the server text', async () => {
    const db = new FakeDb('8.0.36', () => {
      throw NO_TABLE;
    });
    const c = await prepared(db, ['p99']);
    const res = await c.collect('l', NO_SIGNAL);
    assert.equal(res.error?.unsupported, true);
    assert.equal(res.error?.policy, 'table-not-exist');
    assert.equal(res.error?.errno, 1146);
    assert.equal(
      res.error?.message,
      "query.response-time: not supported on mysql 8.0.36: no performance_schema.events_statements_histogram_global (Table 'performance_schema.events_statements_histogram_global' doesn't exist)",
    );
  });
});
