import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import { type PooledDb } from '../../db/pool.js';
import { startMariaDB, type MariaDB, connectAs } from '../../../test/helpers/mariadb.js';
import { FakeDb, NO_SIGNAL, planOf } from '../kit/test-helpers.js';
import { createSizeFixture, myisamBytes } from '../size.table/fixture.js';
import { SizeTableCollector } from '../size.table/index.js';
import {
  DOMAIN,
  SizeDatabaseCollector,
  buildDatabaseQuery,
  databaseValues,
  help,
  totalMode,
} from './index.js';

const PER_DB =
  'SELECT table_schema AS db, SUM(data_length + index_length) AS bytes FROM information_schema.TABLES WHERE ';
const GROUP = ' GROUP BY table_schema ORDER BY table_schema';
const ONLY =
  "SELECT '' AS db, COALESCE(SUM(data_length + index_length), 0) AS bytes FROM information_schema.TABLES WHERE ";

const v = (db: string, value: number): MetricValue => ({
  name: 'bytes',
  value,
  type: MetricType.Gauge,
  group: { db },
});

void describe('size.database queries', () => {
  void it('by default excludes the four system schemas with bound names', () => {
    assert.deepEqual(buildDatabaseQuery({}), {
      sql: `${PER_DB}(table_schema NOT IN (?, ?, ?, ?))${GROUP}`,
      params: ['mysql', 'information_schema', 'performance_schema', 'sys'],
      total: 'no',
    });
  });

  void it('include wins; like turns entries into OR-ed LIKE patterns; total only sums in SQL', () => {
    assert.deepEqual(buildDatabaseQuery({ include: 'a, b', exclude: 'c' }), {
      sql: `${PER_DB}(table_schema IN (?, ?))${GROUP}`,
      params: ['a', 'b'],
      total: 'no',
    });
    assert.deepEqual(buildDatabaseQuery({ include: 'app%', like: 'yes', total: 'only' }), {
      sql: `${ONLY}(table_schema LIKE ?)`,
      params: ['app%'],
      total: 'only',
    });
    assert.deepEqual(buildDatabaseQuery({ exclude: 'tmp%,x_', like: 'yes', total: 'yes' }), {
      sql: `${PER_DB}(table_schema NOT LIKE ? AND table_schema NOT LIKE ?)${GROUP}`,
      params: ['tmp%', 'x_'],
      total: 'yes',
    });
  });

  void it('total: only yes and only change it; the effective default is no', () => {
    assert.equal(totalMode('yes'), 'yes');
    assert.equal(totalMode('only'), 'only');
    assert.equal(totalMode('no'), 'no');
    assert.equal(totalMode(''), 'no');
  });

  void it('rows: NULL sums (views only) skipped; the total is the sum of what was emitted', () => {
    const rows = [
      { db: 'a', bytes: '100' },
      { db: 'v', bytes: null },
      { db: 'b', bytes: '23' },
    ];
    assert.deepEqual(databaseValues(rows, 'no'), [v('a', 100), v('b', 23)]);
    assert.deepEqual(databaseValues(rows, 'yes'), [v('a', 100), v('b', 23), v('', 123)]);
    assert.deepEqual(databaseValues([], 'yes'), [v('', 0)]);
    assert.deepEqual(databaseValues([{ db: '', bytes: '7' }], 'only'), [v('', 7)]);
  });

  void it('declares total, include, exclude, like with effective defaults, group db and bytes', () => {
    assert.deepEqual(
      help.options.map((o) => [o.name, o.default, Object.keys(o.values ?? {})]),
      [
        ['total', 'no', ['no', 'yes', 'only']],
        ['include', '', []],
        ['exclude', 'mysql,information_schema,performance_schema,sys', []],
        ['like', 'no', ['yes', 'no']],
      ],
    );
    assert.deepEqual(
      help.groups.map((g) => g.key),
      ['db'],
    );
    assert.deepEqual(
      help.metrics.map((m) => [m.name, m.type]),
      [['bytes', MetricType.Gauge]],
    );
  });

  void it('reads MySQL 8 rows the same way (recorded result)', async () => {
    const db = new FakeDb('8.0.36', () => [
      { db: 'app', bytes: '1589248' },
      { db: 'shop', bytes: '65536' },
    ]);
    const c = new SizeDatabaseCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { [DOMAIN]: { options: { total: 'yes' } } } }), NO_SIGNAL);
    assert.deepEqual(await c.collect('l', NO_SIGNAL), {
      values: [v('app', 1589248), v('shop', 65536), v('', 1654784)],
    });
    assert.equal(db.queries.length, 1);
    assert.deepEqual(await c.collect('other', NO_SIGNAL), { values: [] });
  });
});

void describe('size.database against a real MariaDB', () => {
  let server: MariaDB;
  let db: PooledDb;

  before(async () => {
    server = await startMariaDB();
    await createSizeFixture(server);
    await server.createUser('mon', 'mon-pass-1', ['SELECT ON *.*']);
    db = connectAs(server, 'mon', 'mon-pass-1');
  });
  after(async () => {
    await db.close();
    await server.stop();
  });

  async function collect(options: Record<string, string>) {
    const c = new SizeDatabaseCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { [DOMAIN]: { options } } }), NO_SIGNAL);
    return c.collect('l', NO_SIGNAL);
  }

  /** information_schema's per-schema sums (schemas whose sum is not NULL). */
  async function serverSums(): Promise<Map<string, number>> {
    const rows = await server.query(
      'SELECT table_schema AS db, SUM(data_length + index_length) AS b FROM information_schema.TABLES GROUP BY table_schema HAVING b IS NOT NULL',
    );
    return new Map(rows.map((r) => [String(r.db), Number(r.b)]));
  }

  void it('reports one value per user schema equal to information_schema and to the sum of its tables', async () => {
    const res = await collect({});
    const sums = await serverSums();
    const tc = new SizeTableCollector({ monitorId: 'm', db });
    await tc.prepare(planOf({ l: { 'size.table': {} } }), NO_SIGNAL);
    const tables = (await tc.collect('l', NO_SIGNAL)).values;
    assert.equal(res.error, undefined);
    // views_only (a view only) and empty_db (no tables) are absent, as are the system schemas.
    assert.deepEqual(
      res.values.map((x) => x.group?.db),
      ['app', 'logs', 'shop'],
    );
    for (const x of res.values) {
      const db = x.group?.db ?? '';
      assert.equal(x.value, sums.get(db), db);
      const fromTables = tables.filter((t) => t.group?.db === db).reduce((s, t) => s + t.value, 0);
      assert.equal(x.value, fromTables, `${db}: size.database = sum of size.table`);
    }
    // logs holds only fixed-format MyISAM tables: its size is known in advance.
    assert.deepEqual(res.values[1], v('logs', myisamBytes(1000) + myisamBytes(300)));
  });

  void it('total: yes adds db="" equal to the sum; total: only returns just that sum', async () => {
    const yes = await collect({ total: 'yes' });
    const perDb = yes.values.slice(0, -1);
    const sum = perDb.reduce((s, x) => s + x.value, 0);
    assert.equal(perDb.length, 3);
    assert.deepEqual(yes.values.at(-1), v('', sum));
    assert.deepEqual(await collect({ total: 'only' }), { values: [v('', sum)] });
  });

  void it('include reports exactly the listed schemas; unknown ones are simply absent', async () => {
    const sums = await serverSums();
    assert.deepEqual(await collect({ include: 'logs, shop ,nope' }), {
      values: [v('logs', sums.get('logs') ?? -1), v('shop', sums.get('shop') ?? -1)],
    });
    assert.deepEqual(await collect({ include: 'empty_db', total: 'only' }), { values: [v('', 0)] });
  });

  void it('exclude replaces the default: the excluded schema goes, system schemas come back', async () => {
    const res = await collect({ exclude: 'shop,app' });
    const sums = await serverSums();
    const expected = [...sums.entries()]
      .filter(([db]) => db !== 'shop' && db !== 'app')
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([db, b]) => v(db, b));
    assert.deepEqual(res.values, expected);
    assert.ok(res.values.some((x) => x.group?.db === 'mysql'));
  });

  void it('like: yes matches LIKE patterns in include and exclude', async () => {
    const sums = await serverSums();
    const inc = await collect({ include: 'l%,s_op', like: 'yes' });
    assert.deepEqual(inc.values, [v('logs', sums.get('logs') ?? -1), v('shop', sums.get('shop') ?? -1)]);
    const exc = await collect({ exclude: '%schema,mysql,sys,a%', like: 'yes' });
    assert.deepEqual(
      exc.values.map((x) => x.group?.db),
      ['logs', 'shop'],
    );
    // Without like the same text is a literal name that matches nothing.
    assert.deepEqual(await collect({ include: 'l%' }), { values: [] });
  });
});
