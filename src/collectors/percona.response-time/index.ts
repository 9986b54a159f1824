/**
 * percona.response-time — query latency percentiles from the QUERY_RESPONSE_TIME plugin.
 *
 * The plugin (Percona Server 5.7; MariaDB's `query_response_time` plugin) keeps a small
 * log-scale histogram in `INFORMATION_SCHEMA.QUERY_RESPONSE_TIME`: per bucket its upper
 * bound TIME (seconds, right-aligned text), COUNT and TOTAL (seconds spent). For quantile q
 * the collector walks the buckets in time order until the cumulative count reaches N×q and
 * reports that bucket's mean latency (TOTAL/COUNT) in microseconds; the real percentile
 * reached goes to meta. After reading it flushes the histogram
 * (`SET GLOBAL query_response_time_flush=1`, option `flush`).
 *
 * Flavors (see the source table): MySQL 8.0+ (Percona Server 8 included) has no such
 * plugin; MariaDB and MySQL 5.7 have it only when it is loaded (MariaDB: `INSTALL SONAME
 * 'query_response_time'` and `query_response_time_stats=ON`). Without it the query fails
 * with 1109. Either way the domain reports "not supported" once and stops, unless the plan
 * sets the `unknown-table` policy, which then governs the error as in Blip.
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
import { ER_UNKNOWN_TABLE } from '../../db/errnos.js';
import { parseValue } from '../../db/values.js';
import { field, mapLevels, option, queryError } from '../kit/common.js';
import { parsePercentiles, type Percentile } from '../kit/percentiles.js';
import { withCause } from '../kit/pfs.js';
import { sourceFor, unsupportedError } from '../kit/sources.js';

export const DOMAIN = 'percona.response-time';

export const QRT_QUERY =
  "SELECT time, count, total FROM INFORMATION_SCHEMA.QUERY_RESPONSE_TIME WHERE TIME!='TOO LONG'";
export const FLUSH_QUERY = 'SET GLOBAL query_response_time_flush=1';

/** Policy name for error 1109 (no QUERY_RESPONSE_TIME table). */
const UNKNOWN_TABLE_POLICY = 'unknown-table';

export const help: CollectorHelp = {
  domain: DOMAIN,
  description:
    'Query latency percentiles from the QUERY_RESPONSE_TIME plugin (Percona Server 5.7, MariaDB plugin)',
  sources: [QRT_QUERY, `${FLUSH_QUERY} (flush: yes)`],
  options: [
    {
      name: 'real-percentiles',
      description: 'Report, as meta, the percentile each value really is (where the bucket walk stopped)',
      default: 'yes',
      values: { yes: 'Meta pN = real percentile, e.g. 99.2', no: 'No meta' },
    },
    {
      name: 'flush',
      description: 'Flush the histogram after each read, so every value covers one interval',
      default: 'yes',
      values: {
        yes: 'SET GLOBAL query_response_time_flush=1 after each read (needs SUPER / SYSTEM_VARIABLES_ADMIN)',
        no: 'Never flush',
      },
    },
  ],
  errors: [
    {
      name: UNKNOWN_TABLE_POLICY,
      description:
        "MySQL error 1109: Unknown table 'QUERY_RESPONSE_TIME' in information_schema (plugin not loaded); zero emits every percentile as 0",
      errnos: [ER_UNKNOWN_TABLE],
    },
  ],
  groups: [],
  meta: [{ key: 'pN', description: 'Real percentile of the value pN, one decimal (real-percentiles: yes)' }],
  metrics: [
    {
      name: 'pN',
      type: MetricType.Gauge,
      description: 'Query latency percentile in microseconds (mean of the bucket reached): p99, p999, p95...',
    },
  ],
};

/** One histogram bucket, parsed. */
export interface QrtBucket {
  /** Upper bound, seconds. */
  time: number;
  count: number;
  /** Seconds spent by the queries of this bucket. */
  total: number;
}

/**
 * Pure: the plugin's rows → buckets. TIME and TOTAL are right-aligned text: trimmed, then
 * parsed; text that is no number throws Blip's `<level>: qrt: …` error.
 */
export function parseQrtRows(level: string, rows: readonly Row[]): QrtBucket[] {
  const buckets: QrtBucket[] = [];
  for (const row of rows) {
    const timeText = field(row, 'time') ?? '';
    const totalText = field(row, 'total') ?? '';
    const countText = field(row, 'count') ?? '';
    const time = parseValue(timeText.trim());
    if (time === undefined)
      throw new Error(`${level}: qrt: time couldn't be parsed into a valid float: ${timeText}`);
    const total = parseValue(totalText.trim());
    if (total === undefined)
      throw new Error(`${level}: qrt: total couldn't be parsed into a valid float: ${totalText}`);
    const count = parseValue(countText.trim());
    if (count === undefined)
      throw new Error(`${level}: qrt: count couldn't be parsed into a valid number: ${countText}`);
    buckets.push({ time, count, total });
  }
  return buckets.sort((a, b) => a.time - b.time);
}

/**
 * Pure: percentile q of sorted buckets → [value in seconds, real quantile]. Walk the
 * buckets accumulating counts; the first bucket whose cumulative count reaches N×q gives
 * value = its mean latency (total/count) and real = cumulative/N. No bucket → [0, 0].
 */
export function qrtPercentile(buckets: readonly QrtBucket[], q: number): [number, number] {
  const n = buckets.reduce((sum, b) => sum + b.count, 0);
  const target = n * q;
  let cumulative = 0;
  for (const b of buckets) {
    cumulative += b.count;
    if (cumulative >= target && b.count > 0) return [b.total / b.count, cumulative / n];
  }
  return [0, 0];
}

/**
 * Pure part of collect(): buckets → one gauge per percentile, µs. No queries since the last
 * flush (N = 0) → nothing (Blip reports NaN).
 */
export function qrtValues(
  buckets: readonly QrtBucket[],
  percentiles: readonly Percentile[],
  realPercentiles: boolean,
): MetricValue[] {
  if (buckets.reduce((sum, b) => sum + b.count, 0) === 0) return [];
  return percentiles.map((p) => {
    const [seconds, real] = qrtPercentile(buckets, p.q);
    const v: MetricValue = { name: p.name, value: seconds * 1_000_000, type: MetricType.Gauge };
    if (realPercentiles) v.meta = { [p.name]: (real * 100).toFixed(1) };
    return v;
  });
}

interface LevelState {
  percentiles: Percentile[];
  realPercentiles: boolean;
  flush: boolean;
}

export class PerconaResponseTimeCollector implements Collector {
  readonly domain = DOMAIN;
  readonly #db: Db;
  #levels = new Map<string, LevelState>();
  #info: ServerInfo | undefined;
  /** The source table's answer: why the plugin cannot exist here, or how to load it. */
  #unsupported: string | undefined;
  #hint = '';

  constructor(ctx: CollectorContext) {
    this.#db = ctx.db;
  }

  async prepare(plan: Plan, signal: AbortSignal): Promise<void> {
    this.#levels = mapLevels(plan, DOMAIN, (dp): LevelState => ({
      percentiles: parsePercentiles(dp.metrics),
      realPercentiles: option(dp, 'real-percentiles') !== 'no',
      flush: option(dp, 'flush') !== 'no',
    }));
    if (this.#levels.size === 0) return;
    const info = await this.#db.serverInfo({ signal });
    this.#info = info;
    const choice = sourceFor(DOMAIN, info);
    this.#unsupported = 'unsupported' in choice ? choice.unsupported : undefined;
    this.#hint = 'source' in choice ? (choice.hint ?? '') : '';
  }

  async collect(level: string, signal: AbortSignal): Promise<CollectResult> {
    const st = this.#levels.get(level);
    const info = this.#info;
    if (st === undefined || info === undefined) return { values: [] };
    if (this.#unsupported !== undefined) {
      return { values: [], error: noPluginError(info, st, this.#unsupported) };
    }

    let rows: Row[];
    try {
      rows = await this.#db.query(QRT_QUERY, [], { signal });
    } catch (err) {
      if (errnoOf(err) !== ER_UNKNOWN_TABLE) return { values: [], error: queryError(err) };
      return { values: [], error: noPluginError(info, st, withCause(this.#hint, err), err) };
    }
    let values: MetricValue[];
    try {
      values = qrtValues(parseQrtRows(level, rows), st.percentiles, st.realPercentiles);
    } catch (err) {
      return { values: [], error: queryError(err) };
    }

    if (st.flush) {
      try {
        await this.#db.query(FLUSH_QUERY, [], { signal });
      } catch (err) {
        // Blip drops the values here, yet they are valid: keep them.
        return { values, error: queryError(err, { what: 'flush' }) };
      }
    }
    return { values };
  }
}

/**
 * No QUERY_RESPONSE_TIME table: "not supported", unless the plan sets the `unknown-table`
 * policy, which then governs it as in Blip (`zero` emits every percentile as 0).
 */
function noPluginError(info: ServerInfo, st: LevelState, reason: string, cause?: unknown): CollectError {
  const zero = st.percentiles.map((p) => ({ name: p.name, value: 0, type: MetricType.Gauge }));
  return unsupportedError(DOMAIN, info, reason, cause, { policy: UNKNOWN_TABLE_POLICY, zero });
}

export const registration: CollectorRegistration = {
  help,
  create: (ctx) => new PerconaResponseTimeCollector(ctx),
};
