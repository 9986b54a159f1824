/**
 * Heartbeat reader: reads the replicated heartbeat row of the source
 * this node follows and turns it into replication lag in milliseconds.
 *
 * One reader runs per `repl.lag` collector (writer `blip`), in the background, independent
 * of plan level frequencies: it schedules each read just after the next heartbeat is due
 * (see lagAndWait), so lag resolution is sub-second whatever the heartbeat or level frequency. The
 * collector only asks for the latest value (current()).
 *
 * The arithmetic uses two timestamps of the replica's own clock domain: `NOW(3)` of the
 * replica and `ts` of the row, which the source wrote with its `NOW(3)` and replication
 * copied. Clock skew between the two servers therefore adds directly to the result.
 */
import type { Db, Row } from '../core/db.js';
import { errnoOf, errorMessage } from '../core/errors.js';
import type { Events } from '../core/events.js';
import { NO_EVENTS } from '../core/events.js';
import type { StatusWriter } from '../core/status.js';
import { MonitorKey } from '../core/status-keys.js';
import { parseValue } from '../db/values.js';
import { sleep as abortableSleep } from '../util/backoff.js';
import { formatDuration } from '../util/duration.js';
import { monotonicMs } from '../util/clock.js';
import { heartbeatTableSql } from './table.js';

/** Event sent when the followed source changes (the name is Blip's, typo included). */
export const SOURCE_CHANGE_EVENT = 'repl-soruce-change';

/**
 * Errors meaning "no heartbeat table here": unknown database (1049), no such table (1146),
 * SELECT denied on the table (1142; the server gives it for a missing table too when the
 * account has no privilege there).
 */
export const NO_TABLE_ERRNOS: readonly number[] = [1049, 1142, 1146];

/** Timeout of one read. */
export const READ_TIMEOUT_MS = 2_000;
/** Wait after a failed read. */
export const READ_ERROR_WAIT_MS = 1_000;
/** Wait after "no heartbeat row" and after "not a replica". */
export const NO_HEARTBEAT_WAIT_MS = 3_000;
/**
 * Longest wait between reads while there is no heartbeat table: the wait doubles from
 * NO_HEARTBEAT_WAIT_MS after each read that finds none, so a fleet without heartbeat does
 * not send each server a failing query every 3 s, and a table created later is still found
 * within a minute.
 */
export const NO_TABLE_WAIT_CAP_MS = 60_000;
/** A lag is reported while the last good read is at most one heartbeat period plus this old. */
export const STALE_GRACE_MS = 1_000;
/** Default `network-latency` option, milliseconds. */
export const DEFAULT_NETWORK_LATENCY_MS = 50;

/** How the reader picks the row to read: `source-id` wins over `role`, then the latest row. */
export type FollowMode = 'source-id' | 'role' | 'latest';

/** The reader's settings: the `repl.lag` options it uses. */
export interface ReaderSettings {
  /** This monitor's id ("latest" mode skips the monitor's own row by this id). */
  monitorId: string;
  /** Option `table`: `db.tbl` or `tbl` (database `blip`); default `blip.heartbeat`. */
  table?: string;
  /** Option `source-id`: follow exactly this src_id (wins over sourceRole). */
  sourceId?: string;
  /** Option `source-role`: follow the most recent row with this src_role. */
  sourceRole?: string;
  /**
   * Option `repl-check`: a global variable name (no `@@`) read with every heartbeat; the
   * value 0 means "this node is not a replica". Must be a plain identifier.
   */
  replCheck?: string;
  /** Option `network-latency` in milliseconds (default 50). */
  networkLatencyMs?: number;
}

/** The reader's query, built once. */
export interface ReaderQuery {
  mode: FollowMode;
  sql: string;
  params: string[];
}

/** A repl-check variable name: a plain identifier, because it is written into the SQL. */
export const REPL_CHECK_NAME = /^[A-Za-z0-9_]+$/;

/**
 * Build the reader's query. Columns are `NOW(3), ts, freq, src_id` and a replica flag:
 * the constant 1, or `@@<repl-check>` when a repl-check variable is set.
 */
export function readerQuery(s: ReaderSettings): ReaderQuery {
  const table = heartbeatTableSql(s.table);
  let check = '1';
  if (s.replCheck !== undefined && s.replCheck !== '') {
    if (!REPL_CHECK_NAME.test(s.replCheck))
      throw new Error(`invalid repl-check variable name: "${s.replCheck}"`);
    check = `@@${s.replCheck}`;
  }
  const select = `SELECT NOW(3) AS \`now\`, ts, freq, src_id, ${check} AS \`repl\` FROM ${table}`;
  if (s.sourceId !== undefined && s.sourceId !== '') {
    return { mode: 'source-id', sql: `${select} WHERE src_id=?`, params: [s.sourceId] };
  }
  if (s.sourceRole !== undefined && s.sourceRole !== '') {
    return {
      mode: 'role',
      sql: `${select} WHERE src_role=? ORDER BY ts DESC LIMIT 1`,
      params: [s.sourceRole],
    };
  }
  return {
    mode: 'latest',
    sql: `${select} WHERE src_id != ? ORDER BY ts DESC LIMIT 1`,
    params: [s.monitorId],
  };
}

/** Lag and the wait before the next read. */
export interface LagWait {
  /** Milliseconds, integer (truncated). */
  lag: number;
  /** Milliseconds until the next read. */
  waitMs: number;
  /** True when the next heartbeat was already due (replication is behind). */
  late: boolean;
}

/**
 * The lag arithmetic (described for users in docs/heartbeat.md). All inputs are milliseconds: `now` is the
 * replica's NOW(3), `last` the row's ts, `freq` the row's freq, `latency` the
 * network-latency option.
 *
 * - On time (now < last + freq): lag = max(0, (now − last) − latency); read again just
 *   after the next heartbeat lands: wait = (last + freq − now) + latency.
 * - Late (now ≥ last + freq): lag = now − (last + freq), measured from when the next
 *   heartbeat was due (not from `last`), no latency subtracted; re-read soon: 50 ms below
 *   200 ms of lag, 100 ms below 600 ms, 500 ms below 2 s, else 1 s.
 */
export function lagAndWait(now: number, last: number, freq: number, latency: number): LagWait {
  const next = last + freq;
  if (now < next) {
    return { lag: Math.max(0, Math.trunc(now - last - latency)), waitMs: next - now + latency, late: false };
  }
  const lag = Math.trunc(now - next);
  const waitMs = lag < 200 ? 50 : lag < 600 ? 100 : lag < 2000 ? 500 : 1000;
  return { lag, waitMs, late: true };
}

/**
 * The lag to report from a reading: on time, or late at one reading only (a heartbeat can
 * land a little after its due time), the arithmetic above. Late at two readings in a row,
 * the replica has stopped applying at some moment between the last heartbeat it has and
 * the next one, which it lacks; the middle of that period is the best estimate, so half a
 * heartbeat period is added: the error is then at most freq/2 either way, where counting
 * from the due time alone under-reports by up to a whole period.
 */
export function stalledLag(lateness: number, freq: number, lateReads: number): number {
  return lateReads >= 2 ? lateness + Math.trunc(freq / 2) : lateness;
}

const DATETIME = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?$/;

/**
 * `YYYY-MM-DD HH:MM:SS[.fff]` → milliseconds on a naive (zone-less) scale. Both NOW(3) and
 * ts come back in the session time zone, so only their difference matters. Undefined when
 * the text is not a datetime.
 */
export function parseDatetimeMs(text: string | null | undefined): number | undefined {
  if (text === null || text === undefined) return undefined;
  const m = DATETIME.exec(text.trim());
  if (m === null) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const ms = Number(((m[7] ?? '') + '000').slice(0, 3));
  return Date.UTC(y, mo - 1, d, h, mi, s) + ms;
}

/** What the reader hands the `repl.lag` collector. */
export interface HeartbeatLag {
  /** Milliseconds; −1 = no heartbeat (yet, or any more), or not a replica. */
  lag: number;
  /** src_id of the row the lag was computed from ('' when lag is −1). */
  source: string;
  /** False only when repl-check said this node is not a replica. */
  replica: boolean;
}

export interface HeartbeatReaderArgs extends ReaderSettings {
  db: Db;
  /**
   * The monitor's status: `heartbeat-reader` says what the reader does (lag, no heartbeat to
   * follow, not a replica); `error:heartbeat-reader` is set only while something is wrong.
   */
  status?: StatusWriter;
  events?: Events;
  /** Test hook: the interruptible sleep; resolves false when `signal` aborted. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<boolean>;
  /** Test hook: a monotonic clock in ms (default monotonicMs). */
  clock?: () => number;
}

const NO_STATUS: StatusWriter = { set: () => undefined, delete: () => undefined };

/**
 * The background reader. start() begins the loop; stop() ends it (the in-flight query is
 * cancelled, sleeps end at once) and resolves when the loop has ended.
 */
export class HeartbeatReader {
  readonly query: ReaderQuery;
  readonly #db: Db;
  readonly #status: StatusWriter;
  readonly #events: Events;
  readonly #monitorId: string;
  readonly #sourceIdOption: string;
  readonly #sourceRoleOption: string;
  readonly #replCheck: string;
  /** The heartbeat table as the query names it, for status texts. */
  readonly #table: string;
  readonly #latencyMs: number;
  readonly #sleep: (ms: number, signal: AbortSignal) => Promise<boolean>;
  readonly #clock: () => number;
  readonly #stop = new AbortController();
  #loop: Promise<void> | undefined;
  #lag = -1;
  /** When the last reading was late: the clock at that reading (the lag keeps growing). */
  #lateSince: number | undefined;
  /** Readings in a row that found the next heartbeat late. */
  #lateReads = 0;
  #source = '';
  #replica = true;
  /** src_id of the last row read, for the source-change event. */
  #lastSrcId = '';
  /** Clock of the last read that gave a lag, and the freq of that row. */
  #readAt: number | undefined;
  #readFreqMs = 0;
  /** The wait after the next read that finds no heartbeat table (doubles up to NO_TABLE_WAIT_CAP_MS). */
  #noTableWaitMs = NO_HEARTBEAT_WAIT_MS;

  /** Throws when the settings cannot make a query (bad table name, bad repl-check name). */
  constructor(args: HeartbeatReaderArgs) {
    this.query = readerQuery(args);
    this.#db = args.db;
    this.#status = args.status ?? NO_STATUS;
    this.#events = args.events ?? NO_EVENTS;
    this.#monitorId = args.monitorId;
    this.#sourceIdOption = args.sourceId ?? '';
    this.#sourceRoleOption = args.sourceRole ?? '';
    this.#replCheck = args.replCheck ?? '';
    this.#table = heartbeatTableSql(args.table).replaceAll('`', '');
    this.#latencyMs = args.networkLatencyMs ?? DEFAULT_NETWORK_LATENCY_MS;
    this.#sleep = args.sleep ?? abortableSleep;
    this.#clock = args.clock ?? monotonicMs;
  }

  /** Start the loop (idempotent). */
  start(): void {
    // The loop never rejects (every error is caught inside); stop() awaits it.
    this.#loop ??= this.#run();
  }

  /** Stop the loop and wait for it to end. Idempotent; safe before start(). */
  async stop(): Promise<void> {
    this.#stop.abort(new Error('heartbeat reader stopped'));
    await this.#loop;
  }

  /**
   * The latest result. When the last reading found the next heartbeat late, the lag
   * has kept growing since: the time elapsed since that reading is added, so a collection
   * between two reads (up to 1 s apart once lag passes 2 s) does not see a stale value.
   */
  current(): HeartbeatLag {
    if (!this.#replica) return { lag: -1, source: '', replica: false };
    if (this.#lag < 0 || this.#stale()) return { lag: -1, source: '', replica: true };
    const grown = this.#lateSince === undefined ? 0 : Math.trunc(this.#clock() - this.#lateSince);
    return { lag: this.#lag + grown, source: this.#source, replica: true };
  }

  /**
   * The last good read is too old to vouch for the lag: more than one heartbeat period plus
   * STALE_GRACE_MS ago (reads keep failing: a locked table, a hung server). A lag that
   * cannot be measured is not reported, rather than repeating an old value.
   */
  #stale(): boolean {
    return this.#readAt !== undefined && this.#clock() - this.#readAt > this.#readFreqMs + STALE_GRACE_MS;
  }

  async #run(): Promise<void> {
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      const waitMs = await this.#readOnce(signal);
      if (signal.aborted || !(await this.#sleep(waitMs, signal))) return;
    }
  }

  /** One read: query, update state and status; returns the wait before the next read. */
  async #readOnce(signal: AbortSignal): Promise<number> {
    let rows: Row[];
    try {
      rows = await this.#db.query(this.query.sql, this.query.params, { signal, timeoutMs: READ_TIMEOUT_MS });
      this.#noTableWaitMs = NO_HEARTBEAT_WAIT_MS; // the table is there
    } catch (err) {
      if (signal.aborted) return 0;
      const noTableWait = this.#noTable(err);
      if (noTableWait !== undefined) return noTableWait;
      // One failed read says nothing about replication: the lag stands until it is stale.
      const since = this.#readAt === undefined ? 0 : Math.trunc(this.#clock() - this.#readAt);
      const stale = this.#stale() ? `; lag not reported, last read ${formatDuration(since)} ago` : '';
      this.#status.set(MonitorKey.heartbeatReaderError, `error: ${errorMessage(err)}${stale} (retry in 1s)`);
      return READ_ERROR_WAIT_MS;
    }
    const row = rows[0];
    if (row === undefined) {
      this.#lag = -1;
      this.#lateSince = undefined;
      this.#source = '';
      this.#noRow();
      return NO_HEARTBEAT_WAIT_MS;
    }
    if (parseValue(row['repl']) === 0) {
      this.#replica = false;
      this.#lag = -1;
      this.#source = '';
      this.#status.delete(MonitorKey.heartbeatReaderError);
      this.#status.set(MonitorKey.heartbeatReader, `not a replica: ${this.#replCheck}=0 (retry in 3s)`);
      return NO_HEARTBEAT_WAIT_MS;
    }
    const now = parseDatetimeMs(row['now']);
    const last = parseDatetimeMs(row['ts']);
    const freq = parseValue(row['freq']);
    const srcId = row['src_id'] ?? '';
    if (now === undefined || last === undefined || freq === undefined) {
      this.#status.set(
        MonitorKey.heartbeatReaderError,
        `error: unreadable heartbeat row (now=${String(row['now'])}, ts=${String(row['ts'])}, freq=${String(row['freq'])}) (retry in 1s)`,
      );
      return READ_ERROR_WAIT_MS;
    }
    this.#status.delete(MonitorKey.heartbeatReaderError);
    if (srcId !== this.#lastSrcId) {
      // The first row seen is not a change; a different src_id later is (failover, or
      // "latest" mode now following another writer).
      if (this.#lastSrcId !== '')
        this.#events.info(SOURCE_CHANGE_EVENT, this.#monitorId, `${this.#lastSrcId} to ${srcId}`);
      this.#lastSrcId = srcId;
    }
    const { lag: lateness, waitMs, late } = lagAndWait(now, last, freq, this.#latencyMs);
    this.#lateReads = late ? this.#lateReads + 1 : 0;
    const lag = stalledLag(lateness, freq, this.#lateReads);
    this.#replica = true;
    this.#lag = lag;
    this.#lateSince = late ? this.#clock() : undefined;
    this.#readAt = this.#clock();
    this.#readFreqMs = freq;
    this.#source = srcId;
    this.#status.set(MonitorKey.heartbeatReader, lagStatus(lag, srcId, this.#sourceRoleOption, waitMs));
    return waitMs;
  }

  /**
   * Following no configured source ("latest" mode), a heartbeat table that does not exist or
   * that this account may not read means heartbeat is not set up here: an info status and a
   * read every 3 s (it starts working once the table and its grant exist), not an error.
   * Returns false for any other error, and in the other modes.
   */
  #noTable(err: unknown): number | undefined {
    const errno = errnoOf(err);
    if (this.query.mode !== 'latest' || errno === undefined || !NO_TABLE_ERRNOS.includes(errno))
      return undefined;
    this.#lag = -1;
    this.#lateSince = undefined;
    this.#source = '';
    const wait = this.#noTableWaitMs;
    this.#noTableWaitMs = Math.min(wait * 2, NO_TABLE_WAIT_CAP_MS);
    this.#status.delete(MonitorKey.heartbeatReaderError);
    this.#status.set(
      MonitorKey.heartbeatReader,
      `no heartbeat table ${this.#table} readable by this account (error ${errno}) (next read in ${formatDuration(wait)})`,
    );
    return wait;
  }

  /**
   * No row to read. Following a configured source (`source-id` or `source-role`), that is an
   * error: the row it names is missing. Following the latest row of any other writer (no
   * source configured), it is the normal state of a server no heartbeat writer feeds (a
   * source, a standalone server): an info status, no error.
   */
  #noRow(): void {
    const { mode } = this.query;
    if (mode === 'latest') {
      this.#status.delete(MonitorKey.heartbeatReaderError);
      this.#status.set(
        MonitorKey.heartbeatReader,
        `no heartbeat from another source in ${this.#table} (next read in 3s)`,
      );
      return;
    }
    // Blip's text: the source last read, else the configured source-id (empty in role mode
    // before the first row).
    const src = this.#lastSrcId !== '' ? this.#lastSrcId : this.#sourceIdOption;
    this.#status.set(MonitorKey.heartbeatReaderError, noHeartbeatStatus(src));
  }
}

/**
 * The status after a good read, Blip's text: the `source-role` option in parentheses, which
 * stay (empty) when no role is set: `22 ms lag from node2 (), next in 1s`.
 */
export function lagStatus(lag: number, srcId: string, role: string, waitMs: number): string {
  return `${lag} ms lag from ${srcId} (${role}), next in ${formatDuration(waitMs)}`;
}

/** The error when the configured source has no row, Blip's text: `no heartbeat for <src id> (retry in 3s)`. */
export function noHeartbeatStatus(srcId: string): string {
  return `no heartbeat for ${srcId} (retry in 3s)`;
}
