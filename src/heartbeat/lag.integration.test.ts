/**
 * Heartbeat writer, heartbeat reader, repl and repl.lag on a real MariaDB primary/replica
 * pair: steady state, a stopped SQL thread, a broken replica, the primary itself, and the
 * writer on the read-only replica.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createConnection } from 'mysql2/promise';
import { ConnectionSpec } from '../core/db.js';
import { NO_EVENTS } from '../core/events.js';
import { MetricType, type MetricValue } from '../core/metrics.js';
import type { StatusWriter } from '../core/status.js';
import { createDb, type PooledDb } from '../db/pool.js';
import { ReplCollector, help as replHelp } from '../collectors/repl/index.js';
import { ReplLagCollector } from '../collectors/repl.lag/index.js';
import { NO_SIGNAL, planOf } from '../collectors/kit/test-helpers.js';
import { startReplicationPair, type ReplicationPair } from '../../test/helpers/replication.js';
import { HEARTBEAT_TABLE_DDL } from './table.js';
import { runHeartbeatWriter } from './writer.js';

const USER = 'sonde_mon';
const PASSWORD = 'mon-pw-test';
const FREQ_MS = 500;

function dbFor(port: number, user = USER, password = PASSWORD): PooledDb {
  return createDb(
    new ConnectionSpec({
      username: user,
      password,
      host: '127.0.0.1',
      port,
      connectTimeoutMs: 5000,
      redactedDsn: `${user}:...@tcp(127.0.0.1:${port})/`,
    }),
  );
}

function mapStatus(): StatusWriter & { map: Map<string, string> } {
  const map = new Map<string, string>();
  return { map, set: (k, v) => void map.set(k, v), delete: (k) => void map.delete(k) };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function lagOf(c: ReplLagCollector): Promise<number | undefined> {
  const res = await c.collect('l', NO_SIGNAL);
  assert.equal(res.error, undefined);
  return res.values.find((v) => v.name === 'current')?.value;
}

/** Sample the collector every `everyMs` for `forMs`; returns [ms since start, lag] pairs. */
async function sample(
  c: ReplLagCollector,
  forMs: number,
  everyMs = 100,
): Promise<[number, number | undefined][]> {
  const t0 = Date.now();
  const out: [number, number | undefined][] = [];
  while (Date.now() - t0 < forMs) {
    out.push([Date.now() - t0, await lagOf(c)]);
    await sleep(everyMs);
  }
  return out;
}

void describe('heartbeat and replication lag on a MariaDB primary/replica pair', () => {
  let pair: ReplicationPair;
  let primaryDb: PooledDb;
  let replicaDb: PooledDb;
  const writerStop = new AbortController();
  let writerDone: Promise<void> | undefined;
  const writerStatus = mapStatus();
  const readerStatus = mapStatus();
  let lag: ReplLagCollector;
  let repl: ReplCollector;

  before(async () => {
    pair = await startReplicationPair();
    const p = pair.primary;
    await p.query('CREATE DATABASE blip');
    await p.query(HEARTBEAT_TABLE_DDL.replace('heartbeat (', 'blip.heartbeat ('));
    // The grants docs/heartbeat.md lists for MariaDB; they replicate to the replica too.
    await p.createUser(USER, PASSWORD, [
      'SELECT, INSERT, UPDATE, DELETE ON blip.heartbeat',
      'SLAVE MONITOR ON *.*',
    ]);
    await p.createUser('sonde_noprivs', 'np-pw-test', []);
    await pair.waitCaughtUp();
    primaryDb = dbFor(p.port);
    replicaDb = dbFor(pair.replica.port);

    writerDone = runHeartbeatWriter({
      monitorId: 'db1',
      db: primaryDb,
      status: writerStatus,
      events: NO_EVENTS,
      freq: `${FREQ_MS}ms`,
      signal: writerStop.signal,
    });
    lag = new ReplLagCollector({ monitorId: 'db2', db: replicaDb, status: readerStatus, events: NO_EVENTS });
    await lag.prepare(planOf({ l: { 'repl.lag': { options: { 'network-latency': '50' } } } }), NO_SIGNAL);
    repl = new ReplCollector({ monitorId: 'db2', db: replicaDb });
    await repl.prepare(planOf({ l: { repl: { metrics: ['running'] } } }), NO_SIGNAL);
  });

  after(async () => {
    await lag?.close();
    writerStop.abort();
    await writerDone;
    await primaryDb?.close();
    await replicaDb?.close();
    await pair?.stop();
  });

  void it('the writer keeps its row fresh on the primary and it replicates', async () => {
    await sleep(1500);
    assert.equal(lag.writer, 'blip'); // auto on MariaDB
    assert.match(writerStatus.map.get('heartbeat-writer') ?? '', /^(sleep|write)$/);
    const [row] = await pair.replica.query(
      'SELECT src_id, src_role, freq, TIMESTAMPDIFF(MICROSECOND, ts, NOW(3)) / 1000 AS age_ms FROM blip.heartbeat',
    );
    assert.equal(row?.['src_id'], 'db1');
    assert.equal(row?.['src_role'], null);
    assert.equal(row?.['freq'], FREQ_MS);
    assert.ok(Number(row?.['age_ms']) < FREQ_MS + 300, `heartbeat age ${String(row?.['age_ms'])} ms`);
  });

  void it('steady state: lag near 0 from db1, reader status set, repl running 1', async () => {
    // The reader may have started before the first heartbeat replicated: "no heartbeat",
    // retried after 3 s.
    const t0 = Date.now();
    while ((await lagOf(lag)) === undefined && Date.now() - t0 < 5000) await sleep(100);
    // The first read lands anywhere between two heartbeats and reports the age of the last
    // one (up to freq − latency); from the next read on, reads follow the heartbeats.
    await sleep(FREQ_MS + 200);
    const samples = await sample(lag, 2000, 200);
    for (const [, v] of samples) {
      assert.ok(
        v !== undefined && v >= 0 && v < 100,
        `steady-state lag ${String(v)} (${JSON.stringify(samples)})`,
      );
    }
    const res = await lag.collect('l', NO_SIGNAL);
    assert.deepEqual(res.values[0]?.meta, { source: 'db1' });
    assert.match(readerStatus.map.get('heartbeat-reader') ?? '', /^\d+ ms lag from db1 \(\), next in \d/);
    assert.equal(readerStatus.map.get('error:heartbeat-reader'), undefined);
    assert.deepEqual((await repl.collect('l', NO_SIGNAL)).values, [
      { name: 'running', value: 1, type: MetricType.Gauge, meta: { source: '127.0.0.1' } },
    ]);
  });

  void it('SQL thread stopped for 3 s: lag grows by about 3 s, then falls back', async () => {
    await pair.stopSqlThread();
    const stoppedAt = Date.now();
    const during = await sample(lag, 3000);
    const span = Date.now() - stoppedAt;
    const last = await lagOf(lag);
    await pair.startSqlThread();
    // Late-case lag is measured from when the next heartbeat was due (≤ freq after the
    // stop) and refreshed at least every second: within [span − freq − 1 s, span].
    assert.ok(
      last !== undefined && last >= span - FREQ_MS - 1000 - 100 && last <= span + 100,
      `lag ${String(last)} after ${span} ms`,
    );
    // Once late, it only grows, and a stopped replica never shows 0.
    const late = during.filter(([t]) => t >= FREQ_MS + 300).map(([, v]) => v ?? -1);
    for (let i = 1; i < late.length; i++) {
      assert.ok(
        (late[i] ?? 0) >= (late[i - 1] ?? 0),
        `lag went down while stopped: ${JSON.stringify(during)}`,
      );
    }
    assert.ok(
      late.every((v) => v > 0),
      `zero lag while stopped: ${JSON.stringify(during)}`,
    );
    assert.equal((await repl.collect('l', NO_SIGNAL)).values[0]?.value, 1);
    // Falls back once the SQL thread applies the backlog.
    const t0 = Date.now();
    let v = await lagOf(lag);
    while ((v === undefined || v >= 100) && Date.now() - t0 < 5000) {
      await sleep(100);
      v = await lagOf(lag);
    }
    assert.ok(v !== undefined && v < 100, `lag still ${String(v)} 5 s after START SLAVE SQL_THREAD`);
  });

  void it('heartbeat table locked on the replica: no lag is reported (never a stale 0), status says why, then it comes back', async () => {
    const locker = await createConnection({ socketPath: pair.replica.socket, user: 'root' });
    try {
      await locker.query('LOCK TABLES blip.heartbeat WRITE');
      // Reads block on the lock and time out; after one period plus 1 s the lag is withdrawn.
      await sleep(FREQ_MS + 1000 + 2500);
      const during = await sample(lag, 1000, 200);
      assert.ok(
        during.every(([, v]) => v === undefined),
        `a lag was reported while the table was locked: ${JSON.stringify(during)}`,
      );
      assert.match(
        readerStatus.map.get('error:heartbeat-reader') ?? '',
        /lag not reported, last read \S+ ago/,
      );
    } finally {
      await locker.query('UNLOCK TABLES').catch(() => undefined);
      await locker.end();
    }
    // Replication waited on the lock too: the replica catches up, then the lag falls back.
    const t0 = Date.now();
    let v = await lagOf(lag);
    while ((v === undefined || v >= 1000) && Date.now() - t0 < 10_000) {
      await sleep(100);
      v = await lagOf(lag);
    }
    assert.ok(v !== undefined && v < 1000, `lag ${String(v)} 10 s after UNLOCK TABLES`);
  });

  void it('broken replica: repl running 0 (never 1), repl.lag keeps growing and is never 0', async () => {
    await pair.breakReplication();
    await sleep(FREQ_MS + 300);
    const running: MetricValue[] = (await repl.collect('l', NO_SIGNAL)).values;
    assert.deepEqual(running, [
      { name: 'running', value: 0, type: MetricType.Gauge, meta: { source: '127.0.0.1' } },
    ]);
    // The reader notices at its next reads (later on a busy machine); from then on the lag
    // must never read 0 or go missing, and must grow.
    const noticed = Date.now();
    for (let v = await lagOf(lag); !(v !== undefined && v > 0); v = await lagOf(lag)) {
      assert.ok(Date.now() - noticed < 10_000, 'the reader never saw the replica fall behind');
      await sleep(100);
    }
    const during = await sample(lag, 2500, 250);
    const values = during.map(([, v]) => v ?? -1);
    assert.ok(
      values.every((v) => v > 0),
      `lag 0 on a broken replica: ${JSON.stringify(during)}`,
    );
    assert.ok((values.at(-1) ?? 0) > (values[0] ?? 0) + 1000, `lag did not grow: ${JSON.stringify(during)}`);
    assert.equal((await repl.collect('l', NO_SIGNAL)).values[0]?.value, 0);
    await pair.repairReplication();
    assert.equal((await repl.collect('l', NO_SIGNAL)).values[0]?.value, 1);
  });

  void it('on the primary, repl running is dropped, or -1 with report-not-a-replica', async () => {
    const onPrimary = new ReplCollector({ monitorId: 'db1', db: primaryDb });
    await onPrimary.prepare(
      planOf({
        quiet: { repl: { metrics: ['running'] } },
        loud: { repl: { metrics: ['running'], options: { 'report-not-a-replica': 'yes' } } },
      }),
      NO_SIGNAL,
    );
    assert.deepEqual(await onPrimary.collect('quiet', NO_SIGNAL), { values: [] });
    assert.deepEqual((await onPrimary.collect('loud', NO_SIGNAL)).values, [
      { name: 'running', value: -1, type: MetricType.Gauge, meta: { source: '' } },
    ]);
  });

  void it('repl without SLAVE MONITOR: error 1227, which the help maps to the access-denied policy', async () => {
    const db = dbFor(pair.replica.port, 'sonde_noprivs', 'np-pw-test');
    try {
      const c = new ReplCollector({ monitorId: 'db2', db });
      await c.prepare(planOf({ l: { repl: { metrics: ['running'] } } }), NO_SIGNAL);
      const res = await c.collect('l', NO_SIGNAL);
      assert.equal(res.error?.errno, 1227);
      assert.ok(replHelp.errors.some((e) => e.name === 'access-denied' && e.errnos?.includes(1227)));
      assert.doesNotMatch(res.error?.message ?? '', /np-pw-test/);
    } finally {
      await db.close();
    }
  });

  void it('the writer on the read-only replica reports read-only and stops at once', async () => {
    const st = mapStatus();
    const stop = new AbortController();
    const done = runHeartbeatWriter({
      monitorId: 'db2',
      db: replicaDb,
      status: st,
      events: NO_EVENTS,
      freq: `${FREQ_MS}ms`,
      signal: stop.signal,
    });
    const t0 = Date.now();
    while (
      st.map.get('heartbeat-writer') !== 'init: MySQL is read-only, sleeping 20s' &&
      Date.now() - t0 < 5000
    ) {
      await sleep(50);
    }
    assert.equal(st.map.get('heartbeat-writer'), 'init: MySQL is read-only, sleeping 20s');
    const t1 = Date.now();
    stop.abort();
    await done;
    assert.ok(Date.now() - t1 < 500, 'Stop waited for the read-only sleep');
    assert.equal(st.map.get('heartbeat-writer'), 'stopped');
    assert.deepEqual(
      await pair.replica.query("SELECT COUNT(*) AS n FROM blip.heartbeat WHERE src_id = 'db2'"),
      [{ n: 0 }],
    );
  });

  void it('close() stops the reader: no more reads, status frozen', async () => {
    await lag.close();
    const before = readerStatus.map.get('heartbeat-reader');
    await sleep(1200);
    assert.equal(readerStatus.map.get('heartbeat-reader'), before);
  });
});
