/**
 * The `chronosphere` sink (experimental in Blip): an OpenMetrics protobuf
 * `MetricSet`, Snappy block-compressed, POSTed to a Chronosphere collector.
 *
 * | sonde | MetricSet |
 * |---|---|
 * | status.global, var.global, innodb | one MetricFamily per value, named `mysql_<short>_<metric>` (short = `status`, `var`, `innodb`), sanitized and lowercased — Blip's names, not the exporter's |
 * | sonde's own domains (repl, repl.lag, size.*, …) | one MetricFamily per value, with the Prometheus name, unit and labels of docs/prometheus-names.md (sonde addition: Blip skips them) |
 * | other domains (`exporter.*`, unknown) | skipped; with `strict-tr` the send fails `no translator for <domain>` before anything is sent |
 * | GAUGE, BOOL | `gauge_value.double_value` |
 * | CUMULATIVE_COUNTER | `counter_value.double_value` (the counter total) |
 * | DELTA_COUNTER, EVENT, UNKNOWN | skipped |
 * | monitor tags | labels of every metric (sorted by name); a tag named like a series label becomes `tag_<name>` |
 * | group | labels, for sonde's own domains only; meta is not sent |
 * | `begin` | every point's timestamp (meta `ts` ignored) |
 *
 * Family type, unit and help are not set (type UNKNOWN), as in Blip. Blip leaves empty
 * families for skipped values; sonde sends only the families it produced and sends nothing
 * when there are none.
 */
import { compress } from 'snappyjs';
import type { Events } from '../core/events.js';
import { MetricType } from '../core/metrics.js';
import type { Metrics } from '../core/metrics.js';
import type { HttpClient, Sink, SinkRegistration } from '../core/sink.js';
import type { StatusWriter } from '../core/status.js';
import { chronosphereName, isSondePromDomain, translateSonde } from '../prom/translate.js';
import { formatTimestampMs } from '../util/time.js';
import { bodyText, parseTarget, sinkPoster } from './http.js';
import type { PostTarget } from './http.js';
import { ProtoWriter } from './protobuf.js';
import { monitorKeyOf } from '../core/status-keys.js';
import { isYes } from '../util/text.js';
import { guardedStdout } from '../util/std-streams.js';
import { createRetried } from './retry.js';

/** The sink's name: its registration, its `Sink.name` and its status key. */
const SINK_NAME = 'chronosphere';

/** Blip's default collector endpoint. */
export const CHRONOSPHERE_DEFAULT_URL = 'http://127.0.0.1:3030/openmetrics/write';

/** Parsed `chronosphere` options. */
export interface ChronosphereOptions {
  url: string;
  /** Fail the whole send when a domain has no translator. */
  strictTr: boolean;
  /** Print the MetricSet instead of sending it. */
  debug: boolean;
}

/** Read the option map (retry options already removed); unknown key → `invalid option: <key>`. */
export function parseChronosphereOptions(options: Record<string, string>): ChronosphereOptions {
  const out: ChronosphereOptions = { url: CHRONOSPHERE_DEFAULT_URL, strictTr: false, debug: false };
  for (const [key, value] of Object.entries(options)) {
    if (key === 'url') {
      if (value.trim() !== '') out.url = value.trim();
    } else if (key === 'strict-tr') out.strictTr = isYes(value);
    else if (key === 'debug') out.debug = isYes(value);
    else throw new Error(`invalid option: ${key}`);
  }
  return out;
}

/** One produced family: one metric with one point. */
export interface ChronoFamily {
  name: string;
  kind: 'gauge' | 'counter';
  value: number;
  /** The series' own labels (sonde's own domains: the value's group). */
  labels?: Readonly<Record<string, string>> | undefined;
}

/** True when the sink sends something for `domain`. */
function translated(domain: string): boolean {
  return chronosphereName(domain, '') !== undefined || isSondePromDomain(domain);
}

/**
 * The families of one `Metrics`, domains in ascending order. Throws
 * `no translator for <domain>` under `strictTr` when a domain has no translator.
 */
export function chronosphereFamilies(m: Metrics, strictTr: boolean): ChronoFamily[] {
  const out: ChronoFamily[] = [];
  const domains = Object.keys(m.values).sort();
  if (strictTr) {
    const missing = domains.find((d) => !translated(d));
    if (missing !== undefined) throw new Error(`no translator for ${missing}`);
  }
  for (const domain of domains) {
    const values = m.values[domain] ?? [];
    if (isSondePromDomain(domain)) {
      for (const s of translateSonde(domain, values))
        out.push({
          name: s.name,
          kind: s.type === 'counter' ? 'counter' : 'gauge',
          value: s.value,
          labels: s.labels,
        });
      continue;
    }
    if (!translated(domain)) continue;
    for (const v of values) {
      let kind: ChronoFamily['kind'];
      if (v.type === MetricType.Gauge || v.type === MetricType.Bool) kind = 'gauge';
      else if (v.type === MetricType.CumulativeCounter) kind = 'counter';
      else continue;
      const name = chronosphereName(domain, v.name);
      if (name !== undefined) out.push({ name, kind, value: v.value });
    }
  }
  return out;
}

/**
 * A family's labels as pairs sorted by name: its own labels and the monitor tags; a tag
 * named like one of its own labels becomes `tag_<name>` (the series label is kept).
 */
function labelPairs(
  tags: Record<string, string>,
  own?: Readonly<Record<string, string>>,
): Array<[string, string]> {
  const all = new Map<string, string>(Object.entries(own ?? {}));
  for (const [k, v] of Object.entries(tags)) all.set(own !== undefined && k in own ? `tag_${k}` : k, v);
  return [...all.keys()].sort().map((k) => [k, all.get(k) ?? '']);
}

/**
 * Encode an `openmetrics.MetricSet` (uncompressed):
 * MetricSet{1 metric_families: MetricFamily{1 name, 5 metrics: Metric{1 labels: Label{1 name,
 * 2 value}, 2 metric_points: MetricPoint{2 gauge_value | 3 counter_value: {1 double_value},
 * 8 timestamp: Timestamp{1 seconds, 2 nanos}}}}}.
 */
export function encodeMetricSet(
  families: ChronoFamily[],
  tags: Record<string, string>,
  time: Date,
): Uint8Array {
  const tagPairs = labelPairs(tags);
  const ms = time.getTime();
  const seconds = Math.floor(ms / 1000);
  const nanos = (ms - seconds * 1000) * 1_000_000;
  const set = new ProtoWriter();
  for (const f of families) {
    const labels = f.labels === undefined ? tagPairs : labelPairs(tags, f.labels);
    set.message(1, (fam) => {
      fam.string(1, f.name);
      fam.message(5, (metric) => {
        for (const [name, value] of labels) {
          metric.message(1, (l) => {
            l.string(1, name);
            l.string(2, value);
          });
        }
        metric.message(2, (point) => {
          point.message(f.kind === 'gauge' ? 2 : 3, (v) => v.double(1, f.value));
          point.message(8, (ts) => {
            ts.varint(1, seconds);
            if (nanos !== 0) ts.varint(2, nanos);
          });
        });
      });
    });
  }
  return set.finish();
}

/** Protobuf text format of the set, printed by the `debug` option. */
export function formatMetricSet(families: ChronoFamily[], tags: Record<string, string>, time: Date): string {
  const text = (pairs: Array<[string, string]>): string =>
    pairs.map(([k, v]) => `labels:{name:${JSON.stringify(k)} value:${JSON.stringify(v)}} `).join('');
  const tagText = text(labelPairs(tags));
  const ms = time.getTime();
  const seconds = Math.floor(ms / 1000);
  const nanos = (ms - seconds * 1000) * 1_000_000;
  const ts = `timestamp:{seconds:${seconds}${nanos !== 0 ? ` nanos:${nanos}` : ''}}`;
  return families
    .map((f) => {
      const labels = f.labels === undefined ? tagText : text(labelPairs(tags, f.labels));
      return (
        `metric_families:{name:${JSON.stringify(f.name)} metrics:{${labels}metric_points:{` +
        `${f.kind}_value:{double_value:${f.value}} ${ts}}}}`
      );
    })
    .join(' ');
}

/** Where `debug` prints: process.stdout by default. */
export interface TextOutput {
  write(text: string): unknown;
}

/** What the sink needs from its context. */
export interface ChronosphereDeps {
  monitorId: string;
  tags: Record<string, string>;
  status: StatusWriter;
  events: Events;
  /** Output of the `debug` option (tests). */
  out?: TextOutput;
  httpClient?: HttpClient;
}

/** Build the unwrapped `chronosphere` sink (the registration wraps it in Retry). */
export function createChronosphereSink(opts: ChronosphereOptions, deps: ChronosphereDeps): Sink {
  const target: PostTarget = parseTarget(opts.url, 'chronosphere url');
  const { status, monitorId, tags } = deps;
  const out = deps.out ?? guardedStdout();
  const post = sinkPoster(deps.httpClient);

  const fail = (text: string): Error => {
    status.set(
      monitorKeyOf.sink(SINK_NAME),
      `error on last send at ${formatTimestampMs(new Date())}: ${text}`,
    );
    // Blip's sink logs its own error and Retry logs it again: two lines per attempt. Here
    // the retry decorator's line (which names the sink) is the only one.
    return new Error(text);
  };

  return {
    name: SINK_NAME,
    async send(metrics: Metrics, signal?: AbortSignal): Promise<void> {
      status.set(monitorKeyOf.sink(SINK_NAME), `sending metrics from ${formatTimestampMs(metrics.begin)}`);
      let families: ChronoFamily[];
      try {
        families = chronosphereFamilies(metrics, opts.strictTr);
      } catch (err) {
        throw fail(err instanceof Error ? err.message : String(err));
      }
      if (opts.debug) {
        out.write(`chronosphere ${monitorId}: ${formatMetricSet(families, tags, metrics.begin)}\n`);
      } else if (families.length > 0) {
        const body = compress(encodeMetricSet(families, tags, metrics.begin));
        let answer;
        try {
          answer = await post({
            url: target.url,
            headers: { 'Content-Type': 'application/octet-stream' },
            authorization: target.authorization,
            body,
            signal,
          });
        } catch (err) {
          throw fail(err instanceof Error ? err.message : String(err));
        }
        if (answer.status >= 300) {
          throw fail(
            `chronocollector HTTP response code ${answer.status}, expected 2xx: ${bodyText(answer.body)}`,
          );
        }
      }
      status.set(
        monitorKeyOf.sink(SINK_NAME),
        `last sent ${families.length} metrics at ${formatTimestampMs(new Date())}`,
      );
    },
  };
}

/** Registration of `chronosphere`: Retry → Chronosphere; `out` replaces stdout for `debug`. */
export function chronosphereSinkRegistration(out?: TextOutput): SinkRegistration {
  return {
    name: SINK_NAME,
    description: 'Sends metrics to a Chronosphere collector (OpenMetrics protobuf, Snappy)',
    create: (ctx) =>
      createRetried(ctx, (c) =>
        createChronosphereSink(parseChronosphereOptions(c.options), out ? { ...c, out } : c),
      ),
  };
}
