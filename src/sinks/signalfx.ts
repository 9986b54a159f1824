/**
 * The `signalfx` sink: datapoints as protobuf (`DataPointUploadMessage`,
 * proto2, package `com.signalfx.metrics.model`) posted to
 * `https://ingest.signalfx.com/v2/datapoint`. The registration builds Retry → SignalFx.
 *
 * Per value:
 *   metric     = [metric-prefix] + (`<domain>.<name>` | translator(domain, name))
 *   dimensions = monitor tags, then meta except `ts`, then group (later keys win); on the
 *                wire pairs with an empty key or value are dropped and key characters
 *                outside [A-Za-z0-9_-] become `_`; sorted by key
 *   type/value = cumulative counter → CUMULATIVE_COUNTER double; delta counter → COUNTER
 *                int64 (truncated); gauge, bool → GAUGE double; other types skipped
 *   timestamp  = meta `ts` (ms), else `begin`, as Unix milliseconds
 *
 * The body is gzipped (`Content-Encoding: gzip`) only above 1500 bytes; success needs a
 * 2xx answer whose body is the JSON string "OK".
 */
import http from 'node:http';
import https from 'node:https';
import { monitorKeyOf } from '../core/status-keys.js';
import { errorMessage } from '../core/errors.js';
import type { Metrics } from '../core/metrics.js';
import { MetricType } from '../core/metrics.js';
import type { Sink, SinkContext, SinkRegistration } from '../core/sink.js';
import { formatTimestampMs } from '../util/time.js';
import { sinkPoster } from './http.js';
import { ProtoWriter } from './protobuf.js';
import { createRetried } from './retry.js';
import type { SinkTranslator } from './translators.js';
import { namingOption, readSecretFile, sinkMetricName, sinkTranslators } from './translators.js';
import { gzipPayload } from '../util/gzip.js';

/** The ingest endpoint (fixed in Blip). */
export const SIGNALFX_URL = 'https://ingest.signalfx.com/v2/datapoint';
/** Bodies larger than this are gzipped. */
export const SIGNALFX_GZIP_ABOVE = 1500;
/** The golib client's agent string with sonde in place of the Go version. */
export const SIGNALFX_USER_AGENT = 'golib-sfxclient/1.0 (sonde)';

/** SignalFx MetricType enum values. */
export const SfxMetricType = { Gauge: 0, Counter: 1, Enum: 2, CumulativeCounter: 3 } as const;
export type SfxMetricType = (typeof SfxMetricType)[keyof typeof SfxMetricType];

/** Parsed options; the token stays in here. */
export interface SignalfxConfig {
  token: string;
  prefix: string;
  translator?: SinkTranslator;
}

/** Validate the signalfx options (retry keys already removed). */
export function parseSignalfxOptions(
  options: Record<string, string>,
  translators: ReadonlyMap<string, SinkTranslator> = sinkTranslators,
): SignalfxConfig {
  const cfg: SignalfxConfig = { token: '', prefix: '' };
  for (const [k, v] of Object.entries(options)) {
    if (namingOption('signalfx', cfg, k, v, translators)) continue;
    switch (k) {
      case 'auth-token':
        cfg.token = v;
        break;
      case 'auth-token-file':
        cfg.token = readSecretFile(v);
        break;
      default:
        throw new Error(`invalid option: ${k}`);
    }
  }
  if (cfg.token === '') throw new Error('signalfx sink requires either auth-token or auth-token-file');
  return cfg;
}

/** One datapoint; exactly one of `double`/`int` is set. */
export interface SfxDatapoint {
  metric: string;
  /** Unix milliseconds. */
  timestamp: number;
  type: SfxMetricType;
  double?: number;
  int?: bigint;
  dimensions: Array<[string, string]>;
}

/** Go's `int64(v)` for finite v: truncated toward zero, clamped to the int64 range. */
function toInt64(v: number): bigint {
  const t = BigInt(Math.trunc(v));
  const max = (1n << 63n) - 1n;
  const min = -(1n << 63n);
  return t > max ? max : t < min ? min : t;
}

/** Wire dimensions: merged map, empty keys/values dropped, keys sanitised, sorted by key. */
function dimensions(...maps: Array<Record<string, string> | undefined>): Array<[string, string]> {
  const merged = new Map<string, string>();
  for (const m of maps) {
    if (!m) continue;
    for (const [k, v] of Object.entries(m)) merged.set(k, v);
  }
  const out: Array<[string, string]> = [];
  for (const [k, v] of merged) {
    if (k === '' || v === '') continue;
    out.push([k.replace(/[^A-Za-z0-9_-]/g, '_'), v]);
  }
  return out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/**
 * Convert one collection (domains in ascending order, values in collector order). Values
 * with an unparsable meta `ts` are skipped, as are delta counters that are NaN/±Inf (no
 * int64 for them).
 */
export function signalfxDatapoints(
  m: Metrics,
  cfg: Pick<SignalfxConfig, 'prefix' | 'translator'>,
  monitorTags: Record<string, string>,
): SfxDatapoint[] {
  const begin = m.begin.getTime();
  const out: SfxDatapoint[] = [];
  for (const domain of Object.keys(m.values).sort()) {
    for (const v of m.values[domain] ?? []) {
      let dp: Pick<SfxDatapoint, 'type' | 'double' | 'int'>;
      switch (v.type) {
        case MetricType.CumulativeCounter:
          dp = { type: SfxMetricType.CumulativeCounter, double: v.value };
          break;
        case MetricType.DeltaCounter:
          if (!Number.isFinite(v.value)) continue;
          dp = { type: SfxMetricType.Counter, int: toInt64(v.value) };
          break;
        case MetricType.Gauge:
        case MetricType.Bool:
          dp = { type: SfxMetricType.Gauge, double: v.value };
          break;
        default:
          continue;
      }
      let timestamp = begin;
      const ts = v.meta?.['ts'];
      if (ts !== undefined) {
        if (!/^[+-]?\d+$/.test(ts)) continue;
        timestamp = Number(ts);
      }
      const meta = v.meta ? { ...v.meta } : undefined;
      if (meta) delete meta['ts'];
      out.push({
        metric: sinkMetricName(domain, v.name, cfg.translator, cfg.prefix),
        timestamp,
        ...dp,
        dimensions: dimensions(monitorTags, meta, v.group),
      });
    }
  }
  return out;
}

/** Encode a `DataPointUploadMessage` (fields in number order; `source` unset). */
export function encodeDatapoints(dps: readonly SfxDatapoint[]): Uint8Array {
  const w = new ProtoWriter();
  for (const dp of dps) {
    w.message(1, (d) => {
      d.string(2, dp.metric);
      d.varint(3, BigInt(dp.timestamp));
      d.message(4, (datum) => {
        if (dp.int !== undefined) datum.varint(3, dp.int);
        else datum.double(2, dp.double ?? 0);
      });
      d.varint(5, dp.type);
      for (const [k, v] of dp.dimensions) {
        d.message(6, (dim) => {
          dim.string(1, k);
          dim.string(2, v);
        });
      }
    });
  }
  return w.finish();
}

/** Test seams of the signalfx sink. */
export interface SignalfxDeps {
  /** Ingest URL; default {@link SIGNALFX_URL}. */
  url?: string;
  translators?: ReadonlyMap<string, SinkTranslator>;
}

class SignalfxSink implements Sink {
  readonly name = 'signalfx';
  readonly #cfg: SignalfxConfig;
  readonly #ctx: SinkContext;
  readonly #url: string;
  #agent: http.Agent;

  constructor(ctx: SinkContext, cfg: SignalfxConfig, deps: SignalfxDeps) {
    this.#ctx = ctx;
    this.#cfg = cfg;
    this.#url = deps.url ?? SIGNALFX_URL;
    this.#agent = this.#newAgent();
  }

  #newAgent(): http.Agent {
    return this.#url.startsWith('https:')
      ? new https.Agent({ keepAlive: true })
      : new http.Agent({ keepAlive: true });
  }

  async send(m: Metrics, signal?: AbortSignal): Promise<void> {
    const domains = Object.keys(m.values).length;
    // Blip fails an empty collection ("no Blip metrics were collected") and Retry then
    // resends it until send-timeout; sonde treats it as nothing to send (sonde's choice).
    if (Object.values(m.values).every((l) => l.length === 0)) return;
    const status = this.#ctx.status;
    status.set(monitorKeyOf.sink(this.name), 'sending metrics');
    const dps = signalfxDatapoints(m, this.#cfg, this.#ctx.tags);
    try {
      if (dps.length === 0)
        throw new Error(`no SignalFx data points after processing ${domains} Blip metrics`);
      await this.#post(encodeDatapoints(dps), signal);
    } finally {
      status.set(
        monitorKeyOf.sink(this.name),
        `last sent ${dps.length} metrics at ${formatTimestampMs(new Date())}`,
      );
    }
  }

  async #post(pb: Uint8Array, signal: AbortSignal | undefined): Promise<void> {
    const gzip = pb.length > SIGNALFX_GZIP_ABOVE;
    const res = await sinkPoster(this.#ctx.httpClient)({
      url: this.#url,
      headers: {
        'Content-Type': 'application/x-protobuf',
        'X-Sf-Token': this.#cfg.token,
        'User-Agent': SIGNALFX_USER_AGENT,
        Connection: 'keep-alive',
        ...(gzip ? { 'Content-Encoding': 'gzip' } : {}),
      },
      body: gzip ? gzipPayload(pb) : pb,
      ...(signal ? { signal } : {}),
      ...(this.#ctx.httpProxy ? { proxy: this.#ctx.httpProxy } : { agent: this.#agent }),
    }).catch((err: unknown) => {
      this.#resetConnections();
      throw err;
    });
    const body = res.body.toString('utf8');
    let problem: string | undefined;
    if (res.status < 200 || res.status > 299) {
      problem = `invalid status code ${res.status}: ${body}`;
    } else {
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch (err) {
        problem = `cannot unmarshal response body ${body}: ${errorMessage(err)}`;
      }
      if (problem === undefined && parsed !== 'OK') problem = `invalid response body ${body}`;
    }
    if (problem !== undefined) {
      this.#resetConnections();
      throw new Error(problem);
    }
  }

  /** Blip closes idle connections after an error: start over with a fresh agent. */
  #resetConnections(): void {
    this.#agent.destroy();
    this.#agent = this.#newAgent();
  }

  async close(): Promise<void> {
    this.#agent.destroy();
  }
}

/** Build the unwrapped sink from already-stripped options. */
export function createSignalfxSink(ctx: SinkContext, deps: SignalfxDeps = {}): Sink {
  return new SignalfxSink(ctx, parseSignalfxOptions(ctx.options, deps.translators ?? ctx.translators), deps);
}

/** Registration of `signalfx`: Retry → SignalFx. */
export function signalfxSinkRegistration(deps: SignalfxDeps = {}): SinkRegistration {
  return {
    name: 'signalfx',
    description: 'Sends metrics to SignalFx',
    create: (ctx) => createRetried(ctx, (c) => createSignalfxSink(c, deps)),
  };
}
