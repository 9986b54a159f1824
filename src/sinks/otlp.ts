/**
 * The `otlp` sink: OpenTelemetry metrics over OTLP/HTTP, binary protobuf encoding
 * (`POST <endpoint>/v1/metrics`, `Content-Type: application/x-protobuf`).
 *
 * Why protobuf rather than OTLP/JSON: binary protobuf is the OTLP/HTTP default
 * (`http/protobuf` in every OpenTelemetry SDK) and the one encoding every receiver accepts
 * (some — Prometheus' native OTLP receiver among them — took only protobuf for a long
 * time); it is also smaller, and 64-bit nanosecond timestamps stay exact without the
 * string-encoded integers OTLP/JSON needs.
 *
 * Mapping of one `Metrics` (one request):
 *
 * | sonde | OTLP |
 * |---|---|
 * | monitor | one ResourceMetrics; resource attributes `service.name=sonde`, `sonde.monitor.id=<id>`, then every monitor tag (a tag wins over the two defaults) |
 * | — | one ScopeMetrics, scope name `sonde` |
 * | `<domain>.<name>` (+ `metric-prefix`) | Metric name; one Metric per name and kind, one data point per group |
 * | CUMULATIVE_COUNTER | Sum, monotonic, AGGREGATION_TEMPORALITY_CUMULATIVE |
 * | DELTA_COUNTER | Sum, monotonic, AGGREGATION_TEMPORALITY_DELTA |
 * | GAUGE, BOOL | Gauge |
 * | EVENT, UNKNOWN | skipped |
 * | group | data point attributes (string values) |
 * | meta | not sent (annotations such as real percentiles change every time and would split series) |
 * | meta `ts` (Unix ms) else `begin` | data point `time_unix_nano`; an unparsable `ts` skips the value |
 *
 * `start_time_unix_nano` is left 0 ("unknown" in OTLP): sonde does not know when a MySQL
 * counter started counting, and receivers treat a decreasing cumulative value as a reset.
 *
 * Errors: HTTP 429, 502, 503 and 504 (the retryable codes of the OTLP/HTTP protocol
 * specification) and transport failures reject, so the Retry wrapper sends again. Any other
 * non-2xx answer must not be retried (same specification): the sink emits `sink-send-error`
 * and resolves. A 2xx answer with a partial success is reported as event `sink-server-error`.
 */
import { gzipSync } from 'node:zlib';
import protobuf from 'protobufjs';
import { MetricType } from '../core/metrics.js';
import type { Metrics, MetricValue } from '../core/metrics.js';
import type { Events } from '../core/events.js';
import type { HttpClient, Sink, SinkRegistration } from '../core/sink.js';
import type { StatusWriter } from '../core/status.js';
import { formatTimestampMs } from '../util/time.js';
import { bodyText, parseTarget, sinkPoster } from './http.js';
import { createRetried } from './retry.js';
import type { PostTarget } from './http.js';
import { monitorKeyOf } from '../core/status-keys.js';
import { ProtoWriter } from './protobuf.js';

/** The sink's name: its registration, its `Sink.name` and its status key. */
const SINK_NAME = 'otlp';

/** The OTLP/HTTP default endpoint of the OpenTelemetry SDKs, on the loopback address. */
export const OTLP_DEFAULT_ENDPOINT = 'http://127.0.0.1:4318';

/** Headers the sink sets itself; configuring one is an error. */
const RESERVED_HEADERS = new Set([
  'content-type',
  'content-encoding',
  'content-length',
  'transfer-encoding',
  'host',
  'connection',
]);

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Parsed `otlp` options. */
export interface OtlpOptions {
  /** Base URL; requests go to `<endpoint>/v1/metrics`. */
  endpoint: string;
  /** Extra request headers (authentication, tenant). */
  headers: Record<string, string>;
  compression: 'none' | 'gzip';
  /** Literal prefix of every metric name (no dot added). */
  metricPrefix: string;
}

/**
 * Parse `headers` in the OTEL_EXPORTER_OTLP_HEADERS convention: `k1=v1,k2=v2`, spaces
 * around keys and values trimmed, values percent-decoded (`%2C` is a comma). Messages
 * never echo a value (headers carry API keys).
 */
export function parseHeaderList(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  let n = 0;
  for (const entry of text.split(',')) {
    n++;
    if (entry.trim() === '') continue;
    const eq = entry.indexOf('=');
    const key = eq < 0 ? '' : entry.slice(0, eq).trim();
    if (key === '') throw new Error(`invalid otlp option headers: entry ${n} is not name=value`);
    const raw = entry.slice(eq + 1).trim();
    let value: string;
    try {
      value = decodeURIComponent(raw);
    } catch {
      value = raw;
    }
    out[key] = value;
  }
  return out;
}

/** Read and validate the option map (retry options already removed). */
export function parseOtlpOptions(options: Record<string, string>): OtlpOptions {
  const out: OtlpOptions = {
    endpoint: OTLP_DEFAULT_ENDPOINT,
    headers: {},
    compression: 'none',
    metricPrefix: '',
  };
  const single: Record<string, string> = {};
  for (const [key, value] of Object.entries(options)) {
    if (key === 'endpoint') {
      if (value.trim() !== '') out.endpoint = value.trim();
    } else if (key === 'headers') {
      Object.assign(out.headers, parseHeaderList(value));
    } else if (key.startsWith('header.')) {
      single[key.slice('header.'.length)] = value;
    } else if (key === 'compression') {
      const v = value.trim().toLowerCase();
      if (v === 'gzip') out.compression = 'gzip';
      else if (v === 'none' || v === '') out.compression = 'none';
      else throw new Error(`invalid otlp option compression: ${value}: valid values: none, gzip`);
    } else if (key === 'metric-prefix') {
      out.metricPrefix = value;
    } else {
      throw new Error(`invalid option: ${key}`);
    }
  }
  // `header.<name>` keys win over the same name in `headers`.
  Object.assign(out.headers, single);
  for (const [name, value] of Object.entries(out.headers)) {
    if (!HEADER_NAME.test(name)) throw new Error(`invalid otlp header name: ${JSON.stringify(name)}`);
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      throw new Error(`invalid otlp header ${name}: the sink sets it`);
    }
    if (/[\r\n\0]/.test(value)) throw new Error(`invalid otlp header ${name}: value has a control character`);
  }
  return out;
}

/** `AggregationTemporality` of opentelemetry/proto/metrics/v1/metrics.proto. */
const TEMPORALITY_DELTA = 1;
const TEMPORALITY_CUMULATIVE = 2;

type Kind = 'gauge' | 'cumulative' | 'delta';

function kindOf(t: MetricType): Kind | undefined {
  switch (t) {
    case MetricType.CumulativeCounter:
      return 'cumulative';
    case MetricType.DeltaCounter:
      return 'delta';
    case MetricType.Gauge:
    case MetricType.Bool:
      return 'gauge';
    default:
      return undefined;
  }
}

/** Point time in Unix nanoseconds: meta `ts` (ms) else `begin`; undefined when `ts` is bad. */
function pointTime(v: MetricValue, begin: Date): bigint | undefined {
  const ts = v.meta?.['ts'];
  if (ts === undefined) return BigInt(begin.getTime()) * 1_000_000n;
  const ms = Number(ts);
  if (ts.trim() === '' || !Number.isFinite(ms)) return undefined;
  return BigInt(Math.trunc(ms)) * 1_000_000n;
}

interface Point {
  time: bigint;
  value: number;
  group: Record<string, string> | undefined;
}

/** `KeyValue{key, value: AnyValue{string_value}}` */
function writeAttribute(w: ProtoWriter, field: number, key: string, value: string): void {
  w.message(field, (kv) => {
    kv.string(1, key);
    kv.message(2, (any) => any.string(1, value));
  });
}

/** The encoded `ExportMetricsServiceRequest` and how many data points it holds. */
export interface OtlpPayload {
  body: Uint8Array;
  points: number;
}

/**
 * Encode one `Metrics` as an OTLP `ExportMetricsServiceRequest`
 * (opentelemetry/proto/collector/metrics/v1). `resource` = resource attributes in order.
 */
export function encodeOtlpMetrics(m: Metrics, resource: Record<string, string>, prefix = ''): OtlpPayload {
  // name+kind → points, in first-seen order (domains ascending, values in collector order).
  const series = new Map<string, { name: string; kind: Kind; points: Point[] }>();
  let points = 0;
  for (const domain of Object.keys(m.values).sort()) {
    for (const v of m.values[domain] ?? []) {
      const kind = kindOf(v.type);
      if (kind === undefined) continue;
      const time = pointTime(v, m.begin);
      if (time === undefined) continue;
      const name = `${prefix}${domain}.${v.name}`;
      const key = `${kind}\0${name}`;
      let s = series.get(key);
      if (!s) {
        s = { name, kind, points: [] };
        series.set(key, s);
      }
      s.points.push({ time, value: v.value, group: v.group });
      points++;
    }
  }

  const writePoint = (w: ProtoWriter, p: Point): void => {
    // NumberDataPoint: 3 time_unix_nano (fixed64), 4 as_double, 7 attributes.
    w.message(1, (dp) => {
      dp.fixed64(3, p.time);
      dp.double(4, p.value);
      for (const k of Object.keys(p.group ?? {}).sort()) writeAttribute(dp, 7, k, p.group?.[k] ?? '');
    });
  };

  const req = new ProtoWriter();
  req.message(1, (rm) => {
    // ResourceMetrics.resource (1) → Resource.attributes (1).
    rm.message(1, (res) => {
      for (const [k, v] of Object.entries(resource)) writeAttribute(res, 1, k, v);
    });
    // ResourceMetrics.scope_metrics (2) → ScopeMetrics{scope (1), metrics (2)}.
    rm.message(2, (sm) => {
      sm.message(1, (scope) => scope.string(1, 'sonde'));
      for (const s of series.values()) {
        sm.message(2, (metric) => {
          metric.string(1, s.name);
          if (s.kind === 'gauge') {
            // Metric.gauge (5) → Gauge.data_points (1).
            metric.message(5, (g) => {
              for (const p of s.points) writePoint(g, p);
            });
          } else {
            // Metric.sum (7) → Sum{data_points 1, aggregation_temporality 2, is_monotonic 3}.
            metric.message(7, (sum) => {
              for (const p of s.points) writePoint(sum, p);
              sum.varint(2, s.kind === 'cumulative' ? TEMPORALITY_CUMULATIVE : TEMPORALITY_DELTA);
              sum.bool(3, true);
            });
          }
        });
      }
    });
  });
  return { body: req.finish(), points };
}

/** Status codes an OTLP/HTTP client may retry ("Retryable Response Codes" of the protocol). */
const RETRYABLE = new Set([429, 502, 503, 504]);

const utf8 = new TextDecoder();

// The two answers the sink reads, declared with protobufjs reflection (only the fields
// read): google.rpc.Status of an error answer, ExportMetricsServiceResponse of a success.
const answers = new protobuf.Root()
  .add(
    new protobuf.Type('Status')
      .add(new protobuf.Field('code', 1, 'int32'))
      .add(new protobuf.Field('message', 2, 'string')),
  )
  .add(
    new protobuf.Type('PartialSuccess')
      .add(new protobuf.Field('rejectedDataPoints', 1, 'int64'))
      .add(new protobuf.Field('errorMessage', 2, 'string')),
  )
  .add(
    new protobuf.Type('ExportMetricsServiceResponse').add(
      new protobuf.Field('partialSuccess', 1, 'PartialSuccess'),
    ),
  );
const RpcStatus = answers.lookupType('Status');
const ExportResponse = answers.lookupType('ExportMetricsServiceResponse');

/** The shape of a partial success, in protobuf (decoded, longs as strings) and JSON. */
interface PartialSuccessObject {
  partialSuccess?: { rejectedDataPoints?: string | number; errorMessage?: string };
}

/** `google.rpc.Status.message` of a protobuf error body, else the body as text. */
function errorDetail(body: Uint8Array, contentType: string): string {
  if (contentType.includes('protobuf')) {
    try {
      const { message } = RpcStatus.toObject(RpcStatus.decode(body)) as { message?: string };
      if (message !== undefined) return message;
    } catch {
      // Not the protobuf it claimed to be: show it as text below.
    }
  }
  return bodyText(body);
}

/**
 * The partial success of an `ExportMetricsServiceResponse` (protobuf or JSON), or
 * undefined when the receiver accepted everything.
 */
export function partialSuccess(
  body: Uint8Array,
  contentType: string,
): { rejected: bigint; message: string } | undefined {
  if (body.length === 0) return undefined;
  let rejected = 0n;
  let message = '';
  try {
    const answer = contentType.includes('json')
      ? (JSON.parse(utf8.decode(body)) as PartialSuccessObject)
      : (ExportResponse.toObject(ExportResponse.decode(body), { longs: String }) as PartialSuccessObject);
    rejected = BigInt(answer.partialSuccess?.rejectedDataPoints ?? 0);
    message = answer.partialSuccess?.errorMessage ?? '';
  } catch {
    return undefined; // an unreadable success body is still a success
  }
  if (rejected === 0n && message === '') return undefined;
  return { rejected, message };
}

/** What the sink needs from its context. */
export interface OtlpSinkDeps {
  monitorId: string;
  tags: Record<string, string>;
  status: StatusWriter;
  events: Events;
  httpClient?: HttpClient;
}

/** Build the unwrapped `otlp` sink (the registration wraps it in Retry). */
export function createOtlpSink(opts: OtlpOptions, deps: OtlpSinkDeps): Sink {
  const target: PostTarget = parseTarget(opts.endpoint, 'otlp endpoint');
  const url = `${target.url.replace(/\/+$/, '')}/v1/metrics`;
  const resource: Record<string, string> = {
    'service.name': 'sonde',
    'sonde.monitor.id': deps.monitorId,
    ...deps.tags,
  };
  const headers: Record<string, string> = { ...opts.headers, 'Content-Type': 'application/x-protobuf' };
  if (opts.compression === 'gzip') headers['Content-Encoding'] = 'gzip';
  const { status, events, monitorId } = deps;

  const fail = (err: string): void => {
    status.set(
      monitorKeyOf.sink(SINK_NAME),
      `error on last send at ${formatTimestampMs(new Date())}: ${err}`,
    );
  };

  return {
    name: SINK_NAME,
    async send(metrics: Metrics, signal?: AbortSignal): Promise<void> {
      const payload = encodeOtlpMetrics(metrics, resource, opts.metricPrefix);
      if (payload.points === 0) return; // nothing this sink can express: nothing to send
      status.set(monitorKeyOf.sink(SINK_NAME), 'sending metrics');
      const body = opts.compression === 'gzip' ? gzipSync(payload.body) : payload.body;
      let answer;
      try {
        answer = await sinkPoster(deps.httpClient)({
          url,
          headers,
          authorization: target.authorization,
          body,
          signal,
        });
      } catch (err) {
        fail(err instanceof Error ? err.message : String(err));
        throw err;
      }
      if (answer.status < 200 || answer.status > 299) {
        const text = `otlp receiver HTTP status ${answer.status} from ${url}: ${errorDetail(answer.body, answer.contentType)}`;
        fail(text);
        if (RETRYABLE.has(answer.status)) throw new Error(text);
        // Not retryable per the OTLP/HTTP protocol: report and drop rather than resend forever.
        events.error('sink-send-error', monitorId, `otlp :${text} (not retried)`);
        return;
      }
      const partial = partialSuccess(answer.body, answer.contentType);
      if (partial) {
        events.error(
          'sink-server-error',
          monitorId,
          `otlp receiver rejected ${partial.rejected} of ${payload.points} data points: ${partial.message}`,
        );
      }
      status.set(
        monitorKeyOf.sink(SINK_NAME),
        `last sent ${payload.points} metrics at ${formatTimestampMs(new Date())}`,
      );
    },
  };
}

/** Registration of `otlp`: Retry → OTLP (retry options stripped before the inner sink). */
export function otlpSinkRegistration(): SinkRegistration {
  return {
    name: SINK_NAME,
    description: 'Sends metrics to an OpenTelemetry collector or backend (OTLP/HTTP, protobuf)',
    create: (ctx) => createRetried(ctx, (c) => createOtlpSink(parseOtlpOptions(c.options), c)),
  };
}
