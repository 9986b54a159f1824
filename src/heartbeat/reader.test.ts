import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Events } from '../core/events.js';
import type { StatusWriter } from '../core/status.js';
import type { Row } from '../core/db.js';
import { FakeDb } from '../collectors/kit/test-helpers.js';
import {
  HeartbeatReader,
  lagAndWait,
  parseDatetimeMs,
  readerQuery,
  stalledLag,
  type HeartbeatLag,
} from './reader.js';

/** A StatusWriter keeping a map, plus a log of every set/delete. */
function recordingStatus(): StatusWriter & { map: Map<string, string> } {
  const map = new Map<string, string>();
  return { map, set: (k, v) => void map.set(k, v), delete: (k) => void map.delete(k) };
}

function recordingEvents(): Events & { infos: string[] } {
  const infos: string[] = [];
  return {
    infos,
    info: (event, monitorId, message) => void infos.push(`${event}|${monitorId}|${message ?? ''}`),
    error: () => undefined,
    debug: () => undefined,
  };
}

/** One scripted answer of the row source: a row, no row, or an error. */
type Step = Row | 'none' | Error;

interface Observation {
  wait: number;
  lag: HeartbeatLag;
  status: string | undefined;
  error: string | undefined;
}

/**
 * Run a reader over a scripted row source: each query takes the next step; each sleep
 * records what the reader decided (wait, lag, status); the loop ends after the last step.
 */
async function runAll(
  steps: Step[],
  settings: {
    sourceId?: string;
    sourceRole?: string;
    replCheck?: string;
    networkLatencyMs?: number;
    table?: string;
  } = {},
): Promise<{ obs: Observation[]; db: FakeDb; events: ReturnType<typeof recordingEvents> }> {
  const queue = [...steps];
  const db = new FakeDb('10.11.6-MariaDB', () => {
    const step = queue.shift();
    if (step === undefined) throw new Error('script exhausted');
    if (step instanceof Error) throw step;
    return step === 'none' ? [] : [step];
  });
  const status = recordingStatus();
  const events = recordingEvents();
  const obs: Observation[] = [];
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  const reader = new HeartbeatReader({
    monitorId: 'db2',
    db,
    status,
    events,
    ...settings,
    clock: () => 0, // frozen: current() shows exactly what the reading computed
    sleep: async (ms) => {
      obs.push({
        wait: ms,
        lag: reader.current(),
        status: status.map.get('heartbeat-reader'),
        error: status.map.get('error:heartbeat-reader'),
      });
      if (obs.length < steps.length) return true;
      done();
      return false;
    },
  });
  reader.start();
  await finished;
  await reader.stop();
  return { obs, db, events };
}

const hb = (now: string, ts: string, src = 'db1', freq = '2000', repl = '1'): Row => ({
  now: `2024-07-19 ${now}`,
  ts: `2024-07-19 ${ts}`,
  freq,
  src_id: src,
  repl,
});

void describe('heartbeat reader: lag arithmetic', () => {
  void it('reproduces the example table of docs/heartbeat.md (freq 2s, latency 50ms)', () => {
    const t = (s: string) => parseDatetimeMs(`2024-07-19 10:00:${s}`) ?? NaN;
    const rows: [string, string, number, number][] = [
      // now, last, lag, wait
      ['00.400', '00.000', 350, 1650],
      ['02.060', '02.000', 10, 1990],
      ['04.050', '02.000', 50, 50],
      ['04.700', '02.000', 1700, 500],
      ['07.000', '02.000', 4000, 1000],
    ];
    let lateReads = 0;
    for (const [now, last, lag, wait] of rows) {
      const r = lagAndWait(t(now), t(last), 2000, 50);
      lateReads = r.late ? lateReads + 1 : 0;
      assert.deepEqual(
        [stalledLag(r.lag, 2000, lateReads), r.waitMs],
        [lag, wait],
        `now ${now}, last ${last}`,
      );
    }
  });

  void it('picks the late-case waits at the 200/600/2000 ms boundaries', () => {
    const at = (lag: number) => lagAndWait(1000 + lag, 0, 1000, 50);
    assert.deepEqual([at(0).lag, at(0).waitMs, at(0).late], [0, 50, true]);
    assert.equal(at(199).waitMs, 50);
    assert.equal(at(200).waitMs, 100);
    assert.equal(at(599).waitMs, 100);
    assert.equal(at(600).waitMs, 500);
    assert.equal(at(1999).waitMs, 500);
    assert.equal(at(2000).waitMs, 1000);
  });

  void it('never reports negative lag on time, and truncates', () => {
    assert.deepEqual(lagAndWait(1030, 1000, 1000, 50), { lag: 0, waitMs: 1020, late: false });
    assert.equal(lagAndWait(1000.9, 0, 2000, 0.5).lag, 1000);
  });

  void it('parses NOW(3)/ts text to milliseconds', () => {
    assert.equal(parseDatetimeMs('1970-01-01 00:00:01.5'), 1500);
    assert.equal(parseDatetimeMs('1970-01-01 00:00:01.123456'), 1123);
    assert.equal(parseDatetimeMs('1970-01-01 00:00:02'), 2000);
    assert.equal(parseDatetimeMs('yesterday'), undefined);
    assert.equal(parseDatetimeMs(null), undefined);
  });
});

void describe('heartbeat reader: source following', () => {
  void it('source-id wins over source-role', () => {
    assert.deepEqual(readerQuery({ monitorId: 'm', sourceId: 'db1', sourceRole: 'primary' }), {
      mode: 'source-id',
      sql: 'SELECT NOW(3) AS `now`, ts, freq, src_id, 1 AS `repl` FROM `blip`.`heartbeat` WHERE src_id=?',
      params: ['db1'],
    });
  });

  void it('role follows the newest row with that role', () => {
    assert.deepEqual(readerQuery({ monitorId: 'm', sourceRole: 'primary', table: 'hb.beats' }), {
      mode: 'role',
      sql: 'SELECT NOW(3) AS `now`, ts, freq, src_id, 1 AS `repl` FROM `hb`.`beats` WHERE src_role=? ORDER BY ts DESC LIMIT 1',
      params: ['primary'],
    });
  });

  void it('latest skips this monitor by its id and reads repl-check when set', () => {
    assert.deepEqual(readerQuery({ monitorId: 'db2', replCheck: 'server_id', table: 'beats' }), {
      mode: 'latest',
      sql: 'SELECT NOW(3) AS `now`, ts, freq, src_id, @@server_id AS `repl` FROM `blip`.`beats` WHERE src_id != ? ORDER BY ts DESC LIMIT 1',
      params: ['db2'],
    });
  });

  void it('refuses a repl-check that is not an identifier', () => {
    assert.throws(() => readerQuery({ monitorId: 'm', replCheck: 'x; DROP TABLE t' }), /invalid repl-check/);
  });
});

void describe('heartbeat reader: loop', () => {
  void it('walks the worked example: lags, waits and status texts', async () => {
    const { obs, db } = await runAll(
      [
        hb('10:00:00.400', '10:00:00.000'),
        hb('10:00:02.060', '10:00:02.000'),
        hb('10:00:04.050', '10:00:02.000'),
        hb('10:00:04.700', '10:00:02.000'),
        hb('10:00:07.000', '10:00:02.000'),
      ],
      { sourceId: 'db1' },
    );
    assert.deepEqual(
      obs.map((o) => [o.lag.lag, o.lag.source, o.wait, o.status]),
      [
        [350, 'db1', 1650, '350 ms lag from db1 (), next in 1.65s'],
        [10, 'db1', 1990, '10 ms lag from db1 (), next in 1.99s'],
        [50, 'db1', 50, '50 ms lag from db1 (), next in 50ms'],
        // late at two readings in a row: half a period (1 s) is added
        [1700, 'db1', 500, '1700 ms lag from db1 (), next in 500ms'],
        [4000, 'db1', 1000, '4000 ms lag from db1 (), next in 1s'],
      ],
    );
    assert.equal(db.queries.length, 5);
    assert.deepEqual(db.queries[0]?.params, ['db1']);
  });

  void it('no row of the configured source-id: lag -1, error key naming it, retry in 3s; a later row clears the error', async () => {
    const { obs } = await runAll(['none', hb('10:00:00.100', '10:00:00.000', 'db1', '1000')], {
      sourceId: 'db1',
      sourceRole: 'primary',
    });
    assert.deepEqual(obs[0], {
      wait: 3000,
      lag: { lag: -1, source: '', replica: true },
      status: undefined,
      error: 'no heartbeat for db1 (retry in 3s)',
    });
    assert.deepEqual(obs[1], {
      wait: 950,
      lag: { lag: 50, source: 'db1', replica: true },
      status: '50 ms lag from db1 (primary), next in 950ms',
      error: undefined,
    });
  });

  void it("no row of the configured source-role: Blip's error, naming the source last read (none yet: empty)", async () => {
    const { obs } = await runAll(['none', hb('10:00:00.100', '10:00:00.000', 'db7', '1000'), 'none'], {
      sourceRole: 'primary',
      table: 'hb.beats',
    });
    assert.equal(obs[0]?.error, 'no heartbeat for  (retry in 3s)');
    assert.equal(obs[0]?.status, undefined);
    assert.equal(obs[1]?.status, '50 ms lag from db7 (primary), next in 950ms');
    assert.equal(obs[2]?.error, 'no heartbeat for db7 (retry in 3s)');
  });

  void it('no source configured and no row from another writer: an info status, no error key', async () => {
    const { obs } = await runAll(['none', 'none']);
    for (const o of obs) {
      assert.deepEqual(o, {
        wait: 3000,
        lag: { lag: -1, source: '', replica: true },
        status: 'no heartbeat from another source in blip.heartbeat (next read in 3s)',
        error: undefined,
      });
    }
  });

  void it('query error: lag unchanged, error key, retry in 1s', async () => {
    const err = Object.assign(new Error('Lock wait timeout exceeded; try restarting transaction'), {
      errno: 1205,
    });
    const { obs } = await runAll([hb('10:00:00.400', '10:00:00.000'), err]);
    assert.deepEqual(obs[1], {
      wait: 1000,
      lag: { lag: 350, source: 'db1', replica: true },
      status: '350 ms lag from db1 (), next in 1.65s',
      error: 'error: Lock wait timeout exceeded; try restarting transaction (retry in 1s)',
    });
  });

  void it('no source configured and no heartbeat table (or no grant on it): an info status, no error key', async () => {
    const missing = Object.assign(new Error("Table 'blip.heartbeat' doesn't exist"), { errno: 1146 });
    const denied = Object.assign(
      new Error("SELECT command denied to user 'sonde'@'localhost' for table `blip`.`heartbeat`"),
      {
        errno: 1142,
      },
    );
    const { obs } = await runAll([missing, denied, hb('10:00:00.400', '10:00:00.000')]);
    assert.deepEqual(obs[0], {
      wait: 3000,
      lag: { lag: -1, source: '', replica: true },
      status: 'no heartbeat table blip.heartbeat readable by this account (error 1146) (next read in 3s)',
      error: undefined,
    });
    assert.equal(
      obs[1]?.status,
      'no heartbeat table blip.heartbeat readable by this account (error 1142) (next read in 6s)',
    );
    assert.equal(obs[1]?.error, undefined);
    assert.deepEqual(obs[2]?.lag, { lag: 350, source: 'db1', replica: true });
  });

  void it('no heartbeat table: the wait doubles after each read up to a minute, and starts again at 3s once read', async () => {
    const missing = Object.assign(new Error("Table 'blip.heartbeat' doesn't exist"), { errno: 1146 });
    const { obs } = await runAll([
      ...Array.from({ length: 7 }, () => missing),
      hb('10:00:00.400', '10:00:00.000'),
      missing,
    ]);
    assert.deepEqual(
      obs.map((o) => o.wait),
      [3000, 6000, 12000, 24000, 48000, 60000, 60000, 1650, 3000],
    );
    assert.equal(
      obs[5]?.status,
      'no heartbeat table blip.heartbeat readable by this account (error 1146) (next read in 1m0s)',
    );
  });

  void it('a missing heartbeat table is an error when a source-id is configured', async () => {
    const missing = Object.assign(new Error("Table 'blip.heartbeat' doesn't exist"), { errno: 1146 });
    const { obs } = await runAll([missing], { sourceId: 'db1' });
    assert.equal(obs[0]?.error, "error: Table 'blip.heartbeat' doesn't exist (retry in 1s)");
    assert.equal(obs[0]?.wait, 1000);
  });

  void it('repl-check value 0: not a replica, lag -1, retry in 3s; a later 1 makes it a replica again', async () => {
    const { obs } = await runAll(
      [
        hb('10:00:00.400', '10:00:00.000', 'db1', '2000', '0'),
        hb('10:00:00.400', '10:00:00.000', 'db1', '2000', '7'),
      ],
      { replCheck: 'server_id' },
    );
    assert.deepEqual(obs[0], {
      wait: 3000,
      lag: { lag: -1, source: '', replica: false },
      status: 'not a replica: server_id=0 (retry in 3s)',
      error: undefined,
    });
    assert.deepEqual(obs[1]?.lag, { lag: 350, source: 'db1', replica: true });
  });

  void it('sends repl-soruce-change when the followed src_id changes, not for the first row', async () => {
    const { events } = await runAll([
      hb('10:00:00.400', '10:00:00.000', 'db1'),
      hb('10:00:02.400', '10:00:02.000', 'db1'),
      hb('10:00:04.400', '10:00:04.000', 'db3'),
    ]);
    assert.deepEqual(events.infos, ['repl-soruce-change|db2|db1 to db3']);
  });

  /** One reading of `row` with a settable clock; returns the reader and the clock. */
  async function readOnce(row: Row) {
    const clock = { now: 1000 };
    let read!: () => void;
    const readDone = new Promise<void>((r) => (read = r));
    const reader = new HeartbeatReader({
      monitorId: 'db2',
      db: new FakeDb('10.11.6-MariaDB', () => [row]),
      clock: () => clock.now,
      sleep: async () => {
        read();
        return false;
      },
    });
    reader.start();
    await readDone;
    return { reader, clock };
  }

  void it('a late lag keeps growing between readings', async () => {
    const { reader, clock } = await readOnce(hb('10:00:04.700', '10:00:02.000'));
    assert.equal(reader.current().lag, 700);
    clock.now += 400; // the next read is up to 500 ms away; replication is still stalled
    assert.equal(reader.current().lag, 1100);
    await reader.stop();
  });

  void it('an on-time lag does not grow between readings', async () => {
    const { reader, clock } = await readOnce(hb('10:00:00.400', '10:00:00.000'));
    clock.now += 1000;
    assert.equal(reader.current().lag, 350);
    await reader.stop();
  });

  void it('reports no lag once the last good read is older than one period plus 1 s, and says why', async () => {
    const clock = { now: 1000 };
    const status = recordingStatus();
    const steps: (Row | Error)[] = [
      hb('10:00:00.400', '10:00:00.000'),
      new Error('Lock wait timeout exceeded'),
    ];
    let sleeps = 0;
    let second!: () => void;
    const failedOnce = new Promise<void>((r) => (second = r));
    const reader = new HeartbeatReader({
      monitorId: 'db2',
      db: new FakeDb('10.11.6-MariaDB', () => {
        const step = steps.shift() ?? new Error('Lock wait timeout exceeded');
        if (step instanceof Error) throw step;
        return [step];
      }),
      status,
      clock: () => clock.now,
      sleep: async () => {
        sleeps++;
        if (sleeps === 1) {
          clock.now += 3500; // the next read fails 3.5 s after the good one (freq 2 s)
          return true;
        }
        second();
        return false;
      },
    });
    reader.start();
    await failedOnce;
    assert.deepEqual(reader.current(), { lag: -1, source: '', replica: true });
    assert.equal(
      status.map.get('error:heartbeat-reader'),
      'error: Lock wait timeout exceeded; lag not reported, last read 3.5s ago (retry in 1s)',
    );
    clock.now = 1000 + 2900; // within freq + 1 s of the good read the lag still stands
    assert.equal(reader.current().lag, 350);
    await reader.stop();
  });

  void it('stop() ends a long sleep at once', async () => {
    const db = new FakeDb('10.11.6-MariaDB', () => []);
    const reader = new HeartbeatReader({ monitorId: 'm', db });
    reader.start();
    await new Promise((r) => setTimeout(r, 20));
    const t0 = Date.now();
    await reader.stop();
    assert.ok(Date.now() - t0 < 200, 'stop waited for the 3s retry');
    assert.deepEqual(reader.current(), { lag: -1, source: '', replica: true });
  });
});
