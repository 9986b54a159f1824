import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type Db, type QueryOptions, type Row, type ServerInfo } from '../../core/db.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import { type PooledDb } from '../../db/pool.js';
import { engineFor } from '../../engine/run.fixture.js';
import { StatusRegistry } from '../../status/registry.js';
import { startMariaDB, type MariaDB, connectAs } from '../../../test/helpers/mariadb.js';
import { parseTableFilter } from '../kit/filter.js';
import { FakeDb, NO_SIGNAL, planOf } from '../kit/test-helpers.js';
import { MYISAM_TABLES, createSizeFixture, fixtureNames, myisamBytes } from './fixture.js';
import {
  DEFAULT_LIMIT,
  DOMAIN,
  SizeTableCollector,
  buildTableQuery,
  help,
  parseLimit,
  tableValues,
} from './index.js';

const SELECT =
  'SELECT table_schema AS db, table_name AS tbl, COALESCE(data_length + index_length, 0) AS tbl_size_bytes FROM information_schema.TABLES';
const ORDER = ' ORDER BY tbl_size_bytes DESC, db, tbl';

const v = (db: string, tbl: string, value: number): MetricValue => ({
  name: 'bytes',
  value,
  type: MetricType.Gauge,
  group: { db, tbl },
});

void describe('size.table queries', () => {
  void it('by default excludes the system schemas in SQL and has no limit', () => {
    assert.deepEqual(buildTableQuery({}), {
      sql: `${SELECT} WHERE (NOT (table_schema = CAST(? AS BINARY)) AND NOT (table_schema = CAST(? AS BINARY)) AND NOT (table_schema = CAST(? AS BINARY)) AND NOT (table_schema = CAST(? AS BINARY)))${ORDER}`,
      params: ['mysql', 'information_schema', 'performance_schema', 'sys'],
      total: false,
      limit: DEFAULT_LIMIT,
    });
  });

  void it('include binds every name; total only for the exact value yes', () => {
    assert.deepEqual(buildTableQuery({ include: 'test_table,sys.*', total: 'yes', limit: '5' }), {
      sql: `${SELECT} WHERE ((table_name = CAST(? AS BINARY)) OR (table_schema = CAST(? AS BINARY)))${ORDER} LIMIT 6`,
      params: ['test_table', 'sys'],
      total: true,
      limit: 5,
    });
    assert.equal(buildTableQuery({ total: 'no' }).total, false);
  });

  void it('an explicit empty exclude and limit 0 give an unfiltered, unlimited query', () => {
    assert.deepEqual(buildTableQuery({ exclude: '', limit: '0' }), {
      sql: `${SELECT}${ORDER}`,
      params: [],
      total: false,
      limit: 0,
    });
  });

  void it('limit must be a whole number', () => {
    assert.equal(parseLimit(undefined), 0);
    assert.equal(DEFAULT_LIMIT, 0);
    assert.equal(parseLimit(' 25 '), 25);
    for (const bad of ['-1', '1.5', 'ten', '1e3', '99999999999999999999']) {
      assert.throws(
        () => parseLimit(bad),
        /^Error: invalid value for option limit: .* \(expected a whole number, 0 = no limit\)$/,
      );
    }
  });

  void it('rows: values in server order, cut at the limit, total over the reported ones', () => {
    const rows = [
      { db: 'a', tbl: 'x', tbl_size_bytes: '300' },
      { db: 'a', tbl: 'y', tbl_size_bytes: '200' },
      { db: 'b', tbl: 'v', tbl_size_bytes: '0' },
    ];
    assert.deepEqual(tableValues(rows, false, 0), {
      values: [v('a', 'x', 300), v('a', 'y', 200), v('b', 'v', 0)],
      truncated: false,
    });
    assert.deepEqual(tableValues(rows, true, 3), {
      values: [v('a', 'x', 300), v('a', 'y', 200), v('b', 'v', 0), v('', '', 500)],
      truncated: false,
    });
    assert.deepEqual(tableValues(rows, true, 2), {
      values: [v('a', 'x', 300), v('a', 'y', 200), v('', '', 500)],
      truncated: true,
    });
  });

  void it('declares total (effective default no), include, exclude, limit and the table-limit error', () => {
    assert.deepEqual(
      help.options.map((o) => [o.name, o.default, Object.keys(o.values ?? {})]),
      [
        ['total', 'no', ['yes', 'no']],
        ['include', '', []],
        ['exclude', 'mysql.*,information_schema.*,performance_schema.*,sys.*', []],
        ['limit', '0', []],
      ],
    );
    assert.deepEqual(
      help.errors.map((e) => e.name),
      ['table-limit'],
    );
    assert.deepEqual(
      help.groups.map((g) => g.key),
      ['db', 'tbl'],
    );
  });

  void it('reads MySQL 8 rows the same way (recorded result, binding checked)', async () => {
    const db = new FakeDb('8.0.36', () => [
      { db: 'app', tbl: 'users', tbl_size_bytes: '1589248' },
      { db: 'app', tbl: 'v_users', tbl_size_bytes: '0' },
    ]);
    const c = new SizeTableCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { [DOMAIN]: { options: { include: 'app.*' } } } }), NO_SIGNAL);
    assert.deepEqual(await c.collect('l', NO_SIGNAL), {
      values: [v('app', 'users', 1589248), v('app', 'v_users', 0)],
    });
    assert.deepEqual(db.queries, [
      { sql: `${SELECT} WHERE ((table_schema = CAST(? AS BINARY)))${ORDER}`, params: ['app'] },
    ]);
  });

  void it('refuses a plan with a malformed token or limit', async () => {
    const c = new SizeTableCollector({ monitorId: 'm', db: new FakeDb('10.11.6-MariaDB', () => []) });
    await assert.rejects(
      c.prepare(planOf({ l: { [DOMAIN]: { options: { include: 'db.' } } } }), NO_SIGNAL),
      /"db\."/,
    );
    await assert.rejects(
      c.prepare(planOf({ l: { [DOMAIN]: { options: { limit: 'x' } } } }), NO_SIGNAL),
      /option limit: x/,
    );
  });
});

/** A Db that passes through to the real pool and counts the rows each query returned. */
class CountingDb implements Db {
  readonly returned: number[] = [];
  constructor(readonly inner: Db) {}
  async query(sql: string, params?: readonly unknown[], opts?: QueryOptions): Promise<Row[]> {
    const rows = await this.inner.query(sql, params, opts);
    this.returned.push(rows.length);
    return rows;
  }
  async serverInfo(opts?: QueryOptions): Promise<ServerInfo> {
    return this.inner.serverInfo(opts);
  }
  async ping(opts?: QueryOptions): Promise<void> {
    return this.inner.ping(opts);
  }
}

void describe('size.table against a real MariaDB', () => {
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

  async function collect(options: Record<string, string>, on: Db = db) {
    const c = new SizeTableCollector({ monitorId: 'm', db: on });
    await c.prepare(planOf({ l: { [DOMAIN]: { options } } }), NO_SIGNAL);
    return c.collect('l', NO_SIGNAL);
  }

  /** information_schema's own numbers for every table, as `db.tbl` → bytes. */
  async function serverSizes(): Promise<Map<string, number>> {
    const rows = await server.query(
      'SELECT table_schema AS db, table_name AS tbl, COALESCE(data_length + index_length, 0) AS b FROM information_schema.TABLES',
    );
    return new Map(rows.map((r) => [`${String(r.db)}.${String(r.tbl)}`, Number(r.b)]));
  }

  const key = (x: MetricValue) => `${x.group?.db}.${x.group?.tbl}`;

  void it('reports every non-system table with the bytes information_schema has at that moment', async () => {
    const res = await collect({});
    const sizes = await serverSizes();
    assert.equal(res.error, undefined);
    assert.deepEqual(res.values.map(key).sort(), fixtureNames());
    for (const x of res.values) {
      assert.equal(x.name, 'bytes');
      assert.equal(x.type, MetricType.Gauge);
      assert.equal(x.value, sizes.get(key(x)), key(x));
    }
    // Known in advance: fixed-format MyISAM tables are 15 bytes a row plus a 1 KiB index header.
    for (const t of MYISAM_TABLES) {
      assert.equal(
        res.values.find((x) => key(x) === `${t.db}.${t.tbl}`)?.value,
        myisamBytes(t.rows),
        `${t.db}.${t.tbl}`,
      );
    }
    assert.equal(res.values.find((x) => key(x) === 'shop.v_orders')?.value, 0); // a view: 0 bytes
    const customers = res.values.find((x) => key(x) === 'shop.customers')?.value ?? 0;
    assert.ok(customers >= 3 * 16384, `shop.customers ${customers}`); // 3000 InnoDB rows + a secondary index
    // Largest first.
    const sizesInOrder = res.values.map((x) => x.value);
    assert.deepEqual(
      sizesInOrder,
      [...sizesInOrder].sort((a, b) => b - a),
    );
  });

  void it('total: yes adds db="" tbl="" equal to the sum of the reported tables', async () => {
    const res = await collect({ total: 'yes' });
    const last = res.values.at(-1);
    const tables = res.values.slice(0, -1);
    assert.equal(tables.length, fixtureNames().length);
    assert.deepEqual(
      last,
      v(
        '',
        '',
        tables.reduce((s, x) => s + x.value, 0),
      ),
    );
  });

  void it('include selects exactly the named tables, schemas and globs (case-sensitive)', async () => {
    const res = await collect({ include: 'logs.*, app.tmp_*, Items' });
    assert.deepEqual(res.values, [
      v('logs', 'log_2024', myisamBytes(1000)),
      v('logs', 'log_2025', myisamBytes(300)),
      v('shop', 'Items', myisamBytes(51)),
      v('app', 'tmp_1', myisamBytes(1)),
    ]);
  });

  void it('exclude removes what it names and replaces the default', async () => {
    const res = await collect({ exclude: 'shop.*,app.users,tmp*' });
    const names = res.values.map(key).sort();
    assert.deepEqual(
      names.filter((n) => !/^(mysql|information_schema|performance_schema|sys)\./.test(n)),
      ['app.events', 'app.sessions', 'logs.log_2024', 'logs.log_2025', 'views_only.v_one'],
    );
    assert.ok(names.includes('mysql.user'), 'system schemas are no longer excluded');
  });

  void it('an explicit empty exclude reports every table the server has', async () => {
    const res = await collect({ exclude: '', limit: '0' });
    const sizes = await serverSizes();
    assert.equal(res.error, undefined);
    assert.equal(res.values.length, sizes.size);
    for (const x of res.values) assert.equal(x.value, sizes.get(key(x)), key(x));
  });

  void it('the server filters: SQL and matches() select the same tables, and only those rows travel', async () => {
    const all = [...(await serverSizes()).keys()];
    for (const [include, exclude] of [
      ['shop.*', undefined],
      ['app.tmp_*,log_202*', undefined],
      ['*.items,logs.log_2025', undefined],
      ['', undefined],
      [undefined, 'shop.*,app.tmp_1,Items'],
      [undefined, 'mysql.*,*_schema.*,sys.*,app.*'],
    ] as const) {
      const counting = new CountingDb(db);
      const res = await collect(
        {
          ...(include === undefined ? {} : { include }),
          ...(exclude === undefined ? {} : { exclude }),
          limit: '0',
        },
        counting,
      );
      const f = parseTableFilter(include, exclude);
      const expected = all.filter((n) => {
        const [d = '', t = ''] = n.split('.');
        return f.matches(d, t);
      });
      assert.deepEqual(res.values.map(key).sort(), expected.sort(), `include=${include} exclude=${exclude}`);
      assert.deepEqual(counting.returned, [expected.length]);
    }
  });

  void it('one schema or one table is looked up, not scanned (MariaDB EXPLAIN)', async () => {
    const extra = async (options: Record<string, string>) => {
      const q = buildTableQuery(options);
      const [row] = await server.query(`EXPLAIN ${q.sql}`, q.params);
      return String(row?.Extra);
    };
    assert.match(await extra({ include: 'logs.*' }), /Scanned 1 database/);
    assert.match(await extra({ include: 'logs.log_2024' }), /Scanned 0 databases/);
    assert.match(await extra({}), /Scanned all databases/);
  });

  void it('limit: reports the largest tables and says how many matched', async () => {
    const res = await collect({ include: 'shop.*,logs.*', limit: '3', total: 'yes' });
    assert.deepEqual(res.values, [
      res.values[0], // shop.customers (InnoDB, largest)
      v('logs', 'log_2024', myisamBytes(1000)),
      v('logs', 'log_2025', myisamBytes(300)),
      v('', '', (res.values[0]?.value ?? 0) + myisamBytes(1000) + myisamBytes(300)),
    ]);
    assert.equal(key(res.values[0] as MetricValue), 'shop.customers');
    assert.equal(res.error?.policy, 'table-limit');
    assert.equal(
      res.error?.message,
      'more than 3 tables match; reported the 3 largest (total covers only those): raise option limit or narrow include/exclude',
    );
  });

  void it('limit equal to the number of matching tables reports all without an error', async () => {
    const res = await collect({ include: 'logs.*,app.*', limit: '7' });
    assert.equal(res.error, undefined);
    assert.equal(res.values.length, 7);
  });

  void it('through the engine: table-limit is reported by default with the values kept; ignore silences it', async () => {
    const run = async (errors: Record<string, string>) => {
      const plan = planOf({ l: { [DOMAIN]: { options: { include: 'logs.*', limit: '1' }, errors } } });
      const status = new StatusRegistry();
      const engine = await engineFor({
        plan,
        status: status.monitor('m1'),
        help: (d) => (d === DOMAIN ? help : undefined),
        make: () => new SizeTableCollector({ monitorId: 'm1', db }),
        emrMs: 5000,
        cmrMs: 4000,
      });
      try {
        const [m] = await engine.collect(1, 'l', [{ domain: DOMAIN, level: 'l' }]);
        return { values: m?.values[DOMAIN], error: status.monitorStatus('m1')?.[`error:${DOMAIN}`] };
      } finally {
        await engine.close();
      }
    };
    const reported = await run({});
    assert.deepEqual(reported.values, [v('logs', 'log_2024', myisamBytes(1000))]);
    assert.match(
      reported.error ?? '',
      /size\.table: more than 1 tables match; reported the 1 largest: raise/,
    );
    assert.deepEqual(await run({ 'table-limit': 'ignore' }), {
      values: [v('logs', 'log_2024', myisamBytes(1000))],
      error: undefined,
    });
  });

  void it('follows the data: more rows, more bytes, exactly as the server reports', async () => {
    await server.query(
      `INSERT INTO logs.log_2025 VALUES ${Array.from({ length: 100 }, (_, i) => `(${i}, 'n')`).join(', ')}`,
    );
    const res = await collect({ include: 'logs.log_2025' });
    assert.deepEqual(res.values, [v('logs', 'log_2025', myisamBytes(400))]);
  });

  void it('with no limit set, more than 1,000 tables all come out (as Blip reports them)', async () => {
    const n = 1050;
    await server.query('CREATE DATABASE many');
    for (let i = 0; i < n; i++)
      await server.query(`CREATE TABLE many.t${i} (id INT) ENGINE=MyISAM ROW_FORMAT=FIXED`);
    try {
      const res = await collect({});
      assert.equal(res.error, undefined);
      const many = res.values.filter((x) => x.group?.db === 'many').map(key);
      assert.equal(many.length, n);
      assert.equal(new Set(many).size, n);
      assert.equal(res.values.length, n + fixtureNames().length);
    } finally {
      await server.query('DROP DATABASE many');
    }
  });
});
