/**
 * aws.rds — Amazon RDS metrics from CloudWatch (namespace `AWS/RDS`), for RDS MySQL,
 * RDS MariaDB and Aurora MySQL alike. MySQL itself is never queried.
 *
 * Each level lists CloudWatch metric names as CloudWatch spells them (`CPUUtilization`); the
 * names are kept as written. One GetMetricData call per collection asks for all of them:
 * query id = the lowercased name, dimension `DBInstanceIdentifier` = the `db-id` option
 * (default: the monitor id, which RDS discovery sets to the DB instance identifier),
 * statistic Average, period 60 s, from now − 2 min (rounded to the nearest minute) to now,
 * oldest first, every page read.
 *
 * A datapoint is reported once: a collection returns the datapoints newer than the newest
 * one that level already reported for that metric, each with meta `ts` = the datapoint's
 * time in Unix milliseconds (sinks that send times use it as the point time). So one
 * collection may return two values of a metric (two minutes), or none (CloudWatch has
 * nothing new yet). Levels should collect every 60 s or less often.
 *
 * The region: the monitor's `aws.region`; when that is empty and `aws.disable-auto-region`
 * is not set, `auto` (EC2 instance metadata); with auto-detection disabled, the region in an
 * RDS endpoint hostname (`<id>.<cluster>.<region>.rds.amazonaws.com`), else the SDK's
 * default (`AWS_REGION`).
 */
import type {
  AwsTarget,
  Collector,
  CollectorContext,
  CollectorHelp,
  CollectorRegistration,
  CollectResult,
} from '../../core/collector.js';
import { CollectError } from '../../core/collector.js';
import { errorMessage } from '../../core/errors.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import type { DomainPlan, Plan } from '../../core/plan.js';
import type { CloudWatchReader, MetricSeries, RdsMetricQuery } from '../../aws/cloudwatch.js';
import { PERIOD_S } from '../../aws/cloudwatch.js';
import { regionFromRdsHostname } from '../../aws/region.js';
import { levelPlans } from '../kit/common.js';

export const DOMAIN = 'aws.rds';

/** CloudWatch query ids: a lowercase letter first, then letters, digits and `_`. */
const QUERY_ID = /^[a-z][a-zA-Z0-9_]*$/;

/** RDS metrics that count events per period rather than measure a level. */
const DELTA_METRICS = new Set(['AbortedClients', 'BacktrackWindowAlert']);

/** How far back each collection looks. */
const WINDOW_MS = 2 * 60_000;

export const help: CollectorHelp = {
  domain: DOMAIN,
  description:
    'Amazon RDS CloudWatch metrics: the plan lists CloudWatch metric names as CloudWatch spells them (CPUUtilization, FreeableMemory, ...), each the average of a minute',
  sources: [
    `CloudWatch GetMetricData: namespace AWS/RDS, dimension DBInstanceIdentifier, statistic Average, period ${PERIOD_S} s`,
  ],
  options: [
    {
      name: 'db-id',
      description: 'DB instance identifier (the DBInstanceIdentifier dimension)',
      default: '%{monitor.id}',
    },
  ],
  errors: [],
  groups: [],
  meta: [{ key: 'ts', description: 'time of the CloudWatch datapoint, Unix milliseconds' }],
  metrics: [],
};

/** One level's request. */
export interface RdsLevel {
  dbId: string;
  metrics: RdsMetricQuery[];
}

/**
 * One level's part of the plan as a request; throws the Prepare error (`at
 * <plan>/<level>/aws.rds: …`) for an empty list, a name CloudWatch cannot take as a query id,
 * or two names that differ only in case.
 */
export function rdsLevel(planName: string, level: string, dp: DomainPlan, monitorId: string): RdsLevel {
  const at = `at ${planName}/${level}/${DOMAIN}`;
  if (dp.metrics.length === 0) {
    throw new Error(
      `${at}: no metrics specified; expected at least 1 metric (BinLogDiskUsage, CPUUtilization, etc.)`,
    );
  }
  const metrics: RdsMetricQuery[] = [];
  const ids = new Map<string, string>();
  for (const name of dp.metrics) {
    const id = name.toLowerCase();
    if (!QUERY_ID.test(id)) {
      throw new Error(
        `${at}: invalid metric: ${name} (CloudWatch metric names start with a letter and hold only letters, digits and _)`,
      );
    }
    const other = ids.get(id);
    if (other !== undefined) throw new Error(`${at}: metric ${name} listed twice (also as ${other})`);
    ids.set(id, name);
    metrics.push({ id, metricName: name });
  }
  const dbId = (dp.options['db-id'] ?? '').trim();
  return { dbId: dbId === '' ? monitorId : dbId, metrics };
}

/** The start of the window: now − 2 min, rounded to the nearest minute (half up). */
export function windowStart(nowMs: number): number {
  return Math.floor((nowMs - WINDOW_MS + 30_000) / 60_000) * 60_000;
}

/**
 * The new datapoints as values: for each series, those strictly after `last[name]` (which is
 * moved on to the newest reported). Named by the plan's spelling of the query id.
 */
export function newValues(
  series: readonly MetricSeries[],
  req: RdsLevel,
  last: Map<string, number>,
): MetricValue[] {
  const names = new Map(req.metrics.map((m) => [m.id, m.metricName]));
  const out: MetricValue[] = [];
  for (const s of series) {
    const name = names.get(s.id) ?? s.label;
    const type = DELTA_METRICS.has(name) ? MetricType.DeltaCounter : MetricType.Gauge;
    let newest = last.get(name) ?? -Infinity;
    for (const p of s.points) {
      if (p.ts <= newest) continue;
      out.push({ name, value: p.value, type, meta: { ts: String(p.ts) } });
      newest = p.ts;
    }
    if (newest !== -Infinity) last.set(name, newest);
  }
  return out;
}

/**
 * The region a monitor's CloudWatch calls go to: `aws.region`, `auto` when it is empty and
 * auto-detection is not disabled, else the region of an RDS endpoint hostname; undefined
 * leaves it to the SDK's own default (`AWS_REGION`, the profile's region).
 */
export async function targetRegion(
  t: AwsTarget,
  autoRegion: () => Promise<string>,
): Promise<string | undefined> {
  const region = t.region === '' && !t.disableAutoRegion ? 'auto' : t.region;
  if (region === 'auto') return autoRegion();
  if (region !== '') return region;
  return regionFromRdsHostname(t.hostname);
}

export interface AwsRdsDeps {
  /** A reader for a region (undefined: the SDK's default region). */
  open(region: string | undefined): Promise<CloudWatchReader>;
  /** The region of `auto`: EC2 instance metadata. */
  autoRegion(): Promise<string>;
  now?(): number;
}

export class AwsRdsCollector implements Collector {
  readonly domain = DOMAIN;
  readonly #ctx: CollectorContext;
  readonly #deps: AwsRdsDeps;
  #levels = new Map<string, RdsLevel>();
  /** level → metric name → newest datapoint time reported */
  readonly #last = new Map<string, Map<string, number>>();
  #reader: CloudWatchReader | undefined;

  constructor(ctx: CollectorContext, deps: AwsRdsDeps) {
    this.#ctx = ctx;
    this.#deps = deps;
  }

  async prepare(plan: Plan, _signal?: AbortSignal): Promise<void> {
    const levels = new Map<string, RdsLevel>();
    for (const [name, dp] of levelPlans(plan, DOMAIN)) {
      levels.set(name, rdsLevel(plan.name, name, dp, this.#ctx.monitorId));
    }
    this.#levels = levels;
    this.#last.clear();
    if (levels.size === 0 || this.#reader !== undefined) return;
    const target = this.#ctx.aws ?? { region: '', disableAutoRegion: false, hostname: '' };
    this.#reader = await this.#deps.open(await targetRegion(target, () => this.#deps.autoRegion()));
  }

  async collect(level: string, signal: AbortSignal): Promise<CollectResult> {
    const req = this.#levels.get(level);
    if (req === undefined || this.#reader === undefined) return { values: [] };
    const now = this.#deps.now?.() ?? Date.now();
    let series: MetricSeries[];
    try {
      series = await this.#reader.rdsMetrics({
        dbInstanceId: req.dbId,
        metrics: req.metrics,
        start: new Date(windowStart(now)),
        end: new Date(now),
        signal,
      });
    } catch (err) {
      const region = this.#reader.region ?? 'default';
      const msg = `${errorMessage(err)} (region ${region}, DBInstanceIdentifier ${req.dbId})`;
      return { values: [], error: new CollectError(msg, { cause: err }) };
    }
    let last = this.#last.get(level);
    if (last === undefined) {
      last = new Map();
      this.#last.set(level, last);
    }
    return { values: newValues(series, req, last) };
  }

  async close(): Promise<void> {
    this.#reader?.close();
    this.#reader = undefined;
  }
}

export const registration: CollectorRegistration = {
  help,
  create: (ctx) =>
    new AwsRdsCollector(ctx, {
      open: async (region) =>
        (await import('../../aws/cloudwatch.js')).openCloudWatch(region, ctx.aws?.config, ctx.monitorId),
      autoRegion: async () => (await import('../../aws/region.js')).imdsRegion(),
    }),
};
