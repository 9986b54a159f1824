import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import { createDb, type PooledDb } from '../../db/pool.js';
import { startMariaDB, type MariaDB, tcpSpec } from '../../../test/helpers/mariadb.js';
import { parseTableFilter } from '../kit/filter.js';
import { engineFor } from '../../engine/run.fixture.js';
import { StatusRegistry } from '../../status/registry.js';
import { FakeDb, NO_SIGNAL, planOf } from '../kit/test-helpers.js';
import {
  COLUMNS,
  WaitIoTableCollector,
  buildWaitIoQuery,
  help,
  parseGroupBy,
  registration,
  waitIoSchemaValues,
  waitIoValues,
} from './index.js';

const SELECT_ALL = `SELECT OBJECT_SCHEMA, OBJECT_NAME, ${COLUMNS.join(', ')} FROM performance_schema.table_io_waits_summary_by_table`;
/** The shared filter's condition (filter.ts has its own tests for the SQL it writes). */
const where = (include: string | undefined, exclude: string | undefined) =>
  parseTableFilter(include, exclude).condition('OBJECT_SCHEMA', 'OBJECT_NAME');

void describe('wait.io.table queries and rows', () => {
  void it('knows the 35 columns, five per operation', () => {
    assert.equal(COLUMNS.length, 35);
    assert.deepEqual(COLUMNS.slice(0, 6), [
      'count_star',
      'sum_timer_wait',
      'min_timer_wait',
      'avg_timer_wait',
      'max_timer_wait',
      'count_read',
    ]);
    assert.equal(COLUMNS[34], 'max_timer_delete');
  });

  void it('all: yes selects every column; the system schemas are excluded when exclude is absent', () => {
    const w = where(undefined, undefined);
    assert.deepEqual(w?.params, ['mysql', 'information_schema', 'performance_schema', 'sys']);
    assert.deepEqual(buildWaitIoQuery(true, [], undefined, undefined), {
      sql: `${SELECT_ALL} WHERE ${w?.sql}`,
      params: w?.params,
      columns: [...COLUMNS],
      report: [...COLUMNS],
      groupBy: 'table',
    });
  });

  void it('plan metrics are lowercased, unknown ones ignored; none valid → nothing to collect', () => {
    const q = buildWaitIoQuery(
      false,
      ['COUNT_INSERT', 'bogus', 'sum_timer_wait', 'count_insert'],
      'w1.*,t9',
      'x',
    );
    const w = where('w1.*,t9', 'x');
    assert.deepEqual(w?.params, ['w1', 't9']);
    assert.deepEqual(q, {
      sql: `SELECT OBJECT_SCHEMA, OBJECT_NAME, count_insert, sum_timer_wait FROM performance_schema.table_io_waits_summary_by_table WHERE ${w?.sql}`,
      params: ['w1', 't9'],
      columns: ['count_insert', 'sum_timer_wait'],
      report: ['count_insert', 'sum_timer_wait'],
      groupBy: 'table',
    });
    assert.equal(buildWaitIoQuery(false, ['bogus'], undefined, undefined), undefined);
    assert.equal(buildWaitIoQuery(false, [], undefined, undefined), undefined);
  });

  void it('group-by: table (default), schema or both; a schema value reads the columns it is computed from', () => {
    assert.equal(parseGroupBy(undefined), 'table');
    assert.equal(parseGroupBy(' Schema '), 'schema');
    assert.equal(parseGroupBy('both'), 'both');
    assert.throws(
      () => parseGroupBy('db'),
      /invalid value for option group-by: db \(expected table, schema or both\)/,
    );
    const q = buildWaitIoQuery(
      false,
      ['avg_timer_read', 'min_timer_write', 'count_star'],
      'w1.*',
      undefined,
      'schema',
    );
    assert.deepEqual(q?.report, ['avg_timer_read', 'min_timer_write', 'count_star']);
    assert.deepEqual(q?.columns, [
      'avg_timer_read',
      'min_timer_write',
      'count_star',
      'sum_timer_read',
      'count_read',
      'count_write',
    ]);
    assert.deepEqual(buildWaitIoQuery(false, ['avg_timer_read'], 'w1.*', undefined, 'table')?.columns, [
      'avg_timer_read',
    ]);
  });

  void it('schema values: counts and sums add up, max is the largest, min the smallest with waits, avg = sum / count', () => {
    const rows = [
      {
        OBJECT_SCHEMA: 'a',
        OBJECT_NAME: 't1',
        count_read: '2',
        sum_timer_read: '30',
        min_timer_read: '10',
        avg_timer_read: '15',
        max_timer_read: '20',
      },
      {
        OBJECT_SCHEMA: 'a',
        OBJECT_NAME: 't2',
        count_read: '1',
        sum_timer_read: '60',
        min_timer_read: '60',
        avg_timer_read: '60',
        max_timer_read: '60',
      },
      {
        OBJECT_SCHEMA: 'a',
        OBJECT_NAME: 'idle',
        count_read: '0',
        sum_timer_read: '0',
        min_timer_read: '0',
        avg_timer_read: '0',
        max_timer_read: '0',
      },
      {
        OBJECT_SCHEMA: 'b',
        OBJECT_NAME: 'idle',
        count_read: '0',
        sum_timer_read: '0',
        min_timer_read: '0',
        avg_timer_read: '0',
        max_timer_read: '0',
      },
    ];
    const cols = ['count_read', 'sum_timer_read', 'min_timer_read', 'avg_timer_read', 'max_timer_read'];
    const out = waitIoSchemaValues(rows, cols, cols, MetricType.DeltaCounter);
    assert.ok(out.every((v) => v.group?.tbl === '' && v.type === MetricType.DeltaCounter));
    assert.deepEqual(byTable(out), {
      'a.': { count_read: 3, sum_timer_read: 90, min_timer_read: 10, avg_timer_read: 30, max_timer_read: 60 },
      'b.': { count_read: 0, sum_timer_read: 0, min_timer_read: 0, avg_timer_read: 0, max_timer_read: 0 },
    });
  });

  void it('an explicit empty exclude filters nothing', () => {
    assert.equal(buildWaitIoQuery(false, ['count_star'], undefined, '')?.sql.includes('WHERE'), false);
  });

  void it('rows become grouped values parsed as floats; NULL names skipped', () => {
    const rows = [
      { OBJECT_SCHEMA: 'd', OBJECT_NAME: 't', count_star: '4', sum_timer_wait: '18446744073709551615' },
      { OBJECT_SCHEMA: null, OBJECT_NAME: 'x', count_star: '1', sum_timer_wait: '1' },
    ];
    assert.deepEqual(waitIoValues(rows, ['count_star', 'sum_timer_wait'], MetricType.DeltaCounter), [
      { name: 'count_star', value: 4, type: MetricType.DeltaCounter, group: { db: 'd', tbl: 't' } },
      {
        name: 'sum_timer_wait',
        value: 2 ** 64, // 18446744073709551615 as a double
        type: MetricType.DeltaCounter,
        group: { db: 'd', tbl: 't' },
      },
    ]);
  });

  void it('with performance_schema off the domain is not supported', async () => {
    const db = new FakeDb('10.11.19-MariaDB', (sql) =>
      sql.startsWith('SELECT @@performance_schema') ? [{ pfs: '0' }] : [],
    );
    const c = new WaitIoTableCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'wait.io.table': { options: { all: 'yes' } } } }), NO_SIGNAL);
    const res = await c.collect('l', NO_SIGNAL);
    assert.deepEqual(res.values, []);
    assert.equal(res.error?.unsupported, true);
    assert.equal(
      res.error?.message,
      'wait.io.table: not supported on mariadb 10.11.19: performance_schema is disabled (start the server with performance_schema=ON)',
    );
    assert.equal(db.queries.length, 1);
  });

  void it('declares its options with effective defaults, the truncate policy and db/tbl groups', () => {
    assert.deepEqual(
      help.options.map((o) => [o.name, o.default]),
      [
        ['include', ''],
        ['exclude', 'mysql.*,information_schema.*,performance_schema.*,sys.*'],
        ['truncate-table', 'yes'],
        ['truncate-timeout', '250ms'],
        ['group-by', 'table'],
        ['all', 'no'],
      ],
    );
    assert.deepEqual(
      help.errors.map((e) => e.name),
      ['truncate-timeout'],
    );
    assert.deepEqual(
      help.groups.map((g) => g.key),
      ['db', 'tbl'],
    );
  });
});

/** `db.tbl` → { column → value } for compact assertions. */
function byTable(values: MetricValue[]): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const v of values) (out[`${v.group?.db}.${v.group?.tbl}`] ??= {})[v.name] = v.value;
  return out;
}

void describe('wait.io.table against a real MariaDB with performance_schema=ON', () => {
  let server: MariaDB;
  let db: PooledDb;
  let noDrop: PooledDb;

  const spec = (user: string, password: string) => tcpSpec(server, user, password);

  before(async () => {
    server = await startMariaDB({ args: ['--performance-schema=ON'] });
    await server.query('CREATE DATABASE w1');
    await server.query('CREATE TABLE w1.t1 (id INT PRIMARY KEY, v INT) ENGINE=InnoDB');
    await server.query('CREATE TABLE w1.t2 (id INT PRIMARY KEY, v INT) ENGINE=InnoDB');
    await server.query('CREATE DATABASE IF NOT EXISTS sys');
    await server.query('CREATE TABLE sys.zz (id INT PRIMARY KEY) ENGINE=InnoDB');
    await server.query('INSERT INTO w1.t2 VALUES (1, 1), (2, 2)');
    await server.query('INSERT INTO sys.zz VALUES (1)');
    await server.createUser('mon', 'mon-pass-3', [
      'SELECT ON performance_schema.*',
      'DROP ON performance_schema.table_io_waits_summary_by_table',
    ]);
    await server.createUser('nodrop', 'nodrop-pass-3', ['SELECT ON performance_schema.*']);
    db = createDb(spec('mon', 'mon-pass-3'));
    noDrop = createDb(spec('nodrop', 'nodrop-pass-3'));
  });
  after(async () => {
    await db.close();
    await noDrop.close();
    await server.stop();
  });

  async function collector(options: Record<string, string>, metrics: string[] = [], on: PooledDb = db) {
    const c = new WaitIoTableCollector({ monitorId: 'm', db: on });
    await c.prepare(planOf({ l: { 'wait.io.table': { options, metrics } } }), NO_SIGNAL);
    return c;
  }

  void it('counts exactly the I/O done in the interval (delta counters, truncated after each read)', async () => {
    const c = await collector({ all: 'yes' });
    const first = await c.collect('l', NO_SIGNAL); // since server start, then truncated
    assert.equal(first.error, undefined);
    assert.equal(byTable(first.values)['w1.t2']?.count_insert, 2);
    assert.equal(
      first.values.some((v) => v.group?.db === 'sys'),
      false,
      'sys.* excluded by default',
    );

    await server.query('INSERT INTO w1.t1 VALUES (1, 1), (2, 2), (3, 3), (4, 4)');
    await server.query('UPDATE w1.t1 SET v = v + 1 WHERE id = 2');
    await server.query('DELETE FROM w1.t1 WHERE id = 4');
    await server.query('SELECT * FROM w1.t2');

    const second = await c.collect('l', NO_SIGNAL);
    assert.equal(second.error, undefined);
    assert.ok(second.values.every((v) => v.type === MetricType.DeltaCounter));
    const t = byTable(second.values);
    assert.deepEqual(Object.keys(t).sort(), ['w1.t1', 'w1.t2']);
    const counts = (tbl: string) =>
      Object.fromEntries(Object.entries(t[tbl] ?? {}).filter(([k]) => k.startsWith('count_')));
    // 4 inserts, 1 update and 1 delete are 6 writes; the update and the delete each fetched
    // their row by primary key (2 reads); the SELECT fetched t2's 2 rows.
    assert.deepEqual(counts('w1.t1'), {
      count_star: 8,
      count_read: 2,
      count_write: 6,
      count_fetch: 2,
      count_insert: 4,
      count_update: 1,
      count_delete: 1,
    });
    assert.deepEqual(counts('w1.t2'), {
      count_star: 2,
      count_read: 2,
      count_write: 0,
      count_fetch: 2,
      count_insert: 0,
      count_update: 0,
      count_delete: 0,
    });
    assert.ok((t['w1.t1']?.sum_timer_write ?? 0) > 0, 'timers in picoseconds');
    assert.equal(Object.keys(t['w1.t1'] ?? {}).length, 35);

    const third = await c.collect('l', NO_SIGNAL);
    assert.ok(third.values.length > 0);
    assert.ok(
      third.values.every((v) => v.value === 0),
      'nothing happened since the last read',
    );
  });

  void it('truncate-table: no reports cumulative counters that grow by exactly the new I/O', async () => {
    const c = await collector({ 'truncate-table': 'no', include: 'w1.t1' }, ['count_insert', 'COUNT_WRITE']);
    const a = await c.collect('l', NO_SIGNAL);
    assert.ok(a.values.every((v) => v.type === MetricType.CumulativeCounter));
    const before = byTable(a.values)['w1.t1'] ?? {};
    await server.query('INSERT INTO w1.t1 VALUES (10, 1), (11, 1), (12, 1)');
    const b = await c.collect('l', NO_SIGNAL);
    assert.deepEqual(Object.keys(byTable(b.values)), ['w1.t1']);
    assert.deepEqual(byTable(b.values)['w1.t1'], {
      count_insert: (before.count_insert ?? NaN) + 3,
      count_write: (before.count_write ?? NaN) + 3,
    });
  });

  void it('include and exclude are applied by the server', async () => {
    await server.query('INSERT INTO sys.zz VALUES (2)');
    const tables = async (options: Record<string, string>) => {
      const c = await collector({ ...options, 'truncate-table': 'no' }, ['count_star']);
      const res = await c.collect('l', NO_SIGNAL);
      assert.equal(res.error, undefined);
      return Object.keys(byTable(res.values)).sort();
    };
    assert.deepEqual(await tables({ include: 'w1.t2' }), ['w1.t2']);
    assert.deepEqual(await tables({ include: 't1,sys.*' }), ['sys.zz', 'w1.t1']);
    const excl = await tables({ exclude: 'w1.t2' });
    assert.ok(excl.includes('sys.zz') && excl.includes('w1.t1') && !excl.includes('w1.t2'), excl.join(','));
    assert.deepEqual(await tables({}), ['w1.t1', 'w1.t2']);
    // An explicit empty exclude filters nothing (other system tables may show up too).
    const all = await tables({ exclude: '' });
    for (const t of ['sys.zz', 'w1.t1', 'w1.t2']) assert.ok(all.includes(t), `${t} in ${all.join(',')}`);
  });

  void it('group-by schema adds up the tables of each schema; both reports tables and schemas', async () => {
    const read = async (groupBy: string) => {
      const c = await collector({ 'truncate-table': 'no', include: 'w1.*', 'group-by': groupBy }, [
        'count_write',
        'count_insert',
        'avg_timer_write',
        'max_timer_write',
      ]);
      const res = await c.collect('l', NO_SIGNAL);
      assert.equal(res.error, undefined);
      return byTable(res.values);
    };
    await server.query('INSERT INTO w1.t1 VALUES (20, 1), (21, 1)');
    await server.query('INSERT INTO w1.t2 VALUES (20, 1)');
    const tables = await read('table');
    const schema = await read('schema');
    assert.deepEqual(Object.keys(tables).sort(), ['w1.t1', 'w1.t2']);
    assert.deepEqual(Object.keys(schema), ['w1.']);
    const t1 = tables['w1.t1'] ?? {};
    const t2 = tables['w1.t2'] ?? {};
    const s = schema['w1.'] ?? {};
    assert.equal(s.count_write, (t1.count_write ?? NaN) + (t2.count_write ?? NaN));
    assert.equal(s.count_insert, (t1.count_insert ?? NaN) + (t2.count_insert ?? NaN));
    assert.equal(s.max_timer_write, Math.max(t1.max_timer_write ?? NaN, t2.max_timer_write ?? NaN));
    assert.ok((s.avg_timer_write ?? 0) > 0);
    const both = await read('both');
    assert.deepEqual(Object.keys(both).sort(), ['w1.', 'w1.t1', 'w1.t2']);
    assert.deepEqual(both['w1.'], s);
  });

  void it('without DROP the values are kept and the truncate failure is reported under its policy', async () => {
    const c = await collector({ include: 'w1.t2' }, ['count_star'], noDrop);
    const res = await c.collect('l', NO_SIGNAL);
    assert.equal(res.values.length, 1);
    assert.equal(res.error?.policy, 'truncate-timeout');
    assert.equal(res.error?.errno, 1142);
    assert.doesNotMatch(res.error?.message ?? '', /nodrop-pass-3/);
  });

  void it('through the engine, report-once,zero: interval 1 keeps its values, later ones are zeroed with their groups', async () => {
    const plan = planOf({
      l: {
        'wait.io.table': {
          metrics: ['count_insert'],
          options: { include: 'w1.t2' },
          errors: { 'truncate-timeout': 'report-once,zero,retry' },
        },
      },
    });
    const status = new StatusRegistry();
    const events: string[] = [];
    const engine = await engineFor({
      plan,
      status: status.monitor('m1'),
      errors: events,
      help: () => registration.help,
      make: () => registration.create({ monitorId: 'm1', db: noDrop }),
      emrMs: 4000,
      cmrMs: 3000,
    });
    try {
      await server.query('INSERT INTO w1.t2 VALUES (30, 1), (31, 1)');
      const total = Number(
        (
          await server.query(
            "SELECT COUNT_INSERT FROM performance_schema.table_io_waits_summary_by_table WHERE OBJECT_SCHEMA='w1' AND OBJECT_NAME='t2'",
          )
        )[0]?.COUNT_INSERT,
      );
      const work = [{ domain: 'wait.io.table', level: 'l' }];
      const [m1] = await engine.collect(1, 'l', work);
      const [m2] = await engine.collect(2, 'l', work);
      const group = { db: 'w1', tbl: 't2' };
      assert.deepEqual(m1?.values['wait.io.table'], [
        { name: 'count_insert', value: total, type: MetricType.DeltaCounter, group },
      ]);
      assert.deepEqual(m2?.values['wait.io.table'], [
        { name: 'count_insert', value: 0, type: MetricType.DeltaCounter, group },
      ]);
      assert.equal(events.filter((e) => e.startsWith('collector-error')).length, 1);
      assert.match(
        events[0] ?? '',
        /^collector-error: test\/l\/1\/wait\.io\.table: truncate table performance_schema\.table_io_waits_summary_by_table failed: .*denied/,
      );
    } finally {
      await engine.close();
    }
  });
});
