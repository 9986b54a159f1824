import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MetricType } from '../../core/metrics.js';
import { type PooledDb } from '../../db/pool.js';
import { startMariaDB, type MariaDB, connectAs } from '../../../test/helpers/mariadb.js';
import { FakeDb, NO_SIGNAL, planOf } from '../kit/test-helpers.js';
import {
  BUFFER_POOL_COLUMNS,
  BufferPoolCollector,
  bufferPoolNames,
  bufferPoolValues,
  buildBufferPoolQuery,
  help,
} from './index.js';

const FROM = 'FROM information_schema.innodb_buffer_pool_stats';
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

void describe('innodb.buffer-pool plan checks, query and rows', () => {
  void it('lists 31 columns: 21 gauges (sizes, pending, rates, ratios, current) and 10 counters', () => {
    assert.equal(BUFFER_POOL_COLUMNS.size, 31);
    const counters = [...BUFFER_POOL_COLUMNS]
      .filter(([, t]) => t === MetricType.CumulativeCounter)
      .map(([n]) => n);
    assert.deepEqual(counters, [
      'pages_made_young',
      'pages_not_made_young',
      'number_pages_read',
      'number_pages_created',
      'number_pages_written',
      'number_pages_get',
      'number_pages_read_ahead',
      'number_read_ahead_evicted',
      'lru_io_total',
      'uncompress_total',
    ]);
    for (const [name, type] of BUFFER_POOL_COLUMNS) {
      if (!counters.includes(name)) assert.equal(type, MetricType.Gauge, name);
    }
    for (const rate of ['pages_read_rate', 'read_ahead_evicted_rate', 'hit_rate', 'pool_size']) {
      assert.equal(BUFFER_POOL_COLUMNS.get(rate), MetricType.Gauge);
    }
  });

  void it('sums each wanted column under its own name', () => {
    assert.deepEqual(buildBufferPoolQuery(['pool_size', 'hit_rate']), {
      sql: `SELECT SUM(pool_size) AS pool_size, SUM(hit_rate) AS hit_rate ${FROM}`,
      names: ['pool_size', 'hit_rate'],
    });
  });

  void it('all: yes takes every column; otherwise the listed ones, Blip spellings mapped, once each', () => {
    assert.deepEqual(bufferPoolNames('yes', ['ignored']), [...BUFFER_POOL_COLUMNS.keys()]);
    assert.deepEqual(
      bufferPoolNames('no', ['free_buffers', 'young_make_per_thousand_get', 'young_make_per_thousand_gets']),
      ['free_buffers', 'young_make_per_thousand_gets'],
    );
    assert.deepEqual(bufferPoolNames('', ['not_young_make_per_thousand_get']), [
      'not_young_make_per_thousand_gets',
    ]);
  });

  void it('refuses an unknown or wrongly cased metric and an empty list', () => {
    assert.throws(
      () => bufferPoolNames('no', ['pool_size', 'Pool_Size']),
      /^Error: invalid metric "Pool_Size"$/,
    );
    assert.throws(() => bufferPoolNames('no', ['pool_id']), /^Error: invalid metric "pool_id"$/);
    assert.throws(() => bufferPoolNames('no', []), /^Error: no metrics specified$/);
    assert.throws(() => buildBufferPoolQuery(['pool_size; DROP TABLE x']), /invalid metric/);
  });

  void it('parses the summed row (decimal text), skipping NULL sums', () => {
    const q = buildBufferPoolQuery(['pool_size', 'pages_read_rate', 'hit_rate', 'number_pages_get']);
    assert.deepEqual(
      bufferPoolValues(q, [
        { pool_size: '16384', pages_read_rate: '0.52', hit_rate: '1000', number_pages_get: null },
      ]),
      [
        { name: 'pool_size', value: 16384, type: MetricType.Gauge },
        { name: 'pages_read_rate', value: 0.52, type: MetricType.Gauge },
        { name: 'hit_rate', value: 1000, type: MetricType.Gauge },
      ],
    );
    assert.deepEqual(bufferPoolValues(q, []), []);
  });

  void it('declares the all option with its effective default', () => {
    assert.deepEqual(
      help.options.map((o) => [o.name, o.default, Object.keys(o.values ?? {})]),
      [['all', 'no', ['yes', 'no']]],
    );
  });

  void it('on MySQL 8 with several instances the server sums; the row is read as one pool', async () => {
    // A MySQL 8.0 server with innodb_buffer_pool_instances=4: SUM over the 4 rows.
    const db = new FakeDb('8.0.36', () => [
      {
        pool_size: '32764',
        free_buffers: '30112',
        young_make_per_thousand_gets: '0',
        pages_made_young: '12',
      },
    ]);
    const c = new BufferPoolCollector({ monitorId: 'm', db });
    await c.prepare(
      planOf({
        l: {
          'innodb.buffer-pool': {
            metrics: ['pool_size', 'free_buffers', 'young_make_per_thousand_get', 'pages_made_young'],
          },
        },
      }),
      NO_SIGNAL,
    );
    assert.deepEqual(await c.collect('l', NO_SIGNAL), {
      values: [
        { name: 'pool_size', value: 32764, type: MetricType.Gauge },
        { name: 'free_buffers', value: 30112, type: MetricType.Gauge },
        { name: 'young_make_per_thousand_gets', value: 0, type: MetricType.Gauge },
        { name: 'pages_made_young', value: 12, type: MetricType.CumulativeCounter },
      ],
    });
    assert.deepEqual(db.queries, [
      {
        sql: `SELECT SUM(pool_size) AS pool_size, SUM(free_buffers) AS free_buffers, SUM(young_make_per_thousand_gets) AS young_make_per_thousand_gets, SUM(pages_made_young) AS pages_made_young ${FROM}`,
        params: [],
      },
    ]);
  });
});

void describe('innodb.buffer-pool against a real MariaDB', () => {
  let server: MariaDB;
  let db: PooledDb;

  before(async () => {
    server = await startMariaDB();
    await server.createUser('mon', 'mon-pass-1', ['PROCESS ON *.*']);
    db = connectAs(server, 'mon', 'mon-pass-1');
  });
  after(async () => {
    await db.close();
    await server.stop();
  });

  async function collect(options: Record<string, string>, metrics: string[] = []) {
    const c = new BufferPoolCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'innodb.buffer-pool': { metrics, options } } }), NO_SIGNAL);
    return c.collect('l', NO_SIGNAL);
  }

  const STABLE = ['pool_size', 'free_buffers', 'database_pages'];
  const sumNow = async (): Promise<number[]> => {
    const [row] = await server.query(
      `SELECT SUM(POOL_SIZE) AS a, SUM(FREE_BUFFERS) AS b, SUM(DATABASE_PAGES) AS c ${FROM}`,
    );
    return [Number(row?.a), Number(row?.b), Number(row?.c)];
  };

  void it('equals SUM(...) of the table read at the same moment for the stable columns', async () => {
    // After startup the server settles; retry until nothing moved around our read.
    for (let attempt = 1; ; attempt++) {
      const before = await sumNow();
      const res = await collect({}, STABLE);
      const after = await sumNow();
      if (JSON.stringify(before) !== JSON.stringify(after)) {
        assert.ok(attempt < 20, 'buffer pool never quiesced');
        await sleep(250);
        continue;
      }
      assert.equal(res.error, undefined);
      assert.deepEqual(
        res.values,
        STABLE.map((name, i) => ({ name, value: before[i], type: MetricType.Gauge })),
      );
      assert.ok((before[0] ?? 0) > 900, `pool_size ${before[0]}`); // 16M of 16K pages, minus overhead
      break;
    }
  });

  void it('all: yes reports every column with its type, the real per-thousand-gets names included', async () => {
    const res = await collect({ all: 'yes' });
    assert.equal(res.error, undefined);
    assert.deepEqual(
      res.values.map((v) => [v.name, v.type]),
      [...BUFFER_POOL_COLUMNS],
    );
    const byName = new Map(res.values.map((v) => [v.name, v.value]));
    const [row] = await server.query(`SELECT SUM(POOL_SIZE) AS p, SUM(NUMBER_PAGES_GET) AS g ${FROM}`);
    assert.equal(byName.get('pool_size'), Number(row?.p));
    assert.ok((byName.get('number_pages_get') ?? Infinity) <= Number(row?.g));
    assert.ok((byName.get('number_pages_get') ?? 0) > 0);
  });

  void it('counts page gets as a cumulative counter that grows with work', async () => {
    const first = (await collect({}, ['number_pages_get'])).values[0];
    await server.query('CREATE DATABASE IF NOT EXISTS app');
    await server.query('CREATE TABLE app.t (id INT PRIMARY KEY) ENGINE=InnoDB');
    await server.query('INSERT INTO app.t VALUES (1), (2), (3)');
    await server.query('SELECT * FROM app.t');
    const second = (await collect({}, ['number_pages_get'])).values[0];
    assert.equal(first?.type, MetricType.CumulativeCounter);
    assert.ok((second?.value ?? 0) > (first?.value ?? Infinity), `${first?.value} → ${second?.value}`);
  });
});
