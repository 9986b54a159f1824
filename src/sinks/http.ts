/**
 * Outbound HTTP(S) POST for sinks: a deadline (AbortSignal and/or timeout), the `http.proxy`
 * config (config.md §4.2: plain-http targets are forwarded through the proxy, https targets
 * tunnelled with CONNECT, as Go's `http.ProxyURL` does), and a bounded response body.
 *
 * Built on node:http rather than fetch because Node 20's fetch cannot use a proxy without
 * the undici package. Error messages never contain the proxy URL (it may carry a password).
 */
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';

/** One POST. */
export interface HttpPostRequest {
  /** Absolute `http://` or `https://` URL. */
  url: string;
  headers?: Record<string, string>;
  body: Uint8Array | string;
  /** Aborts the request (the retry deadline); the error text includes the abort reason. */
  signal?: AbortSignal;
  /** Abort after this many milliseconds as well (`request timeout after <ms> ms`). */
  timeoutMs?: number;
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
  /** Response body, cut at 1 MiB. */
  body: Buffer;
}

const MAX_BODY = 1 << 20;

/** Text of an abort reason: an Error's message, else the value. */
function reasonText(signal: AbortSignal): string {
  const r: unknown = signal.reason;
  if (r instanceof Error) return r.message;
  return typeof r === 'string' ? r : 'aborted';
}

function proxyAuth(proxy: URL): Record<string, string> {
  if (proxy.username === '' && proxy.password === '') return {};
  const user = decodeURIComponent(proxy.username);
  const pass = decodeURIComponent(proxy.password);
  return { 'Proxy-Authorization': `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` };
}

function defaultPort(u: URL): number {
  if (u.port !== '') return Number(u.port);
  return u.protocol === 'https:' ? 443 : 80;
}

/** Open a CONNECT tunnel through `proxy` to host:port; resolves with the raw socket. */
function connectTunnel(
  proxy: URL,
  host: string,
  port: number,
  ca: string | Buffer | undefined,
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
      ...(ca !== undefined ? { ca } : {}),
    });
    req.once('connect', (res, socket) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        reject(new Error(`proxy refused CONNECT to ${authority}: HTTP ${res.statusCode ?? 0}`));
        return;
      }
      resolve(socket);
    });
    req.once('error', (err) => reject(new Error(`proxy connect: ${err.message}`)));
    req.end();
  });
}

/**
 * POST `body` to `url` and read the whole response. Rejects on transport errors, abort and
 * timeout (message says which); resolves for every HTTP status.
 */
export async function httpPost(req: HttpPostRequest): Promise<HttpResponse> {
  const target = new URL(req.url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    throw new Error(`unsupported URL scheme ${target.protocol} in ${req.url}`);
  }
  const body = typeof req.body === 'string' ? Buffer.from(req.body) : req.body;
  const headers: Record<string, string> = { ...req.headers, 'Content-Length': String(body.length) };
  const proxy = req.proxy ? new URL(req.proxy) : undefined;

  // One controller gathers the caller's signal and the timeout.
  const ac = new AbortController();
  const onAbort = (): void =>
    ac.abort(new Error(`request aborted: ${reasonText(req.signal as AbortSignal)}`));
  if (req.signal?.aborted) onAbort();
  else req.signal?.addEventListener('abort', onAbort, { once: true });
  const timer =
    req.timeoutMs !== undefined
      ? setTimeout(() => ac.abort(new Error(`request timeout after ${req.timeoutMs} ms`)), req.timeoutMs)
      : undefined;

  let secure: tls.TLSSocket | undefined; // a CONNECT tunnel serves one request
  try {
    if (ac.signal.aborted) throw ac.signal.reason;
    let options: http.RequestOptions;
    const isHttps = target.protocol === 'https:';
    if (proxy && !isHttps) {
      // Forward proxy: absolute URI on the request line, to the proxy.
      options = {
        host: proxy.hostname,
        port: defaultPort(proxy),
        path: target.href,
        headers: { ...headers, Host: target.host, ...proxyAuth(proxy) },
      };
    } else {
      options = {
        host: target.hostname,
        port: defaultPort(target),
        path: `${target.pathname}${target.search}`,
        headers,
      };
      if (proxy) {
        const raw = await abortable(
          connectTunnel(proxy, target.hostname, defaultPort(target), req.ca),
          ac.signal,
        );
        secure = tls.connect({
          socket: raw,
          servername: target.hostname,
          ...(req.ca !== undefined ? { ca: req.ca } : {}),
        });
        // No agent: node then takes the connection from createConnection.
        const socket = secure;
        options.createConnection = () => socket;
      } else if (req.agent) {
        options.agent = req.agent;
      }
      if (isHttps && req.ca !== undefined) (options as https.RequestOptions).ca = req.ca;
    }
    // Through a proxy the socket is either plain (forwarding) or our own TLS socket (tunnel).
    const mod = isHttps && !proxy ? https : http;
    return await exchange(mod, { ...options, method: 'POST', signal: ac.signal }, body);
  } catch (err) {
    if (ac.signal.aborted) throw ac.signal.reason as Error;
    throw err;
  } finally {
    secure?.destroy();
    if (timer) clearTimeout(timer);
    req.signal?.removeEventListener('abort', onAbort);
  }
}

/** Settle with `p`, or reject as soon as `signal` aborts. */
function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

function exchange(
  mod: typeof http | typeof https,
  options: http.RequestOptions,
  body: Uint8Array,
): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const r = mod.request(options, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        if (size >= MAX_BODY) return;
        chunks.push(c);
        size += c.length;
      });
      res.once('end', () => {
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).subarray(0, MAX_BODY),
        });
      });
      res.once('error', reject);
    });
    r.once('error', reject);
    r.end(body);
  });
}
