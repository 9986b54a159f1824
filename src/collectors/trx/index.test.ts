import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createConnection, type Connection } from 'mysql2/promise';
import { MetricType } from '../../core/metrics.js';
import { createDb, type PooledDb } from '../../db/pool.js';
import { startMariaDB, type MariaDB, tcpSpec } from '../../../test/helpers/mariadb.js';
import { FakeDb, NO_SIGNAL, planOf } from '../kit/test-helpers.js';
import { TRX_SQL, TrxCollector, checkTrxMetrics, help, trxValues } from './index.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** InnoDB refreshes its INNODB_TRX snapshot at most every 100 ms: let it expire. */
const CACHE_MS = 250;

void describe('trx from given rows', () => {
  void it('reads the seconds column as the oldest gauge', () => {
    assert.deepEqual(trxValues([{ t: '17' }]), [{ name: 'oldest', value: 17, type: MetricType.Gauge }]);
    assert.deepEqual(trxValues([{ t: '0' }]), [{ name: 'oldest', value: 0, type: MetricType.Gauge }]);
    assert.deepEqual(trxValues([{ t: null }]), []);
  });

  void it('accepts only a non-empty list of oldest', () => {
    checkTrxMetrics(['oldest']);
    checkTrxMetrics(['Oldest', 'oldest']);
    assert.throws(() => checkTrxMetrics([]), /^Error: no metrics specified; expected: oldest$/);
    assert.throws(
      () => checkTrxMetrics(['oldest', 'newest']),
      /^Error: invalid metric: newest \(trx has only: oldest\)$/,
    );
  });

  void it('declares no options and one gauge', () => {
    assert.deepEqual(help.options, []);
    assert.deepEqual(
      help.metrics.map((m) => [m.name, m.type]),
      [['oldest', MetricType.Gauge]],
    );
  });

  void it('on MySQL 8 runs the Blip query and reports its value', async () => {
    const db = new FakeDb('8.0.36', () => [{ t: '42' }]);
    const c = new TrxCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ fast: { trx: { metrics: ['oldest'] } } }), NO_SIGNAL);
    assert.deepEqual(await c.collect('fast', NO_SIGNAL), {
      values: [{ name: 'oldest', value: 42, type: MetricType.Gauge }],
    });
    assert.deepEqual(await c.collect('other', NO_SIGNAL), { values: [] });
    assert.deepEqual(db.queries, [{ sql: TRX_SQL, params: [] }]);
  });

  void it('a query failure is `<query> failed: <err>` with the errno kept', async () => {
    const db = new FakeDb('8.4.3', () => {
      throw Object.assign(new Error('Access denied; you need (at least one of) the PROCESS privilege(s)'), {
        errno: 1227,
      });
    });
    const c = new TrxCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { trx: { metrics: ['oldest'] } } }), NO_SIGNAL);
    const res = await c.collect('l', NO_SIGNAL);
    assert.deepEqual(res.values, []);
    assert.equal(
      res.error?.message,
      `${TRX_SQL} failed: Access denied; you need (at least one of) the PROCESS privilege(s)`,
    );
    assert.equal(res.error?.errno, 1227);
    assert.equal(res.error?.unsupported, false);
  });
});

void describe('trx against a real MariaDB', () => {
  let server: MariaDB;
  let db: PooledDb;
  let weak: PooledDb;
  let holder: Connection;

  const spec = (user: string, password: string) => tcpSpec(server, user, password);

  before(async () => {
    server = await startMariaDB();
    await server.createUser('mon', 'mon-pass-1', ['PROCESS ON *.*']);
    await server.createUser('weak', 'weak-pass-1', []);
    await server.query('CREATE DATABASE app');
    await server.query('CREATE TABLE app.t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB');
    await server.query('INSERT INTO app.t VALUES (1, 0), (2, 0)');
    db = createDb(spec('mon', 'mon-pass-1'));
    weak = createDb(spec('weak', 'weak-pass-1'));
    // The transaction holder: its own connection, so the pool under test never sees it.
    holder = await createConnection({ socketPath: server.socket, user: 'root' });
  });
  after(async () => {
    await holder.end();
    await db.close();
    await weak.close();
    await server.stop();
  });

  async function oldest(on: PooledDb = db) {
    const c = new TrxCollector({ monitorId: 'm', db: on });
    await c.prepare(planOf({ l: { trx: { metrics: ['oldest'] } } }), NO_SIGNAL);
    return c.collect('l', NO_SIGNAL);
  }

  void it('reports 0 while no transaction is open', async () => {
    assert.deepEqual(await oldest(), { values: [{ name: 'oldest', value: 0, type: MetricType.Gauge }] });
  });

  void it('reports the age in seconds of a transaction held open for 2 s, then 0 after commit', async () => {
    const beforeBegin = Date.now();
    await holder.query('BEGIN');
    await holder.query('SELECT * FROM app.t WHERE id = 1 FOR UPDATE');
    const started = Date.now(); // InnoDB started the transaction before this point
    await sleep(CACHE_MS);
    const [trx] = await server.query('SELECT COUNT(*) AS n FROM information_schema.innodb_trx');
    assert.equal(Number(trx?.n), 1);

    await sleep(2000);
    const collectStart = Date.now();
    const res = await oldest();
    const collectEnd = Date.now();
    assert.equal(res.error, undefined);
    const value = res.values[0]?.value ?? -1;
    // Both ends are whole seconds, so the difference is within one second of the real age,
    // which lies between (collectStart - started) and (collectEnd - beforeBegin).
    const low = Math.floor((collectStart - started) / 1000);
    const high = Math.ceil((collectEnd - beforeBegin) / 1000);
    assert.ok(low >= 2, `waited ${collectStart - started} ms`);
    assert.ok(value >= low && value <= high, `oldest ${value} not in [${low}, ${high}]`);
    assert.deepEqual(
      res.values.map((v) => [v.name, v.type]),
      [['oldest', MetricType.Gauge]],
    );

    await holder.query('COMMIT');
    await sleep(CACHE_MS);
    assert.deepEqual(await oldest(), { values: [{ name: 'oldest', value: 0, type: MetricType.Gauge }] });
  });

  void it('reports the oldest of two transactions, not the newest', async () => {
    const other = await createConnection({ socketPath: server.socket, user: 'root' });
    try {
      await holder.query('BEGIN');
      await holder.query('UPDATE app.t SET v = v + 1 WHERE id = 1');
      const started = Date.now();
      await sleep(2000);
      await other.query('BEGIN');
      await other.query('UPDATE app.t SET v = v + 1 WHERE id = 2');
      const collectStart = Date.now();
      const res = await oldest();
      // The newer transaction is under a second old; only the older one can give ≥ 2.
      const low = Math.floor((collectStart - started) / 1000);
      assert.ok(low >= 2);
      assert.ok((res.values[0]?.value ?? -1) >= low, JSON.stringify(res.values));
    } finally {
      await holder.query('ROLLBACK');
      await other.query('ROLLBACK');
      await other.end();
    }
    await sleep(CACHE_MS);
    assert.equal((await oldest()).values[0]?.value, 0);
  });

  void it('without PROCESS reports the query failure with errno 1227', async () => {
    const res = await oldest(weak);
    assert.deepEqual(res.values, []);
    assert.equal(res.error?.errno, 1227);
    assert.ok(res.error?.message.startsWith(`${TRX_SQL} failed: `), res.error?.message);
    assert.match(res.error?.message ?? '', /PROCESS/);
  });
});
