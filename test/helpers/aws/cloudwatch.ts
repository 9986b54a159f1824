/**
 * A local Amazon CloudWatch for tests: `GetMetricData` as the SDK sends it (AWS JSON 1.0,
 * `X-Amz-Target: GraniteServiceVersion20100801.GetMetricData`, times in epoch seconds), on
 * the shared fake AWS endpoint, so the SigV4 signature is checked against the test
 * credentials before anything else.
 *
 * The fake holds per-minute datapoints (already the 60-second average) per DB instance and
 * metric, answers the datapoints with StartTime ≤ t < EndTime in the order ScanBy asks,
 * refuses what CloudWatch refuses (bad query ids, duplicate ids, odd periods, no
 * statistic, an empty window), and splits answers into pages of `pageSize` datapoints with a
 * `NextToken`, marking a cut series `PartialData` as CloudWatch does.
 */
import type { AwsReply, AwsRequest, AwsServer } from './server.js';
import { jsonError, jsonReply, startAwsServer } from './server.js';
import type { TestCredentials } from './sigv4.js';

export const GET_METRIC_DATA = 'GraniteServiceVersion20100801.GetMetricData';
const JSON_1_0 = 'application/x-amz-json-1.0';
const QUERY_ID = /^[a-z][a-zA-Z0-9_]*$/;

export interface FakePoint {
  /** Unix milliseconds. */
  ts: number;
  value: number;
}

export interface FakeCloudWatchOptions {
  credentials: TestCredentials;
  /** The one region the fake plays; other credential scopes are refused. */
  region: string;
  /** Datapoints per page; default 100800 (CloudWatch's own). */
  pageSize?: number;
}

/** One query as the fake understood it. */
export interface SeenQuery {
  id: string;
  namespace: string;
  metricName: string;
  dimensions: { Name: string; Value: string }[];
  period: number;
  stat: string;
}

export interface SeenCall {
  queries: SeenQuery[];
  start: number;
  end: number;
  scanBy: string | undefined;
  nextToken: string | undefined;
}

export interface FakeCloudWatch {
  readonly server: AwsServer;
  readonly base: string;
  /** Sets the datapoints of one metric of one DB instance. */
  setPoints(dbInstanceId: string, metricName: string, points: FakePoint[]): void;
  /** Every later call fails with this error; undefined clears it. */
  fail(error: { code: string; message: string; status?: number } | undefined): void;
  /** The GetMetricData calls that passed the signature check. */
  calls(): SeenCall[];
  close(): Promise<void>;
}

interface RawQuery {
  Id?: unknown;
  MetricStat?: {
    Metric?: { Namespace?: string; MetricName?: string; Dimensions?: { Name: string; Value: string }[] };
    Period?: unknown;
    Stat?: unknown;
  };
}

function validationError(message: string): AwsReply {
  return jsonError('ValidationError', message, 400, { 'x-amzn-query-error': 'ValidationError;Sender' });
}

/** The queries of a request, or the error CloudWatch would answer. */
function parseQueries(raw: unknown): SeenQuery[] | AwsReply {
  if (!Array.isArray(raw) || raw.length === 0) return validationError('MetricDataQueries must not be empty');
  const out: SeenQuery[] = [];
  for (const [i, q] of (raw as RawQuery[]).entries()) {
    const at = `MetricDataQueries.member.${i + 1}`;
    const id = typeof q.Id === 'string' ? q.Id : '';
    if (!QUERY_ID.test(id))
      return validationError(
        `The value ${id} for parameter ${at}.Id is not matching the expected pattern ^[a-z][a-zA-Z0-9_]*$.`,
      );
    if (out.some((o) => o.id === id))
      return validationError(`The value ${id} for parameter ${at}.Id is duplicated.`);
    const ms = q.MetricStat;
    const period = typeof ms?.Period === 'number' ? ms.Period : 0;
    if (!(
      period === 1 ||
      period === 5 ||
      period === 10 ||
      period === 30 ||
      (period > 0 && period % 60 === 0)
    ))
      return validationError(
        `The parameter ${at}.MetricStat.Period must be 1, 5, 10, 30 or a multiple of 60.`,
      );
    const stat = typeof ms?.Stat === 'string' ? ms.Stat : '';
    if (stat === '') return validationError(`The parameter ${at}.MetricStat.Stat is required.`);
    out.push({
      id,
      namespace: ms?.Metric?.Namespace ?? '',
      metricName: ms?.Metric?.MetricName ?? '',
      dimensions: ms?.Metric?.Dimensions ?? [],
      period,
      stat,
    });
  }
  return out;
}

/** The series of every query in the window, in scan order. */
function seriesOf(
  queries: SeenQuery[],
  data: Map<string, FakePoint[]>,
  start: number,
  end: number,
  descending: boolean,
): { q: SeenQuery; points: FakePoint[] }[] {
  return queries.map((q) => {
    const db = q.dimensions.find((d) => d.Name === 'DBInstanceIdentifier')?.Value ?? '';
    const all = q.namespace === 'AWS/RDS' ? (data.get(`${db}\u0000${q.metricName}`) ?? []) : [];
    const points = all.filter((p) => p.ts >= start * 1000 && p.ts < end * 1000).sort((a, b) => a.ts - b.ts);
    if (descending) points.reverse();
    return { q, points };
  });
}

/**
 * One page from position `from` (a flat index over every series' points, in order): at most
 * `size` datapoints; a series without datapoints is answered (empty, Complete) on the first
 * page only.
 */
function page(series: { q: SeenQuery; points: FakePoint[] }[], from: number, size: number): AwsReply {
  const total = series.reduce((n, s) => n + s.points.length, 0);
  const results: unknown[] = [];
  let pos = 0;
  let taken = 0;
  for (const { q, points } of series) {
    const first = pos;
    pos += points.length;
    if (points.length === 0) {
      if (from === 0)
        results.push({ Id: q.id, Label: q.metricName, Timestamps: [], Values: [], StatusCode: 'Complete' });
      continue;
    }
    if (pos <= from) continue;
    if (taken >= size) break;
    const lo = Math.max(0, from - first);
    const part = points.slice(lo, lo + (size - taken));
    taken += part.length;
    const cut = lo + part.length < points.length;
    results.push({
      Id: q.id,
      Label: q.metricName,
      Timestamps: part.map((p) => p.ts / 1000),
      Values: part.map((p) => p.value),
      StatusCode: cut ? 'PartialData' : 'Complete',
    });
    if (cut) break;
  }
  const next = from + taken;
  const body: Record<string, unknown> = { MetricDataResults: results, Messages: [] };
  if (next < total) body['NextToken'] = `tok-${next}`;
  return jsonReply(body, 200, JSON_1_0);
}

function getMetricData(
  req: AwsRequest,
  data: Map<string, FakePoint[]>,
  pageSize: number,
  calls: SeenCall[],
): AwsReply {
  const input = (req.input ?? {}) as Record<string, unknown>;
  const queries = parseQueries(input['MetricDataQueries']);
  if (!Array.isArray(queries)) return queries;
  const start = Number(input['StartTime']);
  const end = Number(input['EndTime']);
  if (!Number.isFinite(start) || !Number.isFinite(end) || start >= end)
    return validationError('The parameter StartTime must be less than the parameter EndTime.');
  const scanBy = typeof input['ScanBy'] === 'string' ? input['ScanBy'] : undefined;
  const token = typeof input['NextToken'] === 'string' ? input['NextToken'] : undefined;
  calls.push({ queries, start, end, scanBy, nextToken: token });
  const from = token === undefined ? 0 : Number(token.replace(/^tok-/, ''));
  if (!Number.isInteger(from) || from < 0) return validationError('The NextToken is invalid.');
  const series = seriesOf(queries, data, start, end, scanBy === 'TimestampDescending');
  return page(series, from, pageSize);
}

export async function startFakeCloudWatch(opts: FakeCloudWatchOptions): Promise<FakeCloudWatch> {
  const data = new Map<string, FakePoint[]>();
  const calls: SeenCall[] = [];
  let failure: { code: string; message: string; status?: number } | undefined;
  const server = await startAwsServer({
    credentials: opts.credentials,
    service: 'monitoring',
    region: opts.region,
    operations: {
      [GET_METRIC_DATA]: (req) => {
        if (req.headers['content-type'] !== JSON_1_0)
          return jsonError('UnknownOperationException', `content type ${req.headers['content-type'] ?? ''}`);
        if (failure) return jsonError(failure.code, failure.message, failure.status ?? 400);
        return getMetricData(req, data, opts.pageSize ?? 100_800, calls);
      },
    },
  });
  return {
    server,
    base: server.base,
    setPoints: (db, metric, points) => void data.set(`${db}\u0000${metric}`, [...points]),
    fail: (e) => {
      failure = e;
    },
    calls: () => [...calls],
    close: () => server.close(),
  };
}
