import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { ConnectionSpec } from '../../core/db.js';
import { type Db } from '../../core/db.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import { createDb, type PooledDb } from '../../db/pool.js';
import { engineFor } from '../../engine/run.fixture.js';
import { StatusRegistry } from '../../status/registry.js';
import { startMariaDB, type MariaDB, tcpSpec } from '../../../test/helpers/mariadb.js';
import { FakeDb, NO_SIGNAL, planOf } from '../kit/test-helpers.js';
import { DOMAIN, SizeBinlogCollector, binlogBytes, help } from './index.js';

const bytes = (value: number): MetricValue => ({ name: 'bytes', value, type: MetricType.Gauge });

/**
 * One collection through the real engine, so the plan's error policy is applied exactly as
 * in a running monitor. Returns the domain's values, its status error and the error events.
 */
async function collectThroughEngine(db: Db, errors: Record<string, string> = {}) {
  const plan = planOf({ l: { [DOMAIN]: { errors } } });
  const status = new StatusRegistry();
  const events: string[] = [];
  const engine = await engineFor({
    plan,
    status: status.monitor('m1'),
    errors: events,
    help: (d) => (d === DOMAIN ? help : undefined),
    make: () => new SizeBinlogCollector({ monitorId: 'm1', db }),
    emrMs: 5000,
    cmrMs: 4000,
  });
  try {
    const [m] = await engine.collect(1, 'l', [{ domain: DOMAIN, level: 'l' }]);
    return {
      values: m?.values[DOMAIN],
      error: status.monitorStatus('m1')?.[`error:${DOMAIN}`],
      events: events.filter((e) => e.startsWith('collector-error')),
    };
  } finally {
    await engine.close();
  }
}

function spec(server: MariaDB, user: string, password: string): ConnectionSpec {
  return tcpSpec(server, user, password);
}

void describe('size.binlog rows', () => {
  void it('sums File_size of the three MySQL 8.0.14+ columns by name', () => {
    // Recorded shape of SHOW BINARY LOGS on MySQL 8.0.36.
    const rows = [
      { Log_name: 'binlog.000001', File_size: '3091158', Encrypted: 'No' },
      { Log_name: 'binlog.000002', File_size: '180', Encrypted: 'No' },
      { Log_name: 'binlog.000003', File_size: '157', Encrypted: 'Yes' },
    ];
    assert.equal(binlogBytes(rows), 3091158 + 180 + 157);
  });

  void it('sums the two MariaDB columns, whatever the case of the names', () => {
    assert.equal(
      binlogBytes([
        { Log_name: 'mysql-bin.000001', File_size: '1000' },
        { log_name: 'mysql-bin.000002', file_size: '24' },
      ]),
      1024,
    );
  });

  void it('falls back to the second column, skips unparsable sizes, and gives 0 for no rows', () => {
    assert.equal(binlogBytes([{ a: 'x.000001', b: '7', c: 'No' }]), 7);
    assert.equal(
      binlogBytes([
        { Log_name: 'x', File_size: null },
        { Log_name: 'y', File_size: '5' },
      ]),
      5,
    );
    assert.equal(binlogBytes([{ Log_name: 'x', File_size: '' }]), 0);
    assert.equal(binlogBytes([]), 0);
    assert.equal(binlogBytes([{ Log_name: 'x', File_size: '18446744073709551615' }]), 2 ** 64);
  });

  void it('collects bytes from a MySQL 8 server (recorded rows), ignoring plan metrics', async () => {
    const db = new FakeDb('8.0.36', () => [
      { Log_name: 'binlog.000007', File_size: '1024', Encrypted: 'No' },
      { Log_name: 'binlog.000008', File_size: '4096', Encrypted: 'No' },
    ]);
    const c = new SizeBinlogCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { [DOMAIN]: { metrics: ['other'] } } }), NO_SIGNAL);
    assert.deepEqual(await c.collect('l', NO_SIGNAL), { values: [bytes(5120)] });
    assert.deepEqual(db.queries, [{ sql: 'SHOW BINARY LOGS', params: [] }]);
    assert.deepEqual(await c.collect('not-a-level', NO_SIGNAL), { values: [] });
    assert.equal(db.queries.length, 1);
  });

  void it('declares no options, bytes, and the two named errors with their errnos', () => {
    assert.deepEqual(help.options, []);
    assert.deepEqual(
      help.errors.map((e) => [e.name, e.errnos]),
      [
        ['access-denied', [1227]],
        ['binlog-not-enabled', [1381]],
      ],
    );
    assert.deepEqual(
      help.metrics.map((m) => [m.name, m.type]),
      [['bytes', MetricType.Gauge]],
    );
  });
});

void describe('size.binlog on MariaDB with --log-bin', () => {
  let server: MariaDB;
  let db: PooledDb;
  let weak: PooledDb;

  before(async () => {
    server = await startMariaDB({ args: ['--log-bin=mysql-bin', '--server-id=1'] });
    await server.createUser('mon', 'mon-pass-1', ['BINLOG MONITOR ON *.*']);
    await server.createUser('weak', 'weak-pass-1', ['PROCESS ON *.*']);
    db = createDb(spec(server, 'mon', 'mon-pass-1'));
    weak = createDb(spec(server, 'weak', 'weak-pass-1'));
  });
  after(async () => {
    await db.close();
    await weak.close();
    await server.stop();
  });

  void it('equals the sum of SHOW BINARY LOGS and of the files on disk after two rotations', async () => {
    await server.query('CREATE DATABASE app');
    await server.query('CREATE TABLE app.t (id INT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(200))');
    for (let i = 0; i < 3; i++) {
      await server.query('INSERT INTO app.t (v) VALUES (REPEAT(?, 200)), (REPEAT(?, 200))', ['a', 'b']);
      await server.query('FLUSH BINARY LOGS');
    }
    const logs = await server.query('SHOW BINARY LOGS');
    assert.ok(logs.length >= 4, `${logs.length} binary logs`);
    // The same moment: nothing writes between these reads.
    const c = new SizeBinlogCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { [DOMAIN]: {} } }), NO_SIGNAL);
    const res = await c.collect('l', NO_SIGNAL);
    const fromShow = logs.reduce((s, r) => s + Number(r.File_size), 0);
    const onDisk = logs.reduce((s, r) => s + statSync(join(server.datadir, String(r.Log_name))).size, 0);
    assert.deepEqual(res, { values: [bytes(fromShow)] });
    assert.equal(fromShow, onDisk);
    assert.ok(fromShow > 3 * 2 * 200, `${fromShow} bytes`); // the inserted rows are in there
  });

  void it('grows by exactly what the server reports after more writes', async () => {
    const c = new SizeBinlogCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { [DOMAIN]: {} } }), NO_SIGNAL);
    const before = (await c.collect('l', NO_SIGNAL)).values[0]?.value ?? 0;
    await server.query('INSERT INTO app.t (v) VALUES (REPEAT(?, 200))', ['c']);
    // MariaDB writes a binlog checkpoint event in the background after a commit: wait until
    // the logs stop growing before comparing.
    const total = async () =>
      (await server.query('SHOW BINARY LOGS')).reduce((s, r) => s + Number(r.File_size), 0);
    let expected = await total();
    for (let i = 0; i < 50; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const now = await total();
      if (now === expected) break;
      expected = now;
    }
    const after = (await c.collect('l', NO_SIGNAL)).values[0]?.value ?? 0;
    assert.equal(after, expected);
    assert.ok(after > before + 200, `${before} → ${after}`);
  });

  void it('access denied (1227): reported by default with no values', async () => {
    const r = await collectThroughEngine(weak);
    assert.equal(r.values, undefined);
    assert.match(r.error ?? '', /\/size\.binlog: .*BINLOG MONITOR/);
    assert.equal(r.events.length, 1);
  });

  void it('access denied: the default plan policy ignore,drop,retry is silent', async () => {
    const r = await collectThroughEngine(weak, { 'access-denied': 'ignore,drop,retry' });
    assert.deepEqual(r, { values: undefined, error: undefined, events: [] });
  });

  void it('access denied with zero emits bytes=0', async () => {
    const r = await collectThroughEngine(weak, { 'access-denied': 'report-once,zero' });
    assert.deepEqual(r.values, [bytes(0)]);
    assert.match(r.error ?? '', /BINLOG MONITOR/);
  });
});

void describe('size.binlog on MariaDB without binary logging', () => {
  let server: MariaDB;
  let db: PooledDb;

  before(async () => {
    server = await startMariaDB();
    await server.createUser('mon', 'mon-pass-1', ['BINLOG MONITOR ON *.*']);
    db = createDb(spec(server, 'mon', 'mon-pass-1'));
  });
  after(async () => {
    await db.close();
    await server.stop();
  });

  void it('returns error 1381, which help maps to binlog-not-enabled, with bytes=0 ready for zero', async () => {
    const c = new SizeBinlogCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { [DOMAIN]: {} } }), NO_SIGNAL);
    const res = await c.collect('l', NO_SIGNAL);
    assert.deepEqual(res.values, []);
    assert.equal(res.error?.errno, 1381);
    assert.equal(help.errors.find((e) => e.errnos?.includes(1381))?.name, 'binlog-not-enabled');
    assert.deepEqual(res.error?.zero, [bytes(0)]);
  });

  void it('the default policy reports it (status and event), with no values', async () => {
    const r = await collectThroughEngine(db);
    assert.equal(r.values, undefined);
    assert.match(r.error ?? '', /^at \S+: test\/l\/1\/size\.binlog: .*not using binary logging/i);
    assert.deepEqual(r.events.length, 1);
  });

  void it('ignore,drop is silent: no values, no status error, no event', async () => {
    const r = await collectThroughEngine(db, { 'binlog-not-enabled': 'ignore,drop' });
    assert.deepEqual(r, { values: undefined, error: undefined, events: [] });
  });

  void it('ignore,zero emits bytes=0 silently', async () => {
    const r = await collectThroughEngine(db, { 'binlog-not-enabled': 'ignore,zero' });
    assert.deepEqual(r, { values: [bytes(0)], error: undefined, events: [] });
  });
});
