/**
 * query.response-time — statement latency percentiles from the performance_schema statement
 * histogram (spec domains.md §2.12).
 *
 * MySQL 8.0.1+ keeps a global histogram of statement latencies in
 * `performance_schema.events_statements_histogram_global`: one row per bucket with its upper
 * bound (BUCKET_TIMER_HIGH, picoseconds) and BUCKET_QUANTILE, the fraction of statements at
 * or below that bound. A percentile q is the upper bound of the first bucket whose quantile
 * reaches q — one small query per percentile, exactly as Blip asks it. After reading, the
 * table is truncated (option `truncate-table`) so the next interval measures only new
 * statements; truncate failures follow the `truncate-timeout` policy (see truncate.ts).
 *
 * Flavors: the table exists only on MySQL 8.0.1+. Elsewhere (MariaDB, MySQL 5.7) the
 * domain cannot work. If the plan names the `table-not-exist` policy under `errors:`, the
 * query is run anyway and the 1146 goes through that policy as in Blip (so `zero` still
 * emits a 0); otherwise the domain reports "not supported" once (§0.7) and stops.
 */
import type {
  CollectResult,
  Collector,
  CollectorContext,
  CollectorHelp,
  CollectorRegistration,
} from '../../core/collector.js';
import { CollectError } from '../../core/collector.js';
import type { Db, Row, ServerInfo } from '../../core/db.js';
import { errorMessage } from '../../core/errors.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import type { Plan } from '../../core/plan.js';
import { versionAtLeast } from '../../db/flavor.js';
import { parseValue } from '../../db/values.js';
import { parsePolicy, type ErrorPolicy } from '../../plan/policy.js';
import { field, levelPlans, option, queryError } from '../common.js';
import { parsePercentiles, type Percentile } from '../percentiles.js';
import { ER_NO_SUCH_TABLE, errnoOf, withCause } from '../pfs.js';
import { unsupportedError } from '../sources.js';
import {
  DEFAULT_TRUNCATE_TIMEOUT_MS,
  TRUNCATE_POLICY,
  TruncatePolicy,
  parseTruncateTimeout,
  tryTruncate,
} from '../truncate.js';

export const DOMAIN = 'query.response-time';

/** The P_S table read (and truncated). */
export const TABLE = 'events_statements_histogram_global';

/** Policy name for error 1146 on the percentile query. */
export const NO_TABLE_POLICY = 'table-not-exist';

export const help: CollectorHelp = {
  domain: DOMAIN,
  description: 'Statement latency percentiles from the performance_schema statement histogram (MySQL 8.0.1+)',
  sources: [
    `SELECT ROUND(bucket_quantile * 100, 1) AS p, ROUND(bucket_timer_high / 1000000, 3) AS us FROM performance_schema.${TABLE} WHERE bucket_quantile >= <q> ORDER BY bucket_number LIMIT 1`,
    `TRUNCATE TABLE performance_schema.${TABLE} (truncate-table: yes)`,
  ],
  options: [
    {
      name: 'real-percentiles',
      description: 'Report, as meta, the percentile each value really is (the bucket boundary reached)',
      default: 'yes',
      values: { yes: 'Meta pN = real percentile, e.g. 99.2', no: 'No meta' },
    },
    {
      name: 'truncate-table',
      description: 'Truncate the histogram after each read, so every value covers one interval',
      default: 'yes',
      values: {
        yes: 'Truncate after each read (needs DROP on the table)',
        no: 'Never truncate: percentiles since server start or the last truncate',
      },
    },
    {
      name: 'truncate-timeout',
      description: 'How long the truncate may wait (for a metadata lock) before it counts as failed',
      default: '250ms',
    },
  ],
  errors: [
    {
      name: NO_TABLE_POLICY,
      description: `MySQL error 1146: table performance_schema.${TABLE} does not exist (MySQL before 8.0.1, MariaDB); zero emits the percentile being read as 0`,
      errnos: [ER_NO_SUCH_TABLE],
    },
    {
      name: TRUNCATE_POLICY,
      description: `Truncating performance_schema.${TABLE} failed (timeout, missing DROP privilege...)`,
    },
  ],
  groups: [],
  meta: [{ key: 'pN', description: 'Real percentile of the value pN, one decimal (real-percentiles: yes)' }],
  metrics: [
    {
      name: 'pN',
      type: MetricType.Gauge,
      description: 'Statement latency percentile in microseconds: p99, p999 (99.9th), p0.95 or p95...',
    },
  ],
};

/** Whether this server has the histogram table; the reason when it has not. */
export type HistogramSupport = { supported: true } | { supported: false; reason: string };

/**
 * Per-flavor table (style.md habit 6): only MySQL 8.0.1+ has the histogram. A MySQL whose
 * version could not be read is given the benefit of the doubt (its query then decides).
 */
export function histogramSupport(info: ServerInfo): HistogramSupport {
  if (info.flavor === 'mariadb') {
    return { supported: false, reason: `MariaDB has no performance_schema.${TABLE} (MySQL 8.0.1+ only)` };
  }
  const unknown = info.version.every((n) => n === 0);
  if (!unknown && !versionAtLeast(info, 8, 0, 1)) {
    return { supported: false, reason: `performance_schema.${TABLE} exists only in MySQL 8.0.1 and later` };
  }
  return { supported: true };
}

/** The query for one percentile; q printed with 6 decimals as Blip does (`0.999000`). */
export function percentileQuery(q: number): string {
  return `SELECT ROUND(bucket_quantile * 100, 1) AS p, ROUND(bucket_timer_high / 1000000, 3) AS us FROM performance_schema.${TABLE} WHERE bucket_quantile >= ${q.toFixed(6)} ORDER BY bucket_number LIMIT 1`;
}

/**
 * Pure part of collect(): the row a percentile query returned → its value (µs) with the
 * real percentile as meta. No row (histogram empty right after a truncate) → nothing, no
 * error (Recommended; Blip fails with "no rows").
 */
export function percentileValue(
  p: Percentile,
  row: Row | undefined,
  realPercentiles: boolean,
): MetricValue | undefined {
  if (row === undefined) return undefined;
  const us = parseValue(field(row, 'us'));
  if (us === undefined) return undefined;
  const v: MetricValue = { name: p.name, value: us, type: MetricType.Gauge };
  if (realPercentiles) {
    const real = parseValue(field(row, 'p'));
    if (real !== undefined) v.meta = { [p.name]: real.toFixed(1) };
  }
  return v;
}

/** What prepare() works out for one level. */
interface LevelState {
  percentiles: Percentile[];
  realPercentiles: boolean;
  truncate: boolean;
  truncateTimeoutMs: number;
  /** The plan's `table-not-exist` policy when it names one (then applied rather than §0.7). */
  noTablePolicy: ErrorPolicy | undefined;
  truncatePolicy: TruncatePolicy;
  /** table-not-exist with `stop` was hit. */
  stopped: boolean;
}

export class QueryResponseTimeCollector implements Collector {
  readonly domain = DOMAIN;
  readonly #db: Db;
  #levels = new Map<string, LevelState>();
  #info: ServerInfo | undefined;
  #support: HistogramSupport = { supported: true };

  constructor(ctx: CollectorContext) {
    this.#db = ctx.db;
  }

  async prepare(plan: Plan, signal: AbortSignal): Promise<void> {
    const levels = new Map<string, LevelState>();
    for (const [level, dp] of levelPlans(plan, DOMAIN)) {
      const truncate = option(dp, 'truncate-table') !== 'no';
      const noTable = dp.errors[NO_TABLE_POLICY];
      levels.set(level, {
        percentiles: parsePercentiles(dp.metrics),
        realPercentiles: option(dp, 'real-percentiles') !== 'no',
        truncate,
        // Parsed only when truncating, like Blip: an odd value is harmless otherwise.
        truncateTimeoutMs: truncate
          ? parseTruncateTimeout(dp.options['truncate-timeout'])
          : DEFAULT_TRUNCATE_TIMEOUT_MS,
        noTablePolicy: noTable === undefined ? undefined : parsePolicy(noTable),
        truncatePolicy: new TruncatePolicy(dp.errors[TRUNCATE_POLICY]),
        stopped: false,
      });
    }
    this.#levels = levels;
    if (levels.size === 0) return;
    this.#info = await this.#db.serverInfo({ signal });
    this.#support = histogramSupport(this.#info);
  }

  async collect(level: string, signal: AbortSignal): Promise<CollectResult> {
    const st = this.#levels.get(level);
    if (st === undefined || st.stopped || st.truncatePolicy.stopped) return { values: [] };
    const info = this.#info;
    if (!this.#support.supported && st.noTablePolicy === undefined && info !== undefined) {
      return { values: [], error: unsupportedError(DOMAIN, info, this.#support.reason) };
    }

    const values: MetricValue[] = [];
    for (const p of st.percentiles) {
      let rows: Row[];
      try {
        rows = await this.#db.query(percentileQuery(p.q), [], { signal });
      } catch (err) {
        return { values: [], error: this.#queryFailed(st, p, err) };
      }
      const v = percentileValue(p, rows[0], st.realPercentiles);
      if (v !== undefined) values.push(v);
    }

    if (!st.truncate || info === undefined) return { values };
    const truncateErr = await tryTruncate(this.#db, TABLE, {
      timeoutMs: st.truncateTimeoutMs,
      flavor: info.flavor,
      signal,
    });
    return st.truncatePolicy.apply(values, truncateErr);
  }

  /** A percentile query failed: 1146 goes to table-not-exist (or §0.7); others fail the domain. */
  #queryFailed(st: LevelState, p: Percentile, err: unknown): CollectError {
    if (errnoOf(err) !== ER_NO_SUCH_TABLE) return queryError(err);
    if (st.noTablePolicy === undefined && this.#info !== undefined) {
      return unsupportedError(DOMAIN, this.#info, withCause(`no performance_schema.${TABLE}`, err), err);
    }
    // Blip: `stop` stops this level; `zero` emits only the percentile being read, as 0 (the
    // engine adds `zero` and applies the report part).
    if (st.noTablePolicy?.retry === 'stop') st.stopped = true;
    return new CollectError(errorMessage(err), {
      policy: NO_TABLE_POLICY,
      errno: ER_NO_SUCH_TABLE,
      zero: [{ name: p.name, value: 0, type: MetricType.Gauge }],
      cause: err,
    });
  }
}

export const registration: CollectorRegistration = {
  help,
  create: (ctx) => new QueryResponseTimeCollector(ctx),
};
