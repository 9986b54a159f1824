/**
 * The one outbound HTTP(S) POST of the sinks (datadog, signalfx, chronosphere,
 * prom-pushgateway, otlp): a deadline (the caller's AbortSignal and a timeout), optional
 * basic auth taken from the configured URL, the `http.proxy` setting and a bounded response
 * body. Through a proxy, plain-http targets are forwarded (absolute URI on the request line)
 * and https targets are tunnelled with CONNECT, which is what Go's `http.ProxyURL` does.
 *
 * Built on node:http rather than fetch because Node 20's fetch cannot use a proxy without
 * the undici package. No error message holds a credential: neither the proxy URL nor the
 * user info of a target URL.
 */
import { Buffer } from 'node:buffer';
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import { errorMessage } from '../core/errors.js';
import type { HttpClient, HttpPost } from '../core/sink.js';
import { abortReason, withDeadline } from '../util/abort.js';

/** Upper bound for one request when the caller gives no `timeoutMs`. */
export const DEFAULT_POST_TIMEOUT_MS = 30_000;

/**
 * One POST: the request an embedding program's HTTP client gets too (url without user
 * info, see {@link parseTarget}; `timeoutMs` default {@link DEFAULT_POST_TIMEOUT_MS}), plus
 * the transport settings of sonde's own client.
 */
export interface HttpPostRequest extends HttpPost {
  /** `http.proxy`: `http://[user:password@]host:port` (or `https://`). Empty = direct. */
  proxy?: string;
  /** Connection reuse for direct requests (keep-alive agent of the sink). */
  agent?: http.Agent;
  /** Extra trusted CA for https targets (tests with a private CA). */
  ca?: string | Buffer;
}

/** What came back: any status (the caller decides what counts as success). */
export interface HttpResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** `Content-Type` in lowercase, '' when absent. */
  contentType: string;
  /** Response body, cut at 1 MiB. */
  body: Buffer;
}

const MAX_BODY = 1 << 20;

/** Where to POST: the URL without user info, and basic auth when it had some. */
export interface PostTarget {
  /** URL without user info, used for the request and in messages. */
  readonly url: string;
  /** `Basic <base64>` when the configured URL had user info. */
  readonly authorization?: string;
}

/**
 * Parse an absolute http(s) URL. User info moves to an `Authorization: Basic` value, as Go's
 * HTTP client (and so Blip) does with it. Throws `invalid <what>: <reason>` without echoing
 * the value (it may hold a password).
 */
export function parseTarget(raw: string, what: string): PostTarget {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new Error(`invalid ${what}: not an absolute URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new Error(`invalid ${what}: scheme must be http or https, not ${u.protocol.replace(/:$/, '')}`);
  }
  if (u.username === '' && u.password === '') return { url: u.href };
  const authorization = basicAuth(u);
  u.username = '';
  u.password = '';
  return { url: u.href, authorization };
}

/** A response body as text for an error message: UTF-8, trimmed, at most 512 characters. */
export function bodyText(body: Uint8Array): string {
  const text = new TextDecoder().decode(body).trim();
  return text.length > 512 ? `${text.slice(0, 512)}…` : text;
}

/** `Basic <base64(user:password)>` of a URL's user info. */
function basicAuth(u: URL): string {
  const user = decodeURIComponent(u.username);
  const pass = decodeURIComponent(u.password);
  return `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
}

function proxyAuth(proxy: URL): Record<string, string> {
  if (proxy.username === '' && proxy.password === '') return {};
  return { 'Proxy-Authorization': basicAuth(proxy) };
}

function defaultPort(u: URL): number {
  if (u.port !== '') return Number(u.port);
  return u.protocol === 'https:' ? 443 : 80;
}

/**
 * Open a CONNECT tunnel through `proxy` to host:port; resolves with the raw socket, which the
 * caller then owns. Until then the CONNECT request owns the socket, and `signal` destroys it
 * in every phase: connecting to the proxy, waiting for its answer, or an answer that comes
 * after the abort.
 */
function connectTunnel(
  proxy: URL,
  host: string,
  port: number,
  ca: string | Buffer | undefined,
  signal: AbortSignal,
): Promise<Duplex> {
  const authority = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  return new Promise((resolve, reject) => {
    const mod = proxy.protocol === 'https:' ? https : http;
    const req = mod.request({
      host: proxy.hostname,
      port: defaultPort(proxy),
      method: 'CONNECT',
      path: authority,
      headers: { Host: authority, ...proxyAuth(proxy) },
      // A socket of its own, never pooled: it becomes the tunnel or is destroyed.
      agent: false,
      signal,
      ...(ca !== undefined ? { ca } : {}),
    });
    req.once('connect', (res, socket) => {
      if (signal.aborted) {
        socket.destroy();
        reject(abortReason(signal));
      } else if (res.statusCode !== 200) {
        socket.destroy();
        reject(new Error(`proxy refused CONNECT to ${authority}: HTTP ${res.statusCode ?? 0}`));
      } else {
        resolve(socket);
      }
    });
    req.on('error', (err) => {
      req.destroy();
      reject(signal.aborted ? abortReason(signal) : new Error(`proxy connect: ${err.message}`));
    });
    req.end();
  });
}

/** Request options and the module to send them with; `tunnel` is set when CONNECT was used. */
interface Route {
  mod: typeof http | typeof https;
  options: http.RequestOptions;
  /** The CONNECT socket and the TLS session over it: both destroyed when the POST ends. */
  tunnel?: Duplex[];
}

/** How to reach `target`: directly, forwarded by the proxy, or through a CONNECT tunnel. */
async function route(
  target: URL,
  headers: Record<string, string>,
  req: HttpPostRequest,
  signal: AbortSignal,
): Promise<Route> {
  const proxy = req.proxy ? new URL(req.proxy) : undefined;
  const isHttps = target.protocol === 'https:';
  if (proxy && !isHttps) {
    // Forward proxy: absolute URI on the request line, to the proxy.
    const options = {
      host: proxy.hostname,
      port: defaultPort(proxy),
      path: target.href,
      headers: { ...headers, Host: target.host, ...proxyAuth(proxy) },
    };
    return { mod: http, options };
  }
  const options: https.RequestOptions = {
    host: target.hostname,
    port: defaultPort(target),
    path: `${target.pathname}${target.search}`,
    headers,
    ...(isHttps && req.ca !== undefined ? { ca: req.ca } : {}),
  };
  if (!proxy) {
    if (req.agent) options.agent = req.agent;
    return { mod: isHttps ? https : http, options };
  }
  const raw = await connectTunnel(proxy, target.hostname, defaultPort(target), req.ca, signal);
  if (signal.aborted) {
    raw.destroy();
    throw abortReason(signal);
  }
  const tunnel = tls.connect({
    socket: raw,
    servername: target.hostname,
    ...(req.ca !== undefined ? { ca: req.ca } : {}),
  });
  // No agent: node then takes the connection from createConnection. The socket already
  // speaks TLS, so the request itself goes out with the plain http module.
  options.createConnection = () => tunnel;
  return { mod: http, options, tunnel: [tunnel, raw] };
}

/**
 * How a sink posts: with the HTTP client the embedding program's factory made for it (see
 * `httpClient` in SinkContext; it has its own transport, so proxy, agent and CA stay
 * unused), else with {@link httpPost}.
 */
export function sinkPoster(client: HttpClient | undefined): (req: HttpPostRequest) => Promise<HttpResponse> {
  if (client === undefined) return httpPost;
  return async ({ url, headers, authorization, body, signal, timeoutMs }) => {
    const a = await client({
      url,
      body,
      ...(headers ? { headers } : {}),
      ...(authorization !== undefined ? { authorization } : {}),
      ...(signal ? { signal } : {}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    });
    const data = Buffer.from(a.body.buffer, a.body.byteOffset, a.body.byteLength);
    return {
      status: a.status,
      headers: a.headers,
      contentType: a.contentType,
      body: data.subarray(0, MAX_BODY),
    };
  };
}

/**
 * POST `body` to `url` and read the whole response. Resolves for every HTTP status; rejects
 * `POST <url>: <reason>` when no answer came: transport error, `request aborted: <signal
 * reason>` or `request timeout after <ms> ms`.
 */
export async function httpPost(req: HttpPostRequest): Promise<HttpResponse> {
  const target = new URL(req.url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    throw new Error(`unsupported URL scheme ${target.protocol} in ${withoutUserInfo(target, req.url)}`);
  }
  const body = typeof req.body === 'string' ? Buffer.from(req.body) : req.body;
  const headers: Record<string, string> = { ...req.headers, 'Content-Length': String(body.length) };
  if (req.authorization !== undefined) headers['Authorization'] = req.authorization;
  const ms = req.timeoutMs ?? DEFAULT_POST_TIMEOUT_MS;
  const deadline = withDeadline(req.signal, ms, `request timeout after ${ms} ms`);
  let tunnel: Duplex[] = []; // a CONNECT tunnel serves one request
  try {
    if (deadline.signal.aborted) throw deadline.signal.reason;
    const r = await route(target, headers, req, deadline.signal);
    tunnel = r.tunnel ?? [];
    return await exchange(r.mod, { ...r.options, method: 'POST' }, body, deadline.signal);
  } catch (err) {
    let reason = errorMessage(err);
    if (deadline.signal.aborted) {
      reason = errorMessage(deadline.signal.reason);
      if (req.signal?.aborted === true) reason = `request aborted: ${reason}`;
    }
    throw new Error(`POST ${withoutUserInfo(target, req.url)}: ${reason}`, { cause: err });
  } finally {
    for (const socket of tunnel) socket.destroy();
    deadline.done();
  }
}

/** `raw` as given when it holds no user info, else the URL with the user info removed. */
function withoutUserInfo(u: URL, raw: string): string {
  if (u.username === '' && u.password === '') return raw;
  const shown = new URL(u.href);
  shown.username = '';
  shown.password = '';
  return shown.href;
}

/**
 * Send one request and read its answer. `signal` destroys the request, its socket and the
 * response in every phase (connecting, waiting for the answer, reading the body) and rejects
 * at once with the abort reason; an answer cut short rejects too.
 */
function exchange(
  mod: typeof http | typeof https,
  options: http.RequestOptions,
  body: Uint8Array,
  signal: AbortSignal,
): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const r = mod.request({ ...options, signal }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        if (size >= MAX_BODY) return;
        chunks.push(c);
        size += c.length;
      });
      res.once('end', () => {
        signal.removeEventListener('abort', onAbort);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          contentType: (res.headers['content-type'] ?? '').toLowerCase(),
          body: Buffer.concat(chunks).subarray(0, MAX_BODY),
        });
      });
      res.on('error', fail);
      res.once('close', () => {
        if (!res.complete) fail(new Error('response ended before its body was complete'));
      });
    });
    const onAbort = (): void => {
      r.destroy();
      fail(abortReason(signal));
    };
    function fail(err: Error): void {
      signal.removeEventListener('abort', onAbort);
      r.destroy();
      reject(err);
    }
    signal.addEventListener('abort', onAbort, { once: true });
    r.on('error', fail);
    r.end(body);
  });
}
