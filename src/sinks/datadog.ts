/**
 * The `datadog` sink: the Datadog metrics API v2 (`POST /api/v2/series`) or,
 * with `dogstatsd-host`, DogStatsD datagrams over UDP. The registration builds
 * Delta → Retry → Datadog, so cumulative counters arrive here as deltas and this sink
 * never sees the retry options.
 *
 * Conversion (both modes), per value:
 *   name = [metric-prefix] + (`<domain>.<name>` | translator(domain, name))
 *   tags = monitor tags, meta pairs except `ts`, group pairs, each `k:v`, keys sorted
 *          within each of the three maps
 *   type = counters → count, gauge/bool → gauge, other types skipped
 *   time = meta `ts` (ms) ÷ 1000, else `begin`, in whole seconds (API mode only)
 *
 * DogStatsD is written here with node:dgram rather than the hot-shots client, because
 * hot-shots' wire output cannot match Blip's: it prints values with JavaScript's
 * `String()`, so small and huge gauges go out in exponent form (`autoinc.usage`
 * 1.0842021724855044e-19) where Blip sends plain decimal digits; it regroups tags by
 * key (moving a group tag next to a monitor tag of the same key, integer-like keys first);
 * and its buffer is flushed on a timer, not at the end of a send. The protocol itself is
 * one line per value, which needs no library.
 */
import dgram from 'node:dgram';
import https from 'node:https';
import http from 'node:http';
import { STATUS_CODES } from 'node:http';
import net from 'node:net';
import { deflateSync } from 'node:zlib';
import { errorMessage } from '../core/errors.js';
import type { Events } from '../core/events.js';
import type { Metrics, MetricValue } from '../core/metrics.js';
import { MetricType } from '../core/metrics.js';
import type { Sink, SinkContext, SinkRegistration } from '../core/sink.js';
import { monitorKeyOf } from '../core/status-keys.js';
import { splitHostPort } from '../util/net.js';
import { isYes } from '../util/text.js';
import type { StatusWriter } from '../core/status.js';
import { formatTimestampMs } from '../util/time.js';
import type { Records } from '../core/records.js';
import { datadogLogBodies, datadogLogsRetryable, datadogLogsUrl } from './datadog-logs.js';
import { withDelta } from './delta.js';
import { sinkPoster } from './http.js';
import { createRetried } from './retry.js';
import type { SinkTranslator } from './translators.js';
import { namingOption, readSecretFile, sinkMetricName, sinkTranslators } from './translators.js';
import { gzipPayload } from '../util/gzip.js';

/**
 * The series intake's limits: a request body (compressed, when it is) of at most 512000
 * bytes, and a compressed body that inflates to less than 5242880 bytes. Batches are cut to
 * fit before they are sent, and to at most {@link DATADOG_MAX_POINTS} points, the Datadog
 * Agent's own cap per series payload. The payload limit also sizes batches after an HTTP 413.
 */
export const DATADOG_MAX_PAYLOAD = 512000;
/** A compressed body must inflate to less than this many bytes. */
export const DATADOG_MAX_UNCOMPRESSED = 5242880;
/** Points per request at most. */
export const DATADOG_MAX_POINTS = 10000;
/** DogStatsD datagram size limit for packed lines (datadog-go's UDP default). */
export const DOGSTATSD_MAX_DATAGRAM = 1432;

/** Parsed options. The keys never leave this object (and are not enumerable on the sink). */
export interface DatadogConfig {
  mode: 'api' | 'dogstatsd';
  apiKey: string;
  appKey: string;
  compress: boolean;
  prefix: string;
  translator?: SinkTranslator;
  /** DogStatsD `host:port` (`:8125` added when no port was given). */
  dogstatsdHost: string;
}

/**
 * Validate and read the datadog options (retry keys already removed). Throws Blip's
 * messages: `invalid option: <key>`, the metric-prefix and mode errors, unreadable key
 * file, unregistered translator.
 */
export function parseDatadogOptions(
  options: Record<string, string>,
  translators: ReadonlyMap<string, SinkTranslator> = sinkTranslators,
): DatadogConfig {
  const cfg: DatadogConfig = {
    mode: 'api',
    apiKey: '',
    appKey: '',
    compress: true,
    prefix: '',
    dogstatsdHost: '',
  };
  for (const [k, v] of Object.entries(options)) {
    if (namingOption('datadog', cfg, k, v, translators)) continue;
    switch (k) {
      case 'api-key-auth':
        cfg.apiKey = v;
        break;
      case 'api-key-auth-file':
        cfg.apiKey = readSecretFile(v);
        break;
      case 'app-key-auth':
        cfg.appKey = v;
        break;
      case 'app-key-auth-file':
        cfg.appKey = readSecretFile(v);
        break;
      case 'api-compress':
        cfg.compress = isYes(v);
        break;
      case 'dogstatsd-host':
        cfg.dogstatsdHost = v;
        break;
      default:
        throw new Error(`invalid option: ${k}`);
    }
  }
  if (cfg.dogstatsdHost !== '') {
    if (cfg.apiKey !== '' && cfg.appKey !== '') {
      throw new Error(
        'datadog sink requires either dogstatsd host or (api-key-auth and app-key-auth), not both at the same time',
      );
    }
    cfg.mode = 'dogstatsd';
    const { host, port } = splitHostPort(cfg.dogstatsdHost);
    if (port === undefined) cfg.dogstatsdHost = `${host.includes(':') ? `[${host}]` : host}:8125`;
    return cfg;
  }
  if (cfg.apiKey === '') throw new Error('datadog sink requires either api-key-auth or api-key-auth-file');
  if (cfg.appKey === '') throw new Error('datadog sink requires either app-key-auth or app-key-auth-file');
  return cfg;
}

/** One converted value. */
export interface DatadogPoint {
  metric: string;
  kind: 'count' | 'gauge';
  value: number;
  /** Unix seconds. */
  timestamp: number;
  tags: string[];
}

function pairs(m: Record<string, string> | undefined, skipTs: boolean): string[] {
  if (!m) return [];
  return Object.keys(m)
    .sort()
    .filter((k) => !(skipTs && k === 'ts'))
    .map((k) => `${k}:${m[k] ?? ''}`);
}

/**
 * Convert one collection. Domains in ascending name order, values in collector order.
 * Skipped: types other than counter/gauge/bool, an unparsable meta `ts`, and NaN/±Inf
 * (neither JSON nor DogStatsD can carry them; Blip's JSON encoder would fail the request).
 */
export function datadogPoints(
  m: Metrics,
  cfg: Pick<DatadogConfig, 'prefix' | 'translator'>,
  monitorTags: Record<string, string>,
): DatadogPoint[] {
  const base = pairs(monitorTags, false);
  const begin = Math.floor(m.begin.getTime() / 1000);
  const out: DatadogPoint[] = [];
  for (const domain of Object.keys(m.values).sort()) {
    for (const v of m.values[domain] ?? []) {
      const kind = kindOf(v);
      if (!kind || !Number.isFinite(v.value)) continue;
      let timestamp = begin;
      const ts = v.meta?.['ts'];
      if (ts !== undefined) {
        if (!/^[+-]?\d+$/.test(ts)) continue; // Blip: debug line, value skipped
        timestamp = Math.trunc(Number(ts) / 1000);
      }
      out.push({
        metric: sinkMetricName(domain, v.name, cfg.translator, cfg.prefix),
        kind,
        value: v.value,
        timestamp,
        tags: [...base, ...pairs(v.meta, true), ...pairs(v.group, false)],
      });
    }
  }
  return out;
}

function kindOf(v: MetricValue): 'count' | 'gauge' | undefined {
  switch (v.type) {
    case MetricType.CumulativeCounter:
    case MetricType.DeltaCounter:
      return 'count';
    case MetricType.Gauge:
    case MetricType.Bool:
      return 'gauge';
    default:
      return undefined;
  }
}

// ---- API mode ---------------------------------------------------------------------------

/** One series of the v2 payload, keys in the client's order. */
interface Series {
  metric: string;
  type: number;
  points: Array<{ timestamp: number; value: number }>;
  tags?: string[];
  resources?: Array<{ name: string; type: string }>;
}

/** One request's worth of series, and its gzipped body when sizing it compressed it already. */
export interface PayloadPart<S> {
  series: S[];
  /** `JSON.stringify({ series })` gzipped, when sizing had to compress it to measure it. */
  gzip?: Buffer;
}

/**
 * The batch cut into requests the intake takes: each at most {@link DATADOG_MAX_POINTS}
 * points and, as JSON, at most {@link DATADOG_MAX_PAYLOAD} bytes (uncompressed sends) or
 * less than {@link DATADOG_MAX_UNCOMPRESSED} bytes whose gzip is at most
 * {@link DATADOG_MAX_PAYLOAD} bytes (compressed sends; a part that compresses too little
 * is cut further until it fits). A single series over the limit goes alone.
 */
export function payloadParts<S extends { points: readonly unknown[] }>(
  series: readonly S[],
  compress: boolean,
): PayloadPart<S>[] {
  const budget = compress ? DATADOG_MAX_UNCOMPRESSED - 1 : DATADOG_MAX_PAYLOAD;
  const parts: S[][] = [];
  let cur: S[] = [];
  let bytes = Buffer.byteLength('{"series":[]}');
  let points = 0;
  for (const s of series) {
    const n = Buffer.byteLength(JSON.stringify(s));
    if (cur.length > 0 && (bytes + 1 + n > budget || points + s.points.length > DATADOG_MAX_POINTS)) {
      parts.push(cur);
      cur = [];
      bytes = Buffer.byteLength('{"series":[]}');
      points = 0;
    }
    bytes += (cur.length > 0 ? 1 : 0) + n;
    points += s.points.length;
    cur.push(s);
  }
  if (cur.length > 0) parts.push(cur);
  return compress ? parts.flatMap((p) => fitCompressed(p)) : parts.map((p) => ({ series: p }));
}

/**
 * Cut `part` until each piece's gzipped JSON is within the payload limit: into as many
 * equal pieces as its compressed size says (with a 10 % margin), then again if one is still
 * over. A piece that had to be compressed to be measured keeps its gzipped body, so that the
 * send does not compress it again.
 */
function fitCompressed<S>(part: S[]): PayloadPart<S>[] {
  const json = JSON.stringify({ series: part });
  // gzip never grows JSON text much: a body this small fits without compressing it.
  if (Buffer.byteLength(json) <= DATADOG_MAX_PAYLOAD - 1024 || part.length === 1) return [{ series: part }];
  const gzip = gzipPayload(json);
  if (gzip.length <= DATADOG_MAX_PAYLOAD) return [{ series: part, gzip }];
  const pieces = Math.min(part.length, Math.ceil(gzip.length / (DATADOG_MAX_PAYLOAD * 0.9)));
  const size = Math.ceil(part.length / pieces);
  const out: PayloadPart<S>[] = [];
  for (let i = 0; i < part.length; i += size) out.push(...fitCompressed(part.slice(i, i + size)));
  return out;
}

/** Intake types of the v2 API. */
const INTAKE_COUNT = 1;
const INTAKE_GAUGE = 3;

/** The v2 series for `points`; `tags`/`resources` omitted when empty. */
export function datadogSeries(
  points: readonly DatadogPoint[],
  monitorTags: Record<string, string>,
): Series[] {
  const host = monitorTags['host'];
  return points.map((p) => {
    const s: Series = {
      metric: p.metric,
      type: p.kind === 'count' ? INTAKE_COUNT : INTAKE_GAUGE,
      points: [{ timestamp: p.timestamp, value: p.value }],
    };
    if (p.tags.length > 0) s.tags = p.tags;
    if (host !== undefined) s.resources = [{ name: host, type: 'host' }];
    return s;
  });
}

/** `https://api.<site>/api/v2/series`, site from `DD_SITE` (default `datadoghq.com`). */
export function datadogSeriesUrl(env: NodeJS.ProcessEnv = process.env): string {
  const site = env['DD_SITE'] || 'datadoghq.com';
  return `https://api.${site}/api/v2/series`;
}

// ---- DogStatsD mode ---------------------------------------------------------------------

/**
 * A number in plain decimal notation with the shortest digits that round-trip (Go's
 * `FormatFloat(v, 'f', -1, 64)`): `1.0842021724855044e-19` → `0.00000000000000000010842021724855044`.
 */
export function plainDecimal(v: number): string {
  const s = String(v);
  const e = s.indexOf('e');
  if (e < 0) return s;
  const neg = s.startsWith('-');
  const mant = s.slice(neg ? 1 : 0, e);
  const exp = Number(s.slice(e + 1));
  const dot = mant.indexOf('.');
  const digits = mant.replace('.', '');
  const point = (dot < 0 ? mant.length : dot) + exp; // position of the decimal point in digits
  let out: string;
  if (point <= 0) out = `0.${'0'.repeat(-point)}${digits}`;
  else if (point >= digits.length) out = digits + '0'.repeat(point - digits.length);
  else out = `${digits.slice(0, point)}.${digits.slice(point)}`;
  return neg ? `-${out}` : out;
}

/** Go's `int64(v)`: truncated toward zero, clamped to the int64 range, as plain digits. */
function int64Text(v: number): string {
  const t = BigInt(Math.trunc(v));
  const max = (1n << 63n) - 1n;
  const min = -(1n << 63n);
  return (t > max ? max : t < min ? min : t).toString();
}

/**
 * One DogStatsD line per point: `<name>:<value>|c|#<tags>` (value truncated to an integer)
 * or `<name>:<value>|g|#<tags>`; `|#…` omitted without tags. `globalTags` (DD_ENV etc.)
 * come first, as datadog-go puts its global tags first.
 */
export function dogstatsdLines(
  points: readonly DatadogPoint[],
  globalTags: readonly string[] = [],
): string[] {
  return points.map((p) => {
    const value = p.kind === 'count' ? `${int64Text(p.value)}|c` : `${plainDecimal(p.value)}|g`;
    const tags = [...globalTags, ...p.tags];
    return `${p.metric}:${value}${tags.length > 0 ? `|#${tags.join(',')}` : ''}`;
  });
}

/** Newline-pack lines into datagrams of at most `max` bytes (a longer line goes alone). */
export function packDatagrams(lines: readonly string[], max = DOGSTATSD_MAX_DATAGRAM): Buffer[] {
  const out: Buffer[] = [];
  let cur: string[] = [];
  let size = 0;
  for (const line of lines) {
    const n = Buffer.byteLength(line);
    if (cur.length > 0 && size + 1 + n > max) {
      out.push(Buffer.from(cur.join('\n')));
      cur = [];
      size = 0;
    }
    size += (cur.length > 0 ? 1 : 0) + n;
    cur.push(line);
  }
  if (cur.length > 0) out.push(Buffer.from(cur.join('\n')));
  return out;
}

/** datadog-go's global tags from the environment: `env`, `service`, `version`. */
export function dogstatsdEnvTags(env: NodeJS.ProcessEnv = process.env): string[] {
  const out: string[] = [];
  for (const [name, tag] of [
    ['DD_ENV', 'env'],
    ['DD_SERVICE', 'service'],
    ['DD_VERSION', 'version'],
  ] as const) {
    const v = env[name];
    if (v) out.push(`${tag}:${v}`);
  }
  return out;
}

// ---- the sink ---------------------------------------------------------------------------

/** Test seams and environment of the datadog sink. */
export interface DatadogDeps {
  /** API endpoint; default {@link datadogSeriesUrl} of `env`. */
  apiUrl?: string;
  /** Logs intake endpoint (records); default {@link datadogLogsUrl} of `env`. */
  logsUrl?: string;
  /** Environment for `DD_SITE` and DogStatsD's `DD_ENV`/`DD_SERVICE`/`DD_VERSION`. */
  env?: NodeJS.ProcessEnv;
  translators?: ReadonlyMap<string, SinkTranslator>;
}

/** The unwrapped datadog sink (the registration wraps it in Retry and Delta). */
class DatadogSink implements Sink {
  readonly name = 'datadog';
  readonly #cfg: DatadogConfig;
  readonly #ctx: SinkContext;
  readonly #url: string;
  readonly #logsUrl: string;
  readonly #globalTags: string[];
  readonly #agent: http.Agent;
  /** Series per request; lowered after HTTP 413 and kept for later sends. */
  #maxPerRequest = Number.POSITIVE_INFINITY;
  #udp: dgram.Socket | undefined;

  constructor(ctx: SinkContext, cfg: DatadogConfig, deps: DatadogDeps) {
    this.#ctx = ctx;
    this.#cfg = cfg;
    const env = deps.env ?? process.env;
    this.#url = deps.apiUrl ?? datadogSeriesUrl(env);
    this.#logsUrl = deps.logsUrl ?? datadogLogsUrl(env);
    this.#globalTags = cfg.mode === 'dogstatsd' ? dogstatsdEnvTags(env) : [];
    this.#agent = this.#url.startsWith('https:')
      ? new https.Agent({ keepAlive: true })
      : new http.Agent({ keepAlive: true });
  }

  /** Series per request currently in effect (Infinity until a 413). */
  get maxPerRequest(): number {
    return this.#maxPerRequest;
  }

  async send(m: Metrics, signal?: AbortSignal): Promise<void> {
    const total = Object.values(m.values).reduce((n, l) => n + l.length, 0);
    if (total === 0) return; // nothing collected (or only first counter samples): nothing to do
    const status: StatusWriter = this.#ctx.status;
    status.set(monitorKeyOf.sink(this.name), 'sending metrics');
    const points = datadogPoints(m, this.#cfg, this.#ctx.tags);
    try {
      if (points.length === 0) {
        this.#ctx.events.error(
          'sink-invalid-metrics',
          this.#ctx.monitorId,
          `zero data points created after processing Blip metrics: ${total} values in ${Object.keys(m.values).length} domains`,
        );
        return;
      }
      if (this.#cfg.mode === 'dogstatsd') await this.#sendDogstatsd(points);
      else await this.#sendApi(points, signal);
    } finally {
      status.set(
        monitorKeyOf.sink(this.name),
        `last sent ${points.length} metrics at ${formatTimestampMs(new Date())}`,
      );
    }
  }

  /**
   * Records go to the logs intake (see datadog-logs.ts). DogStatsD mode has no API key and
   * no logs path: the records are not sent, and the sink's status says so.
   */
  async sendRecords(records: Records, signal?: AbortSignal): Promise<void> {
    const key = monitorKeyOf.sink(this.name);
    if (this.#cfg.mode === 'dogstatsd') {
      this.#ctx.status.set(key, 'records not sent: dogstatsd mode has no logs intake (use api-key-auth)');
      return;
    }
    const bodies = datadogLogBodies(records, this.#ctx.tags);
    for (const json of bodies) {
      const res = await sinkPoster(this.#ctx.httpClient)({
        url: this.#logsUrl,
        headers: {
          'Content-Type': 'application/json',
          'DD-API-KEY': this.#cfg.apiKey,
          ...(this.#cfg.compress ? { 'Content-Encoding': 'gzip' } : {}),
        },
        body: this.#body(json),
        ...(signal ? { signal } : {}),
        ...(this.#ctx.httpProxy ? { proxy: this.#ctx.httpProxy } : { agent: this.#agent }),
      });
      if (res.status >= 200 && res.status <= 299) continue;
      const text = `logs intake: ${clientError(res.status, res.body.toString('utf8'))}`;
      if (datadogLogsRetryable(res.status)) throw new Error(text);
      this.#ctx.events.error('sink-send-error', this.#ctx.monitorId, `datadog :${text} (not retried)`);
    }
    if (bodies.length > 0) this.#ctx.status.set(key, `last sent records at ${formatTimestampMs(new Date())}`);
  }

  async close(): Promise<void> {
    this.#agent.destroy();
    const udp = this.#udp;
    this.#udp = undefined;
    if (udp) await new Promise<void>((resolve) => udp.close(() => resolve()));
  }

  // DogStatsD: errors are only debug-logged; the send always succeeds (Blip behaviour).
  async #sendDogstatsd(points: DatadogPoint[]): Promise<void> {
    const { host, port } = splitHostPort(this.#cfg.dogstatsdHost);
    const portNumber = Number(port);
    if (!this.#udp) {
      this.#udp = dgram.createSocket(net.isIPv6(host) ? 'udp6' : 'udp4');
      this.#udp.unref();
      this.#udp.on('error', (err) => this.#ctx.events.debug(`datadog dogstatsd: ${err.message}`));
    }
    const udp = this.#udp;
    for (const d of packDatagrams(dogstatsdLines(points, this.#globalTags))) {
      await new Promise<void>((resolve) => {
        udp.send(d, portNumber, host, (err) => {
          if (err) this.#ctx.events.debug(`datadog dogstatsd: error sending data points: ${err.message}`);
          resolve();
        });
      });
    }
  }

  /** The batch in requests the intake takes (sized before sending; see payloadParts). */
  async #sendApi(points: DatadogPoint[], signal: AbortSignal | undefined): Promise<void> {
    const errors: string[] = [];
    for (const part of payloadParts(datadogSeries(points, this.#ctx.tags), this.#cfg.compress))
      await this.#sendPart(part, signal, errors);
    if (errors.length > 0) throw new Error(errors.join('\n'));
  }

  /** A request's body: the JSON, gzipped when the sink compresses. */
  #body(json: string): string | Buffer {
    return this.#cfg.compress ? gzipPayload(json) : json;
  }

  /** One sized part; after an HTTP 413 it is resent in smaller chunks (kept for later sends). */
  async #sendPart(
    part: PayloadPart<Series>,
    signal: AbortSignal | undefined,
    errors: string[],
  ): Promise<void> {
    const { series } = part;
    let max = this.#maxPerRequest;
    let start = 0;
    while (start < series.length) {
      const end = Math.min(series.length, start + max);
      const chunk = series.slice(start, end);
      // The whole part, compressed while it was sized, goes as it is; any other chunk is made here.
      const kept = start === 0 && end === series.length ? part.gzip : undefined;
      const body = kept ?? this.#body(JSON.stringify({ series: chunk }));
      let res;
      try {
        res = await sinkPoster(this.#ctx.httpClient)({
          url: this.#url,
          headers: {
            'Content-Type': 'application/json',
            Accept: 'application/json',
            'DD-API-KEY': this.#cfg.apiKey,
            'DD-APPLICATION-KEY': this.#cfg.appKey,
            ...(this.#cfg.compress ? { 'Content-Encoding': 'gzip' } : {}),
          },
          body,
          ...(signal ? { signal } : {}),
          ...(this.#ctx.httpProxy ? { proxy: this.#ctx.httpProxy } : { agent: this.#agent }),
        });
      } catch (err) {
        errors.push(`network error (nil response): ${errorMessage(err)}`);
        start = end;
        continue;
      }
      const bodyText = res.body.toString('utf8');
      if (res.status === 413) {
        if (max === 1) {
          errors.push(clientError(res.status, bodyText));
          start = end;
          continue;
        }
        max = nextMaxPerRequest(chunk, max, this.#cfg.compress);
        continue; // resend from `start` in smaller chunks
      }
      if (res.status < 200 || res.status > 299) {
        errors.push(clientError(res.status, bodyText));
      } else {
        reportServerErrors(bodyText, this.#ctx.events, this.#ctx.monitorId);
      }
      start = end;
    }
    if (max < this.#maxPerRequest) this.#maxPerRequest = max;
  }
}

/** The Go client's error text for a non-2xx answer. */
function clientError(status: number, body: string): string {
  return `${status} ${STATUS_CODES[status] ?? ''} (HTTP status ${status}: ${body})`;
}

/** A 2xx answer can still carry `errors`: reported as `sink-server-error`, not retried. */
function reportServerErrors(body: string, events: Events, monitorId: string): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return;
  }
  const errs = (parsed as { errors?: unknown } | null)?.errors;
  if (!Array.isArray(errs) || errs.length === 0) return;
  events.error(
    'sink-server-error',
    monitorId,
    `Datadog returned success and ${errs.length} errors: ${errs.map((e) => String(e)).join(', ')}`,
  );
}

/**
 * The batch size after HTTP 413: bytes per series estimated from this
 * chunk's JSON (zlib-compressed size when compressing, as Blip estimates), then as many as
 * fit in 512000 − 300 bytes; when that is no smaller than the current size (at most the
 * refused chunk's length), 90 % of it; never below 1.
 */
export function nextMaxPerRequest(chunk: readonly object[], current: number, compress: boolean): number {
  // The refused chunk bounds the current size. Blip compares with its configured maximum
  // (MaxInt32 until the first 413), so when the estimate says the chunk should fit it
  // resends the same chunk while shrinking that maximum by 10 % per refusal.
  current = Math.min(current, chunk.length);
  const json = JSON.stringify(chunk);
  const size = compress ? deflateSync(json).length : Buffer.byteLength(json);
  const perSeries = Math.max(1, Math.floor(size / chunk.length));
  let next = Math.floor((DATADOG_MAX_PAYLOAD - 300) / perSeries);
  if (next >= current) next = Math.floor(current * 0.9);
  return Math.max(1, next);
}

/** Build the unwrapped sink from already-stripped options. */
export function createDatadogSink(
  ctx: SinkContext,
  deps: DatadogDeps = {},
): Sink & { readonly maxPerRequest: number } {
  const cfg = parseDatadogOptions(ctx.options, deps.translators ?? ctx.translators);
  return new DatadogSink(ctx, cfg, deps);
}

/** Registration of `datadog`: Delta → Retry → Datadog, named `datadog` (Blip reports `delta`). */
export function datadogSinkRegistration(deps: DatadogDeps = {}): SinkRegistration {
  return {
    name: 'datadog',
    description: 'Sends metrics to Datadog (API or DogStatsD)',
    records: true,
    create: (ctx) => withDelta(createRetried(ctx, (c) => createDatadogSink(c, deps))),
  };
}
