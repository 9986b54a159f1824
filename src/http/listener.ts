/**
 * Start an HTTP listener the way Prometheus exporters do: on one or more addresses, with an
 * optional web configuration file (`web.config.file`, see web-config.ts) that turns on TLS,
 * client certificates, basic authentication, extra headers and a rate limit. Every sonde
 * listener that serves Prometheus (the per-monitor exporter, the agent's probe endpoint)
 * starts through startWebListeners(), with the limits of http-guard.ts.
 */
import { statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServerOptions as HttpsOptions } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { errorMessage } from '../core/errors.js';
import { sendText } from './answer.js';
import { createListener, type Listener } from './server.js';
import { parseHostPort } from '../util/net.js';
import {
  certificateSans,
  loadWebConfig,
  type WebConfig,
  type WebRateLimit,
  type WebTlsConfig,
} from './web-config.js';

/** A listener's request handler (Node's http signature). */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** Successful checks kept, so that a scraper's repeated credentials skip bcrypt. */
const AUTH_CACHE_SIZE = 100;
/** bcrypt checks waiting their turn (one runs at a time); beyond this, `429`. */
const AUTH_QUEUE_LIMIT = 32;

/**
 * `basic_auth_users`: checks `Authorization: Basic` against bcrypt hashes, one bcrypt at a
 * time. Successful checks are remembered by an HMAC of user, hash and password under a key
 * made at the first check and never shown: the cache holds no password, and a rotated hash misses.
 * An unknown user costs a bcrypt like a known one (against a real user's hash, so the same
 * cost), so timing does not tell which users exist.
 */
export class BasicAuth {
  readonly #users: ReadonlyMap<string, string>;
  readonly #decoy: string;
  /** The HMAC key, made at the first check (Node's crypto is loaded then, not at start). */
  #key: Buffer | undefined;
  readonly #ok = new Map<string, Buffer>();
  #queue: Promise<unknown> = Promise.resolve();
  #waiting = 0;

  constructor(users: ReadonlyMap<string, string>) {
    this.#users = users;
    this.#decoy = users.values().next().value ?? '';
  }

  /** Whether users are configured (otherwise every request passes). */
  get enabled(): boolean {
    return this.#users.size > 0;
  }

  /** `true` when the header carries a user's password; `busy` when too many checks wait. */
  async check(authorization: string | undefined): Promise<boolean | 'busy'> {
    const creds = basicCredentials(authorization);
    if (creds === undefined) return false;
    const hash = this.#users.get(creds.user);
    const crypto = process.getBuiltinModule('node:crypto');
    const mac = crypto
      .createHmac('sha256', (this.#key ??= crypto.randomBytes(32)))
      .update(`${creds.user}\0${hash ?? this.#decoy}\0${creds.password}`)
      .digest();
    const id = mac.toString('base64');
    const seen = this.#ok.get(id);
    if (hash !== undefined && seen !== undefined && crypto.timingSafeEqual(seen, mac)) return true;
    if (this.#waiting >= AUTH_QUEUE_LIMIT) return 'busy';
    this.#waiting++;
    // bcryptjs is imported on the first check: only listeners with basic auth load it.
    const run = this.#queue.then(async () =>
      (await import('bcryptjs')).default.compare(creds.password, hash ?? this.#decoy),
    );
    this.#queue = run.catch(() => false);
    let ok: boolean;
    try {
      ok = (await run) && hash !== undefined;
    } catch {
      ok = false;
    } finally {
      this.#waiting--;
    }
    if (ok) {
      if (this.#ok.size >= AUTH_CACHE_SIZE) this.#ok.delete(this.#ok.keys().next().value ?? '');
      this.#ok.set(id, mac);
    }
    return ok;
  }
}

/** User and password of `Authorization: Basic <base64 user:password>`, or undefined. */
export function basicCredentials(header: string | undefined): { user: string; password: string } | undefined {
  if (header === undefined || header.length < 6 || header.slice(0, 6).toLowerCase() !== 'basic ')
    return undefined;
  const b64 = header.slice(6);
  if (b64.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) return undefined;
  const text = Buffer.from(b64, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 0) return undefined;
  return { user: text.slice(0, colon), password: text.slice(colon + 1) };
}

/** `rate_limit`: a token bucket of `burst` tokens, one added every interval. */
export class RateLimiter {
  readonly #limit: WebRateLimit;
  readonly #now: () => number;
  #tokens: number;
  #at: number;

  constructor(limit: WebRateLimit, now: () => number = Date.now) {
    this.#limit = limit;
    this.#now = now;
    this.#tokens = limit.burst;
    this.#at = now();
  }

  /** Take a token when one is there. */
  allow(): boolean {
    const now = this.#now();
    const { intervalMs, burst } = this.#limit;
    this.#tokens = Math.min(burst, this.#tokens + (now - this.#at) / intervalMs);
    this.#at = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}

/** A short text answer with Go's error headers. */
function plain(res: ServerResponse, req: IncomingMessage, code: number, text: string, extra = {}): void {
  sendText(res, req, code, text, { 'X-Content-Type-Options': 'nosniff', ...extra });
}

/**
 * Wrap `handler` with what the web configuration asks of every request: the rate limit
 * (`429`), the extra headers, then basic authentication (`401` with
 * `WWW-Authenticate: Basic`).
 */
export function webGate(config: WebConfig | undefined, handler: RequestHandler): RequestHandler {
  if (config === undefined) return handler;
  const auth = new BasicAuth(config.users);
  const limiter = config.rateLimit === undefined ? undefined : new RateLimiter(config.rateLimit);
  const headers = Object.entries(config.headers);
  return (req, res) => {
    if (limiter !== undefined && !limiter.allow()) {
      plain(res, req, 429, 'Too Many Requests');
      return;
    }
    for (const [name, value] of headers) res.setHeader(name, value);
    if (!auth.enabled) {
      handler(req, res);
      return;
    }
    auth.check(req.headers.authorization).then(
      (ok) => {
        if (res.destroyed) return;
        if (ok === true) handler(req, res);
        else if (ok === 'busy') plain(res, req, 429, 'Too Many Requests');
        else plain(res, req, 401, 'Unauthorized', { 'WWW-Authenticate': 'Basic' });
      },
      (err: unknown) => plain(res, req, 500, `Internal Server Error: ${errorMessage(err)}`),
    );
  };
}

/** Node's TLS server options for `tls_server_config`. */
export function tlsServerOptions(tls: WebTlsConfig): HttpsOptions {
  const requestCert = tls.clientAuth !== 'NoClientCert';
  return {
    cert: tls.cert,
    key: tls.key,
    ...(tls.clientCa !== undefined ? { ca: tls.clientCa } : {}),
    requestCert,
    // Only RequireAndVerifyClientCert lets the handshake itself refuse; the other policies
    // are checked once the handshake is done (clientCertProblem).
    rejectUnauthorized: tls.clientAuth === 'RequireAndVerifyClientCert',
    minVersion: tls.minVersion,
    maxVersion: tls.maxVersion,
    ...(tls.ciphers !== undefined ? { ciphers: tls.ciphers } : {}),
    honorCipherOrder: tls.honorCipherOrder,
    ...(tls.ecdhCurve !== undefined ? { ecdhCurve: tls.ecdhCurve } : {}),
  };
}

/** Why a TLS client is refused once its handshake is done, or undefined. */
export function clientCertProblem(socket: TLSSocket, tls: WebTlsConfig): string | undefined {
  if (tls.clientAuth === 'NoClientCert') return undefined;
  const cert = socket.getPeerX509Certificate();
  const required =
    tls.clientAuth === 'RequireAnyClientCert' || tls.clientAuth === 'RequireAndVerifyClientCert';
  if (cert === undefined && required) return 'no client certificate';
  const verify =
    tls.clientAuth === 'VerifyClientCertIfGiven' || tls.clientAuth === 'RequireAndVerifyClientCert';
  if (cert !== undefined && verify && !socket.authorized)
    return `client certificate not verified: ${String(socket.authorizationError)}`;
  if (tls.allowedSans !== undefined) {
    const allowed = tls.allowedSans;
    if (cert === undefined || !certificateSans(cert).some((san) => allowed.includes(san)))
      return 'client certificate has none of the allowed SANs';
  }
  return undefined;
}

/** Split a `web.listen-address` value: one address or a comma-separated list. */
export function splitListenAddresses(text: string): string[] {
  const list = text.split(',').map((a) => a.trim());
  for (const a of list) parseHostPort(a, 'listen address');
  return list;
}

/** Listen on `listen`; resolves with the bound `host:port` (`[v6]:port` for IPv6). */
async function listenOn(listener: Listener, listen: string): Promise<string> {
  const { host, port } = parseHostPort(listen, 'listen address');
  try {
    return await listener.listen(host, port);
  } catch (err) {
    throw new Error(`cannot listen on ${listen}: ${errorMessage(err)}`, { cause: err });
  }
}

export interface WebListenArgs {
  /** Answers every request that passes the web configuration's checks. */
  handler: RequestHandler;
  /** Addresses (`host:port`, `:port`, `[v6]:port`): a list, or one text with commas. */
  listen: string | readonly string[];
  /** `web.config.file`; undefined or '' = plain HTTP, no authentication. */
  webConfigFile?: string | undefined;
  /** The setting that names the file, for errors (`exporter.flags.web.config.file`). */
  configKey?: string;
  /** Idle time of a kept-alive connection (Node's default when unset). */
  keepAliveMs?: number;
  /** Told about refused TLS clients and server errors. */
  debug?: (message: string) => void;
  /**
   * Told, once per change, when the web configuration file changed but cannot be used (the
   * running configuration stays); without it, the debug line only.
   */
  onReloadError?: (message: string) => void;
}

/** Listeners started by startWebListeners(). */
export interface WebListeners {
  /** Bound addresses, in the order given. */
  addresses: string[];
  /** Whether they speak HTTPS. */
  tls: boolean;
  /** The configuration in use (undefined without a file). */
  config: WebConfig | undefined;
  /** Stop listening and drop every connection. */
  close(): Promise<void>;
}

/** How often at most the web configuration's files are looked at for a change. */
export const WEB_CONFIG_CHECK_MS = 1000;

/** The size and modification time of each file, '' for one that cannot be read. */
function filesStamp(files: readonly string[]): string {
  return files
    .map((f) => {
      try {
        const st = statSync(f);
        return `${st.size}:${st.mtimeMs}:${st.ino}`;
      } catch {
        return '';
      }
    })
    .join('|');
}

/** The web configuration file and the PEM files it names (inline PEM has no file). */
function watchedFiles(config: WebConfig): string[] {
  const t = config.tls;
  const files = [config.file];
  if (t === undefined) return files;
  for (const src of [t.certSource, t.keySource, t.clientCaSource])
    if (src !== undefined && !src.startsWith('tls_server_config.')) files.push(src);
  return files;
}

/**
 * The web configuration in use, read again when its file or a file it names changed (looked
 * at, at most once a second, when a connection or a request comes): new basic-auth users,
 * headers and rate limit apply to the next request, a new certificate to the next TLS
 * handshake (certificate rotation without a restart). A changed file that cannot be used
 * keeps the running configuration (told once per change); so does a change between plain
 * HTTP and TLS, which only a restart can make.
 */
class LiveWebConfig {
  config: WebConfig;
  gate: RequestHandler;
  readonly #args: WebListenArgs;
  readonly #key: string | undefined;
  #stamp: string;
  #checked = Date.now();
  readonly #servers: Listener['server'][] = [];

  constructor(config: WebConfig, args: WebListenArgs) {
    this.config = config;
    this.gate = webGate(config, args.handler);
    this.#args = args;
    this.#key = args.configKey;
    this.#stamp = filesStamp(watchedFiles(config));
  }

  /** A TLS server whose certificate follows the file. */
  follow(server: Listener['server']): void {
    this.#servers.push(server);
  }

  /** Read the files again when they changed since the last look (at most once a second). */
  check(): void {
    const now = Date.now();
    if (now - this.#checked < WEB_CONFIG_CHECK_MS) return;
    this.#checked = now;
    const stamp = filesStamp(watchedFiles(this.config));
    if (stamp === this.#stamp) return;
    this.#stamp = stamp;
    let next: WebConfig;
    try {
      next = loadWebConfig(this.config.file, this.#key);
      if ((next.tls === undefined) !== (this.config.tls === undefined))
        throw new Error(`${this.config.file}: switching between HTTP and HTTPS needs a restart`);
    } catch (err) {
      const msg = `web configuration not reloaded, the running one is kept: ${errorMessage(err)}`;
      this.#args.debug?.(msg);
      this.#args.onReloadError?.(msg);
      return;
    }
    this.config = next;
    this.gate = webGate(next, this.#args.handler);
    if (next.tls !== undefined) {
      const options = tlsServerOptions(next.tls);
      for (const server of this.#servers)
        (server as unknown as { setSecureContext(o: object): void }).setSecureContext(options);
    }
    this.#stamp = filesStamp(watchedFiles(next));
    this.#args.debug?.(`web configuration ${next.file} read again`);
  }
}

/** One listener for one address, with the listener limits and the TLS client checks. */
function makeListener(
  config: WebConfig | undefined,
  handler: RequestHandler,
  args: WebListenArgs,
  live?: LiveWebConfig,
): Listener {
  const tls = config?.tls;
  const listener = createListener(handler, {
    keepAliveMs: args.keepAliveMs,
    tls: tls === undefined ? undefined : tlsServerOptions(tls),
  });
  if (live !== undefined) {
    // Before the TLS handshake: a rotated certificate is in place for it.
    listener.server.prependListener('connection', () => live.check());
    if (tls !== undefined) live.follow(listener.server);
  }
  if (tls !== undefined) {
    listener.server.on('secureConnection', (socket: TLSSocket) => {
      const current = live?.config.tls ?? tls;
      const why = clientCertProblem(socket, current);
      if (why === undefined) return;
      args.debug?.(`refused TLS client ${socket.remoteAddress ?? ''}: ${why}`);
      socket.destroy();
    });
    listener.server.on('tlsClientError', (err: Error) =>
      args.debug?.(`TLS handshake failed: ${err.message}`),
    );
  }
  return listener;
}

/**
 * Load the web configuration file (a bad file rejects with its one-line WebConfigError),
 * then listen on every address with the same handler behind webGate(). Resolves once all
 * listen; when one address cannot be bound, the others are closed and it rejects with
 * `cannot listen on <addr>: <why>`.
 */
export async function startWebListeners(args: WebListenArgs): Promise<WebListeners> {
  const file = args.webConfigFile ?? '';
  const config = file === '' ? undefined : loadWebConfig(file, args.configKey);
  const listen = typeof args.listen === 'string' ? splitListenAddresses(args.listen) : [...args.listen];
  const live = config === undefined ? undefined : new LiveWebConfig(config, args);
  const handler: RequestHandler =
    live === undefined
      ? webGate(config, args.handler)
      : (req, res) => {
          live.check();
          live.gate(req, res);
        };
  const listeners: Listener[] = [];
  const addresses: string[] = [];
  const closeAll = (): Promise<void> =>
    Promise.all(listeners.map((l) => l.close('drop'))).then(() => undefined);
  try {
    for (const address of listen) {
      const listener = makeListener(config, handler, args, live);
      listeners.push(listener);
      addresses.push(await listenOn(listener, address));
      listener.server.on('error', (err) => args.debug?.(errorMessage(err)));
    }
  } catch (err) {
    await closeAll();
    throw err;
  }
  let closed: Promise<void> | undefined;
  return {
    addresses,
    tls: config?.tls !== undefined,
    get config() {
      return live?.config ?? config;
    },
    close: () => (closed ??= closeAll()),
  };
}
