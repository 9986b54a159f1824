import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Row } from '../../core/db.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import { createDb, type PooledDb } from '../../db/pool.js';
import { startMariaDB, type MariaDB, tcpSpec } from '../../../test/helpers/mariadb.js';
import { FakeDb, NO_SIGNAL, planOf } from '../kit/test-helpers.js';
import { GAUGES, InnodbCollector, InnodbReader, buildInnodbQuery, help, innodbValues } from './index.js';

const BASE = 'SELECT subsystem, name, count FROM information_schema.innodb_metrics';

void describe('innodb queries and rows', () => {
  void it('all: no lists the plan metrics as bound, lowercased names', () => {
    assert.deepEqual(buildInnodbQuery('no', ['lock_timeouts', 'buffer_LRU_batch_flush_total_pages'], ''), {
      sql: `${BASE} WHERE name IN (?, ?)`,
      params: ['lock_timeouts', 'buffer_lru_batch_flush_total_pages'],
    });
    assert.equal(buildInnodbQuery('', ['x'], '').sql, `${BASE} WHERE name IN (?)`);
  });

  void it('all: enabled filters by the source key: STATUS on MySQL, ENABLED on MariaDB', () => {
    assert.equal(
      buildInnodbQuery('enabled', [], 'innodb_metrics:status').sql,
      `${BASE} WHERE status='enabled'`,
    );
    assert.equal(buildInnodbQuery('enabled', [], 'innodb_metrics:enabled').sql, `${BASE} WHERE enabled=1`);
    assert.throws(() => buildInnodbQuery('enabled', [], 'other'), /no enabled filter for source other/);
  });

  void it('all: yes reads every row', () => {
    assert.deepEqual(buildInnodbQuery('yes', ['ignored'], ''), { sql: BASE, params: [] });
  });

  void it('an empty list without all is refused', () => {
    assert.throws(() => buildInnodbQuery('no', [], ''), /^Error: no metrics specified$/);
  });

  void it('rows: names lowercased, negatives clamped, subsystem kept as returned, types by list', () => {
    const values = innodbValues([
      { SUBSYSTEM: 'lock', NAME: 'lock_timeouts', COUNT: '4' },
      { SUBSYSTEM: 'Buffer', NAME: 'buffer_LRU_get_free_search', COUNT: '7' },
      { SUBSYSTEM: 'transaction', NAME: 'trx_rseg_history_len', COUNT: '-3' },
      { SUBSYSTEM: 'server', NAME: 'odd', COUNT: null },
    ]);
    assert.deepEqual(values, [
      { name: 'lock_timeouts', value: 4, type: MetricType.CumulativeCounter, meta: { subsystem: 'lock' } },
      {
        name: 'buffer_lru_get_free_search',
        value: 7,
        type: MetricType.CumulativeCounter,
        meta: { subsystem: 'Buffer' },
      },
      { name: 'trx_rseg_history_len', value: 0, type: MetricType.Gauge, meta: { subsystem: 'transaction' } },
    ]);
  });

  void it('the reader gives what innodbValues gives, read after read, changed, moved and missing rows alike', () => {
    const rows = (): Row[] => [
      { SUBSYSTEM: 'lock', NAME: 'lock_timeouts', COUNT: '4' },
      { SUBSYSTEM: 'Buffer', NAME: 'buffer_LRU_get_free_search', COUNT: '7' },
      { SUBSYSTEM: 'transaction', NAME: 'trx_rseg_history_len', COUNT: '-3' },
      { SUBSYSTEM: 'server', NAME: 'odd', COUNT: null },
      { SUBSYSTEM: 'server', NAME: '', COUNT: '5' },
      { SUBSYSTEM: 'server', NAME: 'text', COUNT: 'x' },
      { SUBSYSTEM: 'server', NAME: 'big', COUNT: '18446744073709551615' },
    ];
    const change =
      (name: string, to: Row) =>
      (r: Row): Row =>
        r.NAME === name ? { ...r, ...to } : r;
    const reader = new InnodbReader();
    const check = (input: Row[]): MetricValue[] => {
      const values = reader.read(input);
      assert.deepEqual(values, innodbValues(input));
      for (const v of values) assert.ok(Object.isFrozen(v.meta));
      return values;
    };
    const first = check(rows());
    const again = check(rows());
    assert.notEqual(first[0], again[0]);
    assert.equal(again[0]?.meta, first[0]?.meta);
    check(rows().map(change('lock_timeouts', { COUNT: '5' })));
    check(rows().map(change('odd', { COUNT: '1' })));
    check(rows().map(change('odd', { COUNT: null })));
    check(rows().map(change('lock_timeouts', { SUBSYSTEM: 'other' })));
    check(rows().map(change('text', { NAME: 'renamed' })));
    check([...rows()].reverse());
    check(rows().slice(2));
    check([]);
    check(rows());
    const lower = rows().map((r) => ({
      subsystem: r.SUBSYSTEM ?? null,
      name: r.NAME ?? null,
      count: r.COUNT ?? null,
    }));
    assert.deepEqual(new InnodbReader().read(lower), innodbValues(rows()));
  });

  void it('declares 35 gauges, the all option and subsystem meta', () => {
    assert.equal(GAUGES.size, 35);
    assert.deepEqual(
      help.options.map((o) => [o.name, o.default, Object.keys(o.values ?? {})]),
      [['all', 'no', ['yes', 'enabled', 'no']]],
    );
    assert.deepEqual(
      help.meta.map((m) => m.key),
      ['subsystem'],
    );
  });

  void it('on MySQL 8 the collector asks for STATUS=enabled (flavor from ServerInfo)', async () => {
    const db = new FakeDb('8.0.36', () => [
      { SUBSYSTEM: 'lock', NAME: 'lock_timeouts', COUNT: '2' },
      { SUBSYSTEM: 'transaction', NAME: 'trx_active_transactions', COUNT: '1' },
    ]);
    const c = new InnodbCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { innodb: { options: { all: 'enabled' } } } }), NO_SIGNAL);
    const res = await c.collect('l', NO_SIGNAL);
    assert.deepEqual(db.queries, [{ sql: `${BASE} WHERE status='enabled'`, params: [] }]);
    assert.deepEqual(
      res.values.map((v) => [v.name, v.value, v.type]),
      [
        ['lock_timeouts', 2, MetricType.CumulativeCounter],
        ['trx_active_transactions', 1, MetricType.Gauge],
      ],
    );
  });

  void it('asks the server nothing while preparing a list-mode plan', async () => {
    const db = new FakeDb('10.11.6-MariaDB', () => []);
    const c = new InnodbCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { innodb: { metrics: ['lock_timeouts'] } } }), NO_SIGNAL);
    assert.deepEqual(db.queries, []);
    assert.deepEqual(await c.collect('other', NO_SIGNAL), { values: [] });
    assert.deepEqual(db.queries, []);
  });
});

void describe('innodb for the mysqld_exporter emulation', () => {
  const ROWS = [
    {
      SUBSYSTEM: 'buffer',
      NAME: 'buffer_LRU_batch_flush_total_pages',
      COUNT: '7',
      TYPE: 'STATUS_COUNTER',
      COMMENT: 'Total pages flushed',
    },
    {
      SUBSYSTEM: 'lock',
      NAME: 'lock_timeouts',
      COUNT: '1',
      TYPE: 'counter',
      COMMENT: 'Number of lock timeouts',
    },
  ];

  void it('reads NAME, TYPE and COMMENT in the same query and adds them as meta', async () => {
    const db = new FakeDb('10.11.6-MariaDB', () => ROWS);
    const c = new InnodbCollector({ monitorId: 'm', db, exporterReading: { keepText: new Set() } });
    await c.prepare(planOf({ l: { innodb: { options: { all: 'enabled' } } } }), NO_SIGNAL);
    const res = await c.collect('l', NO_SIGNAL);
    assert.deepEqual(db.queries, [
      {
        sql: 'SELECT subsystem, name, count, type, comment FROM information_schema.innodb_metrics WHERE enabled=1',
        params: [],
      },
    ]);
    assert.deepEqual(
      res.values.map((v) => [v.name, v.value, v.meta]),
      [
        [
          'buffer_lru_batch_flush_total_pages',
          7,
          {
            subsystem: 'buffer',
            name: 'buffer_LRU_batch_flush_total_pages',
            type: 'status_counter',
            comment: 'Total pages flushed',
          },
        ],
        [
          'lock_timeouts',
          1,
          { subsystem: 'lock', name: 'lock_timeouts', type: 'counter', comment: 'Number of lock timeouts' },
        ],
      ],
    );
  });

  void it('reads TYPE and COMMENT once, then shares one frozen meta per metric with the lean query', async () => {
    let rows = [ROWS[1]];
    const db = new FakeDb('8.0.36', () => rows.map((r) => ({ ...r })));
    const c = new InnodbCollector({ monitorId: 'm', db, exporterReading: { keepText: new Set() } });
    await c.prepare(planOf({ l: { innodb: { options: { all: 'yes' } } } }), NO_SIGNAL);
    const a = (await c.collect('l', NO_SIGNAL)).values[0]?.meta;
    const b = (await c.collect('l', NO_SIGNAL)).values[0]?.meta;
    assert.ok(a !== undefined && a === b);
    assert.ok(Object.isFrozen(a));
    assert.deepEqual(
      db.queries.map((q) => q.sql.replace(BASE, 'BASE')),
      ['SELECT subsystem, name, count, type, comment FROM information_schema.innodb_metrics', 'BASE'],
    );
    // A metric the cache has not seen (enabled since): the columns are read again at once.
    rows = [ROWS[1], ROWS[0]];
    const res = await c.collect('l', NO_SIGNAL);
    assert.equal(res.values.length, 2);
    assert.ok(res.values.every((v) => v.meta?.type !== undefined && v.meta.comment !== undefined));
    assert.deepEqual(
      db.queries.slice(2).map((q) => q.sql === BASE),
      [true, false],
    );
  });

  void it('without it, reads only subsystem, name and count, with one frozen subsystem meta per metric', async () => {
    const db = new FakeDb('8.0.36', () => ROWS);
    const c = new InnodbCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { innodb: { options: { all: 'yes' } } } }), NO_SIGNAL);
    const res = await c.collect('l', NO_SIGNAL);
    assert.equal(db.queries[0]?.sql, BASE);
    assert.deepEqual(res.values[1]?.meta, { subsystem: 'lock' });
    assert.ok(Object.isFrozen(res.values[1]?.meta));
    assert.equal((await c.collect('l', NO_SIGNAL)).values[1]?.meta, res.values[1]?.meta);
  });
});

void describe('innodb against a real MariaDB', () => {
  let server: MariaDB;
  let db: PooledDb;
  let noProcess: PooledDb;

  const spec = (user: string, password: string) => tcpSpec(server, user, password);

  before(async () => {
    server = await startMariaDB();
    await server.createUser('mon', 'mon-pass-1', ['PROCESS ON *.*']);
    await server.createUser('weak', 'weak-pass-1', []);
    db = createDb(spec('mon', 'mon-pass-1'));
    noProcess = createDb(spec('weak', 'weak-pass-1'));
  });
  after(async () => {
    await db.close();
    await noProcess.close();
    await server.stop();
  });

  async function collect(options: Record<string, string>, metrics: string[] = [], on: PooledDb = db) {
    const c = new InnodbCollector({ monitorId: 'm', db: on });
    await c.prepare(planOf({ l: { innodb: { metrics, options } } }), NO_SIGNAL);
    return c.collect('l', NO_SIGNAL);
  }

  async function tableNames(where: string): Promise<string[]> {
    const rows = await server.query(`SELECT name FROM information_schema.innodb_metrics ${where}`);
    return rows.map((r) => String(r.name).toLowerCase()).sort();
  }

  void it('list mode returns the listed metrics with subsystem meta', async () => {
    const res = await collect({}, [
      'lock_timeouts',
      'buffer_LRU_batch_flush_total_pages',
      'trx_rseg_history_len',
      'buffer_pool_pages_total',
      'innodb_log_waits',
    ]);
    assert.equal(res.error, undefined);
    const [total] = await server.query(
      "SELECT count FROM information_schema.innodb_metrics WHERE name = 'buffer_pool_pages_total'",
    );
    const byName = new Map(res.values.map((v) => [v.name, v]));
    assert.deepEqual([...byName.keys()].sort(), [
      'buffer_lru_batch_flush_total_pages',
      'buffer_pool_pages_total',
      'lock_timeouts',
      'trx_rseg_history_len',
    ]);
    assert.deepEqual(byName.get('lock_timeouts'), {
      name: 'lock_timeouts',
      value: 0,
      type: MetricType.CumulativeCounter,
      meta: { subsystem: 'lock' },
    });
    assert.deepEqual(byName.get('buffer_pool_pages_total'), {
      name: 'buffer_pool_pages_total',
      value: Number(total?.count),
      type: MetricType.Gauge,
      meta: { subsystem: 'buffer' },
    });
    assert.equal(byName.get('trx_rseg_history_len')?.type, MetricType.Gauge);
    assert.equal(byName.get('buffer_lru_batch_flush_total_pages')?.meta?.subsystem, 'buffer');
  });

  void it('all: enabled returns exactly the enabled rows (ENABLED=1 on MariaDB)', async () => {
    const res = await collect({ all: 'enabled' });
    assert.equal(res.error, undefined);
    const enabled = await tableNames('WHERE enabled = 1');
    assert.ok(enabled.length > 20 && enabled.length < 195, `${enabled.length} enabled`);
    assert.deepEqual(res.values.map((v) => v.name).sort(), enabled);
    assert.ok(!res.values.some((v) => v.name === 'log_lsn_checkpoint_age')); // exists but disabled
  });

  void it('all: yes returns every row, disabled ones too', async () => {
    const res = await collect({ all: 'yes' });
    const all = await tableNames('');
    assert.deepEqual(res.values.map((v) => v.name).sort(), all);
    assert.ok(all.length >= 195);
    assert.equal(res.values.find((v) => v.name === 'buffer_lru_get_free_search')?.meta?.subsystem, 'Buffer');
  });

  void it('reports a missing PROCESS privilege as a collection error with errno 1227', async () => {
    const res = await collect({}, ['lock_timeouts'], noProcess);
    assert.deepEqual(res.values, []);
    assert.equal(res.error?.errno, 1227);
    assert.match(res.error?.message ?? '', /PROCESS privilege/);
  });
});
