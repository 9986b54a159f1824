/**
 * Heartbeat writer (spec heartbeat.md §3): keeps this node's row of the heartbeat table
 * fresh so that replicas can compute replication lag from the replicated row.
 *
 * Every node of a topology may run a writer. On the writable source it succeeds; on a
 * read-only replica every write fails with "read-only" (1290, or 1836 on MySQL
 * super_read_only), which is harmless: the writer keeps retrying every 20 s and starts
 * writing the moment the node is promoted.
 *
 * Timestamps are the server's `NOW(3)`, never the agent's clock. All sleeps end at once when
 * the monitor stops (monitors.md: Stop completes within about a second).
 */
import type { Db } from '../core/db.js';
import { errorMessage } from '../core/errors.js';
import type { Events } from '../core/events.js';
import type { StatusWriter } from '../core/status.js';
import { sleep as abortableSleep } from '../util/backoff.js';
import { parseDuration } from '../util/duration.js';
import { MAX_FREQ_MS, heartbeatTableSql } from './table.js';

/** Status key of the writer (status.md §3.2). */
export const WRITER_STATUS_KEY = 'heartbeat-writer';
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
  const errno = (err as { errno?: unknown } | null)?.errno;
  return typeof errno === 'number' && READ_ONLY_ERRNOS.has(errno);
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
 * source-id without a role never gets its row: heartbeat.md §3, Recommended fix).
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
  const set = (text: string): void => status.set(WRITER_STATUS_KEY, text);
  try {
    let freqMs: number;
    try {
      freqMs = Math.trunc(parseDuration(args.freq));
      if (!(freqMs > 0)) throw new Error('must be greater than zero');
      if (freqMs > MAX_FREQ_MS) throw new Error('more than 65.535s cannot be stored in the freq column');
    } catch (err) {
      throw new Error(`invalid heartbeat.freq "${args.freq}": ${errorMessage(err)}`, { cause: err });
    }
    const table = heartbeatTableSql(args.table);
    const sourceId = args.sourceId !== undefined && args.sourceId !== '' ? args.sourceId : args.monitorId;
    const { insert, update } = writerStatements({ table, sourceId, role: args.role ?? '', freqMs });
    const opts = { signal, timeoutMs: WRITE_TIMEOUT_MS };

    // 1. First insert, repeated until it succeeds.
    for (;;) {
      if (signal.aborted) return;
      set('first insert');
      try {
        await db.query(insert.sql, insert.params, opts);
        break;
      } catch (err) {
        if (signal.aborted) return;
        if (isReadOnlyError(err)) {
          set('init: MySQL is read-only, sleeping 20s');
          if (!(await sleep(READ_ONLY_WAIT_MS, signal))) return;
        } else {
          set(`init: error: ${errorMessage(err)} (sleeping 10s)`);
          events.debug(`heartbeat writer: first insert failed: ${errorMessage(err)}`);
          if (!(await sleep(INIT_ERROR_WAIT_MS, signal))) return;
        }
      }
    }

    // 2. Loop: sleep freq, move ts.
    set('sleep');
    for (;;) {
      if (!(await sleep(freqMs, signal))) return;
      set('write');
      try {
        await db.query(update.sql, update.params, opts);
        set('sleep');
      } catch (err) {
        if (signal.aborted) return;
        if (isReadOnlyError(err)) {
          set('MySQL is read-only, sleeping 20s');
          if (!(await sleep(READ_ONLY_WAIT_MS, signal))) return;
        } else {
          set(`write error: ${errorMessage(err)}`);
        }
      }
    }
  } catch (err) {
    // Only configuration errors get here (the loops catch every query error). Nothing can
    // be written, so say why and stay idle until the monitor stops.
    set(`init: error: ${errorMessage(err)}`);
    await untilAborted(signal);
  } finally {
    set('stopped');
  }
}

/** Resolves when `signal` aborts (at once if it already has). */
function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
