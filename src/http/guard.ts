/**
 * Protections shared by sonde's HTTP listeners (the management API and the exporter):
 * connection limits and timeouts, the raw answer to unparseable requests, the Host and
 * cross-site checks and the bearer token read from a file, and admit()/admitChange(),
 * which apply them to a request in one fixed order and answer the refusals.
 */
import { statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import type { Socket } from 'node:net';
import { errorMessage } from '../core/errors.js';
import { sendText } from './answer.js';
import { http } from './node-http.js';
import { splitHostPort } from '../util/net.js';
import { fileErrorText, MAX_SECRET_FILE_BYTES, readRegularTextSync } from '../util/read-file.js';

/** Limits every listener applies; a slow or idle client cannot hold a connection for long. */
export const LISTENER_LIMITS = {
  /** Time to receive a request's headers. */
  headersTimeoutMs: 10_000,
  /** Time to receive a whole request, headers and body. */
  requestTimeoutMs: 10_000,
  /** How often Node checks the two timeouts above (its default, 30 s, would let them run long). */
  checkIntervalMs: 1_000,
  /** Time to finish a TLS handshake. */
  handshakeTimeoutMs: 10_000,
  /**
   * Open connections. At the cap, idle ones (kept alive between requests, or silent for a
   * second since they connected) are closed, longest idle first, to make room; only when
   * every one is busy is a new connection closed as soon as it is accepted.
   */
  maxConnections: 512,
  /** Request body limit. */
  bodyLimit: 1024 * 1024,
} as const;

/** Node's `http.createServer` options carrying the limits above. */
export function listenerOptions(): {
  headersTimeout: number;
  requestTimeout: number;
  connectionsCheckingInterval: number;
} {
  return {
    headersTimeout: LISTENER_LIMITS.headersTimeoutMs,
    requestTimeout: LISTENER_LIMITS.requestTimeoutMs,
    connectionsCheckingInterval: LISTENER_LIMITS.checkIntervalMs,
  };
}

/** The status of the raw answer to a request Node could not parse or did not get in time. */
function clientErrorStatus(err: Error): number {
  const code = 'code' in err ? String(err.code) : '';
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 408;
  if (code === 'HPE_HEADER_OVERFLOW') return 431;
  return 400;
}

/**
 * Answer a request Node's parser refused (malformed, too large, too slow) with a short text
 * reason, then close the connection. A reset connection is left alone.
 */
export function answerClientError(err: Error, socket: Socket): void {
  const code = 'code' in err ? String(err.code) : '';
  if (code === 'ECONNRESET' || socket.destroyed) return;
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const status = clientErrorStatus(err);
  const body = `${status} ${http.STATUS_CODES[status] ?? 'Bad Request'}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Bad Request'}\r\n` +
      'Content-Type: text/plain; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}

/** Host names and addresses always accepted for a listener: the loopback names. */
const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1']);

/** A host name as compared: lower case, without a trailing dot. */
function normalHost(host: string): string {
  return host.toLowerCase().replace(/\.$/, '');
}

export interface HostRule {
  /** The listener's configured host ('' when it listens on every interface). */
  bindHost: string;
  /** `api.allowed-hosts`: `name` (on the listener's port) or `name:port` (exactly). */
  allowed: readonly string[];
}

/** True when the listener's host stands for every interface. */
export function isWildcard(host: string): boolean {
  return host === '' || host === '0.0.0.0' || host === '::' || host === '[::]';
}

/**
 * Whether a `Host` header names this listener, reached on `port` (the port the connection
 * came in on): the loopback names, the bound host, any IP literal when bound to every
 * interface, or an `allowed` entry. A request without a Host header (HTTP/1.0) is accepted:
 * browsers always send one. `tls` sets the port a Host without one means.
 */
export function hostAllowed(header: string | undefined, rule: HostRule, port: number, tls: boolean): boolean {
  if (header === undefined) return true;
  const parts = splitHostPort(header.trim());
  const portText = parts.port ?? String(tls ? 443 : 80);
  if (!/^\d{1,5}$/.test(portText)) return false;
  const host = normalHost(parts.host);
  if (host === '') return false;
  const samePort = Number(portText) === port;
  for (const entry of rule.allowed) {
    const e = splitHostPort(entry.trim());
    if (normalHost(e.host) !== host) continue;
    if (e.port === undefined ? samePort : Number(e.port) === Number(portText)) return true;
  }
  if (!samePort) return false;
  if (LOOPBACK.has(host)) return true;
  const bind = normalHost(splitHostPort(rule.bindHost).host);
  if (isWildcard(rule.bindHost)) return isIP(host) !== 0;
  return host === bind;
}

/** A Host header as a browser origin's host would show it (`a:80` → `a` on plain HTTP). */
function originHost(scheme: 'http:' | 'https:', host: string): string | undefined {
  try {
    return new URL(`${scheme}//${host}`).host;
  } catch {
    return undefined;
  }
}

/**
 * Why a state-changing request is refused as cross-site, or undefined when it is not:
 * `Sec-Fetch-Site` must be `same-origin` or `none` when sent, and `Origin`, when sent, must
 * be this listener's own origin (the scheme and the request's Host). Clients that send
 * neither header (curl, scripts) pass.
 */
export function crossSiteReason(
  headers: { origin?: string | undefined; 'sec-fetch-site'?: string | undefined; host?: string | undefined },
  tls: boolean,
): string | undefined {
  const site = headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none')
    return 'cross-site request refused: Sec-Fetch-Site is not same-origin';
  const origin = headers.origin;
  if (origin === undefined) return undefined;
  const scheme = tls ? 'https:' : 'http:';
  let url: URL | undefined;
  try {
    url = new URL(origin);
  } catch {
    url = undefined;
  }
  const own = originHost(scheme, headers.host ?? '');
  if (url === undefined || url.protocol !== scheme || own === undefined || url.host !== own)
    return 'cross-origin request refused: Origin is not this server';
  return undefined;
}

/** A bearer token check (TokenFile, or a test's stand-in). */
export interface TokenCheck {
  check(authorization: string | undefined): boolean;
}

/** What admit() checks; a check whose setting is undefined is skipped. */
export interface AdmitRules {
  /** The listener's Host rule: a `Host` that does not name it is refused with 421. */
  host?: HostRule;
  /** Whether the listener speaks TLS (the port a Host without one means). */
  tls: boolean;
  /** A bearer token every request must carry (401 without it)… */
  token?: TokenCheck | undefined;
  /** …unless this request is exempt (the API's probes). */
  tokenExempt?: boolean;
}

/**
 * Admit a request or answer its refusal, in this order: a `Host` that does not name the
 * listener (421, connection closed: a DNS-rebinding page gets nothing more), then a missing
 * or wrong bearer token (401 with `WWW-Authenticate: Bearer`). True when admitted.
 */
export function admit(req: IncomingMessage, res: ServerResponse, rules: AdmitRules): boolean {
  if (
    rules.host !== undefined &&
    !hostAllowed(req.headers.host, rules.host, req.socket.localPort ?? 0, rules.tls)
  ) {
    const why = 'misdirected request: the Host header does not name this server (see api.allowed-hosts)';
    sendText(res, req, 421, why, { Connection: 'close' });
    return false;
  }
  if (
    rules.token !== undefined &&
    rules.tokenExempt !== true &&
    !rules.token.check(req.headers.authorization)
  ) {
    sendText(res, req, 401, 'unauthorized: missing or wrong bearer token', { 'WWW-Authenticate': 'Bearer' });
    return false;
  }
  return true;
}

/**
 * Admit a state-changing request, or refuse it with 403 and a text reason when another site
 * sent it (crossSiteReason). True when admitted.
 */
export function admitChange(req: IncomingMessage, res: ServerResponse, tls: boolean): boolean {
  const h = req.headers;
  const site = h['sec-fetch-site'];
  const why = crossSiteReason(
    { origin: h.origin, 'sec-fetch-site': typeof site === 'string' ? site : undefined, host: h.host },
    tls,
  );
  if (why === undefined) return true;
  sendText(res, req, 403, why);
  return false;
}

/** SHA-256 of a token: equal-length digests let the comparison run in constant time. */
function digest(token: string): Buffer {
  return process.getBuiltinModule('node:crypto').createHash('sha256').update(token, 'utf8').digest();
}

/** The token of a file's text: trailing line breaks removed; one word, no spaces. */
function tokenText(text: string, path: string, key: string): string {
  const token = text.replace(/[\r\n]+$/, '');
  if (token === '') throw new Error(`${key}: token file ${path} is empty`);
  if (!/^[\x21-\x7e]+$/.test(token))
    throw new Error(`${key}: token file ${path} must hold one line of printable characters without spaces`);
  return token;
}

/** The file error's code only: its message would be the same, and never holds the content. */
function readError(err: unknown, path: string, key: string): Error {
  return new Error(`${key}: cannot read token file ${path}: ${fileErrorText(err)}`);
}

/**
 * A bearer token held in a file (`api.token-file`, `exporter.token-file`). Read when made
 * (a missing, empty or malformed file throws an error naming the key and the file, never the
 * content), then re-read when the file changes, looked at most once a second. While the file
 * is missing or unusable, every token is refused; `onError` is told once per failure.
 */
export class TokenFile {
  readonly path: string;
  readonly key: string;
  #digest: Buffer | undefined;
  #stamp: string;
  #checkedAt: number;
  #failing = false;
  readonly #now: () => number;
  readonly #onError: ((message: string) => void) | undefined;

  constructor(
    path: string,
    key: string,
    opts: { now?: () => number; onError?: (message: string) => void } = {},
  ) {
    this.path = path;
    this.key = key;
    this.#now = opts.now ?? Date.now;
    this.#onError = opts.onError;
    this.#stamp = this.#statStamp();
    this.#digest = digest(this.#read());
    this.#checkedAt = this.#now();
  }

  #statStamp(): string {
    try {
      const s = statSync(this.path);
      return `${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch (err) {
      throw readError(err, this.path, this.key);
    }
  }

  #read(): string {
    let text: string;
    try {
      text = readRegularTextSync(this.path, { maxBytes: MAX_SECRET_FILE_BYTES });
    } catch (err) {
      throw readError(err, this.path, this.key);
    }
    return tokenText(text, this.path, this.key);
  }

  /** Re-read the file when it changed since the last look (at most one look a second). */
  #refresh(): void {
    const now = this.#now();
    if (now - this.#checkedAt < 1000) return;
    this.#checkedAt = now;
    try {
      const stamp = this.#statStamp();
      if (stamp === this.#stamp && !this.#failing) return;
      this.#digest = digest(this.#read());
      this.#stamp = stamp;
      this.#failing = false;
    } catch (err) {
      this.#digest = undefined;
      this.#stamp = '';
      if (!this.#failing) this.#onError?.(errorMessage(err));
      this.#failing = true;
    }
  }

  /** Whether an `Authorization` header carries the token (`Bearer <token>`). */
  check(authorization: string | undefined): boolean {
    this.#refresh();
    const expected = this.#digest;
    if (expected === undefined || authorization === undefined) return false;
    const m = /^Bearer +(\S+) *$/i.exec(authorization);
    if (m === null) return false;
    return process.getBuiltinModule('node:crypto').timingSafeEqual(digest(m[1] ?? ''), expected);
  }
}
