/**
 * query.response-time — statement latency percentiles from the performance_schema statement
 * histogram.
 *
 * MySQL 8.0.1+ keeps a global histogram of statement latencies in
 * `performance_schema.events_statements_histogram_global`: one row per bucket with its upper
 * bound (BUCKET_TIMER_HIGH, picoseconds) and BUCKET_QUANTILE, the fraction of statements at
 * or below that bound. A percentile q is the upper bound of the first bucket whose quantile
 * reaches q — one small query per percentile, exactly as Blip asks it. After reading, the
 * table is truncated (option `truncate-table`) so the next interval measures only new
 * statements; truncate failures follow the `truncate-timeout` policy (see truncate.ts).
 *
 * Flavors: the table exists only on MySQL 8.0.1+ (see the source table). Elsewhere, and
 * whenever the query fails with 1146, the domain reports "not supported" once and stops —
 * unless the plan sets the `table-not-exist` policy, which then governs the error as in
 * Blip (so `ignore,drop,stop` silences it and `zero` still emits a 0).
 */
import type {
  CollectResult,
  Collector,
  CollectorContext,
  CollectorHelp,
  CollectorRegistration,
} from '../../core/collector.js';
import type { CollectError } from '../../core/collector.js';
import type { Db, Row, ServerInfo } from '../../core/db.js';
import { errnoOf } from '../../core/errors.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import type { Plan } from '../../core/plan.js';
import { ER_NO_SUCH_TABLE } from '../../db/errnos.js';
import { parseValue } from '../../db/values.js';
import { field, mapLevels, option, queryError } from '../kit/common.js';
import { parsePercentiles, type Percentile } from '../kit/percentiles.js';
import { withCause } from '../kit/pfs.js';
import { sourceFor, unsupportedError } from '../kit/sources.js';
import { LevelTruncate, TRUNCATE_POLICY, truncateHow, type TruncateHow } from '../kit/truncate.js';

export const DOMAIN = 'query.response-time';

/** The P_S table read (and truncated). */
export const TABLE = 'events_statements_histogram_global';

/** Policy name for error 1146 on the percentile query. */
const NO_TABLE_POLICY = 'table-not-exist';

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
      description:
        'Statement latency percentile in microseconds: p99, p999 (99.9th), p0.95 or p95...; with no metrics listed, p999',
    },
  ],
};

/** The percentiles read when the plan lists no metrics, as Blip: the 99.9th. */
export const DEFAULT_PERCENTILES: readonly string[] = ['p999'];

/** The query for one percentile; q printed with 6 decimals as Blip does (`0.999000`). */
export function percentileQuery(q: number): string {
  return `SELECT ROUND(bucket_quantile * 100, 1) AS p, ROUND(bucket_timer_high / 1000000, 3) AS us FROM performance_schema.${TABLE} WHERE bucket_quantile >= ${q.toFixed(6)} ORDER BY bucket_number LIMIT 1`;
}

/**
 * Pure part of collect(): the row a percentile query returned → its value (µs) with the
 * real percentile as meta. No row (histogram empty right after a truncate) → nothing, no
 * error (Blip fails with "no rows").
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
  truncate: LevelTruncate;
}

export class QueryResponseTimeCollector implements Collector {
  readonly domain = DOMAIN;
  readonly #db: Db;
  #levels = new Map<string, LevelState>();
  #info: ServerInfo | undefined;
  #how: TruncateHow = 'truncate';
  /** Why the source table says this server has no histogram. */
  #unsupported: string | undefined;

  constructor(ctx: CollectorContext) {
    this.#db = ctx.db;
  }

  async prepare(plan: Plan, signal: AbortSignal): Promise<void> {
    this.#levels = mapLevels(plan, DOMAIN, (dp): LevelState => ({
      percentiles: parsePercentiles(dp.metrics.length === 0 ? DEFAULT_PERCENTILES : dp.metrics),
      realPercentiles: option(dp, 'real-percentiles') !== 'no',
      truncate: new LevelTruncate(dp, true),
    }));
    this.#unsupported = undefined;
    if (this.#levels.size === 0) return;
    const info = await this.#db.serverInfo({ signal });
    this.#info = info;
    this.#how = truncateHow(info);
    const choice = sourceFor(DOMAIN, info);
    if ('unsupported' in choice) this.#unsupported = choice.unsupported;
  }

  async collect(level: string, signal: AbortSignal): Promise<CollectResult> {
    const st = this.#levels.get(level);
    const info = this.#info;
    if (st === undefined || info === undefined) return { values: [] };
    if (this.#unsupported !== undefined) {
      return { values: [], error: noTableError(info, st, this.#unsupported) };
    }

    const values: MetricValue[] = [];
    for (const p of st.percentiles) {
      let rows: Row[];
      try {
        rows = await this.#db.query(percentileQuery(p.q), [], { signal });
      } catch (err) {
        if (errnoOf(err) !== ER_NO_SUCH_TABLE) return { values: [], error: queryError(err) };
        const reason = withCause(`no performance_schema.${TABLE}`, err);
        return { values: [], error: noTableError(info, st, reason, p, err) };
      }
      const v = percentileValue(p, rows[0], st.realPercentiles);
      if (v !== undefined) values.push(v);
    }

    return st.truncate.after(this.#db, TABLE, values, this.#how, signal);
  }
}

/**
 * No histogram table: "not supported", unless the plan sets the `table-not-exist` policy,
 * which then governs it as in Blip (`zero` emits the percentile being read as 0).
 */
function noTableError(
  info: ServerInfo,
  st: LevelState,
  reason: string,
  p: Percentile | undefined = st.percentiles[0],
  cause?: unknown,
): CollectError {
  const zero = p === undefined ? [] : [{ name: p.name, value: 0, type: MetricType.Gauge }];
  return unsupportedError(DOMAIN, info, reason, cause, { policy: NO_TABLE_POLICY, zero });
}

export const registration: CollectorRegistration = {
  help,
  create: (ctx) => new QueryResponseTimeCollector(ctx),
};
