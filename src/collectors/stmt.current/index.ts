/**
 * stmt.current — statements running right now.
 *
 * Reads performance_schema.EVENTS_STATEMENTS_CURRENT: one row per thread, the statement in
 * progress when END_EVENT_ID is NULL. TIMER_WAIT (picoseconds, time elapsed so far for a
 * running statement) becomes microseconds; `slowest` is the largest, `slow` counts those at
 * or above `slow-threshold`. The agent's own SELECT is one of the rows.
 *
 * The table only fills when performance_schema is on and the `events_statements_current`
 * consumer (with its parents `global_instrumentation` and `thread_instrumentation`) is
 * enabled. MySQL has all of that on by default; MariaDB has performance_schema OFF by
 * default and the consumer off even when it is on, where Blip silently reports zeros.
 * prepare() checks both and, when something is off, the domain answers with the
 * "not supported" error naming what to enable.
 */
import type {
  CollectError,
  CollectResult,
  Collector,
  CollectorContext,
  CollectorHelp,
  CollectorRegistration,
} from '../../core/collector.js';
import type { Db, Row, ServerInfo } from '../../core/db.js';
import { errnoOf } from '../../core/errors.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import type { DomainPlan, Plan } from '../../core/plan.js';
import { ER_UNKNOWN_SYSTEM_VARIABLE } from '../../db/errnos.js';
import { parseValue } from '../../db/values.js';
import { parseDuration } from '../../util/duration.js';
import { field, mapLevels, queryError } from '../kit/common.js';
import { sourceFor, unsupportedError } from '../kit/sources.js';

export const DOMAIN = 'stmt.current';

export const STMT_SQL =
  "SELECT TIMER_WAIT FROM performance_schema.events_statements_current WHERE END_EVENT_ID IS NULL AND EVENT_NAME NOT LIKE ('statement/com/Binlog%')";
/** Availability checks run once in prepare(). */
export const PFS_ON_SQL = 'SELECT @@performance_schema AS pfs';
export const CONSUMERS_SQL =
  "SELECT NAME, ENABLED FROM performance_schema.setup_consumers WHERE NAME IN ('global_instrumentation', 'thread_instrumentation', 'events_statements_current')";

const DEFAULT_SLOW_THRESHOLD = '1.0s';

/** The metrics this domain can report, in the order they are emitted. */
const STMT_METRICS = ['slowest', 'slow'] as const;
type StmtMetric = (typeof STMT_METRICS)[number];

export const help: CollectorHelp = {
  domain: DOMAIN,
  description: 'Currently running statements (performance_schema.events_statements_current)',
  sources: [STMT_SQL],
  options: [
    {
      name: 'slow-threshold',
      description: 'Duration (Go syntax, e.g. 500ms) at or above which a running statement counts as slow',
      default: DEFAULT_SLOW_THRESHOLD,
    },
  ],
  errors: [],
  groups: [],
  meta: [],
  metrics: [
    {
      name: 'slowest',
      type: MetricType.Gauge,
      description: 'Run time so far of the longest-running statement, in microseconds (0 when none)',
    },
    {
      name: 'slow',
      type: MetricType.Gauge,
      description: 'Number of running statements whose run time so far is at least slow-threshold',
    },
  ],
};

/** What prepare() works out for one level. */
export interface StmtLevel {
  /** Metrics to emit, deduplicated, in plan order. */
  metrics: StmtMetric[];
  /** `slow-threshold` in whole microseconds. */
  thresholdUs: number;
}

/** Validate one level's part of the plan. Throws the Prepare error. */
export function stmtLevel(dp: DomainPlan): StmtLevel {
  if (dp.metrics.length === 0) throw new Error('no metrics specified; expected: slowest, slow');
  const metrics: StmtMetric[] = [];
  for (const m of dp.metrics) {
    const name = m.toLowerCase();
    const known = STMT_METRICS.find((k) => k === name);
    if (known === undefined) throw new Error(`invalid metric: ${m} (stmt.current has: slowest, slow)`);
    if (!metrics.includes(known)) metrics.push(known);
  }
  const text = (dp.options['slow-threshold'] ?? '').trim() || DEFAULT_SLOW_THRESHOLD;
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch (err) {
    throw new Error(`invalid slow-threshold: ${(err as Error).message}`);
  }
  // Whole microseconds, truncated like Go's Duration.Microseconds(); via integer ns so
  // 0.1s is not 99999.99…µs.
  const thresholdUs = Math.trunc(Math.round(ms * 1e6) / 1000);
  if (thresholdUs < 1) throw new Error(`invalid slow-threshold: ${text}: must be at least 1µs`);
  return { metrics, thresholdUs };
}

/** Pure part of collect(): TIMER_WAIT rows (picoseconds) → the level's metrics. */
export function stmtValues(rows: readonly Row[], level: StmtLevel): MetricValue[] {
  let slowest = 0;
  let slow = 0;
  for (const row of rows) {
    const ps = parseValue(field(row, 'TIMER_WAIT') ?? null);
    if (ps === undefined) continue; // NULL: an uninstrumented statement (Blip fails the collection here)
    const us = ps / 1e6;
    if (us > slowest) slowest = us;
    if (us >= level.thresholdUs) slow++;
  }
  const value: Record<StmtMetric, number> = { slowest, slow };
  return level.metrics.map((name) => ({ name, value: value[name], type: MetricType.Gauge }));
}

/**
 * Why statements cannot be seen on this server, or undefined when they can (or when the
 * checks themselves fail: then collect() tries and reports whatever the query says).
 */
async function stmtUnavailable(db: Db, signal: AbortSignal): Promise<string | undefined> {
  let rows: Row[];
  try {
    rows = await db.query(PFS_ON_SQL, [], { signal });
  } catch (err) {
    if (errnoOf(err) === ER_UNKNOWN_SYSTEM_VARIABLE) {
      return 'the server has no performance_schema (built without it)';
    }
    return undefined;
  }
  const on = parseValue(field(rows[0] ?? {}, 'pfs') ?? null);
  if (on === 0) return 'performance_schema is disabled (start the server with performance_schema=ON)';
  try {
    rows = await db.query(CONSUMERS_SQL, [], { signal });
  } catch {
    return undefined; // e.g. no SELECT on performance_schema: collect() reports the real error
  }
  const enabled = new Map(rows.map((r) => [field(r, 'NAME') ?? '', field(r, 'ENABLED') ?? '']));
  for (const name of ['global_instrumentation', 'thread_instrumentation', 'events_statements_current']) {
    const state = enabled.get(name);
    if (state !== undefined && state !== 'YES') {
      return (
        `performance_schema consumer ${name} disabled (enable it: ` +
        `UPDATE performance_schema.setup_consumers SET ENABLED='YES' WHERE NAME='${name}', ` +
        `or start the server with performance-schema-consumer-${name.replaceAll('_', '-')}=ON)`
      );
    }
  }
  return undefined;
}

export class StmtCurrentCollector implements Collector {
  readonly domain = DOMAIN;
  readonly #db: Db;
  #levels = new Map<string, StmtLevel>();
  #unsupported: CollectError | undefined;

  constructor(ctx: CollectorContext) {
    this.#db = ctx.db;
  }

  async prepare(plan: Plan, signal: AbortSignal): Promise<void> {
    this.#levels = mapLevels(plan, DOMAIN, (dp) => stmtLevel(dp));
    this.#unsupported = undefined;
    if (this.#levels.size === 0) return;
    const info: ServerInfo = await this.#db.serverInfo({ signal });
    const choice = sourceFor(DOMAIN, info);
    const reason = 'unsupported' in choice ? choice.unsupported : await stmtUnavailable(this.#db, signal);
    if (reason !== undefined) this.#unsupported = unsupportedError(DOMAIN, info, reason);
  }

  async collect(level: string, signal: AbortSignal): Promise<CollectResult> {
    const state = this.#levels.get(level);
    if (state === undefined) return { values: [] };
    if (this.#unsupported !== undefined) return { values: [], error: this.#unsupported };
    let rows: Row[];
    try {
      rows = await this.#db.query(STMT_SQL, [], { signal });
    } catch (err) {
      return { values: [], error: queryError(err, { what: STMT_SQL }) };
    }
    return { values: stmtValues(rows, state) };
  }
}

export const registration: CollectorRegistration = {
  help,
  create: (ctx) => new StmtCurrentCollector(ctx),
};
