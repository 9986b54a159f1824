/**
 * Heartbeat writer: keeps this node's row of the heartbeat table
 * fresh so that replicas can compute replication lag from the replicated row.
 *
 * Every node of a topology may run a writer. On the writable source it succeeds; on a
 * read-only replica every write fails with "read-only" (1290, or 1836 on MySQL
 * super_read_only), which is harmless: the writer keeps retrying every 20 s and starts
 * writing the moment the node is promoted.
 *
 * Timestamps are the server's `NOW(3)`, never the agent's clock. All sleeps end at once when
 * the monitor stops, so stopping a monitor takes about a second at most.
 */
import type { Db } from '../core/db.js';
import { errnoOf, errorMessage } from '../core/errors.js';
import type { Events } from '../core/events.js';
import type { StatusWriter } from '../core/status.js';
import { MonitorKey } from '../core/status-keys.js';
import { aborted } from '../util/abort.js';
import { sleep as abortableSleep } from '../util/backoff.js';
import { parseDuration } from '../util/duration.js';
import { MAX_FREQ_MS, heartbeatTableSql } from './table.js';

/** Timeout of the first insert and of each update. */
export const WRITE_TIMEOUT_MS = 5_000;
/** Wait after a read-only error. */
export const READ_ONLY_WAIT_MS = 20_000;
/** Wait after any other error of the first insert. */
export const INIT_ERROR_WAIT_MS = 10_000;

/** MySQL/MariaDB ER_OPTION_PREVENTS_STATEMENT (read_only) and ER_READ_ONLY_MODE (super_read_only). */
export const READ_ONLY_ERRNOS: ReadonlySet<number> = new Set([1290, 1836]);

/** True when a write failed only because the server is read-only. */
export function isReadOnlyError(err: unknown): boolean {
  const errno = errnoOf(err);
  return errno !== undefined && READ_ONLY_ERRNOS.has(errno);
}

/** A statement with its bound values. */
export interface BoundStatement {
  sql: string;
  params: unknown[];
}

/**
 * The writer's two statements. The first insert creates or refreshes this node's row (an
 * empty role is stored as NULL); the update only moves `ts`. The source id is bound in both
 * (Blip binds the monitor id in the first insert when no role is set, so a custom
 * source-id without a role never gets its row; sonde does not copy that bug).
 */
export function writerStatements(args: { table: string; sourceId: string; role: string; freqMs: number }): {
  insert: BoundStatement;
  update: BoundStatement;
} {
  const { table, sourceId, role, freqMs } = args;
  const insert: BoundStatement =
    role !== ''
      ? {
          sql: `INSERT INTO ${table} (src_id, src_role, ts, freq) VALUES (?, ?, NOW(3), ?) ON DUPLICATE KEY UPDATE ts=NOW(3), freq=?, src_role=?`,
          params: [sourceId, role, freqMs, freqMs, role],
        }
      : {
          sql: `INSERT INTO ${table} (src_id, src_role, ts, freq) VALUES (?, NULL, NOW(3), ?) ON DUPLICATE KEY UPDATE ts=NOW(3), freq=?, src_role=NULL`,
          params: [sourceId, freqMs, freqMs],
        };
  return { insert, update: { sql: `UPDATE ${table} SET ts=NOW(3) WHERE src_id=?`, params: [sourceId] } };
}

/** Arguments of runHeartbeatWriter (the shape the monitor passes). */
export interface HeartbeatWriterArgs {
  monitorId: string;
  db: Db;
  status: StatusWriter;
  events: Events;
  /** `heartbeat.freq`, a Go duration such as `1s` or `500ms`. */
  freq: string;
  /** `heartbeat.table`: `tbl` (database `blip`) or `db.tbl`; default `blip.heartbeat`. */
  table?: string;
  /** `heartbeat.source-id`; default the monitor id. */
  sourceId?: string;
  /** `heartbeat.role`; empty → NULL. */
  role?: string;
  /** Aborting it stops the writer (sleeps end at once, an in-flight write is cancelled). */
  signal: AbortSignal;
  /** Test hook: the interruptible sleep; resolves false when `signal` aborted. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<boolean>;
}

/**
 * Run the heartbeat writer until `signal` aborts. Never throws: every failure becomes the
 * `heartbeat-writer` status text and a retry.
 *
 * Status sequence: `first insert` (→ `init: MySQL is read-only, sleeping 20s` or
 * `init: error: <err> (sleeping 10s)` and again `first insert`) → `sleep` ⇄ `write`
 * (→ `MySQL is read-only, sleeping 20s` or `write error: <err>`) → `stopped`.
 */
export async function runHeartbeatWriter(args: HeartbeatWriterArgs): Promise<void> {
  const { db, status, events, signal } = args;
  const sleep = args.sleep ?? abortableSleep;
  const set = (text: string): void => status.set(MonitorKey.heartbeatWriter, text);
  try {
    const freqMs = heartbeatFreqMs(args.freq);
    const table = heartbeatTableSql(args.table);
    const sourceId = args.sourceId !== undefined && args.sourceId !== '' ? args.sourceId : args.monitorId;
    const { insert, update } = writerStatements({ table, sourceId, role: args.role ?? '', freqMs });
    const run: WriterRun = { db, set, sleep, signal, events };
    if (await firstInsert(run, insert)) await keepFresh(run, update, freqMs);
  } catch (err) {
    // Only configuration errors get here (the loops catch every query error). Nothing can
    // be written, so say why and stay idle until the monitor stops.
    set(`init: error: ${errorMessage(err)}`);
    await aborted(signal);
  } finally {
    set('stopped');
  }
}

/** `heartbeat.freq` in whole milliseconds; throws when it is not a usable frequency. */
function heartbeatFreqMs(freq: string): number {
  try {
    const ms = Math.trunc(parseDuration(freq));
    if (!(ms > 0)) throw new Error('must be greater than zero');
    if (ms > MAX_FREQ_MS) throw new Error('more than 65.535s cannot be stored in the freq column');
    return ms;
  } catch (err) {
    throw new Error(`invalid heartbeat.freq "${freq}": ${errorMessage(err)}`, { cause: err });
  }
}

/** What the two writer loops share. */
interface WriterRun {
  db: Db;
  set(text: string): void;
  sleep(ms: number, signal: AbortSignal): Promise<boolean>;
  signal: AbortSignal;
  events: Events;
}

/**
 * Run one statement. On failure `onError` says why and waits; it answers false when the wait
 * was cut short by a stop. Returns `stop` whenever the writer must end.
 */
async function write(
  run: WriterRun,
  st: BoundStatement,
  onError: (err: unknown) => Promise<boolean>,
): Promise<'ok' | 'failed' | 'stop'> {
  try {
    await run.db.query(st.sql, st.params, { signal: run.signal, timeoutMs: WRITE_TIMEOUT_MS });
    return 'ok';
  } catch (err) {
    if (run.signal.aborted) return 'stop';
    return (await onError(err)) ? 'failed' : 'stop';
  }
}

/** The first insert, repeated until it succeeds; false when the writer was stopped first. */
async function firstInsert(run: WriterRun, insert: BoundStatement): Promise<boolean> {
  const onError = async (err: unknown): Promise<boolean> => {
    if (isReadOnlyError(err)) {
      run.set('init: MySQL is read-only, sleeping 20s');
      return run.sleep(READ_ONLY_WAIT_MS, run.signal);
    }
    run.set(`init: error: ${errorMessage(err)} (sleeping 10s)`);
    run.events.debug(`heartbeat writer: first insert failed: ${errorMessage(err)}`);
    return run.sleep(INIT_ERROR_WAIT_MS, run.signal);
  };
  for (;;) {
    if (run.signal.aborted) return false;
    run.set('first insert');
    const result = await write(run, insert, onError);
    if (result !== 'failed') return result === 'ok';
  }
}

/** Every `freqMs`, move this node's `ts`, until the writer is stopped. */
async function keepFresh(run: WriterRun, update: BoundStatement, freqMs: number): Promise<void> {
  const onError = async (err: unknown): Promise<boolean> => {
    if (isReadOnlyError(err)) {
      run.set('MySQL is read-only, sleeping 20s');
      return run.sleep(READ_ONLY_WAIT_MS, run.signal);
    }
    run.set(`write error: ${errorMessage(err)}`);
    return true;
  };
  run.set('sleep');
  for (;;) {
    if (!(await run.sleep(freqMs, run.signal))) return;
    run.set('write');
    const result = await write(run, update, onError);
    if (result === 'stop') return;
    if (result === 'ok') run.set('sleep');
  }
}
