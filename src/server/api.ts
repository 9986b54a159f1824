/**
 * The management HTTP API, documented in docs/api.md; its protections in docs/security.md.
 *
 * Blip routes by exact path with Go's http.ServeMux, answers errors with
 * `text/plain; charset=utf-8` bodies of one line plus `\n`, and `404 page not found` for
 * unknown paths. The API runs on `node:http` like sonde's other listeners: the router
 * (http/router.ts) gives ServeMux's answers, http/guard.ts the Host, token and
 * cross-site checks, http/server.ts the server with its limits and TLS.
 */
import type { IncomingMessage, ServerResponse, Server } from 'node:http';
import type { ServerOptions as HttpsOptions } from 'node:https';
import type { AgentInfo, MonitorControl } from '../core/control.js';
import { SondeError, errorMessage } from '../core/errors.js';
import type { Events } from '../core/events.js';
import type { StatusReader } from '../core/status.js';
import { TEXT_PLAIN, send, sendEmpty, sendText } from '../http/answer.js';
import { LISTENER_LIMITS, admit, admitChange, isWildcard, type TokenCheck } from '../http/guard.js';
import { Router, type Call, type Route, type RouteHandler } from '../http/router.js';
import { createListener } from '../http/server.js';
import { parseHostPort, splitHostPort } from '../util/net.js';
import { escapeHtml } from '../util/text.js';

/** What the API needs from the agent; the CLI wires the real pieces. */
export interface ApiDeps {
  control: MonitorControl;
  status: StatusReader;
  info: AgentInfo;
  /** GET /config renderings, already redacted by the caller. */
  renderConfig: { yaml(): string; json(): unknown };
  /**
   * Where unexpected failures (answered 500 with a fixed text) are reported as the error
   * event `server-api-error`. Optional; without it they are only answered.
   */
  events?: Events;
  /**
   * `api.bind` as configured: its host is accepted in `Host` headers (with every IP literal
   * when it names every interface), and its port stands for the listener's until it listens.
   * Default `127.0.0.1:7522`.
   */
  bind?: string;
  /** `api.allowed-hosts`: further `Host` values accepted, `name` or `name:port`. */
  allowedHosts?: readonly string[];
  /** `api.token-file`: when set, every path but the probes needs `Authorization: Bearer`. */
  token?: TokenCheck;
  /** `api.tls`: serve HTTPS; with `clientCa`, a client certificate it signed is required. */
  tls?: { cert: Buffer; key: Buffer; clientCa?: Buffer };
  /** Readiness for `GET /readyz`: undefined when ready, else why not. Default: ready. */
  ready?: () => string | undefined;
  /** More routes (the web page, docs/ui.md), behind the same checks. */
  extraRoutes?: readonly Route[];
  /** Paths of `extraRoutes` open without the token (the page and its files, which hold no data). */
  public?: (path: string) => boolean;
  /** `api.read-only`: every state change is refused with 403. */
  readOnly?: boolean;
}

export const DEFAULT_BIND = '127.0.0.1:7522';
/** Idle time before a keep-alive connection to the API is closed. */
export const API_KEEP_ALIVE_MS = 5_000;

const JSON_TYPE = 'application/json; charset=utf-8';

/** Fixed body of an unexpected failure: its message may hold anything, so it is not shown. */
const INTERNAL_ERROR = 'internal server error';
const STOP_LOSS_MESSAGE = 'Stop-loss prevented reloading; see sonde error log for details';
const READ_ONLY_MESSAGE = 'read-only API: state changes are turned off (api.read-only)';

/** HTTP status of an unexpected failure (a bug); every sonde error takes its code's status. */
const HTTP_INTERNAL = 500;
const HTTP_UNAVAILABLE = 503;

/**
 * A sonde error whose message is the answer's final body, already escaped: the error
 * handler sends it as is, with the status the registry gives its code.
 */
class ApiAnswer extends SondeError {}

/** An id as shown in a message: CR/LF removed (no forged lines), then HTML-escaped. */
function shownId(id: string): string {
  return escapeHtml(id.replace(/[\r\n]/g, ''));
}

/** 200 with a JSON body; serialised here, so a string value still goes out as JSON. */
function sendJson(call: Call, value: unknown): void {
  send(call.res, call.req, 200, JSON_TYPE, JSON.stringify(value));
}

/** The `id` query value (the first of repeated keys, as Go's Query().Get). */
function queryId(call: Call): string {
  const id = call.query.get('id');
  if (id === undefined || id === '')
    throw new ApiAnswer('MONITOR_ID_MISSING', 'missing id=monitorId in query');
  return id;
}

/**
 * The reason part of a start/stop failure. The answer's body is
 * `Error starting monitor <id>: <reason>`; a controller that already put that prefix in its
 * message is tolerated rather than printed twice.
 */
function reason(err: SondeError, verb: string, id: string): string {
  const prefix = `Error ${verb} monitor ${id}: `;
  return err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message;
}

/** POST /monitors/reload: stop-loss and any other load failure answer with their code's status. */
function reloadHandler(control: MonitorControl): RouteHandler {
  return async (call) => {
    try {
      await control.reload();
    } catch (err) {
      if (!(err instanceof SondeError)) throw err;
      if (err.code === 'STOP_LOSS') throw new ApiAnswer('STOP_LOSS', STOP_LOSS_MESSAGE);
      // Every other load failure is a failed reload; SondeError messages are safe to show.
      throw new ApiAnswer('RELOAD_FAILED', `Error reloading monitors: ${escapeHtml(err.message)}`);
    }
    sendEmpty(call.res, 200);
  };
}

/**
 * POST /monitors/start and /monitors/stop: `act` on the monitor named by `?id=`. A monitor
 * that is not loaded, or an `act` failing with `failCode`, is answered with its code's status.
 */
function monitorHandler(
  verb: 'starting' | 'stopping',
  failCode: 'MONITOR_START_FAILED' | 'MONITOR_STOP_FAILED',
  act: (id: string) => Promise<void>,
): RouteHandler {
  return async (call) => {
    const id = queryId(call);
    try {
      await act(id);
    } catch (err) {
      if (!(err instanceof SondeError)) throw err;
      if (err.code === 'MONITOR_NOT_LOADED')
        throw new ApiAnswer('MONITOR_NOT_LOADED', `monitor ${shownId(id)} not loaded`);
      if (err.code === failCode) {
        const why = escapeHtml(reason(err, verb, id));
        throw new ApiAnswer(failCode, `Error ${verb} monitor ${shownId(id)}: ${why}`);
      }
      throw err;
    }
    sendEmpty(call.res, 200);
  };
}

/** GET /config: YAML as text, or JSON with `?json` (a presence flag: `?json`, `?json=`, `?json=1`). */
function configHandler(renderConfig: ApiDeps['renderConfig']): RouteHandler {
  return (call) => {
    if (call.query.has('json')) return sendJson(call, renderConfig.json());
    // Go sniffs YAML text as text/plain; kept so browsers and curl show it inline.
    send(call.res, call.req, 200, TEXT_PLAIN, renderConfig.yaml());
  };
}

/** The liveness and readiness probes: open without a token, GET and HEAD only. */
const PROBES = new Set(['/healthz', '/readyz']);

/** GET /readyz: `ready`, or 503 with the reason the agent gives. */
function readyHandler(ready: ApiDeps['ready']): RouteHandler {
  return (call) => {
    const why = ready?.();
    if (why !== undefined) return sendText(call.res, call.req, HTTP_UNAVAILABLE, `not ready: ${why}`);
    sendText(call.res, call.req, 200, 'ready');
  };
}

/**
 * Every route. State-changing endpoints take POST only: a link, an image or a prefetch (all
 * GET) must never start, stop, reload or toggle anything; HEAD is answered for GET routes only.
 * Exported for the documentation test, which checks every endpoint the docs name.
 */
export function apiRoutes(deps: ApiDeps): Route[] {
  const { control, status, info } = deps;
  const get = (path: string, handler: RouteHandler): Route => ({ method: 'GET', path, handler });
  const post = (path: string, handler: RouteHandler): Route => ({ method: 'POST', path, handler });
  const json =
    (value: () => unknown): RouteHandler =>
    (call) =>
      sendJson(call, value());
  return [
    get(
      '/monitors',
      json(() => control.monitors()),
    ),
    post('/monitors/reload', reloadHandler(control)),
    post(
      '/monitors/start',
      monitorHandler('starting', 'MONITOR_START_FAILED', (id) => control.start(id)),
    ),
    post(
      '/monitors/stop',
      monitorHandler('stopping', 'MONITOR_STOP_FAILED', (id) => control.stop(id)),
    ),
    get('/config', configHandler(deps.renderConfig)),
    get(
      '/registered',
      json(() => {
        const r = info.registered();
        return { collectors: r.collectors, sinks: r.sinks };
      }),
    ),
    get('/version', (call) => send(call.res, call.req, 200, TEXT_PLAIN, `v${info.version}`)),
    get(
      '/status',
      json(() => status.server()),
    ),
    get(
      '/status/monitors',
      json(() => status.monitors()),
    ),
    // Toggles debug output and answers the new state (Blip's /debug takes any method).
    post(
      '/debug',
      json(() => ({ debugging: info.toggleDebug() })),
    ),
    // Not in Blip's API: liveness and readiness probes.
    get('/healthz', (call) => sendText(call.res, call.req, 200, 'ok')),
    get('/readyz', readyHandler(deps.ready)),
    ...(deps.extraRoutes ?? []),
  ];
}

/** Answer a handler's failure: sonde errors with their code's status, anything else 500. */
function answerFailure(events: Events | undefined) {
  return (err: unknown, req: IncomingMessage, res: ServerResponse): void => {
    if (err instanceof ApiAnswer) return sendText(res, req, err.httpStatus, err.message);
    if (err instanceof SondeError) return sendText(res, req, err.httpStatus, escapeHtml(err.message));
    events?.error('server-api-error', '', errorMessage(err));
    sendText(res, req, HTTP_INTERNAL, INTERNAL_ERROR);
  };
}

/** `api.tls` as Node's server options: a client certificate the CA signed is required with `clientCa`. */
function tlsOptions(tls: ApiDeps['tls']): HttpsOptions | undefined {
  if (tls === undefined) return undefined;
  return {
    cert: tls.cert,
    key: tls.key,
    ...(tls.clientCa ? { ca: tls.clientCa, requestCert: true, rejectUnauthorized: true } : {}),
  };
}

/** The management API: not listening until listen(). */
export interface Api {
  /** The HTTP(S) server. */
  readonly server: Server;
  /**
   * Listen on `bind` (`host:port`, `[v6]:port` or `:port` for every interface: `::`, or
   * `0.0.0.0` without IPv6) and resolve with the bound address as `host:port` (`[v6]:port`),
   * with the real port when `bind` asked for port 0. May be called again after a failure.
   */
  listen(bind: string): Promise<string>;
  /**
   * Stop: no new connection is accepted, a request arriving on a kept-alive connection is
   * answered `503 server is shutting down` and its connection closed, idle connections are
   * closed, requests in flight finish (their connections close once answered). Resolves when
   * no connection is left; calling it again returns the same promise.
   */
  close(): Promise<void>;
}

/**
 * Build the API (not listening): the routes behind the checks made on every request (503
 * while closing, the Host, the token) and on every state change (cross-site).
 */
export function buildApi(deps: ApiDeps): Api {
  const bindHost = splitHostPort(deps.bind ?? DEFAULT_BIND).host;
  const allowed = deps.allowedHosts ?? [];
  const tls = deps.tls !== undefined;
  // The host the server is bound to ('' before it listens); read per request.
  const listening = (): string => {
    const addr = l.server.address();
    return addr !== null && typeof addr === 'object' ? addr.address : '';
  };
  const router = new Router(apiRoutes(deps), {
    bodyLimit: LISTENER_LIMITS.bodyLimit,
    admit: (req, res, path) =>
      admit(req, res, {
        host: { bindHost: isWildcard(bindHost) || isWildcard(listening()) ? '' : bindHost, allowed },
        tls,
        token: deps.token,
        tokenExempt: PROBES.has(path) || deps.public?.(path) === true,
      }),
    admitChange: (req, res) => {
      if (!admitChange(req, res, tls)) return false;
      if (deps.readOnly !== true) return true;
      sendText(res, req, 403, READ_ONLY_MESSAGE);
      return false;
    },
    onError: answerFailure(deps.events),
  });
  const l = createListener(router.handle, { keepAliveMs: API_KEEP_ALIVE_MS, tls: tlsOptions(deps.tls) });
  return {
    server: l.server,
    async listen(bind) {
      const { host, port } = parseHostPort(bind, 'bind address');
      return l.listen(host, port);
    },
    close() {
      router.shutdown();
      return l.close();
    },
  };
}

/** Listen on `bind`; see Api.listen. */
export function listenApi(api: Api, bind: string): Promise<string> {
  return api.listen(bind);
}
