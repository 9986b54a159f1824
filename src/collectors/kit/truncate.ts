/**
 * Truncating a performance_schema summary table after reading it, and what an interval
 * reports when that fails (the `truncate-timeout` error policy).
 *
 * Used by query.response-time, wait.io.table and error.*: they read a P_S table, then
 * TRUNCATE it so the next read covers exactly one interval (values become DELTA_COUNTERs).
 *
 * **How the lock wait is bounded.** Blip takes a dedicated connection, runs
 * `SET @@session.lock_wait_timeout=<N>` on it, then `TRUNCATE` with a deadline. sonde's Db
 * is a pool with no "dedicated connection" and no multi-statements, and two queries may
 * land on two different pooled connections (and a session variable set on a pooled
 * connection would leak into every later query on it). So instead:
 * - Where the source table says `set-statement-truncate` (MariaDB), one statement carries
 *   the session setting for itself alone: `SET STATEMENT lock_wait_timeout=<N> FOR TRUNCATE
 *   TABLE …`. MySQL has no such syntax (`truncate`).
 * - Everywhere the TRUNCATE runs with a client deadline of `truncate-timeout`: the pool
 *   KILLs it on the server when the deadline passes (KILL QUERY also ends a metadata-lock
 *   wait), so the truncate never blocks longer than truncate-timeout — tighter than the
 *   whole seconds of lock_wait_timeout. Pooled sessions keep their own lock_wait_timeout
 *   (a few seconds) as the last guard on MySQL.
 * Failure to get a connection, a refused statement (e.g. 1142 without the DROP privilege)
 * and the deadline all count as "truncate failed".
 *
 * The collectors only report what happened, as typed errors under the `truncate-timeout`
 * policy (TruncateTracker); the engine applies the plan's policy to them.
 */
import { CollectError, type CollectResult } from '../../core/collector.js';
import type { Db, ServerInfo } from '../../core/db.js';
import { errnoOf, errorMessage } from '../../core/errors.js';
import type { MetricValue } from '../../core/metrics.js';
import type { DomainPlan } from '../../core/plan.js';
import { parseDuration } from '../../util/duration.js';
import { option } from './common.js';
import { TRUNCATE_STEP, sourceFor } from './sources.js';

/** Policy name under a plan's `errors:` for truncate failures. */
export const TRUNCATE_POLICY = 'truncate-timeout';

/** truncate-timeout when the option is absent (Blip's 250ms). */
export const DEFAULT_TRUNCATE_TIMEOUT_MS = 250;

/** How a server truncates: the source table's key for the truncate step. */
export type TruncateHow = 'truncate' | 'set-statement-truncate';

/** The truncate statement form for this server, from the source table. */
export function truncateHow(info: ServerInfo): TruncateHow {
  const choice = sourceFor(TRUNCATE_STEP, info);
  if ('source' in choice && (choice.source === 'truncate' || choice.source === 'set-statement-truncate'))
    return choice.source;
  throw new Error(`source table: no truncate statement for ${info.versionString}`);
}

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

/** The TRUNCATE statement (see the module comment for why it has two forms). */
export function truncateStatement(table: string, timeoutMs: number, how: TruncateHow): string {
  if (!TABLE_NAME.test(table)) throw new Error(`invalid performance_schema table name: ${table}`);
  const truncate = `TRUNCATE TABLE performance_schema.${table}`;
  if (how === 'set-statement-truncate')
    return `SET STATEMENT lock_wait_timeout=${lockWaitSeconds(timeoutMs)} FOR ${truncate}`;
  return truncate;
}

/** How to truncate: the deadline, the statement form, and the caller's signal. */
export interface TruncateOptions {
  timeoutMs: number;
  how: TruncateHow;
  signal?: AbortSignal | undefined;
}

/**
 * Truncate `performance_schema.<table>` within `timeoutMs` (and the caller's signal).
 * Rejects with the database error (errno kept) when it fails for any reason.
 */
export async function truncateTable(db: Db, table: string, opts: TruncateOptions): Promise<void> {
  const sql = truncateStatement(table, opts.timeoutMs, opts.how);
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
 * else the failure as a `truncate-timeout` error that adds no values of its own.
 */
export async function tryTruncate(
  db: Db,
  table: string,
  opts: TruncateOptions,
): Promise<CollectError | undefined> {
  try {
    await truncateTable(db, table, opts);
    return undefined;
  } catch (err) {
    const errno = errnoOf(err);
    return new CollectError(`truncate table performance_schema.${table} failed: ${errorMessage(err)}`, {
      policy: TRUNCATE_POLICY,
      zero: [],
      cause: err,
      ...(errno === undefined ? {} : { errno }),
    });
  }
}

/**
 * The same values with value 0. Unlike Blip, the group is kept (Blip drops it, so
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
 * One level's truncate history, turned into what each interval reports. The collector only
 * says what happened; the engine applies the plan's `truncate-timeout` policy (report part,
 * `drop`/`zero` through the error's zero values, and `stop`):
 *
 * | previous truncate failed | this truncate | values | error (policy truncate-timeout) |
 * |---|---|---|---|
 * | no  | ok     | as collected | none |
 * | no  | failed | as collected (a valid interval) | the truncate error, zero adds nothing |
 * | yes | failed | none | the truncate error, zero = the values with value 0 |
 * | yes | ok     | none | a quiet one (nothing to report), zero = the values with value 0 |
 *
 * In the last two rows the table was not emptied last time, so the values cover more than
 * one interval and their deltas would be wrong. The last row has nothing to report, yet the
 * policy must still decide between dropping and zeroing: a quiet error is what the engine
 * applies without reporting anything.
 */
export class TruncateTracker {
  #previousFailed = false;

  /** True when the last truncate failed (the table still holds more than one interval). */
  get previousFailed(): boolean {
    return this.#previousFailed;
  }

  /** Decide this interval's result from the values read and the truncate outcome. */
  result(values: MetricValue[], truncateErr: CollectError | undefined): CollectResult {
    const previousFailed = this.#previousFailed;
    this.#previousFailed = truncateErr !== undefined;
    if (!previousFailed) return truncateErr === undefined ? { values } : { values, error: truncateErr };
    const zero = zeroValues(values);
    const error = new CollectError(truncateErr?.message ?? 'truncate worked again after a failure', {
      policy: TRUNCATE_POLICY,
      zero,
      quiet: truncateErr === undefined,
      ...(truncateErr === undefined ? {} : { cause: truncateErr.cause }),
      ...(truncateErr?.errno === undefined ? {} : { errno: truncateErr.errno }),
    });
    return { values: [], error };
  }

  /** Truncate after a read and decide the interval's result. */
  async truncate(
    db: Db,
    table: string,
    values: MetricValue[],
    opts: TruncateOptions,
  ): Promise<CollectResult> {
    return this.result(values, await tryTruncate(db, table, opts));
  }
}

/**
 * One level's `truncate-table` and `truncate-timeout` options and its truncate history.
 * `byDefault` is the domain's truncate-table default; the timeout is parsed only when the
 * level truncates (an odd value is harmless otherwise, as in Blip) unless `timeoutAlways`.
 */
export class LevelTruncate {
  readonly enabled: boolean;
  readonly timeoutMs: number;
  readonly #tracker = new TruncateTracker();

  constructor(dp: DomainPlan, byDefault: boolean, timeoutAlways = false) {
    const text = option(dp, 'truncate-table');
    this.enabled = byDefault ? text !== 'no' : text === 'yes';
    this.timeoutMs =
      this.enabled || timeoutAlways
        ? parseTruncateTimeout(dp.options['truncate-timeout'])
        : DEFAULT_TRUNCATE_TIMEOUT_MS;
  }

  /** The interval's result after a read: truncate when enabled, and decide as the tracker does. */
  async after(
    db: Db,
    table: string,
    values: MetricValue[],
    how: TruncateHow,
    signal: AbortSignal,
  ): Promise<CollectResult> {
    if (!this.enabled) return { values };
    return this.#tracker.truncate(db, table, values, { timeoutMs: this.timeoutMs, how, signal });
  }
}
