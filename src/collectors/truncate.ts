/**
 * Truncating a performance_schema summary table after reading it, and the truncate-error
 * policy that decides what an interval reports when that fails (spec domains.md §0.5).
 *
 * Used by query.response-time, wait.io.table and error.*: they read a P_S table, then
 * TRUNCATE it so the next read covers exactly one interval (values become DELTA_COUNTERs).
 *
 * **How the lock wait is bounded.** Blip takes a dedicated connection, runs
 * `SET @@session.lock_wait_timeout=<N>` on it, then `TRUNCATE` with a deadline. sonde's Db
 * is a pool with no "dedicated connection" and no multi-statements, and two queries may
 * land on two different pooled connections (and a session variable set on a pooled
 * connection would leak into every later query on it). So instead:
 * - On MariaDB (and only there: MySQL has no such syntax) one statement carries the session
 *   setting for itself alone: `SET STATEMENT lock_wait_timeout=<N> FOR TRUNCATE TABLE …`.
 * - On every flavor the TRUNCATE runs with a client deadline of `truncate-timeout`: the pool
 *   KILLs it on the server when the deadline passes (KILL QUERY also ends a metadata-lock
 *   wait), so the truncate never blocks longer than truncate-timeout — tighter than the
 *   whole seconds of lock_wait_timeout. Pooled sessions keep their own lock_wait_timeout
 *   (a few seconds) as the last guard on MySQL.
 * Failure to get a connection, a refused statement (e.g. 1142 without the DROP privilege)
 * and the deadline all count as "truncate failed".
 */
import { CollectError, type CollectResult } from '../core/collector.js';
import type { Db, Flavor } from '../core/db.js';
import { errorMessage } from '../core/errors.js';
import type { MetricValue } from '../core/metrics.js';
import { parsePolicy, type ErrorPolicy } from '../plan/policy.js';
import { parseDuration } from '../util/duration.js';

/** Policy name under a plan's `errors:` for truncate failures. */
export const TRUNCATE_POLICY = 'truncate-timeout';

/** truncate-timeout when the option is absent (Blip's 250ms). */
export const DEFAULT_TRUNCATE_TIMEOUT_MS = 250;

/** `lock_wait_timeout` seconds for a truncate timeout: ceil(seconds), at least 1. */
export function lockWaitSeconds(timeoutMs: number): number {
  return Math.max(1, Math.ceil(timeoutMs / 1000));
}

/**
 * Parse a `truncate-timeout` option value into ms ('' → 250ms). Throws
 * `Invalid truncate duration: …` (Blip's Prepare error) for text that is not a Go duration
 * and, since a zero or negative deadline could never succeed, for values ≤ 0.
 */
export function parseTruncateTimeout(text: string | undefined): number {
  const t = (text ?? '').trim();
  if (t === '') return DEFAULT_TRUNCATE_TIMEOUT_MS;
  let ms: number;
  try {
    ms = parseDuration(t);
  } catch (err) {
    throw new Error(`Invalid truncate duration: ${errorMessage(err)}`, { cause: err });
  }
  if (!(ms > 0)) throw new Error(`Invalid truncate duration: must be greater than 0: ${t}`);
  return ms;
}

/** P_S table names are fixed strings in sonde's code; refuse anything else to be safe. */
const TABLE_NAME = /^[a-z_]+$/;

/** The TRUNCATE statement for a flavor (see the module comment for why it differs). */
export function truncateStatement(table: string, timeoutMs: number, flavor: Flavor): string {
  if (!TABLE_NAME.test(table)) throw new Error(`invalid performance_schema table name: ${table}`);
  const truncate = `TRUNCATE TABLE performance_schema.${table}`;
  if (flavor === 'mariadb')
    return `SET STATEMENT lock_wait_timeout=${lockWaitSeconds(timeoutMs)} FOR ${truncate}`;
  return truncate;
}

/**
 * Truncate `performance_schema.<table>` within `timeoutMs` (and the caller's signal).
 * Rejects with the database error (errno kept) when it fails for any reason.
 */
export async function truncateTable(
  db: Db,
  table: string,
  opts: { timeoutMs: number; flavor: Flavor; signal?: AbortSignal | undefined },
): Promise<void> {
  const sql = truncateStatement(table, opts.timeoutMs, opts.flavor);
  await db.query(
    sql,
    [],
    opts.signal === undefined
      ? { timeoutMs: opts.timeoutMs }
      : { timeoutMs: opts.timeoutMs, signal: opts.signal },
  );
}

/**
 * {@link truncateTable}, with the outcome as data: undefined when the table was emptied,
 * else the failure as a {@link truncateError}.
 */
export async function tryTruncate(
  db: Db,
  table: string,
  opts: { timeoutMs: number; flavor: Flavor; signal?: AbortSignal | undefined },
): Promise<CollectError | undefined> {
  try {
    await truncateTable(db, table, opts);
    return undefined;
  } catch (err) {
    return truncateError(table, err);
  }
}

/** A truncate failure as collection data, governed by the `truncate-timeout` policy. */
export function truncateError(table: string, err: unknown): CollectError {
  const errno = (err as { errno?: unknown } | null)?.errno;
  return new CollectError(`truncate table performance_schema.${table} failed: ${errorMessage(err)}`, {
    policy: TRUNCATE_POLICY,
    // The values to emit are decided here (§0.5 table); the engine must add none of its own.
    zero: [],
    cause: err,
    ...(typeof errno === 'number' ? { errno } : {}),
  });
}

/**
 * The same values with value 0. Recommended over Blip: keep the group (Blip drops it, so
 * grouped series collide); drop meta.
 */
export function zeroValues(values: readonly MetricValue[]): MetricValue[] {
  return values.map((v) => {
    const z: MetricValue = { name: v.name, value: 0, type: v.type };
    if (v.group !== undefined) z.group = { ...v.group };
    return z;
  });
}

/**
 * The truncate-error policy of one level (domains.md §0.5):
 *
 * | previous truncate failed | this truncate | values                          | error |
 * |---|---|---|---|
 * | no  | ok     | as collected                    | none |
 * | no  | failed | as collected (a valid interval) | the truncate error |
 * | yes | failed | drop: none; zero: zeroed        | the truncate error |
 * | yes | ok     | drop: none; zero: zeroed        | none (the sample spans >1 interval) |
 *
 * The error carries policy `truncate-timeout`, so the engine applies its report part
 * (report / report-once / ignore) and `stop`. `stop` is also remembered here: once a call
 * enters rows 2–4, {@link stopped} is true and the collector returns nothing for the level.
 */
export class TruncatePolicy {
  readonly policy: Readonly<ErrorPolicy>;
  #previousFailed = false;
  #stopped = false;

  /** `text` is the plan's `errors: {truncate-timeout: …}` value ('' = report,drop,retry). */
  constructor(text: string | undefined) {
    this.policy = parsePolicy(text ?? '');
  }

  /** True once `stop` took effect: collect nothing more for this level. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** True when the last truncate failed (the table still holds more than one interval). */
  get previousFailed(): boolean {
    return this.#previousFailed;
  }

  /**
   * Decide this interval's result from the values read and the truncate outcome
   * (`truncateErr` undefined = the truncate worked).
   */
  apply(values: MetricValue[], truncateErr: CollectError | undefined): CollectResult {
    const previousFailed = this.#previousFailed;
    this.#previousFailed = truncateErr !== undefined;
    if (!previousFailed && truncateErr === undefined) return { values }; // row 1
    if (this.policy.retry === 'stop') this.#stopped = true;
    if (!previousFailed) return { values, error: truncateErr }; // row 2
    // Rows 3 and 4: the table was not emptied last time, so these values cover more than
    // one interval; deltas would be wrong.
    const kept = this.policy.metric === 'zero' ? zeroValues(values) : [];
    return truncateErr === undefined ? { values: kept } : { values: kept, error: truncateErr };
  }
}
