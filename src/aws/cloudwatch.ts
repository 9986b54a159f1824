/**
 * CloudWatch GetMetricData for the aws.rds domain: the `AWS/RDS` metrics of one DB instance
 * (dimension `DBInstanceIdentifier`), statistic `Average` over 60-second periods, oldest
 * datapoint first, every page read (`NextToken`). The SDK (JSON 1.0 protocol) is imported
 * when the first reader is opened; credentials come from the default AWS chain and the
 * endpoint may be overridden with `AWS_ENDPOINT_URL_CLOUDWATCH`.
 */
import type { CloudWatchClient, MetricDataQuery, MetricDataResult } from '@aws-sdk/client-cloudwatch';
import type { AwsConfigFactory } from '../core/aws.js';
import { awsClientSettings, awsErrorText } from './sdk.js';

/** One metric to read: the query id (lowercase name) and the CloudWatch metric name. */
export interface RdsMetricQuery {
  id: string;
  metricName: string;
}

/** One datapoint: time in Unix milliseconds. */
export interface Datapoint {
  ts: number;
  value: number;
}

/** Every datapoint of one query, oldest first. */
export interface MetricSeries {
  id: string;
  /** What CloudWatch labels the series with: the metric name. */
  label: string;
  points: Datapoint[];
}

export interface RdsMetricsRequest {
  dbInstanceId: string;
  metrics: readonly RdsMetricQuery[];
  start: Date;
  end: Date;
  signal?: AbortSignal;
}

/** Reads RDS metrics in one region. */
export interface CloudWatchReader {
  /** undefined: the SDK's default region. */
  readonly region: string | undefined;
  /** Errors read `GetMetricData: <code>: <message>`. */
  rdsMetrics(req: RdsMetricsRequest): Promise<MetricSeries[]>;
  close(): void;
}

export const RDS_NAMESPACE = 'AWS/RDS';
export const PERIOD_S = 60;
export const STATISTIC = 'Average';
/** Result states that mean the series cannot be trusted (`Complete`/`PartialData` are fine). */
const BAD_STATUS = new Set(['InternalError', 'Forbidden']);

/** The GetMetricData queries of one request. */
export function metricDataQueries(
  dbInstanceId: string,
  metrics: readonly RdsMetricQuery[],
): MetricDataQuery[] {
  return metrics.map((m) => ({
    Id: m.id,
    MetricStat: {
      Metric: {
        Namespace: RDS_NAMESPACE,
        MetricName: m.metricName,
        Dimensions: [{ Name: 'DBInstanceIdentifier', Value: dbInstanceId }],
      },
      Period: PERIOD_S,
      Stat: STATISTIC,
    },
  }));
}

/**
 * Adds one page's results to `acc` (by query id: a series may continue on the next page).
 * Throws on a result CloudWatch marks as failed.
 */
export function mergePage(acc: Map<string, MetricSeries>, results: readonly MetricDataResult[]): void {
  for (const r of results) {
    const id = r.Id ?? '';
    if (r.StatusCode !== undefined && BAD_STATUS.has(r.StatusCode)) {
      const why = (r.Messages ?? []).map((m) => `${m.Code ?? ''} ${m.Value ?? ''}`.trim()).join('; ');
      throw new Error(`GetMetricData: ${id}: ${r.StatusCode}${why === '' ? '' : `: ${why}`}`);
    }
    let s = acc.get(id);
    if (s === undefined) {
      s = { id, label: r.Label ?? id, points: [] };
      acc.set(id, s);
    }
    const ts = r.Timestamps ?? [];
    const vs = r.Values ?? [];
    for (let i = 0; i < Math.min(ts.length, vs.length); i++) {
      const t = ts[i]?.getTime();
      const v = vs[i];
      if (t !== undefined && Number.isFinite(t) && v !== undefined && Number.isFinite(v))
        s.points.push({ ts: t, value: v });
    }
  }
}

/** How long one GetMetricData call (one page, retries included) may take without a deadline. */
const CALL_TIMEOUT_MS = 20_000;

/** A reader for `region` (undefined: the SDK's default) on the AWS SDK; close() releases its connections. */
export async function openCloudWatch(
  region: string | undefined,
  factory?: AwsConfigFactory,
  monitorId = '',
): Promise<CloudWatchReader> {
  const [sdk, settings] = await Promise.all([
    import('@aws-sdk/client-cloudwatch'),
    awsClientSettings('cloudwatch', region, factory, monitorId),
  ]);
  const client: CloudWatchClient = new sdk.CloudWatchClient(settings);
  return {
    region,
    close: () => client.destroy(),
    async rdsMetrics(req) {
      const acc = new Map<string, MetricSeries>();
      const seen = new Set<string>();
      let token: string | undefined;
      do {
        const signal = req.signal ?? AbortSignal.timeout(CALL_TIMEOUT_MS);
        let page;
        try {
          page = await client.send(
            new sdk.GetMetricDataCommand({
              MetricDataQueries: metricDataQueries(req.dbInstanceId, req.metrics),
              StartTime: req.start,
              EndTime: req.end,
              ScanBy: 'TimestampAscending',
              ...(token === undefined ? {} : { NextToken: token }),
            }),
            { abortSignal: signal },
          );
        } catch (err) {
          throw new Error(`GetMetricData: ${awsErrorText(err)}`, { cause: err });
        }
        mergePage(acc, page.MetricDataResults ?? []);
        token = page.NextToken || undefined;
        if (token !== undefined) {
          if (seen.has(token)) throw new Error('GetMetricData: the same NextToken came back twice');
          seen.add(token);
        }
      } while (token !== undefined);
      for (const s of acc.values()) s.points.sort((a, b) => a.ts - b.ts);
      return [...acc.values()];
    },
  };
}
