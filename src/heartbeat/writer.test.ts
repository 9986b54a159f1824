import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NO_EVENTS } from '../core/events.js';
import { FakeDb } from '../collectors/kit/test-helpers.js';
import { heartbeatTableSql } from './table.js';
import { isReadOnlyError, runHeartbeatWriter, writerStatements } from './writer.js';

const readOnly = () =>
  Object.assign(
    new Error(
      'The MariaDB server is running with the --read-only option so it cannot execute this statement',
    ),
    {
      errno: 1290,
    },
  );

/**
 * Run the writer against scripted query outcomes ('ok' or an Error, in order). Every status
 * text and every sleep is recorded in one timeline; the writer is stopped during the sleep
 * that follows the last scripted outcome.
 */
async function runScripted(
  outcomes: ('ok' | Error)[],
  args: { freq?: string; table?: string; sourceId?: string; role?: string } = {},
): Promise<{ timeline: string[]; db: FakeDb }> {
  const queue = [...outcomes];
  const ctl = new AbortController();
  const db = new FakeDb('10.11.6-MariaDB', () => {
    const o = queue.shift();
    if (o === undefined) throw new Error('script exhausted');
    if (o instanceof Error) throw o;
    return [];
  });
  const timeline: string[] = [];
  await runHeartbeatWriter({
    monitorId: 'db1',
    db,
    events: NO_EVENTS,
    status: { set: (k, v) => void timeline.push(`${k}=${v}`), delete: () => undefined },
    freq: args.freq ?? '1s',
    ...(args.table !== undefined ? { table: args.table } : {}),
    ...(args.sourceId !== undefined ? { sourceId: args.sourceId } : {}),
    ...(args.role !== undefined ? { role: args.role } : {}),
    signal: ctl.signal,
    sleep: async (ms) => {
      timeline.push(`sleep ${ms}`);
      if (queue.length === 0) ctl.abort();
      return !ctl.signal.aborted;
    },
  });
  return { timeline, db };
}

void describe('heartbeat writer statements', () => {
  void it('binds the source id in the first insert with and without a role', () => {
    const withRole = writerStatements({
      table: '`blip`.`heartbeat`',
      sourceId: 'src',
      role: 'primary',
      freqMs: 1000,
    });
    assert.deepEqual(withRole.insert, {
      sql: 'INSERT INTO `blip`.`heartbeat` (src_id, src_role, ts, freq) VALUES (?, ?, NOW(3), ?) ON DUPLICATE KEY UPDATE ts=NOW(3), freq=?, src_role=?',
      params: ['src', 'primary', 1000, 1000, 'primary'],
    });
    const noRole = writerStatements({ table: '`blip`.`heartbeat`', sourceId: 'src', role: '', freqMs: 500 });
    assert.deepEqual(noRole.insert, {
      sql: 'INSERT INTO `blip`.`heartbeat` (src_id, src_role, ts, freq) VALUES (?, NULL, NOW(3), ?) ON DUPLICATE KEY UPDATE ts=NOW(3), freq=?, src_role=NULL',
      params: ['src', 500, 500],
    });
    assert.deepEqual(noRole.update, {
      sql: 'UPDATE `blip`.`heartbeat` SET ts=NOW(3) WHERE src_id=?',
      params: ['src'],
    });
  });

  void it('maps table names: tbl → blip.tbl, db.tbl → db.tbl, quoted safely', () => {
    assert.equal(heartbeatTableSql(), '`blip`.`heartbeat`');
    assert.equal(heartbeatTableSql('beats'), '`blip`.`beats`');
    assert.equal(heartbeatTableSql('ops.beats'), '`ops`.`beats`');
    assert.equal(heartbeatTableSql('`ops`.`be.ats`'), '`ops`.`be.ats`');
    assert.equal(heartbeatTableSql('`a``b`.c'), '`a``b`.`c`');
    assert.throws(() => heartbeatTableSql('ops.'), /invalid heartbeat table name/);
  });

  void it('knows the read-only errors', () => {
    assert.equal(isReadOnlyError(readOnly()), true);
    assert.equal(isReadOnlyError({ errno: 1836 }), true);
    assert.equal(isReadOnlyError({ errno: 1146 }), false);
    assert.equal(isReadOnlyError(new Error('x')), false);
  });
});

void describe('heartbeat writer loop', () => {
  void it('first insert, then update every freq: status first insert → sleep ⇄ write → stopped', async () => {
    const { timeline, db } = await runScripted(['ok', 'ok', 'ok'], { freq: '250ms', sourceId: 'node1' });
    assert.deepEqual(timeline, [
      'heartbeat-writer=first insert',
      'heartbeat-writer=sleep',
      'sleep 250',
      'heartbeat-writer=write',
      'heartbeat-writer=sleep',
      'sleep 250',
      'heartbeat-writer=write',
      'heartbeat-writer=sleep',
      'sleep 250',
      'heartbeat-writer=stopped',
    ]);
    assert.deepEqual(
      db.queries.map((q) => q.params),
      [['node1', 250, 250], ['node1'], ['node1']],
    );
  });

  void it('the source id defaults to the monitor id', async () => {
    const { db } = await runScripted(['ok'], { role: 'r' });
    assert.deepEqual(db.queries[0]?.params, ['db1', 'r', 1000, 1000, 'r']);
  });

  void it('read-only first insert: sleeps 20s and retries; other errors sleep 10s', async () => {
    const { timeline } = await runScripted([readOnly(), new Error('connection refused'), 'ok']);
    assert.deepEqual(timeline.slice(0, 7), [
      'heartbeat-writer=first insert',
      'heartbeat-writer=init: MySQL is read-only, sleeping 20s',
      'sleep 20000',
      'heartbeat-writer=first insert',
      'heartbeat-writer=init: error: connection refused (sleeping 10s)',
      'sleep 10000',
      'heartbeat-writer=first insert',
    ]);
  });

  void it('update errors: read-only sleeps 20s extra; other errors only report', async () => {
    const { timeline } = await runScripted(['ok', readOnly(), new Error('Lock wait timeout exceeded'), 'ok']);
    assert.deepEqual(timeline, [
      'heartbeat-writer=first insert',
      'heartbeat-writer=sleep',
      'sleep 1000',
      'heartbeat-writer=write',
      'heartbeat-writer=MySQL is read-only, sleeping 20s',
      'sleep 20000',
      'sleep 1000',
      'heartbeat-writer=write',
      'heartbeat-writer=write error: Lock wait timeout exceeded',
      'sleep 1000',
      'heartbeat-writer=write',
      'heartbeat-writer=sleep',
      'sleep 1000',
      'heartbeat-writer=stopped',
    ]);
  });

  void it('a freq the smallint column cannot hold is reported and nothing is written', async () => {
    const ctl = new AbortController();
    const statuses: string[] = [];
    const db = new FakeDb('10.11.6-MariaDB', () => []);
    const done = runHeartbeatWriter({
      monitorId: 'm',
      db,
      events: NO_EVENTS,
      status: { set: (_k, v) => void statuses.push(v), delete: () => undefined },
      freq: '70s',
      signal: ctl.signal,
    });
    await new Promise((r) => setTimeout(r, 10));
    ctl.abort();
    await done;
    assert.deepEqual(statuses, [
      'init: error: invalid heartbeat.freq "70s": more than 65.535s cannot be stored in the freq column',
      'stopped',
    ]);
    assert.equal(db.queries.length, 0);
  });

  void it('stops at once during a real 20s read-only sleep', async () => {
    const ctl = new AbortController();
    const db = new FakeDb('10.11.6-MariaDB', () => {
      throw readOnly();
    });
    let last = '';
    const done = runHeartbeatWriter({
      monitorId: 'm',
      db,
      events: NO_EVENTS,
      status: { set: (_k, v) => void (last = v), delete: () => undefined },
      freq: '1s',
      signal: ctl.signal,
    });
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(last, 'init: MySQL is read-only, sleeping 20s');
    const t0 = Date.now();
    ctl.abort();
    await done;
    assert.ok(Date.now() - t0 < 200);
    assert.equal(last, 'stopped');
  });
});
