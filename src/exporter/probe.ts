/**
 * The agent-wide probe listener: mysqld_exporter's multi-target mode for every monitor of
 * the agent, beside the per-monitor endpoints (server.ts).
 *
 * - `GET /probe?target=<monitor id or host:port>[&auth_module=<name>][&collect[]=…]`: one
 *   scrape of that monitor, answered exactly like the monitor's own endpoint (ScrapeHandler:
 *   exposition, self-metrics, `collect[]`, the scrape-timeout header). The target and the
 *   auth module are resolved from the config (ProbeTargets) before anything connects: a
 *   request naming nothing configured gets a 4xx and a one-line reason.
 * - `GET /metrics`: the agent's own metrics: the process and Node.js families
 *   (process-metrics.ts), and each monitor's collection counts (`sonde_collections_total`,
 *   `sonde_collection_errors_total`), read from the engines' tallies when scraped.
 * - `GET /targets`: the monitors for Prometheus' `http_sd_configs`: one entry per monitor,
 *   its id as the target, its tags as labels (names made valid, labelName) and its address
 *   as `mysql_address`.
 * - `/`: a landing page; anything else 404.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorMessage } from '../core/errors.js';
import type { Events } from '../core/events.js';
import type { MonitorTallies, ProbeTargets } from '../core/probe.js';
import { refuseMethod, send, sendText } from '../http/answer.js';
import { loadWebConfig } from '../http/web-config.js';
import { startWebListeners } from '../http/listener.js';
import { exposition, TEXT_CONTENT_TYPE, type PromSample } from '../prom/exposition.js';
import { ProcessFamilies } from './process-metrics.js';
import { EXPORTER_KEEP_ALIVE_MS, ScrapeHandler } from './server.js';

/** The label of a `/targets` entry holding the monitor's address. */
export const ADDRESS_LABEL = 'mysql_address';

/**
 * A tag name as a Prometheus label name: every character other than `[a-zA-Z0-9_]` becomes
 * `_`, and a name that would start with a digit or with `__` (reserved by Prometheus) gets
 * the prefix `tag_`. '' for an empty name (the tag is left out).
 */
export function labelName(tag: string): string {
  if (tag === '') return '';
  const name = tag.replace(/[^a-zA-Z0-9_]/g, '_');
  return /^[0-9]/.test(name) || name.startsWith('__') ? `tag_${name}` : name;
}

/**
 * The labels of one monitor: its tags in name order (of two tags with the same label name,
 * the first in that order wins), then `mysql_address` (always the address).
 */
export function targetLabels(
  tags: Readonly<Record<string, string>>,
  address: string,
): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const tag of Object.keys(tags).sort()) {
    const name = labelName(tag);
    if (name !== '' && !Object.hasOwn(labels, name))
      Object.defineProperty(labels, name, { value: tags[tag] ?? '', enumerable: true, writable: true });
  }
  labels[ADDRESS_LABEL] = address;
  return labels;
}

/** The `/targets` answer: Prometheus' HTTP service discovery format. */
export function targetsJson(targets: ProbeTargets): string {
  return JSON.stringify(
    targets.list().map((t) => ({ targets: [t.id], labels: targetLabels(t.tags, t.address) })),
  );
}

/** The counters of `/metrics`, read from the tallies each time they are scraped. */
function tallySamples(tallies: readonly MonitorTallies[], out: PromSample[]): void {
  const counters = [
    {
      name: 'sonde_collections_total',
      help: 'Domain collections finished, per monitor and reader (level: the sinks; scrape: exporter and probes).',
      pick: (t: { collections: number; errors: number }) => t.collections,
    },
    {
      name: 'sonde_collection_errors_total',
      help: 'Domain collections that failed, per monitor and reader (level: the sinks; scrape: exporter and probes).',
      pick: (t: { collections: number; errors: number }) => t.errors,
    },
  ];
  for (const { name, help, pick } of counters)
    for (const t of tallies)
      for (const reader of ['level', 'scrape'] as const)
        out.push({
          name,
          help,
          type: 'counter',
          labels: { monitor: t.monitor, reader },
          value: pick(t[reader]),
        });
}

/** The text behind `/metrics`: the process families and the tallies, read when called. */
export function agentMetrics(targets: ProbeTargets): () => string {
  const families = new ProcessFamilies();
  return () => {
    const samples = families.samples();
    tallySamples(targets.tallies(), samples);
    return exposition(samples);
  };
}

/** The probe listener's paths, all GET (and HEAD); exported for the documentation test. */
export const PROBE_PATHS = {
  probe: '/probe',
  metrics: '/metrics',
  targets: '/targets',
  landing: '/',
} as const;

const LANDING = Buffer.from(
  [
    '<html>',
    '<head><title>MySQLd exporter (sonde, multi-target)</title></head>',
    '<body>',
    '<h1>MySQLd exporter (sonde, multi-target)</h1>',
    "<p><a href='/probe?target='>Probe</a>: <code>/probe?target=&lt;monitor id or host:port&gt;</code></p>",
    "<p><a href='/targets'>Targets</a> (Prometheus http_sd_configs)</p>",
    "<p><a href='/metrics'>Metrics</a> of the agent</p>",
    '</body>',
    '</html>',
    '',
  ].join('\n'),
);

/** Go's error headers: the reason as one line of text, not to be sniffed as anything else. */
const NOSNIFF = { 'X-Content-Type-Options': 'nosniff' };

function refuse(req: IncomingMessage, res: ServerResponse, status: number, reason: string): void {
  sendText(res, req, status, reason, NOSNIFF);
}

/** `/probe`: resolve, scrape through the target's ScrapeHandler, release. */
class Prober {
  readonly #targets: ProbeTargets;
  readonly #events: Events;
  /** One handler per monitor and auth module: their self-metrics count across probes. */
  readonly #handlers = new Map<string, ScrapeHandler>();

  constructor(targets: ProbeTargets, events: Events) {
    this.#targets = targets;
    this.#events = events;
  }

  #handler(id: string, authModule: string, timeoutOffsetS: number): ScrapeHandler {
    const key = `${id}\n${authModule}\n${timeoutOffsetS}`;
    let h = this.#handlers.get(key);
    if (h === undefined) {
      // A new key: forget the handlers of monitors no longer loaded.
      const ids = new Set(this.#targets.list().map((t) => t.id));
      for (const k of this.#handlers.keys())
        if (!ids.has(k.slice(0, k.indexOf('\n')))) this.#handlers.delete(k);
      h = new ScrapeHandler({ monitorId: id, events: this.#events, timeoutOffsetS });
      this.#handlers.set(key, h);
    }
    return h;
  }

  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const target = url.searchParams.get('target') ?? '';
    if (target === '') return refuse(req, res, 400, 'target is required');
    const opened = await this.#targets.open(target, url.searchParams.get('auth_module') ?? '');
    if (!opened.ok) return refuse(req, res, opened.status, opened.reason);
    try {
      const handler = this.#handler(opened.id, opened.authModule, opened.timeoutOffsetS);
      await handler.handle(req, res, url, opened.source);
    } finally {
      await opened.release();
    }
  }
}

export interface StartProbeArgs {
  /** `probe.bind`: `host:port`, `:port` (every interface) or `[v6]:port`. */
  bind: string;
  /**
   * `probe.web-config-file`: TLS, basic auth, headers and rate limit for this listener
   * (exporter-toolkit's web configuration). A bad file fails the start with one line naming
   * the key and the file.
   */
  webConfigFile?: string;
  targets: ProbeTargets;
  events: Events;
}

/** A running probe listener. */
export interface ProbeHandle {
  /** bound address, `host:port` */
  address: string;
  close(): Promise<void>;
}

/** The request router of the probe listener. */
function router(args: StartProbeArgs): (req: IncomingMessage, res: ServerResponse) => void {
  const { events } = args;
  const prober = new Prober(args.targets, events);
  const metrics = agentMetrics(args.targets);
  const failed = (req: IncomingMessage, res: ServerResponse, what: string, err: unknown): void => {
    events.debug(`probe listener: ${what} failed: ${errorMessage(err)}`);
    if (!res.headersSent)
      refuse(req, res, 500, `${what} failed: ${errorMessage(err).replace(/[\r\n]+/g, ' ')}`);
    else res.destroy();
  };
  return (req, res) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://probe');
    } catch {
      return refuse(req, res, 400, '400 bad request');
    }
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return refuseMethod(res, req, 'GET, HEAD', `method ${req.method ?? ''} not allowed`, NOSNIFF);
    switch (url.pathname) {
      case PROBE_PATHS.probe:
        prober.handle(req, res, url).catch((err: unknown) => failed(req, res, 'probe', err));
        return;
      case PROBE_PATHS.metrics:
        try {
          send(res, req, 200, TEXT_CONTENT_TYPE, metrics());
        } catch (err) {
          failed(req, res, 'metrics', err);
        }
        return;
      case PROBE_PATHS.targets:
        return send(res, req, 200, 'application/json', targetsJson(args.targets));
      case PROBE_PATHS.landing:
        return send(res, req, 200, 'text/html; charset=utf-8', LANDING);
      default:
        return refuse(req, res, 404, '404 page not found');
    }
  };
}

/** The setting that names the probe listener's web configuration file, in its errors. */
export const WEB_CONFIG_KEY = 'probe.web-config-file';

/**
 * Read and check `probe.web-config-file` (and the files it names); throws its one-line
 * error. The boot calls it so that a bad file fails before anything runs.
 */
export function checkWebConfigFile(file: string | undefined): void {
  if (file !== undefined && file !== '') loadWebConfig(file, WEB_CONFIG_KEY);
}

/**
 * Start the probe listener on `bind`, behind the web configuration file when one is given
 * (with the limits of every sonde listener). Resolves once listening; rejects when the file
 * is bad or the address cannot be bound.
 */
export async function startProbe(args: StartProbeArgs): Promise<ProbeHandle> {
  const listeners = await startWebListeners({
    handler: router(args),
    listen: [args.bind],
    webConfigFile: args.webConfigFile,
    configKey: WEB_CONFIG_KEY,
    keepAliveMs: EXPORTER_KEEP_ALIVE_MS,
    debug: (msg) => args.events.debug(`probe listener: ${msg}`),
    onReloadError: (msg) => args.events.error('web-config-reload-error', '', msg),
  });
  return { address: listeners.addresses[0] ?? args.bind, close: () => listeners.close() };
}
