import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createConnection, type Connection } from 'mysql2/promise';
import { CollectError } from '../../core/collector.js';
import { type Row } from '../../core/db.js';
import { MetricType } from '../../core/metrics.js';
import type { Plan } from '../../core/plan.js';
import { type PooledDb } from '../../db/pool.js';
import { engineFor } from '../../engine/run.fixture.js';
import { StatusRegistry } from '../../status/registry.js';
import { type MariaDB, rootDb, startMariaDB } from '../../../test/helpers/mariadb.js';
import { FakeDb, NO_SIGNAL, planOf } from '../kit/test-helpers.js';
import {
  CONSUMERS_SQL,
  PFS_ON_SQL,
  STMT_SQL,
  StmtCurrentCollector,
  help,
  stmtLevel,
  stmtValues,
} from './index.js';

const gauge = (name: string, value: number) => ({ name, value, type: MetricType.Gauge });
const dp = (metrics: string[], options: Record<string, string> = {}) => ({ metrics, options, errors: {} });
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const CONSUMERS_ON: Row[] = [
  { NAME: 'events_statements_current', ENABLED: 'YES' },
  { NAME: 'global_instrumentation', ENABLED: 'YES' },
  { NAME: 'thread_instrumentation', ENABLED: 'YES' },
];

/** A FakeDb with performance_schema on, all consumers on, and `current` as the statements. */
function fake(version: string, current: Row[], consumers: Row[] = CONSUMERS_ON, pfs = '1'): FakeDb {
  return new FakeDb(version, (sql) => {
    if (sql === PFS_ON_SQL) return [{ pfs }];
    if (sql === CONSUMERS_SQL) return consumers;
    if (sql === STMT_SQL) return current;
    throw new Error(`unexpected ${sql}`);
  });
}

void describe('stmt.current plan checks and rows', () => {
  void it('takes slow-threshold as a Go duration in whole microseconds, default 1.0s', () => {
    assert.deepEqual(stmtLevel(dp(['slowest', 'slow'])), {
      metrics: ['slowest', 'slow'],
      thresholdUs: 1_000_000,
    });
    assert.equal(stmtLevel(dp(['slow'], { 'slow-threshold': '250ms' })).thresholdUs, 250_000);
    assert.equal(stmtLevel(dp(['slow'], { 'slow-threshold': '0.1s' })).thresholdUs, 100_000);
    assert.equal(stmtLevel(dp(['slow'], { 'slow-threshold': '1.5µs' })).thresholdUs, 1);
    assert.equal(stmtLevel(dp(['slow'], { 'slow-threshold': '1m' })).thresholdUs, 60_000_000);
  });

  void it('refuses a threshold under 1µs, a bad duration, no metrics and unknown metrics', () => {
    assert.throws(() => stmtLevel(dp(['slow'], { 'slow-threshold': '999ns' })), /must be at least 1µs/);
    assert.throws(() => stmtLevel(dp(['slow'], { 'slow-threshold': '0' })), /must be at least 1µs/);
    assert.throws(
      () => stmtLevel(dp(['slow'], { 'slow-threshold': '5' })),
      /invalid slow-threshold: time: missing unit/,
    );
    assert.throws(() => stmtLevel(dp([])), /^Error: no metrics specified; expected: slowest, slow$/);
    assert.throws(() => stmtLevel(dp(['slowest', 'fastest'])), /^Error: invalid metric: fastest/);
  });

  void it('emits the listed metrics once each, in plan order', () => {
    assert.deepEqual(stmtLevel(dp(['SLOW', 'slowest', 'slow'])).metrics, ['slow', 'slowest']);
  });

  void it('converts picoseconds to microseconds, counts at or above the threshold, skips NULL', () => {
    const rows: Row[] = [
      { TIMER_WAIT: '3000123456789' }, // 3.000123456789 s
      { TIMER_WAIT: '1000000000000' }, // exactly 1 s: counts as slow
      { TIMER_WAIT: '52000000' }, // 52 µs: the agent's own query
      { TIMER_WAIT: null },
    ];
    assert.deepEqual(stmtValues(rows, { metrics: ['slowest', 'slow'], thresholdUs: 1_000_000 }), [
      gauge('slowest', 3000123.456789),
      gauge('slow', 2),
    ]);
    assert.deepEqual(stmtValues([], { metrics: ['slow', 'slowest'], thresholdUs: 1 }), [
      gauge('slow', 0),
      gauge('slowest', 0),
    ]);
  });

  void it('declares slow-threshold with its effective default and two gauges', () => {
    assert.deepEqual(
      help.options.map((o) => [o.name, o.default, o.values]),
      [['slow-threshold', '1.0s', undefined]],
    );
    assert.deepEqual(
      help.metrics.map((m) => [m.name, m.type]),
      [
        ['slowest', MetricType.Gauge],
        ['slow', MetricType.Gauge],
      ],
    );
  });
});

void describe('stmt.current on MySQL 8 (recorded answers)', () => {
  void it('checks performance_schema once in prepare, then reads the current statements', async () => {
    const db = fake('8.0.36', [{ TIMER_WAIT: '2500000000000' }, { TIMER_WAIT: '73000000' }]);
    const c = new StmtCurrentCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'stmt.current': { metrics: ['slowest', 'slow'] } } }), NO_SIGNAL);
    assert.deepEqual(await c.collect('l', NO_SIGNAL), {
      values: [gauge('slowest', 2_500_000), gauge('slow', 1)],
    });
    assert.deepEqual(await c.collect('l', NO_SIGNAL), {
      values: [gauge('slowest', 2_500_000), gauge('slow', 1)],
    });
    assert.deepEqual(
      db.queries.map((q) => q.sql),
      [PFS_ON_SQL, CONSUMERS_SQL, STMT_SQL, STMT_SQL],
    );
  });

  void it('a disabled consumer makes the domain unsupported, naming it', async () => {
    const db = fake(
      '8.4.3',
      [],
      [{ NAME: 'events_statements_current', ENABLED: 'NO' }, ...CONSUMERS_ON.slice(1)],
    );
    const c = new StmtCurrentCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'stmt.current': { metrics: ['slow'] } } }), NO_SIGNAL);
    const res = await c.collect('l', NO_SIGNAL);
    assert.deepEqual(res.values, []);
    assert.equal(res.error?.unsupported, true);
    assert.match(
      res.error?.message ?? '',
      /^stmt\.current: not supported on mysql 8\.4\.3: performance_schema consumer events_statements_current disabled \(enable it: UPDATE performance_schema\.setup_consumers SET ENABLED='YES' WHERE NAME='events_statements_current', or start the server with performance-schema-consumer-events-statements-current=ON\)$/,
    );
    assert.ok(!db.queries.some((q) => q.sql === STMT_SQL));
  });

  void it('a query failure is `<query> failed: <err>` with the errno', async () => {
    const db = new FakeDb('8.0.36', (sql) => {
      if (sql === STMT_SQL) {
        throw Object.assign(
          new Error("SELECT command denied to user 'mon'@'%' for table 'events_statements_current'"),
          {
            errno: 1142,
          },
        );
      }
      if (sql === PFS_ON_SQL) return [{ pfs: '1' }];
      throw Object.assign(new Error('SELECT command denied'), { errno: 1142 });
    });
    const c = new StmtCurrentCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'stmt.current': { metrics: ['slow'] } } }), NO_SIGNAL);
    const res = await c.collect('l', NO_SIGNAL);
    assert.equal(res.error?.unsupported, false);
    assert.equal(res.error?.errno, 1142);
    assert.equal(
      res.error?.message,
      `${STMT_SQL} failed: SELECT command denied to user 'mon'@'%' for table 'events_statements_current'`,
    );
  });
});

void describe('stmt.current against MariaDB with performance_schema and the consumer on', () => {
  let server: MariaDB;
  let db: PooledDb;
  let sleeper: Connection;

  before(async () => {
    server = await startMariaDB({
      args: ['--performance-schema=ON', '--performance-schema-consumer-events-statements-current=ON'],
    });
    db = rootDb(server.socket);
    sleeper = await createConnection({ socketPath: server.socket, user: 'root' });
  });
  after(async () => {
    await sleeper.end();
    await db.close();
    await server.stop();
  });

  async function prepared(options: Record<string, string> = {}) {
    const c = new StmtCurrentCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'stmt.current': { metrics: ['slowest', 'slow'], options } } }), NO_SIGNAL);
    return c;
  }

  void it('sees a running SELECT SLEEP(3): slowest ≥ its run time in µs, slow counts it at 1s', async () => {
    const c = await prepared({ 'slow-threshold': '1s' });
    const strict = await prepared({ 'slow-threshold': '10s' });
    const sent = Date.now();
    const sleeping = sleeper.query('SELECT SLEEP(3)');
    // Wait until the server shows the statement: it has started by the time we see it.
    let seen = 0;
    while (seen === 0) {
      const rows = await server.query(
        "SELECT ID FROM information_schema.processlist WHERE INFO = 'SELECT SLEEP(3)'",
      );
      if (rows.length > 0) seen = Date.now();
      else await sleep(20);
    }
    await sleep(1500);
    const collectStart = Date.now();
    const res = await c.collect('l', NO_SIGNAL);
    const collectEnd = Date.now();
    const high = await strict.collect('l', NO_SIGNAL);
    await sleeping;

    assert.equal(res.error, undefined);
    const [slowest, slow] = res.values;
    assert.equal(slowest?.name, 'slowest');
    assert.equal(slowest?.type, MetricType.Gauge);
    const atLeastUs = (collectStart - seen) * 1000;
    const atMostUs = (collectEnd - sent) * 1000;
    assert.ok(
      (slowest?.value ?? 0) >= atLeastUs && (slowest?.value ?? 0) <= atMostUs,
      `slowest ${slowest?.value} µs not in [${atLeastUs}, ${atMostUs}]`,
    );
    assert.deepEqual(slow, gauge('slow', 1));
    assert.deepEqual(high.values[1], gauge('slow', 0));
  });

  void it('with nothing else running, only its own query counts: slowest well under 1s, slow 0', async () => {
    const res = await (await prepared()).collect('l', NO_SIGNAL);
    assert.equal(res.error, undefined);
    const [slowest, slow] = res.values;
    assert.ok((slowest?.value ?? -1) > 0 && (slowest?.value ?? 0) < 1_000_000, `slowest ${slowest?.value}`);
    assert.deepEqual(slow, gauge('slow', 0));
  });

  void it('with the consumer switched off, reports unsupported naming the consumer', async () => {
    await server.query(
      "UPDATE performance_schema.setup_consumers SET ENABLED = 'NO' WHERE NAME = 'events_statements_current'",
    );
    try {
      const res = await (await prepared()).collect('l', NO_SIGNAL);
      assert.deepEqual(res.values, []);
      assert.equal(res.error?.unsupported, true);
      assert.match(
        res.error?.message ?? '',
        /^stmt\.current: not supported on mariadb 10\.\d+\.\d+: performance_schema consumer events_statements_current disabled \(enable it: /,
      );
    } finally {
      await server.query(
        "UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME = 'events_statements_current'",
      );
    }
  });
});

void describe('stmt.current against MariaDB without performance_schema', () => {
  let server: MariaDB;
  let db: PooledDb;

  before(async () => {
    server = await startMariaDB();
    db = rootDb(server.socket);
  });
  after(async () => {
    await db.close();
    await server.stop();
  });

  const plan: Plan = planOf({ l: { 'stmt.current': { metrics: ['slowest', 'slow'] } } });

  void it('prepares fine and answers every collect with the not-supported error, never querying the table', async () => {
    const c = new StmtCurrentCollector({ monitorId: 'm', db });
    await c.prepare(plan, NO_SIGNAL);
    const res = await c.collect('l', NO_SIGNAL);
    assert.deepEqual(res.values, []);
    assert.ok(res.error instanceof CollectError);
    assert.equal(res.error.unsupported, true);
    assert.match(
      res.error.message,
      /^stmt\.current: not supported on mariadb 10\.\d+\.\d+: performance_schema is disabled \(start the server with performance_schema=ON\)$/,
    );
  });

  void it('is reported once by the engine, which then stops the domain', async () => {
    const status = new StatusRegistry();
    const events: string[] = [];
    let created = 0;
    let collects = 0;
    const engine = await engineFor({
      plan,
      status: status.monitor('m1'),
      events: {
        info: (e) => events.push(e),
        error: (e, _id, msg) => events.push(`${e}: ${msg}`),
        debug: () => undefined,
      },
      help: (d) => (d === help.domain ? help : undefined),
      emrMs: 900,
      cmrMs: 800,
      make: () => {
        created++;
        const inner = new StmtCurrentCollector({ monitorId: 'm1', db });
        return {
          domain: inner.domain,
          prepare: (p, s) => inner.prepare(p, s),
          collect: (l, s) => {
            collects++;
            return inner.collect(l, s);
          },
        };
      },
    });
    for (let n = 1; n <= 3; n++) {
      const [m] = await engine.collect(n, 'l', [{ domain: help.domain, level: 'l' }]);
      assert.deepEqual(m?.values, {});
    }
    assert.equal(created, 1);
    assert.equal(collects, 1);
    const errors = events.filter((e) => e.startsWith('collector-error'));
    assert.equal(errors.length, 1);
    assert.match(
      errors[0] ?? '',
      /stmt\.current: not supported on mariadb .*: performance_schema is disabled/,
    );
    assert.match(status.monitorStatus('m1')?.['error:stmt.current'] ?? '', /performance_schema is disabled/);
  });
});
