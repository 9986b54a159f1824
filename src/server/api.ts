/**
 * The management HTTP API, documented in docs/api.md; its protections in docs/security.md.
 *
 * Blip routes by exact path with Go's http.ServeMux, answers errors with
 * `text/plain; charset=utf-8` bodies of one line plus `\n`, and `404 page not found` for
 * unknown paths. Fastify would answer with JSON error objects by default, so every path
 * out of fastify's own machinery is overridden here: the error handler, the not-found
 * handler (which also turns a wrong method on a known path into 405), framework errors
 * (bad URL encoding), client errors (malformed HTTP) and body parsing (bodies are ignored).
 */
import { escapeHtml } from '../util/text.js';
import { createServer as createHttpServer, STATUS_CODES } from 'node:http';
import type { RequestListener, Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import Fastify from 'fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { AgentInfo, MonitorControl } from '../core/control.js';
import { SondeError, errorMessage } from '../core/errors.js';
import type { Events } from '../core/events.js';
import type { StatusReader } from '../core/status.js';
import { parseHostPort, splitHostPort } from '../util/net.js';
import {
  LISTENER_LIMITS,
  answerClientError,
  crossSiteReason,
  hostAllowed,
  isWildcard,
  listenerOptions,
} from '../util/http-guard.js';

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
  token?: { check(authorization: string | undefined): boolean };
  /** `api.tls`: serve HTTPS; with `clientCa`, a client certificate it signed is required. */
  tls?: { cert: Buffer; key: Buffer; clientCa?: Buffer };
  /** Readiness for `GET /readyz`: undefined when ready, else why not. Default: ready. */
  ready?: () => string | undefined;
}

export const DEFAULT_BIND = '127.0.0.1:7522';
/** Idle time before a keep-alive connection to the API is closed. */
export const API_KEEP_ALIVE_MS = 5_000;

const TEXT = 'text/plain; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';

/** Fixed body of an unexpected failure: its message may hold anything, so it is not shown. */
const INTERNAL_ERROR = 'internal server error';
const STOP_LOSS_MESSAGE = 'Stop-loss prevented reloading; see sonde error log for details';

/**
 * HTTP statuses of answers that are not sonde errors but HTTP's own: an unknown path, a
 * wrong method, a malformed request, shutting down, and a bug. Every sonde error takes its
 * status from the registry in core/errors.ts (SondeError.httpStatus).
 */
const HTTP_BAD_REQUEST = 400;
const HTTP_UNAUTHORIZED = 401;
const HTTP_FORBIDDEN = 403;
const HTTP_NOT_FOUND = 404;
const HTTP_METHOD_NOT_ALLOWED = 405;
const HTTP_MISDIRECTED = 421;
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

/** Error bodies are one line: any line break inside a message becomes a space. */
function oneLine(s: string): string {
  return s.replace(/\r\n|[\r\n]/g, ' ');
}

function sendText(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply
    .code(status)
    .header('content-type', TEXT)
    .send(oneLine(message) + '\n');
}

function sendJson(reply: FastifyReply, value: unknown): FastifyReply {
  // Serialised here, not by fastify: a string value must still go out as JSON.
  return reply.code(200).header('content-type', JSON_TYPE).send(JSON.stringify(value));
}

/** The `id` query value; Go's Query().Get keeps the first of repeated keys. */
function queryId(req: FastifyRequest): string {
  const q = req.query as Record<string, string | string[] | undefined>;
  const v = q.id;
  const id = Array.isArray(v) ? v[0] : v;
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

type Handler = (req: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;

interface Endpoint {
  path: string;
  methods: HTTPMethods[];
  handler: Handler;
}

/**
 * State-changing endpoints take POST only: a link, an image or a prefetch (all GET) must
 * never start, stop, reload or toggle anything.
 */
const CHANGE: HTTPMethods[] = ['POST'];
/** HEAD is answered for read-only GET endpoints (fastify exposes it from GET). */
const READ: HTTPMethods[] = ['GET'];

/** POST /monitors/reload: stop-loss and any other load failure answer with their code's status. */
function reloadHandler(control: MonitorControl): Handler {
  return async (_req, reply) => {
    try {
      await control.reload();
    } catch (err) {
      if (!(err instanceof SondeError)) throw err;
      if (err.code === 'STOP_LOSS') throw new ApiAnswer('STOP_LOSS', STOP_LOSS_MESSAGE);
      // Every other load failure is a failed reload; SondeError messages are safe to show.
      throw new ApiAnswer('RELOAD_FAILED', `Error reloading monitors: ${escapeHtml(err.message)}`);
    }
    return reply.code(200).send();
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
): Handler {
  return async (req, reply) => {
    const id = queryId(req);
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
    return reply.code(200).send();
  };
}

/** GET /config: YAML as text, or JSON with `?json` (a presence flag: `?json`, `?json=`, `?json=1`). */
function configHandler(renderConfig: ApiDeps['renderConfig']): Handler {
  return async (req, reply) => {
    const q = req.query as Record<string, unknown>;
    if (Object.hasOwn(q, 'json')) return sendJson(reply, renderConfig.json());
    // Go sniffs YAML text as text/plain; kept so browsers and curl show it inline.
    return reply.code(200).header('content-type', TEXT).send(renderConfig.yaml());
  };
}

/** The liveness and readiness probes: open without a token, GET and HEAD only. */
const PROBES = new Set(['/healthz', '/readyz']);

/** GET /readyz: `ready`, or 503 with the reason the agent gives. */
function readyHandler(ready: ApiDeps['ready']): Handler {
  return async (_req, reply) => {
    const why = ready?.();
    if (why !== undefined) return sendText(reply, HTTP_UNAVAILABLE, `not ready: ${why}`);
    return sendText(reply, 200, 'ready');
  };
}

function endpoints(deps: ApiDeps): Endpoint[] {
  const { control, status, info } = deps;
  const json =
    (value: () => unknown): Handler =>
    async (_req, reply) =>
      sendJson(reply, value());
  return [
    { path: '/monitors', methods: READ, handler: json(() => control.monitors()) },
    { path: '/monitors/reload', methods: CHANGE, handler: reloadHandler(control) },
    {
      path: '/monitors/start',
      methods: CHANGE,
      handler: monitorHandler('starting', 'MONITOR_START_FAILED', (id) => control.start(id)),
    },
    {
      path: '/monitors/stop',
      methods: CHANGE,
      handler: monitorHandler('stopping', 'MONITOR_STOP_FAILED', (id) => control.stop(id)),
    },
    { path: '/config', methods: READ, handler: configHandler(deps.renderConfig) },
    {
      path: '/registered',
      methods: READ,
      handler: json(() => {
        const r = info.registered();
        return { collectors: r.collectors, sinks: r.sinks };
      }),
    },
    {
      path: '/version',
      methods: READ,
      handler: async (_req, reply) => reply.code(200).header('content-type', TEXT).send(`v${info.version}`),
    },
    { path: '/status', methods: READ, handler: json(() => status.server()) },
    { path: '/status/monitors', methods: READ, handler: json(() => status.monitors()) },
    // Not in Blip's API: toggles debug output and answers the new state.
    { path: '/debug', methods: CHANGE, handler: json(() => ({ debugging: info.toggleDebug() })) },
    // Not in Blip's API: liveness and readiness probes.
    { path: '/healthz', methods: READ, handler: async (_req, reply) => sendText(reply, 200, 'ok') },
    { path: '/readyz', methods: READ, handler: readyHandler(deps.ready) },
  ];
}

/** `Allow` header value for a known path: HEAD rides along with read-only GET routes. */
function allowHeader(methods: HTTPMethods[]): string {
  const all = methods.includes('POST') ? methods : [...methods, 'HEAD'];
  return all.join(', ');
}

/** Fastify's own errors carry an HTTP status; anything else is unexpected. */
function fastifyStatus(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null || !('statusCode' in err)) return undefined;
  const s = err.statusCode;
  return typeof s === 'number' && s >= 400 && s < 500 ? s : undefined;
}

/**
 * The API's HTTP(S) server with the listener limits: header and whole-request timeouts,
 * a connection cap, a short keep-alive and, for TLS, a handshake timeout.
 */
function serverFactory(tls: ApiDeps['tls']): (handler: RequestListener) => Server {
  return (handler) => {
    const base = { ...listenerOptions(), keepAliveTimeout: API_KEEP_ALIVE_MS };
    const server: Server =
      tls === undefined
        ? createHttpServer(base, handler)
        : createHttpsServer(
            {
              ...base,
              cert: tls.cert,
              key: tls.key,
              handshakeTimeout: LISTENER_LIMITS.handshakeTimeoutMs,
              ...(tls.clientCa ? { ca: tls.clientCa, requestCert: true, rejectUnauthorized: true } : {}),
            },
            handler,
          );
    server.keepAliveTimeout = API_KEEP_ALIVE_MS;
    server.maxConnections = LISTENER_LIMITS.maxConnections;
    return server;
  };
}

/** The port a request came in on: the socket's, else (injected requests) the configured one. */
function localPort(req: FastifyRequest, bind: string): number {
  const port = req.raw.socket.localPort;
  if (typeof port === 'number' && port > 0) return port;
  return Number(splitHostPort(bind).port ?? '0');
}

/** The address the server is bound to ('' before it listens). */
function boundHost(app: FastifyInstance): string {
  const addr = app.server.address();
  return addr !== null && typeof addr === 'object' ? addr.address : '';
}

/**
 * Checks made on every request before routing: shutting down (503), a `Host` that does not
 * name this listener (421), a missing or wrong bearer token (401; the probes are open).
 */
function guardRequests(app: FastifyInstance, deps: ApiDeps): { close(): void } {
  const bind = deps.bind ?? DEFAULT_BIND;
  const bindHost = splitHostPort(bind).host;
  const tls = deps.tls !== undefined;
  let closing = false;
  app.addHook('onRequest', async (req, reply) => {
    if (closing)
      return sendText(reply.header('connection', 'close'), HTTP_UNAVAILABLE, 'server is shutting down');
    const listening = boundHost(app);
    const rule = {
      bindHost: isWildcard(bindHost) || isWildcard(listening) ? '' : bindHost,
      allowed: deps.allowedHosts ?? [],
    };
    if (!hostAllowed(req.headers.host, rule, localPort(req, bind), tls)) {
      const why = 'misdirected request: the Host header does not name this server (see api.allowed-hosts)';
      return sendText(reply.header('connection', 'close'), HTTP_MISDIRECTED, why);
    }
    const path = req.url.split('?', 1)[0] ?? '';
    if (deps.token !== undefined && !PROBES.has(path) && !deps.token.check(req.headers.authorization)) {
      reply.header('www-authenticate', 'Bearer');
      return sendText(reply, HTTP_UNAUTHORIZED, 'unauthorized: missing or wrong bearer token');
    }
    return undefined;
  });
  return {
    close: () => {
      closing = true;
    },
  };
}

/** Refuse a state-changing request sent by another site's page (403). */
function refuseCrossSite(tls: boolean) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const h = req.headers;
    const origin = typeof h.origin === 'string' ? h.origin : undefined;
    const site = h['sec-fetch-site'];
    const why = crossSiteReason(
      { origin, 'sec-fetch-site': typeof site === 'string' ? site : undefined, host: h.host },
      tls,
    );
    return why === undefined ? undefined : sendText(reply, HTTP_FORBIDDEN, why);
  };
}

/** Routes, the 405/404 answers and the error handler. */
function addRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const known = new Map<string, HTTPMethods[]>();
  const crossSite = refuseCrossSite(deps.tls !== undefined);
  for (const ep of endpoints(deps)) {
    known.set(ep.path, ep.methods);
    const changes = ep.methods.includes('POST');
    app.route({
      method: ep.methods,
      url: ep.path,
      // HEAD must not start, stop, reload or toggle anything.
      exposeHeadRoute: !changes,
      ...(changes ? { onRequest: crossSite } : {}),
      handler: ep.handler,
    });
  }

  app.setNotFoundHandler(async (req, reply) => {
    const path = req.url.split('?', 1)[0] ?? '';
    const methods = known.get(path);
    if (methods) {
      reply.header('allow', allowHeader(methods));
      return sendText(reply, HTTP_METHOD_NOT_ALLOWED, 'method not allowed');
    }
    return sendText(reply, HTTP_NOT_FOUND, '404 page not found');
  });

  app.setErrorHandler(async (err: unknown, _req, reply) => {
    if (err instanceof ApiAnswer) return sendText(reply, err.httpStatus, err.message);
    if (err instanceof SondeError) return sendText(reply, err.httpStatus, escapeHtml(err.message));
    const status = fastifyStatus(err);
    if (status !== undefined) return sendText(reply, status, STATUS_CODES[status] ?? 'Bad Request');
    deps.events?.error('server-api-error', '', errorMessage(err));
    return sendText(reply, HTTP_INTERNAL, INTERNAL_ERROR);
  });
}

/**
 * Build the API (not listening). `app.inject()` works at once; `listenApi` binds it.
 * Fastify's logger stays off: sonde reports through its events, never per request.
 */
export function buildApi(deps: ApiDeps): FastifyInstance {
  const app = Fastify({
    logger: false,
    serverFactory: serverFactory(deps.tls),
    bodyLimit: LISTENER_LIMITS.bodyLimit,
    clientErrorHandler: answerClientError,
    // Fastify's own closing answer is a JSON 503; the preClose/onRequest hooks below say it in text.
    return503OnClosing: false,
    // Router-level failures such as a badly percent-encoded path (FST_ERR_BAD_URL).
    frameworkErrors: (err, _req, reply) => {
      const status = fastifyStatus(err) ?? HTTP_BAD_REQUEST;
      void sendText(reply, status, STATUS_CODES[status] ?? 'Bad Request');
    },
  });

  // Request bodies are never used: accept and drop any of them (a `curl -d ''` POST must
  // not be refused with 415). Reading it as a buffer keeps keep-alive sockets clean.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, _body, done) => {
    done(null, undefined);
  });

  const guard = guardRequests(app, deps);
  app.addHook('preClose', async () => {
    guard.close();
  });
  addRoutes(app, deps);
  return app;
}

function isErrno(err: unknown, ...codes: string[]): boolean {
  return err instanceof Error && 'code' in err && codes.includes(String(err.code));
}

/**
 * Listen on `bind` (`host:port` or `:port`) and return the bound address as `host:port`
 * (`[v6]:port` for IPv6), with the real port when `bind` asked for port 0.
 * `:port` listens on every interface: `::` (dual stack), or `0.0.0.0` without IPv6.
 */
export async function listenApi(app: FastifyInstance, bind: string): Promise<string> {
  const { host, port } = parseHostPort(bind, 'bind address');
  if (host === '') {
    try {
      await app.listen({ host: '::', port });
    } catch (err) {
      if (!isErrno(err, 'EAFNOSUPPORT', 'EADDRNOTAVAIL')) throw err;
      await app.listen({ host: '0.0.0.0', port });
    }
  } else {
    await app.listen({ host, port });
  }
  const addr = app.server.address();
  if (addr === null || typeof addr === 'string') return addr ?? bind;
  const shown = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return `${shown}:${addr.port}`;
}
