import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import { type PooledDb } from '../../db/pool.js';
import { startMariaDB, type MariaDB, connectAs } from '../../../test/helpers/mariadb.js';
import { FakeDb, NO_SIGNAL, planOf } from '../kit/test-helpers.js';
import { AutoincCollector, DOMAIN, autoincValues, buildAutoincQuery, help, maxValue } from './index.js';

const usage = (db: string, tbl: string, col: string, dataType: string, value: number): MetricValue => ({
  name: 'usage',
  value,
  type: MetricType.Gauge,
  group: { db, tbl, col, data_type: dataType },
});

void describe('autoinc maxima, queries and rows', () => {
  void it('knows the largest value of every integer type, signed and unsigned', () => {
    const table: [string, number, number][] = [
      ['tinyint', 127, 255],
      ['smallint', 32767, 65535],
      ['mediumint', 8388607, 16777215],
      ['int', 2147483647, 4294967295],
      ['bigint', 2 ** 63, 2 ** 64], // 9223372036854775807 and 18446744073709551615 as floats
    ];
    for (const [type, signed, unsigned] of table) {
      assert.equal(maxValue(type, false), signed, type);
      assert.equal(maxValue(type, true), unsigned, `${type} unsigned`);
      assert.equal(maxValue(type.toUpperCase(), true), unsigned, `${type} upper case`);
    }
    assert.equal(maxValue('float', false), undefined);
    assert.equal(maxValue('decimal', true), undefined);
  });

  void it('filters on the COLUMNS side with bound names; default exclude the system schemas', () => {
    const q = buildAutoincQuery({});
    assert.match(
      q.sql,
      /^SELECT C\.TABLE_SCHEMA AS db, .* FROM information_schema\.COLUMNS C JOIN information_schema\.TABLES T /,
    );
    assert.ok(
      q.sql.endsWith(
        " WHERE T.TABLE_TYPE = 'BASE TABLE' AND C.EXTRA = 'auto_increment' AND T.AUTO_INCREMENT IS NOT NULL AND (NOT (C.TABLE_SCHEMA = CAST(? AS BINARY)) AND NOT (C.TABLE_SCHEMA = CAST(? AS BINARY)) AND NOT (C.TABLE_SCHEMA = CAST(? AS BINARY)) AND NOT (C.TABLE_SCHEMA = CAST(? AS BINARY))) ORDER BY C.TABLE_SCHEMA, C.TABLE_NAME",
      ),
      q.sql,
    );
    assert.deepEqual(q.params, ['mysql', 'information_schema', 'performance_schema', 'sys']);
    const inc = buildAutoincQuery({ include: 'app.orders,shop.*' });
    assert.ok(
      inc.sql.endsWith(
        'AND ((C.TABLE_SCHEMA = CAST(? AS BINARY) AND C.TABLE_NAME = CAST(? AS BINARY)) OR (C.TABLE_SCHEMA = CAST(? AS BINARY))) ORDER BY C.TABLE_SCHEMA, C.TABLE_NAME',
      ),
    );
    assert.deepEqual(inc.params, ['app', 'orders', 'shop']);
    const all = buildAutoincQuery({ exclude: '' });
    assert.ok(all.sql.endsWith('T.AUTO_INCREMENT IS NOT NULL ORDER BY C.TABLE_SCHEMA, C.TABLE_NAME'));
    assert.deepEqual(all.params, []);
  });

  void it('rows: usage = AUTO_INCREMENT / type maximum, data_type gets " unsigned", other types skipped', () => {
    const values = autoincValues([
      { db: 'a', tbl: 't', col: 'id', data_type: 'tinyint', is_unsigned: '0', auto_increment: '120' },
      { db: 'a', tbl: 'u', col: 'id', data_type: 'INT', is_unsigned: '1', auto_increment: '11' },
      { db: 'a', tbl: 'f', col: 'id', data_type: 'float', is_unsigned: '0', auto_increment: '3' },
      { db: 'a', tbl: 'n', col: 'id', data_type: 'int', is_unsigned: '0', auto_increment: null },
      // above 2^63: parsed as a float, not an error
      {
        db: 'b',
        tbl: 'big',
        col: 'k',
        data_type: 'bigint',
        is_unsigned: '1',
        auto_increment: '13835058055282163713', // 3·2^62 + 1
      },
    ]);
    assert.deepEqual(values, [
      usage('a', 't', 'id', 'tinyint', 120 / 127),
      usage('a', 'u', 'id', 'int unsigned', 11 / 4294967295),
      usage('b', 'big', 'k', 'bigint unsigned', 0.75),
    ]);
  });

  void it('declares include/exclude, the four groups and usage', () => {
    assert.deepEqual(
      help.options.map((o) => [o.name, o.default]),
      [
        ['include', ''],
        ['exclude', 'mysql.*,information_schema.*,performance_schema.*,sys.*'],
      ],
    );
    assert.deepEqual(
      help.groups.map((g) => g.key),
      ['db', 'tbl', 'col', 'data_type'],
    );
    assert.deepEqual(
      help.metrics.map((m) => [m.name, m.type]),
      [['usage', MetricType.Gauge]],
    );
  });

  void it('reads MySQL 8 rows the same way (recorded result)', async () => {
    const db = new FakeDb('8.0.36', () => [
      {
        db: 'app',
        tbl: 'orders',
        col: 'id',
        data_type: 'int',
        is_unsigned: '0',
        auto_increment: '1073741824',
      },
    ]);
    const c = new AutoincCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { [DOMAIN]: { metrics: ['ignored'] } } }), NO_SIGNAL);
    assert.deepEqual(await c.collect('l', NO_SIGNAL), {
      values: [usage('app', 'orders', 'id', 'int', 1073741824 / 2147483647)],
    });
    assert.deepEqual(await c.collect('other', NO_SIGNAL), { values: [] });
    assert.equal(db.queries.length, 1);
  });
});

void describe('autoinc against a real MariaDB', () => {
  let server: MariaDB;
  let db: PooledDb;

  before(async () => {
    server = await startMariaDB();
    for (const d of ['a', 'b']) await server.query(`CREATE DATABASE ${d}`);
    await server.query('CREATE TABLE a.tiny_s (id TINYINT AUTO_INCREMENT PRIMARY KEY) AUTO_INCREMENT=120');
    await server.query(
      'CREATE TABLE a.tiny_u (id TINYINT UNSIGNED AUTO_INCREMENT PRIMARY KEY) AUTO_INCREMENT=200',
    );
    await server.query('CREATE TABLE a.small (n SMALLINT NOT NULL AUTO_INCREMENT, v INT, KEY (n))');
    await server.query('INSERT INTO a.small (v) VALUES (1), (2), (3), (4), (5), (6), (7), (8), (9), (10)');
    await server.query(
      'CREATE TABLE a.med_u (id MEDIUMINT UNSIGNED AUTO_INCREMENT PRIMARY KEY) AUTO_INCREMENT=8388608',
    );
    await server.query(
      'CREATE TABLE a.int_s (id INT AUTO_INCREMENT PRIMARY KEY) ENGINE=MyISAM AUTO_INCREMENT=2147483000',
    );
    await server.query('CREATE TABLE a.fl (id FLOAT AUTO_INCREMENT PRIMARY KEY)');
    await server.query('CREATE TABLE a.plain (id INT PRIMARY KEY)');
    await server.query('CREATE VIEW a.v AS SELECT id FROM a.tiny_s');
    await server.query(
      'CREATE TABLE b.big_u (id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY) AUTO_INCREMENT=9223372036854775808',
    );
    await server.query('CREATE TABLE b.big_s (id BIGINT AUTO_INCREMENT PRIMARY KEY)');
    await server.createUser('mon', 'mon-pass-1', ['SELECT ON *.*']);
    db = connectAs(server, 'mon', 'mon-pass-1');
  });
  after(async () => {
    await db.close();
    await server.stop();
  });

  async function collect(options: Record<string, string> = {}) {
    const c = new AutoincCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { [DOMAIN]: { options } } }), NO_SIGNAL);
    return c.collect('l', NO_SIGNAL);
  }

  void it('reports every auto-increment integer column with its usage fraction', async () => {
    const res = await collect();
    assert.equal(res.error, undefined);
    assert.deepEqual(res.values, [
      usage('a', 'int_s', 'id', 'int', 2147483000 / 2147483647),
      usage('a', 'med_u', 'id', 'mediumint unsigned', 8388608 / 16777215),
      usage('a', 'small', 'n', 'smallint', 11 / 32767),
      usage('a', 'tiny_s', 'id', 'tinyint', 120 / 127),
      usage('a', 'tiny_u', 'id', 'tinyint unsigned', 200 / 255),
      usage('b', 'big_s', 'id', 'bigint', 1 / 2 ** 63), // the max 9223372036854775807 is 2^63 as a float
      usage('b', 'big_u', 'id', 'bigint unsigned', 0.5),
    ]);
    // a.fl (FLOAT), a.plain (no auto_increment), a.v (a view) and mysql.time_zone are absent.
  });

  void it('follows inserts: a full TINYINT column reads 128/127, as Blip computes it', async () => {
    await server.query('INSERT INTO a.tiny_s VALUES (), (), (), (), (), (), ()'); // 120..126
    assert.deepEqual((await collect({ include: 'a.tiny_s' })).values, [
      usage('a', 'tiny_s', 'id', 'tinyint', 1),
    ]);
    await server.query('INSERT INTO a.tiny_s VALUES ()'); // 127, the last one
    await assert.rejects(
      server.query('INSERT INTO a.tiny_s VALUES ()'),
      /Duplicate entry '127'|Out of range/,
    );
    // MariaDB now shows AUTO_INCREMENT = 128, one past the type: usage is 128/127, as Blip computes it.
    const [row] = await server.query(
      "SELECT AUTO_INCREMENT AS ai FROM information_schema.TABLES WHERE table_schema = 'a' AND table_name = 'tiny_s'",
    );
    assert.equal(Number(row?.ai), 128);
    assert.deepEqual((await collect({ include: 'a.tiny_s' })).values, [
      usage('a', 'tiny_s', 'id', 'tinyint', 128 / 127),
    ]);
  });

  void it('include and exclude select tables in SQL (globs, bare table names)', async () => {
    const names = async (options: Record<string, string>) =>
      (await collect(options)).values.map((x) => `${x.group?.db}.${x.group?.tbl}`);
    assert.deepEqual(await names({ include: 'a.tiny_*' }), ['a.tiny_s', 'a.tiny_u']);
    assert.deepEqual(await names({ include: 'b.*,small' }), ['a.small', 'b.big_s', 'b.big_u']);
    assert.deepEqual(await names({ exclude: 'a.*' }).then((n) => n.filter((x) => !x.startsWith('b.'))), [
      'mysql.time_zone',
    ]);
    assert.deepEqual(await names({ exclude: 'mysql.*,b.*,int_s,med_u,small,tiny_s' }), ['a.tiny_u']);
  });

  void it('an explicit empty exclude adds the system schemas (mysql.time_zone)', async () => {
    const res = await collect({ exclude: '' });
    const tz = res.values.find((x) => x.group?.db === 'mysql');
    assert.deepEqual(tz, usage('mysql', 'time_zone', 'Time_zone_id', 'int unsigned', 1 / 4294967295));
    assert.equal(res.values.length, 8);
  });
});
