/**
 * The `otlp` sink: OpenTelemetry metrics over OTLP/HTTP, binary protobuf encoding
 * (`POST <endpoint>/v1/metrics`, `Content-Type: application/x-protobuf`), and records as
 * OTLP logs (`POST <endpoint>/v1/logs`, see otlp-logs.ts). `protocol: http/json` (or
 * OTEL_EXPORTER_OTLP_PROTOCOL=http/json) sends both in OTLP/JSON instead
 * (`Content-Type: application/json`).
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
 * `naming: otel` sends the values listed in `otel-names.ts` under the OpenTelemetry MySQL
 * receiver's names, units, attributes and sum kinds (integers as `as_int`) and adds the
 * resource attribute `mysql.instance.endpoint`; other values keep the table above. The
 * OTEL_EXPORTER_OTLP_* variables fill what the options leave unset (`otel-env.ts`), and
 * OTEL_RESOURCE_ATTRIBUTES / OTEL_SERVICE_NAME add resource attributes below the tags.
 *
 * Errors: HTTP 429, 502, 503 and 504 (the retryable codes of the OTLP/HTTP protocol
 * specification) and transport failures reject, so the Retry wrapper sends again. Any other
 * non-2xx answer must not be retried (same specification): the sink emits `sink-send-error`
 * and resolves. A 2xx answer with a partial success is reported as event `sink-server-error`.
 */
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
import {
  envResourceAttributes,
  logsUrlOf,
  metricsUrlOf,
  OTLP_PROTOCOLS,
  otlpEnvSettings,
  parseKeyValueList,
} from './otel-env.js';
import type { Env, OtlpProtocol } from './otel-env.js';
import type { Records } from '../core/records.js';
import { encodeOtlpLogs, encodeOtlpLogsJson, jsonAttributes } from './otlp-logs.js';
import { OTEL_DERIVED, OTEL_METRICS, otelAttributes, otelRule, otelValue } from './otel-names.js';
import { gzipPayload } from '../util/gzip.js';

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

/** Metric naming: sonde's `<domain>.<metric>`, or the OpenTelemetry MySQL receiver's names. */
export type OtlpNaming = 'sonde' | 'otel';

/** Parsed `otlp` options, with the environment's settings filled in where an option is absent. */
export interface OtlpOptions {
  /** Full URL the sink POSTs to (`<endpoint>/v1/metrics`, or the metrics endpoint as given). */
  url: string;
  /** Full URL records go to (`<endpoint>/v1/logs`, or the logs endpoint as given). */
  logsUrl: string;
  /** Binary protobuf (default) or OTLP/JSON, for metrics and records alike. */
  protocol: OtlpProtocol;
  /** Extra request headers (authentication, tenant). */
  headers: Record<string, string>;
  compression: 'none' | 'gzip';
  /** Literal prefix of every sonde-named metric (no dot added). */
  metricPrefix: string;
  naming: OtlpNaming;
  /** `mysql.instance.endpoint` under otel naming; else the monitor's address when known. */
  instanceEndpoint?: string;
  /** Resource attributes from OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME. */
  resource: Record<string, string>;
}

/**
 * Parse `headers` in the OTEL_EXPORTER_OTLP_HEADERS convention: `k1=v1,k2=v2`, spaces
 * around keys and values trimmed, values percent-decoded (`%2C` is a comma). Messages
 * never echo a value (headers carry API keys).
 */
export function parseHeaderList(text: string): Record<string, string> {
  return parseKeyValueList(text, 'otlp option headers');
}

/** `value` lowercased if it is one of `valid`, else the one-line error naming the option. */
function oneOf<const T extends string>(key: string, value: string, valid: readonly T[]): T {
  const v = value.trim().toLowerCase();
  const found = valid.find((x) => x === v);
  if (found === undefined)
    throw new Error(`invalid otlp option ${key}: ${value}: valid values: ${valid.join(', ')}`);
  return found;
}

/** Options the sink reads from its map, before the environment fills the gaps. */
interface ExplicitOptions {
  endpoint?: string;
  headers?: Record<string, string>;
  compression?: 'none' | 'gzip';
  protocol?: OtlpProtocol;
  metricPrefix: string;
  naming: OtlpNaming;
  instanceEndpoint?: string;
}

/** Read the option map (retry options already removed); unknown keys are errors. */
function explicitOptions(options: Record<string, string>): ExplicitOptions {
  const out: ExplicitOptions = { metricPrefix: '', naming: 'sonde' };
  const single: Record<string, string> = {};
  for (const [key, value] of Object.entries(options)) {
    if (key === 'endpoint') {
      if (value.trim() !== '') out.endpoint = value.trim();
    } else if (key === 'headers') {
      out.headers = { ...out.headers, ...parseHeaderList(value) };
    } else if (key.startsWith('header.')) {
      single[key.slice('header.'.length)] = value;
    } else if (key === 'compression') {
      out.compression = value.trim() === '' ? 'none' : oneOf(key, value, ['none', 'gzip']);
    } else if (key === 'protocol') {
      out.protocol = oneOf(key, value, OTLP_PROTOCOLS);
    } else if (key === 'naming') {
      out.naming = oneOf(key, value, ['sonde', 'otel']);
    } else if (key === 'instance-endpoint') {
      if (value.trim() !== '') out.instanceEndpoint = value.trim();
    } else if (key === 'metric-prefix') {
      out.metricPrefix = value;
    } else {
      throw new Error(`invalid option: ${key}`);
    }
  }
  // `header.<name>` keys win over the same name in `headers`.
  if (Object.keys(single).length > 0) out.headers = { ...out.headers, ...single };
  return out;
}

function checkHeaders(headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name)) throw new Error(`invalid otlp header name: ${JSON.stringify(name)}`);
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      throw new Error(`invalid otlp header ${name}: the sink sets it`);
    }
    if (/[\r\n\0]/.test(value)) throw new Error(`invalid otlp header ${name}: value has a control character`);
  }
}

/**
 * Read and validate the option map (retry options already removed), then fill what it
 * leaves unset from the OTEL_EXPORTER_OTLP_* variables of `env`: an explicit option always
 * wins. Headers are one setting: the env headers apply only when no `headers` or
 * `header.<name>` option is given. A protocol other than http/protobuf in the environment is
 * refused unless the `protocol` option says http/protobuf.
 */
export function parseOtlpOptions(options: Record<string, string>, env: Env = {}): OtlpOptions {
  const o = explicitOptions(options);
  const fromEnv = otlpEnvSettings(env);
  let protocol: OtlpProtocol = o.protocol ?? 'http/protobuf';
  if (o.protocol === undefined && fromEnv.protocol) {
    const { value, from } = fromEnv.protocol;
    const found = OTLP_PROTOCOLS.find((p) => p === value.toLowerCase());
    if (found === undefined)
      throw new Error(`invalid ${from}: ${value}: the otlp sink sends ${OTLP_PROTOCOLS.join(' or ')}`);
    protocol = found;
  }
  const headers = o.headers ?? fromEnv.headers ?? {};
  checkHeaders(headers);
  const url =
    o.endpoint !== undefined
      ? metricsUrlOf(o.endpoint)
      : (fromEnv.url ?? metricsUrlOf(OTLP_DEFAULT_ENDPOINT));
  const logsUrl =
    o.endpoint !== undefined ? logsUrlOf(o.endpoint) : (fromEnv.logsUrl ?? logsUrlOf(OTLP_DEFAULT_ENDPOINT));
  return {
    url,
    logsUrl,
    protocol,
    headers,
    compression: o.compression ?? fromEnv.compression ?? 'none',
    metricPrefix: o.metricPrefix,
    naming: o.naming,
    ...(o.instanceEndpoint !== undefined ? { instanceEndpoint: o.instanceEndpoint } : {}),
    resource: envResourceAttributes(env),
  };
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
  /** Sent as `as_int` (the receiver's integer points) rather than `as_double`. */
  int: boolean;
  attributes: Record<string, string> | undefined;
}

/** One OTLP Metric being built: its name, unit and data shape. */
interface Series {
  name: string;
  unit: string;
  /** `gauge`, or a Sum with this temporality. */
  kind: Kind;
  monotonic: boolean;
  points: Point[];
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

/** How {@link encodeOtlpMetrics} names metrics. */
export interface EncodeOptions {
  /** Literal prefix of sonde-named metrics. */
  prefix?: string;
  naming?: OtlpNaming;
}

/** Series in first-seen order, keyed by name and shape. */
class SeriesSet {
  readonly list = new Map<string, Series>();
  points = 0;

  add(shape: Omit<Series, 'points'>, p: Point): void {
    const key = `${shape.name}\0${shape.kind}\0${String(shape.monotonic)}`;
    let s = this.list.get(key);
    if (!s) {
      s = { ...shape, points: [] };
      this.list.set(key, s);
    }
    s.points.push(p);
    this.points++;
  }
}

/** An integer the receiver would send as an int; anything else stays a double. */
const isInt = (v: number): boolean => Number.isSafeInteger(v);

/** Add one value: under its receiver name when naming is otel and a rule exists. */
function addValue(
  set: SeriesSet,
  domain: string,
  v: MetricValue,
  time: bigint,
  kind: Kind,
  o: EncodeOptions,
): void {
  const rule = o.naming === 'otel' ? otelRule(domain, v.name) : undefined;
  if (rule === undefined) {
    const monotonic = kind !== 'gauge';
    const shape = { name: `${o.prefix ?? ''}${domain}.${v.name}`, unit: '', kind, monotonic };
    set.add(shape, { time, value: v.value, int: false, attributes: v.group });
    return;
  }
  const spec = OTEL_METRICS[rule.metric] ?? { unit: '', monotonic: false };
  const value = otelValue(rule, v.value);
  set.add(
    {
      name: rule.metric,
      unit: spec.unit,
      kind: kind === 'delta' ? 'delta' : 'cumulative',
      monotonic: spec.monotonic,
    },
    { time, value, int: isInt(value), attributes: otelAttributes(rule, v.group) },
  );
}

/** The receiver's derived values (clean = data − dirty) of one domain, when both inputs are there. */
function addDerived(set: SeriesSet, domain: string, values: readonly MetricValue[], begin: Date): void {
  for (const d of OTEL_DERIVED) {
    if (d.domain !== domain) continue;
    const a = values.find(
      (v) => v.name === d.minuend && v.group === undefined && kindOf(v.type) !== undefined,
    );
    const b = values.find(
      (v) => v.name === d.subtrahend && v.group === undefined && kindOf(v.type) !== undefined,
    );
    const time = a === undefined ? undefined : pointTime(a, begin);
    if (a === undefined || b === undefined || time === undefined) continue;
    const spec = OTEL_METRICS[d.metric] ?? { unit: '', monotonic: false };
    const value = a.value - b.value;
    set.add(
      { name: d.metric, unit: spec.unit, kind: 'cumulative', monotonic: spec.monotonic },
      { time, value, int: isInt(value), attributes: { ...d.attributes } },
    );
  }
}

/** Collect the series of one `Metrics`: domains ascending, values in collector order. */
function collectSeries(m: Metrics, o: EncodeOptions): SeriesSet {
  const set = new SeriesSet();
  for (const domain of Object.keys(m.values).sort()) {
    const values = m.values[domain] ?? [];
    for (const v of values) {
      const kind = kindOf(v.type);
      if (kind === undefined) continue;
      const time = pointTime(v, m.begin);
      if (time === undefined) continue;
      addValue(set, domain, v, time, kind, o);
    }
    if (o.naming === 'otel') addDerived(set, domain, values, m.begin);
  }
  return set;
}

/** NumberDataPoint: 3 time_unix_nano (fixed64), 4 as_double or 6 as_int, 7 attributes. */
function writePoint(w: ProtoWriter, p: Point): void {
  w.message(1, (dp) => {
    dp.fixed64(3, p.time);
    if (p.int) dp.fixed64(6, BigInt(p.value));
    else dp.double(4, p.value);
    const attrs = p.attributes ?? {};
    for (const k of Object.keys(attrs).sort()) writeAttribute(dp, 7, k, attrs[k] ?? '');
  });
}

/** Metric{name 1, unit 3, gauge 5 | sum 7}. */
function writeMetric(w: ProtoWriter, s: Series): void {
  w.message(2, (metric) => {
    metric.string(1, s.name);
    if (s.unit !== '') metric.string(3, s.unit);
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
        if (s.monotonic) sum.bool(3, true);
      });
    }
  });
}

/**
 * Encode one `Metrics` as an OTLP `ExportMetricsServiceRequest`
 * (opentelemetry/proto/collector/metrics/v1). `resource` = resource attributes in order.
 */
export function encodeOtlpMetrics(
  m: Metrics,
  resource: Record<string, string>,
  o: EncodeOptions = {},
): OtlpPayload {
  const set = collectSeries(m, o);
  const req = new ProtoWriter();
  req.message(1, (rm) => {
    // ResourceMetrics.resource (1) → Resource.attributes (1).
    rm.message(1, (res) => {
      for (const [k, v] of Object.entries(resource)) writeAttribute(res, 1, k, v);
    });
    // ResourceMetrics.scope_metrics (2) → ScopeMetrics{scope (1), metrics (2)}.
    rm.message(2, (sm) => {
      sm.message(1, (scope) => scope.string(1, 'sonde'));
      for (const s of set.list.values()) writeMetric(sm, s);
    });
  });
  return { body: req.finish(), points: set.points };
}

/** A data point in OTLP/JSON. */
function jsonPoint(p: Point): Record<string, unknown> {
  const attrs = p.attributes ?? {};
  const sorted = Object.fromEntries(
    Object.keys(attrs)
      .sort()
      .map((k) => [k, attrs[k] ?? '']),
  );
  return {
    timeUnixNano: String(p.time),
    ...(p.int ? { asInt: String(BigInt(p.value)) } : { asDouble: p.value }),
    attributes: jsonAttributes(sorted),
  };
}

/** Encode one `Metrics` as an OTLP/JSON `ExportMetricsServiceRequest` (same content as the protobuf). */
export function encodeOtlpMetricsJson(
  m: Metrics,
  resource: Record<string, string>,
  o: EncodeOptions = {},
): OtlpPayload {
  const set = collectSeries(m, o);
  const metrics = [...set.list.values()].map((s) => {
    const dataPoints = s.points.map(jsonPoint);
    const data =
      s.kind === 'gauge'
        ? { gauge: { dataPoints } }
        : {
            sum: {
              dataPoints,
              aggregationTemporality: s.kind === 'cumulative' ? TEMPORALITY_CUMULATIVE : TEMPORALITY_DELTA,
              ...(s.monotonic ? { isMonotonic: true } : {}),
            },
          };
    return { name: s.name, ...(s.unit !== '' ? { unit: s.unit } : {}), ...data };
  });
  const json = {
    resourceMetrics: [
      {
        resource: { attributes: jsonAttributes(resource) },
        scopeMetrics: [{ scope: { name: 'sonde' }, metrics }],
      },
    ],
  };
  return { body: new TextEncoder().encode(JSON.stringify(json)), points: set.points };
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
  partialSuccess?: {
    rejectedDataPoints?: string | number;
    rejectedLogRecords?: string | number;
    errorMessage?: string;
  };
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
    const ps = answer.partialSuccess;
    // The logs answer has the same shape (field 1 counts rejected log records).
    rejected = BigInt(ps?.rejectedDataPoints ?? ps?.rejectedLogRecords ?? 0);
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
  /** The monitor's address (`host:port` or `unix://<path>`), for `mysql.instance.endpoint`. */
  monitorAddress?: string;
}

/** The resource attributes sonde sets for each monitor; the environment cannot override them. */
export const OTLP_MONITOR_KEYS: ReadonlySet<string> = new Set([
  'sonde.monitor.id',
  'mysql.instance.endpoint',
]);

/**
 * Resource attributes, in this order and precedence (later wins): `service.name=sonde`,
 * `sonde.monitor.id`, `mysql.instance.endpoint` (otel naming, when known); then the
 * environment's attributes (OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME), which cannot
 * replace the two per-monitor keys; then the monitor's tags, which win over everything.
 */
export function otlpResource(opts: OtlpOptions, deps: OtlpSinkDeps): Record<string, string> {
  const resource: Record<string, string> = { 'service.name': 'sonde', 'sonde.monitor.id': deps.monitorId };
  const endpoint = opts.instanceEndpoint ?? deps.monitorAddress;
  if (opts.naming === 'otel' && endpoint !== undefined && endpoint !== '') {
    resource['mysql.instance.endpoint'] = endpoint;
  }
  for (const [k, v] of Object.entries(opts.resource)) {
    if (!(OTLP_MONITOR_KEYS.has(k) && k in resource)) resource[k] = v;
  }
  return { ...resource, ...deps.tags };
}

/** What one POST carries, for messages: `metrics`/`data points` or `records`/`log records`. */
interface Cargo {
  url: string;
  body: Uint8Array;
  count: number;
  what: 'metrics' | 'records';
  unit: string;
}

/** The POST of one cargo, with the sink's status and events; rejects when a resend may succeed. */
function otlpPoster(
  deps: OtlpSinkDeps,
  headers: Record<string, string>,
  gzip: boolean,
): (c: Cargo, authorization: string | undefined, signal?: AbortSignal) => Promise<void> {
  const { status, events, monitorId } = deps;
  const fail = (err: string): void => {
    status.set(
      monitorKeyOf.sink(SINK_NAME),
      `error on last send at ${formatTimestampMs(new Date())}: ${err}`,
    );
  };

  return async (c: Cargo, authorization: string | undefined, signal?: AbortSignal): Promise<void> => {
    status.set(monitorKeyOf.sink(SINK_NAME), `sending ${c.what}`);
    const body = gzip ? gzipPayload(c.body) : c.body;
    let answer;
    try {
      answer = await sinkPoster(deps.httpClient)({ url: c.url, headers, authorization, body, signal });
    } catch (err) {
      fail(err instanceof Error ? err.message : String(err));
      throw err;
    }
    if (answer.status < 200 || answer.status > 299) {
      const text = `otlp receiver HTTP status ${answer.status} from ${c.url}: ${errorDetail(answer.body, answer.contentType)}`;
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
        `otlp receiver rejected ${partial.rejected} of ${c.count} ${c.unit}: ${partial.message}`,
      );
    }
    status.set(
      monitorKeyOf.sink(SINK_NAME),
      `last sent ${c.count} ${c.what} at ${formatTimestampMs(new Date())}`,
    );
  };
}

/** Build the unwrapped `otlp` sink (the registration wraps it in Retry). */
export function createOtlpSink(opts: OtlpOptions, deps: OtlpSinkDeps): Sink {
  const target: PostTarget = parseTarget(opts.url, 'otlp endpoint');
  const logsTarget: PostTarget = parseTarget(opts.logsUrl, 'otlp logs endpoint');
  const resource = otlpResource(opts, deps);
  const encode: EncodeOptions = { prefix: opts.metricPrefix, naming: opts.naming };
  const json = opts.protocol === 'http/json';
  const headers: Record<string, string> = {
    ...opts.headers,
    'Content-Type': json ? 'application/json' : 'application/x-protobuf',
  };
  if (opts.compression === 'gzip') headers['Content-Encoding'] = 'gzip';
  const post = otlpPoster(deps, headers, opts.compression === 'gzip');

  return {
    name: SINK_NAME,
    async send(metrics: Metrics, signal?: AbortSignal): Promise<void> {
      const payload = json
        ? encodeOtlpMetricsJson(metrics, resource, encode)
        : encodeOtlpMetrics(metrics, resource, encode);
      if (payload.points === 0) return; // nothing this sink can express: nothing to send
      const cargo: Cargo = {
        url: target.url,
        body: payload.body,
        count: payload.points,
        what: 'metrics',
        unit: 'data points',
      };
      await post(cargo, target.authorization, signal);
    },
    async sendRecords(records: Records, signal?: AbortSignal): Promise<void> {
      const payload = json ? encodeOtlpLogsJson(records, resource) : encodeOtlpLogs(records, resource);
      if (payload.records === 0) return;
      const cargo: Cargo = {
        url: logsTarget.url,
        body: payload.body,
        count: payload.records,
        what: 'records',
        unit: 'log records',
      };
      await post(cargo, logsTarget.authorization, signal);
    },
  };
}

/**
 * Registration of `otlp`: Retry → OTLP (retry options stripped before the inner sink).
 * `env` is where the OTEL_* variables are read (the process environment by default);
 * OTEL_EXPORTER_OTLP_(METRICS_)TIMEOUT becomes the Retry wrapper's `send-timeout` unless
 * that option is set.
 */
export function otlpSinkRegistration(env: Env = process.env): SinkRegistration {
  return {
    name: SINK_NAME,
    description: 'Sends metrics to an OpenTelemetry collector or backend (OTLP/HTTP, protobuf)',
    records: true,
    create: (ctx) => {
      const timeoutMs = otlpEnvSettings(env).timeoutMs;
      const options =
        timeoutMs !== undefined && ctx.options['send-timeout'] === undefined
          ? { ...ctx.options, 'send-timeout': `${timeoutMs}ms` }
          : ctx.options;
      return createRetried({ ...ctx, options }, (c) =>
        createOtlpSink(parseOtlpOptions(c.options, env), {
          ...c,
          ...(ctx.monitorAddress !== undefined ? { monitorAddress: ctx.monitorAddress } : {}),
        }),
      );
    },
  };
}
