import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Row } from '../../core/db.js';
import { MetricType } from '../../core/metrics.js';
import type { StatusWriter } from '../../core/status.js';
import { parseServerVersion } from '../../db/flavor.js';
import { absentReason, sourceFor } from '../kit/sources.js';
import { FakeDb, NO_SIGNAL, planOf } from '../kit/test-helpers.js';
import {
  DOMAIN,
  PFS_SQL,
  ReplLagCollector,
  checkSameOptions,
  help,
  micros,
  parseLagOptions,
  parseNetworkLatency,
  pfsLagValues,
  trxNo,
} from './index.js';

const UUID = '3e11fa47-71ca-11e1-9e33-c80aa9429562';
const ZERO_TS = '0.000000'; // UNIX_TIMESTAMP of P_S's "never" timestamp

/** One row of the pfs query as MySQL 8.0 returns it (all text; NULL stays null). */
function worker(over: Partial<Record<string, string | null>>): Row {
  return {
    CHANNEL_NAME: '',
    LAST_QUEUED_TRANSACTION: `${UUID}:105`,
    io_thd: 'ON',
    sql_thd: 'ON',
    LAST_PROCESSED_TRANSACTION: `${UUID}:105`,
    WORKER_ID: '1',
    LAST_APPLIED_TRANSACTION: `${UUID}:103`,
    now: '1721383200.500000',
    last_applied_ts: '1721383200.100000',
    last_applied_lag: '2500',
    applying_ts: ZERO_TS,
    ...over,
  };
}

const g = (name: string, value: number, channel = '') => ({
  name,
  value,
  type: MetricType.Gauge,
  group: { channel },
});

void describe('repl.lag pfs writer: values from recorded MySQL 8 result sets', () => {
  void it('busy workers: lag of the oldest applying transaction, backlog, worker usage in percent', () => {
    const rows = [
      worker({ WORKER_ID: '1', applying_ts: '1721383199.900000', LAST_APPLIED_TRANSACTION: `${UUID}:101` }),
      worker({ WORKER_ID: '2', applying_ts: '1721383200.200000', LAST_APPLIED_TRANSACTION: `${UUID}:103` }),
      worker({ WORKER_ID: '3', LAST_APPLIED_TRANSACTION: `${UUID}:102` }),
      worker({ WORKER_ID: '4', LAST_APPLIED_TRANSACTION: '' }),
    ];
    assert.deepEqual(pfsLagValues(rows, new Map(), ''), [
      g('current', 600), // 200.500000 - 199.900000
      g('backlog', 2), // 105 - 103
      g('worker_usage', 50),
    ]);
  });

  void it('idle workers: apply lag once per new queued transaction, then 0 while caught up', () => {
    const remembered = new Map<string, string>();
    const rows = [
      worker({ WORKER_ID: '1', LAST_APPLIED_TRANSACTION: `${UUID}:105`, last_applied_lag: '2999' }),
    ];
    assert.deepEqual(pfsLagValues(rows, remembered, ''), [
      g('current', 2),
      g('backlog', 0),
      g('worker_usage', 0),
    ]);
    assert.equal(remembered.get(''), `${UUID}:105`);
    assert.deepEqual(pfsLagValues(rows, remembered, ''), [
      g('current', 0),
      g('backlog', 0),
      g('worker_usage', 0),
    ]);
  });

  void it('stopped SQL thread: time since the last applied commit, never 0', () => {
    const remembered = new Map([['', `${UUID}:105`]]);
    const rows = [
      worker({ sql_thd: 'OFF', now: '1721383210.000000', LAST_APPLIED_TRANSACTION: `${UUID}:103` }),
    ];
    assert.deepEqual(pfsLagValues(rows, remembered, ''), [
      g('current', 9900),
      g('backlog', 2),
      g('worker_usage', 0),
    ]);
  });

  void it('NULL columns are 0, never a crash; a stopped channel that never applied reports nothing', () => {
    const remembered = new Map([['', '']]);
    const rows = [
      worker({
        io_thd: 'OFF',
        sql_thd: null,
        LAST_QUEUED_TRANSACTION: null,
        LAST_APPLIED_TRANSACTION: null,
        last_applied_ts: null,
        last_applied_lag: null,
        applying_ts: null,
        now: '1721383210.000000',
      }),
    ];
    assert.deepEqual(pfsLagValues(rows, remembered, ''), []);
  });

  void it('GTIDs off (ANONYMOUS): no crash, backlog 0, lag from the most recent commit', () => {
    const remembered = new Map([['', 'ANONYMOUS']]);
    const rows = [
      worker({
        WORKER_ID: '1',
        LAST_QUEUED_TRANSACTION: 'ANONYMOUS',
        LAST_APPLIED_TRANSACTION: 'ANONYMOUS',
        last_applied_ts: '1721383199.000000',
        io_thd: 'OFF',
        now: '1721383201.250000',
      }),
      worker({
        WORKER_ID: '2',
        LAST_QUEUED_TRANSACTION: 'ANONYMOUS',
        LAST_APPLIED_TRANSACTION: 'ANONYMOUS',
        last_applied_ts: '1721383200.000000',
        io_thd: 'OFF',
        now: '1721383201.250000',
      }),
    ];
    assert.deepEqual(pfsLagValues(rows, remembered, ''), [
      g('current', 1250),
      g('backlog', 0),
      g('worker_usage', 0),
    ]);
  });

  void it('tagged GTIDs (uuid:tag:N, MySQL 8.3+) use the number after the last colon', () => {
    assert.equal(trxNo(`${UUID}:tag_1:42`), 42);
    assert.equal(trxNo(`${UUID}:7`), 7);
    assert.equal(trxNo('ANONYMOUS'), 0);
    assert.equal(trxNo(''), 0);
    assert.equal(trxNo(null), 0);
    assert.equal(trxNo(`${UUID}:abc`), 0);
    const rows = [
      worker({ LAST_QUEUED_TRANSACTION: `${UUID}:etl:50`, LAST_APPLIED_TRANSACTION: `${UUID}:etl:45` }),
    ];
    assert.deepEqual(
      pfsLagValues(rows, new Map(), '').find((v) => v.name === 'backlog'),
      g('backlog', 5),
    );
  });

  void it('one set of values per channel; the default channel can be renamed', () => {
    const rows = [
      worker({ CHANNEL_NAME: '', WORKER_ID: '1' }),
      worker({ CHANNEL_NAME: 'ch2', WORKER_ID: '1', applying_ts: '1721383200.400000' }),
      worker({ CHANNEL_NAME: 'ch2', WORKER_ID: '2' }),
    ];
    const v = pfsLagValues(rows, new Map(), 'main');
    assert.deepEqual(
      v.map((x) => [x.group?.['channel'], x.name, x.value]),
      [
        ['main', 'current', 2],
        ['main', 'backlog', 2],
        ['main', 'worker_usage', 0],
        ['ch2', 'current', 100],
        ['ch2', 'backlog', 2],
        ['ch2', 'worker_usage', 50],
      ],
    );
  });

  void it('reads timestamps exactly (no float rounding)', () => {
    assert.equal(micros('1721383200.100000'), 1721383200100000);
    assert.equal(micros('1721383200.1'), 1721383200100000);
    assert.equal(micros('1721383200'), 1721383200000000);
    assert.equal(micros(null), 0);
    assert.equal(micros('NULL'), 0);
  });
});

void describe('repl.lag options', () => {
  void it('network-latency takes integer milliseconds or a duration', () => {
    assert.equal(parseNetworkLatency(undefined), 50);
    assert.equal(parseNetworkLatency(''), 50);
    assert.equal(parseNetworkLatency('20'), 20);
    assert.equal(parseNetworkLatency('50ms'), 50);
    assert.equal(parseNetworkLatency('0.1s'), 100);
    assert.equal(parseNetworkLatency('0'), 0);
    assert.throws(() => parseNetworkLatency('fast'), /invalid network-latency: "fast"/);
  });

  void it('parses the writer, booleans and defaults', () => {
    assert.deepEqual(parseLagOptions({}), {
      writer: 'auto',
      table: 'blip.heartbeat',
      sourceId: '',
      sourceRole: '',
      replCheck: '',
      reportNoHeartbeat: false,
      reportNotAReplica: false,
      defaultChannelName: '',
      networkLatencyMs: 50,
    });
    const o = parseLagOptions({
      writer: 'BLIP',
      'report-no-heartbeat': 'enable',
      'report-not-a-replica': 'true',
    });
    assert.deepEqual([o.writer, o.reportNoHeartbeat, o.reportNotAReplica], ['blip', true, true]);
    assert.throws(
      () => parseLagOptions({ writer: 'pt-heartbeat' }),
      /^Error: invalid lag writer: "pt-heartbeat"; valid values: auto, pfs, blip$/,
    );
  });

  void it('every level must configure the domain identically', () => {
    checkSameOptions([
      ['a', { writer: 'blip' }],
      ['b', { writer: 'blip' }],
    ]);
    assert.throws(
      () =>
        checkSameOptions([
          ['a', { writer: 'blip' }],
          ['b', { writer: '' }],
        ]),
      /^Error: different writer configuration: blip != $/,
    );
    assert.throws(
      () =>
        checkSameOptions([
          ['a', { writer: 'blip', 'report-no-heartbeat': 'yes' }],
          ['b', { writer: 'blip' }],
        ]),
      /different report-no-heartbeat configuration: yes != /,
    );
  });

  void it('pfs writer, per the source table: MySQL 8.0+ only', () => {
    const ok = (v: string) => absentReason(sourceFor(DOMAIN, parseServerVersion(v)), 'pfs') === undefined;
    assert.equal(ok('8.0.36'), true);
    assert.equal(ok('8.4.2'), true);
    assert.equal(ok('5.7.44'), false);
    assert.equal(ok('10.11.6-MariaDB'), false);
  });

  void it('help declares every option with its effective default', () => {
    assert.deepEqual(
      help.options.map((o) => [o.name, o.default]),
      [
        ['writer', 'auto'],
        ['table', 'blip.heartbeat'],
        ['source-id', ''],
        ['source-role', ''],
        ['repl-check', ''],
        ['report-no-heartbeat', 'no'],
        ['report-not-a-replica', 'no'],
        ['default-channel-name', ''],
        ['network-latency', '50'],
      ],
    );
    assert.deepEqual(
      help.metrics.map((m) => m.name),
      ['current', 'backlog', 'worker_usage'],
    );
  });
});

/** A FakeDb for collector tests: pfs query, SHOW GLOBAL VARIABLES, @@var and heartbeat reads. */
function lagDb(
  version: string,
  answers: { pfs?: Row[] | Error; vars?: Row[]; check?: string; heartbeat?: Row[] },
): FakeDb {
  return new FakeDb(version, (sql) => {
    if (sql === PFS_SQL) {
      if (answers.pfs instanceof Error) throw answers.pfs;
      return answers.pfs ?? [];
    }
    if (sql.startsWith('SHOW GLOBAL VARIABLES')) return answers.vars ?? [];
    if (sql.startsWith('SELECT @@')) return [{ v: answers.check ?? '1' }];
    if (sql.startsWith('SELECT NOW(3)')) return answers.heartbeat ?? [];
    throw new Error(`unexpected query: ${sql}`);
  });
}

const noTable = () =>
  Object.assign(new Error("Table 'performance_schema.replication_connection_status' doesn't exist"), {
    errno: 1146,
  });

void describe('repl.lag collector: writer choice', () => {
  void it('auto on MariaDB uses the heartbeat (no pfs trial query)', async () => {
    const db = lagDb('10.11.6-MariaDB', {});
    const c = new ReplLagCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'repl.lag': {} } }), NO_SIGNAL);
    assert.equal(c.writer, 'blip');
    await c.close();
    assert.ok(!db.queries.some((q) => q.sql === PFS_SQL));
  });

  void it('auto on MySQL 8 uses pfs when the query runs, even with zero rows', async () => {
    const db = lagDb('8.0.36', { pfs: [] });
    const c = new ReplLagCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'repl.lag': {} } }), NO_SIGNAL);
    assert.equal(c.writer, 'pfs');
    assert.deepEqual(await c.collect('l', NO_SIGNAL), { values: [] });
  });

  void it('auto on MySQL 8 falls back to blip when the query fails', async () => {
    const c = new ReplLagCollector({ monitorId: 'm', db: lagDb('8.0.36', { pfs: noTable() }) });
    await c.prepare(planOf({ l: { 'repl.lag': { options: { writer: 'auto' } } } }), NO_SIGNAL);
    assert.equal(c.writer, 'blip');
    await c.close();
  });

  void it('explicit pfs on MariaDB prepares, then says once it is not supported', async () => {
    const c = new ReplLagCollector({ monitorId: 'm', db: lagDb('10.11.6-MariaDB-log', {}) });
    await c.prepare(planOf({ l: { 'repl.lag': { options: { writer: 'pfs' } } } }), NO_SIGNAL);
    const res = await c.collect('l', NO_SIGNAL);
    assert.equal(res.error?.unsupported, true);
    assert.equal(
      res.error?.message,
      'repl.lag: not supported on mariadb 10.11.6: writer pfs: no performance_schema replication_connection_status table; use writer blip',
    );
  });

  void it('explicit pfs on MySQL 8 fails prepare when the query fails', async () => {
    const denied = Object.assign(new Error('SELECT command denied to user'), { errno: 1142 });
    const c = new ReplLagCollector({ monitorId: 'm', db: lagDb('8.0.36', { pfs: denied }) });
    await assert.rejects(
      c.prepare(planOf({ l: { 'repl.lag': { options: { writer: 'pfs' } } } }), NO_SIGNAL),
      /writer pfs: Performance Schema query failed: SELECT command denied/,
    );
  });

  void it('verifies repl-check at prepare', async () => {
    const c = new ReplLagCollector({ monitorId: 'm', db: lagDb('8.0.36', { vars: [] }) });
    await assert.rejects(
      c.prepare(planOf({ l: { 'repl.lag': { options: { 'repl-check': 'no_such_var' } } } }), NO_SIGNAL),
      /^Error: failed to verify replication check variable no_such_var: no such global variable$/,
    );
  });

  void it('pfs with repl-check 0: -1 only when report-not-a-replica, at every level', async () => {
    const db = lagDb('8.0.36', {
      vars: [{ Variable_name: 'server_id', Value: '0' }],
      check: '0',
      pfs: [worker({})],
    });
    const c = new ReplLagCollector({ monitorId: 'm', db });
    const opts = { writer: 'pfs', 'repl-check': 'server_id', 'report-not-a-replica': 'yes' };
    await c.prepare(
      planOf({ a: { 'repl.lag': { options: opts } }, b: { 'repl.lag': { options: opts } } }),
      NO_SIGNAL,
    );
    const minus = [{ name: 'current', value: -1, type: MetricType.Gauge }];
    assert.deepEqual((await c.collect('a', NO_SIGNAL)).values, minus);
    assert.deepEqual((await c.collect('b', NO_SIGNAL)).values, minus);
    const quiet = new ReplLagCollector({ monitorId: 'm', db });
    await quiet.prepare(
      planOf({ a: { 'repl.lag': { options: { writer: 'pfs', 'repl-check': 'server_id' } } } }),
      NO_SIGNAL,
    );
    assert.deepEqual((await quiet.collect('a', NO_SIGNAL)).values, []);
  });
});

void describe('repl.lag collector: blip writer', () => {
  const status = (): StatusWriter & { map: Map<string, string> } => {
    const map = new Map<string, string>();
    return { map, set: (k, v) => void map.set(k, v), delete: (k) => void map.delete(k) };
  };
  const tick = () => new Promise((r) => setTimeout(r, 20));

  void it('reports the reader lag with meta source, and the heartbeat-reader status', async () => {
    const st = status();
    const db = lagDb('10.11.6-MariaDB', {
      heartbeat: [
        {
          now: '2024-07-19 10:00:00.400',
          ts: '2024-07-19 10:00:00.000',
          freq: '1000',
          src_id: 'db1',
          repl: '1',
        },
      ],
    });
    const c = new ReplLagCollector({ monitorId: 'db2', db, status: st });
    await c.prepare(
      planOf({
        l: {
          'repl.lag': { options: { writer: 'blip', 'network-latency': '100ms', 'source-role': 'primary' } },
        },
      }),
      NO_SIGNAL,
    );
    await tick();
    assert.deepEqual((await c.collect('l', NO_SIGNAL)).values, [
      { name: 'current', value: 300, type: MetricType.Gauge, meta: { source: 'db1' } },
    ]);
    assert.equal(st.map.get('heartbeat-reader'), '300 ms lag from db1 (primary), next in 700ms');
    const read = db.queries.find((q) => q.sql.startsWith('SELECT NOW(3)'));
    assert.deepEqual(read?.params, ['primary']);
    await c.close();
    const n = db.queries.length;
    await new Promise((r) => setTimeout(r, 800));
    assert.equal(db.queries.length, n, 'the reader kept reading after close()');
  });

  void it('no heartbeat: nothing, or -1 with report-no-heartbeat', async () => {
    for (const [report, expected] of [
      ['no', []],
      ['yes', [{ name: 'current', value: -1, type: MetricType.Gauge }]],
    ] as const) {
      const st = status();
      const c = new ReplLagCollector({
        monitorId: 'db2',
        db: lagDb('10.11.6-MariaDB', { heartbeat: [] }),
        status: st,
      });
      await c.prepare(
        planOf({ l: { 'repl.lag': { options: { 'source-id': 'db1', 'report-no-heartbeat': report } } } }),
        NO_SIGNAL,
      );
      await tick();
      assert.deepEqual((await c.collect('l', NO_SIGNAL)).values, expected);
      assert.equal(st.map.get('error:heartbeat-reader'), 'no heartbeat for db1 (retry in 3s)');
      await c.close();
    }
  });

  void it('applies repl-check in the reader: 0 means not a replica', async () => {
    const st = status();
    const db = lagDb('10.11.6-MariaDB', {
      vars: [{ Variable_name: 'server_id', Value: '0' }],
      heartbeat: [
        {
          now: '2024-07-19 10:00:00.400',
          ts: '2024-07-19 10:00:00.000',
          freq: '1000',
          src_id: 'db1',
          repl: '0',
        },
      ],
    });
    const c = new ReplLagCollector({ monitorId: 'db2', db, status: st });
    await c.prepare(
      planOf({
        l: { 'repl.lag': { options: { 'repl-check': 'server_id', 'report-not-a-replica': 'yes' } } },
      }),
      NO_SIGNAL,
    );
    await tick();
    assert.deepEqual((await c.collect('l', NO_SIGNAL)).values, [
      { name: 'current', value: -1, type: MetricType.Gauge },
    ]);
    assert.equal(st.map.get('heartbeat-reader'), 'not a replica: server_id=0 (retry in 3s)');
    assert.match(
      db.queries.find((q) => q.sql.startsWith('SELECT NOW(3)'))?.sql ?? '',
      /@@server_id AS `repl`/,
    );
    await c.close();
  });
});
