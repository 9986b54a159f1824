/**
 * The mysqld_exporter emulation's HTTP endpoint: what a Prometheus server scraping
 * mysqld_exporter expects to find. Collection is the scrape reader's (monitor/); this file
 * only answers HTTP, names the self-metrics and renders the exposition.
 *
 * - `GET <telemetry path>` (any method): one scrape of the monitor through the
 *   ExporterSource, rendered as text format 0.0.4 (gzip when the client accepts it);
 *   `collect[]=global_status` etc. restricts the collectors like mysqld_exporter's filter;
 *   `X-Prometheus-Scrape-Timeout-Seconds` (at most 300 s, minus mysqld_exporter's 0.25 s
 *   offset) is the scrape deadline, 10 s without it; a client that goes away cancels the
 *   scrape.
 * - `/`: a small HTML landing page linking the telemetry path. Anything else: 404.
 * - Always 200 for a scrape, even when MySQL is down (`mysql_up 0`); 500 only when the
 *   samples cannot be exposed (one name with two HELP or TYPE texts), as promhttp does. A
 *   duplicate series is left out instead (counted in `sonde_exporter_duplicate_series_total`,
 *   told once), where promhttp would fail the whole scrape.
 *
 * Self-metrics are mysqld_exporter's: `mysql_up`, `mysql_exporter_scrapes_total`,
 * `mysql_exporter_last_scrape_error`, `mysql_exporter_scrape_errors_total{collector}`,
 * `mysql_exporter_collector_duration_seconds{collector}` (plus `collector="connection"`),
 * and `mysql_exporter_collector_success{collector}` from newer mysqld_exporter releases.
 * Collector labels use mysqld_exporter's names (`collect.global_status`, …).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants as zlibConstants } from 'node:zlib';
import { errorMessage } from '../core/errors.js';
import type { Events } from '../core/events.js';
import type { ExporterHandle, ExporterSource, ScrapeResult } from '../core/exporter.js';
import { MonitorNotRunning, type ProbeLease } from '../core/probe.js';
import type { StatusWriter } from '../core/status.js';
import { MonitorKey } from '../core/status-keys.js';
import { scraperByDomain } from '../core/upstream.js';
import { withDeadline } from '../util/abort.js';
import { SegmentedGzip, gzipPayload } from '../util/gzip.js';
import { TEXT_PLAIN, refuseMethod, send, sendText } from '../http/answer.js';
import { TokenFile, admit } from '../http/guard.js';
import { escapeHtml } from '../util/text.js';
import { startWebListeners } from '../http/listener.js';
import {
  ExpositionCache,
  ExpositionError,
  TEXT_CONTENT_TYPE,
  dropDuplicateSeries,
  type PromSample,
} from '../prom/exposition.js';
import { statusInfoSamples, translateForExporter, variablesInfoSamples } from '../prom/translate.js';

/** `web.listen-address` when empty (loopback only, where upstream's `:9104` listens everywhere). */
export const DEFAULT_LISTEN = '127.0.0.1:9104';
/** `web.telemetry-path` when empty. */
export const DEFAULT_PATH = '/metrics';

/** Scrape deadline without `X-Prometheus-Scrape-Timeout-Seconds` (Blip's fixed 10 s). */
export const DEFAULT_SCRAPE_TIMEOUT_MS = 10_000;
/**
 * The longest scrape deadline a header can ask for: 300 s. Prometheus' scrape timeout is
 * at most its scrape interval, and a longer wait only holds a connection and a scrape slot;
 * a larger (or absurd) header value is read as this.
 */
export const MAX_SCRAPE_TIMEOUT_S = 300;
/** mysqld_exporter's `--timeout-offset` default, subtracted from Prometheus' timeout. */
export const TIMEOUT_OFFSET_S = 0.25;

/** The `collector` label of a domain: `collect.<mysqld_exporter name>` (the domain for others). */
export function collectorLabel(domain: string): string {
  return `collect.${scraperByDomain(domain)?.name ?? domain}`;
}

/**
 * The domains a `collect[]` filter selects among `available`, accepting mysqld_exporter
 * names and sonde domains. Like mysqld_exporter, no parameter or no known name means all
 * (undefined).
 */
export function collectFilter(params: readonly string[], available: readonly string[]): string[] | undefined {
  if (params.length === 0) return undefined;
  const wanted = new Set(params);
  const out = available.filter((d) => wanted.has(d) || wanted.has(scraperByDomain(d)?.name ?? '\0'));
  return out.length > 0 ? out : undefined;
}

/**
 * The scrape deadline from `X-Prometheus-Scrape-Timeout-Seconds`, in ms: the header (at
 * most {@link MAX_SCRAPE_TIMEOUT_S}) minus the offset (`timeout-offset`, 0.25 s by default;
 * the header is kept whole when the offset would leave nothing), or the default when the
 * header is missing or not a positive number.
 */
export function scrapeTimeoutMs(header: string | undefined, offsetS = TIMEOUT_OFFSET_S): number {
  if (header === undefined || header.trim() === '') return DEFAULT_SCRAPE_TIMEOUT_MS;
  const given = Number(header.trim());
  if (Number.isNaN(given) || given <= 0) return DEFAULT_SCRAPE_TIMEOUT_MS;
  const s = Math.min(given, MAX_SCRAPE_TIMEOUT_S);
  return Math.round((s > offsetS ? s - offsetS : s) * 1e6) / 1e3;
}

const HELP = {
  up: 'Whether the MySQL server is up.',
  scrapes: 'Total number of times MySQL was scraped for metrics.',
  lastError:
    'Whether the last scrape of metrics from MySQL resulted in an error (1 for error, 0 for success).',
  scrapeErrors: 'Total number of times an error occurred scraping a MySQL.',
  duration: 'Collector time duration.',
  success: 'mysqld_exporter: Whether a collector succeeded.',
  duplicates:
    'Series left out of scrapes because an earlier series of the scrape had the same name and labels.',
} as const;

/** sonde's count of series dropped as duplicates (a duplicate never fails the scrape). */
export const DUPLICATES_FAMILY = 'sonde_exporter_duplicate_series_total';

/** Distinct duplicate series told in an event per handler; more are only counted. */
const DUPLICATES_TOLD_MAX = 100;

export interface StartExporterArgs {
  monitorId: string;
  /**
   * `host:port`, or several separated by commas (one listener each); `:port` listens on
   * every interface; '' = 127.0.0.1:9104.
   */
  listen: string;
  /**
   * `web.config.file`: the exporter web configuration (TLS, basic auth, headers). A bad file
   * fails the start with one line naming the file and the key.
   */
  webConfigFile?: string;
  /** Telemetry path, e.g. `/metrics`; '' = `/metrics`. */
  path: string;
  source: ExporterSource;
  status: StatusWriter;
  events: Events;
  /** `timeout-offset`: seconds taken off `X-Prometheus-Scrape-Timeout-Seconds` (default 0.25). */
  timeoutOffsetS?: number;
  /**
   * `POST /-/reload` (mysqld_exporter reloads its my.cnf there): read the connection settings
   * again; resolves with the error text when they could not be read (the running ones are
   * kept), and with a restart to run once the answer is out when the monitor must restart
   * (its server changed). Without it the path is 404.
   */
  reload?: () => Promise<{ error?: string; restart?: () => Promise<void> }>;
  /**
   * mysqld_exporter's multi-target mode on this endpoint (the command line's): a source for
   * one scrape of `target` (`host:port` or `unix://<path>`) with the credentials of the my.cnf
   * section `section`, released after the answer. With it, `GET /probe?target=…[&auth_module=
   * <section>]` is served and `<telemetry path>?target=…` scrapes that target with `[client]`;
   * without it `/probe` is 404 and `target` is ignored.
   */
  probeTarget?: (target: string, section: string) => Promise<ProbeLease>;
  /** The targets probeTarget may be asked for (`--probe.allowed-targets`); undefined: any. */
  allowedTargets?: (target: string) => boolean;
  /**
   * Samples added to every scrape of the telemetry path (mysqld_exporter's command line: the
   * process families and `mysqld_exporter_build_info`); a failure leaves them out.
   */
  selfMetrics?: () => PromSample[];
  /**
   * `exporter.token-file`: every path then needs `Authorization: Bearer <token>`. A missing
   * or empty file fails the start with an error naming the key and the file.
   */
  tokenFile?: string;
}

/** mysqld_exporter's reload endpoint (POST only). */
export const RELOAD_PATH = '/-/reload';

/**
 * `POST /-/reload`: read the connection settings again, then answer `200 ok`, or `500` with
 * the one-line error when they cannot be read (the running settings stay, the endpoint keeps
 * serving). Any other method: 405, state changes only by POST.
 */
function answerReload(
  req: IncomingMessage,
  res: ServerResponse,
  reload: NonNullable<StartExporterArgs['reload']>,
): void {
  if (req.method !== 'POST') {
    refuseMethod(res, req, 'POST', `405 method not allowed: ${RELOAD_PATH} takes POST`);
    return;
  }
  reload().then(
    ({ error, restart }) => {
      if (error !== undefined) {
        sendText(res, req, 500, `reload failed: ${error.replace(/[\r\n]+/g, ' ')}`);
        return;
      }
      // A restart may close this very listener: only once the answer is out.
      if (restart !== undefined) res.once('finish', () => void restart());
      send(res, req, 200, TEXT_PLAIN, 'ok');
    },
    (err: unknown) => sendText(res, req, 500, `reload failed: ${errorMessage(err).replace(/[\r\n]+/g, ' ')}`),
  );
}

/** Idle time of a kept-alive connection: longer than Prometheus keeps its connections idle. */
export const EXPORTER_KEEP_ALIVE_MS = 65_000;

/** Self-metric state carried between scrapes (mysqld_exporter keeps it in the process). */
class SelfMetrics {
  scrapes = 0;
  lastError = 0;
  readonly errors = new Map<string, number>();

  /** Update from one scrape and return the self-metric samples. */
  samples(r: ScrapeResult): PromSample[] {
    this.scrapes++;
    const out: PromSample[] = [];
    let failed = !r.up;
    if (r.up) {
      if (r.connectSeconds !== undefined) {
        out.push({
          name: 'mysql_exporter_collector_duration_seconds',
          help: HELP.duration,
          type: 'gauge',
          labels: { collector: 'connection' },
          value: r.connectSeconds,
        });
      }
      for (const d of r.domains) {
        const collector = collectorLabel(d.domain);
        out.push(
          {
            name: 'mysql_exporter_collector_duration_seconds',
            help: HELP.duration,
            type: 'gauge',
            labels: { collector },
            value: d.seconds,
          },
          {
            name: 'mysql_exporter_collector_success',
            help: HELP.success,
            type: 'gauge',
            labels: { collector },
            value: d.ok ? 1 : 0,
          },
        );
        if (!d.ok) {
          failed = true;
          this.errors.set(collector, (this.errors.get(collector) ?? 0) + 1);
        }
      }
    }
    this.lastError = failed ? 1 : 0;
    for (const [collector, n] of this.errors) {
      out.push({
        name: 'mysql_exporter_scrape_errors_total',
        help: HELP.scrapeErrors,
        type: 'counter',
        labels: { collector },
        value: n,
      });
    }
    out.push(
      { name: 'mysql_exporter_scrapes_total', help: HELP.scrapes, type: 'counter', value: this.scrapes },
      {
        name: 'mysql_exporter_last_scrape_error',
        help: HELP.lastError,
        type: 'gauge',
        value: this.lastError,
      },
      { name: 'mysql_up', help: HELP.up, type: 'gauge', value: r.up ? 1 : 0 },
    );
    return out;
  }
}

/** The small HTML page at `/`, linking the telemetry path. */
function landingPage(monitorId: string, path: string): Buffer {
  return Buffer.from(
    [
      '<html>',
      '<head><title>MySQLd exporter (sonde)</title></head>',
      '<body>',
      '<h1>MySQLd exporter (sonde)</h1>',
      `<p>Monitor ${escapeHtml(monitorId)}</p>`,
      `<p><a href='${escapeHtml(path)}'>Metrics</a></p>`,
      '</body>',
      '</html>',
      '',
    ].join('\n'),
  );
}

/** What a ScrapeHandler needs: whose scrapes, where debug lines go, the timeout offset. */
export interface ScrapeHandlerArgs {
  monitorId: string;
  events: Events;
  /** Seconds taken off `X-Prometheus-Scrape-Timeout-Seconds` (`timeout-offset`); 0.25 when unset. */
  timeoutOffsetS?: number;
  /** Samples added to each answer (process families); a failure leaves them out. */
  selfMetrics?: () => PromSample[];
}

/**
 * Answers scrapes of one monitor: self-metrics and the exposition layout live across scrapes.
 * Used by the monitor's own endpoint and by the probe listener (one per monitor and auth
 * module), so both answer a scrape the same way.
 */
export class ScrapeHandler {
  readonly #args: ScrapeHandlerArgs;
  readonly #self = new SelfMetrics();
  // Scrapes of one server repeat the same series: reuse the layout (see ExpositionCache).
  readonly #expo = new ExpositionCache();
  readonly #gzip = new SegmentedGzip(ANSWER_GZIP_LEVEL);
  /** Series dropped as duplicates so far, and those already told in an event. */
  #duplicates = 0;
  readonly #told = new Set<string>();

  constructor(args: ScrapeHandlerArgs) {
    this.#args = args;
  }

  /**
   * One scrape of `source`: the deadline from `X-Prometheus-Scrape-Timeout-Seconds`, the
   * `collect[]` filter of `url`, cancelled when the client goes away; answers 200 (gzip when
   * accepted) or 500 when the samples cannot be exposed. Rejects only on a bug.
   */
  async handle(req: IncomingMessage, res: ServerResponse, url: URL, source: ExporterSource): Promise<void> {
    const timeoutMs = scrapeTimeoutMs(
      req.headers['x-prometheus-scrape-timeout-seconds'] as string | undefined,
      this.#args.timeoutOffsetS,
    );
    const gone = new AbortController();
    const deadline = withDeadline(gone.signal, timeoutMs, `scrape timeout after ${timeoutMs / 1000} s`);
    // The client went away before the answer: stop collecting.
    const onClose = (): void => {
      if (!res.writableFinished) gone.abort(new Error('scrape cancelled: client closed the connection'));
    };
    res.once('close', onClose);
    const filter = collectFilter(url.searchParams.getAll('collect[]'), source.domains());
    let result: ScrapeResult;
    let text: Readonly<Record<string, string>> | undefined;
    try {
      result = await source.scrape(deadline.signal, filter);
      text = result.text;
      if (result.up && text === undefined && (filter ?? source.domains()).includes('var.global')) {
        const info = await source.serverInfo(deadline.signal);
        if (info !== undefined) text = { version: info.versionString };
      }
    } finally {
      deadline.done();
    }
    if (!result.up)
      this.#args.events.debug(`exporter ${this.#args.monitorId}: MySQL is down: ${result.error}`);
    this.#answer(req, res, this.#samples(result, text ?? {}));
  }

  /** Self-metrics, translated values and the info families of the text values. */
  #samples(result: ScrapeResult, text: Readonly<Record<string, string>>): PromSample[] {
    const samples: PromSample[] = this.#self.samples(result);
    for (const [domain, values] of Object.entries(result.metrics?.values ?? {}))
      translateForExporter(domain, values, samples);
    if (result.up && result.metrics !== undefined) {
      const ok = new Set(result.domains.filter((d) => d.ok).map((d) => d.domain));
      if (ok.has('var.global')) samples.push(...variablesInfoSamples(text));
      if (ok.has('status.global')) samples.push(...statusInfoSamples(text));
    }
    this.#addSelf(samples);
    return samples;
  }

  /** The added samples (process families), left out when they cannot be had. */
  #addSelf(samples: PromSample[]): void {
    const self = this.#args.selfMetrics;
    if (self === undefined) return;
    try {
      for (const s of self()) samples.push(s);
    } catch (err) {
      this.#args.events.debug(`exporter ${this.#args.monitorId}: process metrics: ${errorMessage(err)}`);
    }
  }

  /** The counter of dropped duplicates (once there was one). */
  #duplicatesSample(): PromSample {
    return { name: DUPLICATES_FAMILY, help: HELP.duplicates, type: 'counter', value: this.#duplicates };
  }

  /**
   * The exposition of `samples`; a series that repeats an earlier one (same name and labels)
   * is left out, counted and told once, so a duplicate never fails the scrape. Other
   * problems throw ExpositionError.
   */
  #render(samples: PromSample[], shared: boolean): Buffer {
    const all = this.#duplicates > 0 ? [...samples, this.#duplicatesSample()] : samples;
    try {
      return shared ? this.#expo.renderShared(all) : this.#expo.renderBuffer(all);
    } catch (err) {
      if (!(err instanceof ExpositionError) || !err.duplicate) throw err;
    }
    const { kept, dropped } = dropDuplicateSeries(samples);
    this.#duplicates += dropped.length;
    for (const series of dropped) {
      if (this.#told.has(series) || this.#told.size >= DUPLICATES_TOLD_MAX) continue;
      this.#told.add(series);
      const msg = `exporter: duplicate series ${series} left out of the scrape`;
      const events = this.#args.events;
      if (events.warn) events.warn('exporter-duplicate-series', this.#args.monitorId, msg);
      else events.debug(msg, this.#args.monitorId);
    }
    const again = [...kept, this.#duplicatesSample()];
    return shared ? this.#expo.renderShared(again) : this.#expo.renderBuffer(again);
  }

  /** Render and send: 200 (gzip when accepted), or 500 when the samples cannot be exposed. */
  #answer(req: IncomingMessage, res: ServerResponse, samples: PromSample[]): void {
    const gzip = /\bgzip\b/i.test(req.headers['accept-encoding'] ?? '');
    let body: Buffer;
    try {
      // Read at once when gzipped: the cache's shared buffer will do.
      body = this.#render(samples, gzip);
      // gzip compresses again only the parts of the text that changed since the last answer.
      if (gzip) body = this.#gzip.gzip(body, this.#expo.segments());
    } catch (err) {
      if (!(err instanceof ExpositionError)) throw err;
      this.#args.events.debug(`exporter ${this.#args.monitorId}: cannot expose metrics: ${err.message}`);
      const text = `An error has occurred while serving metrics:\n\n${err.message}\n`;
      send(res, req, 500, TEXT_PLAIN, text);
      return;
    }
    const headers: Record<string, string> = {};
    if (gzip) headers['Content-Encoding'] = 'gzip';
    headers.Vary = 'Accept-Encoding';
    send(res, req, 200, TEXT_CONTENT_TYPE, body, headers);
  }
}

/**
 * The level of a scrape answer's gzip. The fastest: a body is ~200 KB and compressing it is
 * most of a scrape's CPU at the default level (level 1 costs a third and is ~15 % larger).
 * zlib's default compression memory: each call allocates a fresh compressor (Node's API has
 * no way to keep one between synchronous calls); the most memory (memLevel 9, 0.4 MiB) made
 * no difference in the agent's process and, where malloc still returns such blocks to the
 * system, costs more to allocate than its larger hash saves (0.74 against 0.49 ms of CPU
 * for a scrape's text in a fresh process). Synchronous: under 0.5 ms, less than a
 * thread-pool round trip adds. Small output chunks (see util/gzip.ts): what a call
 * allocates waits for V8's next full collection, and a smaller chunk leaves less.
 */
export const ANSWER_GZIP_LEVEL = zlibConstants.Z_BEST_SPEED;

/**
 * A whole body gzipped at the answer's level in one call, as answers were before
 * SegmentedGzip (the benches compare the two).
 */
export function gzipBody(body: Buffer): Buffer {
  return gzipPayload(body, ANSWER_GZIP_LEVEL);
}

/** mysqld_exporter's multi-target path. */
export const PROBE_PATH = '/probe';

/** A request value quoted in a one-line refusal, cut when long. */
function quote(v: string): string {
  return JSON.stringify(v.length > 200 ? `${v.slice(0, 200)}…` : v);
}

/**
 * One scrape of the target a request names, with the credentials of my.cnf section
 * `section`, through a ScrapeHandler of its own (as mysqld_exporter makes a registry per
 * probe). Refusals are one line: 400 without a target or for a bad target or section, 403
 * for a target `--probe.allowed-targets` does not list, 503 while the monitor is not running.
 */
async function probeScrape(
  args: StartExporterArgs,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  section: string,
  selfMetrics?: () => PromSample[],
): Promise<void> {
  const refuse = (code: number, text: string) =>
    sendText(res, req, code, text, { 'X-Content-Type-Options': 'nosniff' });
  const target = url.searchParams.get('target') ?? '';
  if (target === '' || args.probeTarget === undefined) return refuse(400, 'target is required');
  if (args.allowedTargets !== undefined && !args.allowedTargets(target))
    return refuse(403, `target ${quote(target)} is not allowed (--probe.allowed-targets)`);
  let lease: ProbeLease;
  try {
    lease = await args.probeTarget(target, section);
  } catch (err) {
    const key = (err as { key?: unknown }).key;
    const text = errorMessage(err).replace(/[\r\n]+/g, ' ');
    if (key === 'target' || key === 'auth_module') return refuse(400, text);
    return refuse(err instanceof MonitorNotRunning ? 503 : 500, text);
  }
  try {
    const handler = new ScrapeHandler({
      monitorId: args.monitorId,
      events: args.events,
      timeoutOffsetS: lease.timeoutOffsetS,
      ...(selfMetrics === undefined ? {} : { selfMetrics }),
    });
    await handler.handle(req, res, url, lease.source);
  } finally {
    await lease.release();
  }
}

/** The request router: the token, the telemetry path, the landing page, 404 for the rest. */
function router(
  args: StartExporterArgs,
  path: string,
  token: TokenFile | undefined,
): (req: IncomingMessage, res: ServerResponse) => void {
  const { monitorId, events } = args;
  const scrapes = new ScrapeHandler({
    monitorId,
    events,
    ...(args.timeoutOffsetS === undefined ? {} : { timeoutOffsetS: args.timeoutOffsetS }),
    ...(args.selfMetrics === undefined ? {} : { selfMetrics: args.selfMetrics }),
  });
  const landing = landingPage(monitorId, path);
  return (req, res) => {
    // The token only: mysqld_exporter's endpoint has no Host or cross-site rule.
    if (!admit(req, res, { tls: false, token })) return;
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://exporter');
    } catch {
      sendText(res, req, 400, '400 bad request');
      return;
    }
    const failed = (err: unknown): void => {
      events.debug(`exporter ${monitorId}: scrape failed: ${errorMessage(err)}`);
      if (!res.headersSent) send(res, req, 500, TEXT_PLAIN, `${errorMessage(err)}\n`);
      else res.destroy();
    };
    const multiTarget = args.probeTarget !== undefined;
    if (url.pathname === path && multiTarget && url.searchParams.has('target')) {
      probeScrape(args, req, res, url, 'client', args.selfMetrics).catch(failed);
    } else if (url.pathname === path) {
      scrapes.handle(req, res, url, args.source).catch(failed);
    } else if (url.pathname === PROBE_PATH && multiTarget) {
      probeScrape(args, req, res, url, url.searchParams.get('auth_module') || 'client').catch(failed);
    } else if (url.pathname === '/') {
      send(res, req, 200, 'text/html; charset=utf-8', landing);
    } else if (url.pathname === RELOAD_PATH && args.reload !== undefined) {
      answerReload(req, res, args.reload);
    } else {
      sendText(res, req, 404, '404 page not found', { 'X-Content-Type-Options': 'nosniff' });
    }
  };
}

/**
 * Start the exporter endpoint of one monitor: on every address of `listen` (a comma list),
 * behind the web configuration file when one is given (TLS, basic auth, headers). Resolves
 * once listening (status key `exporter` = `listening on <addr>, <addr>`); rejects when the
 * web configuration file is bad or an address cannot be bound (port in use…). close() stops
 * it and sets `exporter` = `stopped`.
 */
export async function startExporter(args: StartExporterArgs): Promise<ExporterHandle> {
  const { monitorId, status, events } = args;
  const path = args.path === '' ? DEFAULT_PATH : args.path.startsWith('/') ? args.path : `/${args.path}`;
  const listen = args.listen === '' ? DEFAULT_LISTEN : args.listen;
  const token =
    args.tokenFile === undefined || args.tokenFile === ''
      ? undefined
      : new TokenFile(args.tokenFile, 'exporter.token-file', {
          onError: (msg) => events.error('server-api-error', monitorId, msg),
        });
  const listeners = await startWebListeners({
    handler: router(args, path, token),
    listen,
    webConfigFile: args.webConfigFile,
    configKey: 'exporter.flags.web.config.file',
    keepAliveMs: EXPORTER_KEEP_ALIVE_MS,
    debug: (msg) => events.debug(`exporter ${monitorId}: ${msg}`),
    onReloadError: (msg) => events.error('web-config-reload-error', monitorId, msg),
  });
  status.set(MonitorKey.exporter, `listening on ${listeners.addresses.join(', ')}`);
  let closed: Promise<void> | undefined;
  return {
    address: listeners.addresses[0] ?? listen,
    addresses: listeners.addresses,
    close(): Promise<void> {
      closed ??= listeners.close().then(() => status.set(MonitorKey.exporter, 'stopped'));
      return closed;
    },
  };
}
