/**
 * The `prom-pushgateway` sink (experimental in Blip): each collection is
 * translated as Blip's exporter translates it (status.global, var.global, innodb), sonde's
 * own domains with the names of docs/prometheus-names.md (Blip skips them), and pushed as
 * Prometheus text 0.0.4 to a Pushgateway.
 *
 *     POST <addr>/metrics/job/blip[/<tag>/<value>…]
 *     Content-Type: text/plain; version=0.0.4; charset=utf-8
 *
 * POST replaces only the families of the same name in the group, so domains collected at
 * other levels stay. Success is 200 or 202.
 *
 * Monitor tags (sonde addition, issue: tags reach every sink): Blip sends none. sonde puts
 * them in the grouping key, the Pushgateway's own way to label a push: the gateway adds
 * every grouping label to every series of the group, and monitors with different tags land
 * in different groups instead of overwriting each other. Without tags the path is Blip's
 * `/metrics/job/blip`. Rules:
 * - tag names become valid label names (characters outside `[a-zA-Z0-9_]` → `_`, a
 *   leading digit or `__` gets the prefix `tag_`);
 * - a tag named like a label of the translation (`command`, `state`, …) becomes
 *   `tag_<name>` (a grouping label would overwrite the series' own label);
 * - a tag named `job` replaces `blip` as the job;
 * - values are written as path segments, base64url-encoded (`<name>@base64/<value>`)
 *   when they hold anything beyond `[A-Za-z0-9._~-]` or are empty.
 */
import { Buffer } from 'node:buffer';
import type { Events } from '../core/events.js';
import type { Metrics } from '../core/metrics.js';
import type { HttpClient, Sink, SinkRegistration } from '../core/sink.js';
import type { StatusWriter } from '../core/status.js';
import { TEXT_CONTENT_TYPE, gather, render } from '../prom/exposition.js';
import type { PromSample } from '../prom/exposition.js';
import { hasPromTranslator, translateBlip } from '../prom/translate.js';
import { SONDE_LABELS } from '../prom/sonde-names.js';
import { formatTimestampMs } from '../util/time.js';
import { bodyText, parseTarget, sinkPoster } from './http.js';
import type { PostTarget } from './http.js';
import { monitorKeyOf } from '../core/status-keys.js';
import { createRetried } from './retry.js';

/** The sink's name: its registration, its `Sink.name` and its status key. */
const SINK_NAME = 'prom-pushgateway';

/** Blip's default gateway address. */
export const PUSHGATEWAY_DEFAULT_ADDR = 'http://127.0.0.1:9091';

/** Blip's job name. */
export const PUSHGATEWAY_JOB = 'blip';

/** Parsed `prom-pushgateway` options. */
export interface PushgatewayOptions {
  /** Gateway base URL, scheme included, no trailing `/`. */
  addr: string;
}

/**
 * Read the option map (retry options already removed). `addr`: `http://` prepended when
 * the value has no `://`, one trailing `/` removed. Unknown key → `invalid option: <key>`.
 */
export function parsePushgatewayOptions(options: Record<string, string>): PushgatewayOptions {
  let addr = PUSHGATEWAY_DEFAULT_ADDR;
  for (const [key, value] of Object.entries(options)) {
    if (key !== 'addr') throw new Error(`invalid option: ${key}`);
    if (value.trim() !== '') addr = value.trim();
  }
  if (!addr.includes('://')) addr = `http://${addr}`;
  if (addr.endsWith('/')) addr = addr.slice(0, -1);
  return { addr };
}

/** A label name as Prometheus accepts it; see the module comment for the rules. */
export function tagLabelName(tag: string, reserved: ReadonlySet<string>): string {
  let name = tag.replace(/[^a-zA-Z0-9_]/g, '_');
  if (name === '' || /^[0-9]/.test(name) || name.startsWith('__') || reserved.has(name)) name = `tag_${name}`;
  return name;
}

/** `<name>/<value>` or `<name>@base64/<base64url value>` (empty value → `=`). */
function pathPair(name: string, value: string): string {
  if (/^[A-Za-z0-9._~-]+$/.test(value) && value !== '.' && value !== '..') return `${name}/${value}`;
  const b64 = value === '' ? '=' : Buffer.from(value, 'utf8').toString('base64url');
  return `${name}@base64/${b64}`;
}

/**
 * The grouping key path for these tags: `/metrics/job/<job>[/<label>/<value>…]`, labels
 * sorted by name. `reserved` = label names the pushed series carry themselves.
 */
export function groupingPath(tags: Record<string, string>, reserved: ReadonlySet<string>): string {
  let job = PUSHGATEWAY_JOB;
  const labels = new Map<string, string>();
  for (const [tag, value] of Object.entries(tags)) {
    if (tag === 'job') {
      if (value !== '') job = value;
      continue;
    }
    labels.set(tagLabelName(tag, reserved), value);
  }
  const parts = [pathPair('job', job)];
  for (const name of [...labels.keys()].sort()) parts.push(pathPair(name, labels.get(name) ?? ''));
  return `/metrics/${parts.join('/')}`;
}

/**
 * Label names the translation puts on its own series: a tag with one of
 * these names is renamed `tag_<name>` (a grouping label would overwrite the series label).
 * prom-pushgateway.test.ts checks that translateBlip uses no other.
 */
export const TRANSLATION_LABELS: ReadonlySet<string> = new Set([
  'command',
  'handler',
  'error',
  'state',
  'operation',
  'instrumentation',
  'type',
  ...SONDE_LABELS,
]);

/** The text pushed for one collection, and how many series it holds. */
export interface PushBody {
  text: string;
  series: number;
}

/**
 * Translate status.global, var.global and innodb exactly as Blip's exporter does, sonde's
 * own domains by their Prometheus names (translateBlip; other domains skipped) and render
 * the text exposition.
 * Throws the gather error (duplicate series, inconsistent HELP/TYPE): nothing is pushed.
 */
export function pushBody(m: Metrics): PushBody {
  const samples: PromSample[] = [];
  for (const domain of Object.keys(m.values).sort()) {
    if (!hasPromTranslator(domain)) continue;
    samples.push(...translateBlip(domain, m.values[domain] ?? []));
  }
  const families = gather(samples);
  return { text: render(families), series: families.reduce((n, f) => n + f.series.length, 0) };
}

/** What the sink needs from its context. */
export interface PushgatewayDeps {
  monitorId: string;
  tags: Record<string, string>;
  status: StatusWriter;
  events: Events;
  httpClient?: HttpClient;
}

/** Build the unwrapped `prom-pushgateway` sink (the registration wraps it in Retry). */
export function createPushgatewaySink(opts: PushgatewayOptions, deps: PushgatewayDeps): Sink {
  const target: PostTarget = parseTarget(opts.addr, 'prom-pushgateway addr');
  const url = `${target.url.replace(/\/$/, '')}${groupingPath(deps.tags, TRANSLATION_LABELS)}`;
  const { status } = deps;
  const fail = (text: string): Error => {
    status.set(
      monitorKeyOf.sink(SINK_NAME),
      `error on last send at ${formatTimestampMs(new Date())}: ${text}`,
    );
    return new Error(text);
  };

  return {
    name: SINK_NAME,
    async send(metrics: Metrics, signal?: AbortSignal): Promise<void> {
      status.set(monitorKeyOf.sink(SINK_NAME), 'sending metrics');
      let body: PushBody;
      try {
        body = pushBody(metrics);
      } catch (err) {
        throw fail(`cannot push to ${url}: ${err instanceof Error ? err.message : String(err)}`);
      }
      if (body.series > 0) {
        let answer;
        try {
          answer = await sinkPoster(deps.httpClient)({
            url,
            headers: { 'Content-Type': TEXT_CONTENT_TYPE },
            authorization: target.authorization,
            body: Buffer.from(body.text, 'utf8'),
            signal,
          });
        } catch (err) {
          throw fail(err instanceof Error ? err.message : String(err));
        }
        if (answer.status !== 200 && answer.status !== 202) {
          throw fail(
            `unexpected status code ${answer.status} while pushing to ${url}: ${bodyText(answer.body)}`,
          );
        }
      }
      status.set(
        monitorKeyOf.sink(SINK_NAME),
        // Blip's text for this sink: no count.
        `last sent metrics at ${formatTimestampMs(new Date())}`,
      );
    },
  };
}

/** Registration of `prom-pushgateway`: Retry → PromPushgateway. */
export function promPushgatewaySinkRegistration(): SinkRegistration {
  return {
    name: SINK_NAME,
    description: 'Pushes metrics to a Prometheus Pushgateway (exporter metric names)',
    create: (ctx) => createRetried(ctx, (c) => createPushgatewaySink(parsePushgatewayOptions(c.options), c)),
  };
}
