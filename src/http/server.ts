/**
 * One HTTP(S) listener on `node:http`, as every sonde listener makes it (the management API,
 * the exporter, the probe listener): the limits of http-guard.ts (header and request
 * timeouts, a connection cap, a TLS handshake timeout), the text answer to requests Node
 * cannot parse, binding with the bound address reported, and a close that either lets the
 * requests in flight finish or drops every connection.
 */
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import type { ServerOptions as HttpsOptions } from 'node:https';
import type { Socket } from 'node:net';
import { LISTENER_LIMITS, answerClientError, listenerOptions } from './guard.js';
import { http, https } from './node-http.js';

export interface ListenerOptions {
  /** Idle time of a kept-alive connection (Node's default when unset). */
  keepAliveMs?: number | undefined;
  /** Serve HTTPS with these options (certificate, key, client certificates…). */
  tls?: HttpsOptions | undefined;
}

/** A listener made by createListener(). */
export interface Listener {
  readonly server: Server;
  /** True once close() was called. */
  readonly closing: boolean;
  /**
   * Listen on `host` ('' = every interface: `::`, or `0.0.0.0` without IPv6) and `port`;
   * resolves with the bound address, `host:port` or `[v6]:port` (the real port for port 0).
   * Rejects with Node's error (`listen EADDRINUSE: …`); it may be called again after that.
   */
  listen(host: string, port: number): Promise<string>;
  /**
   * Stop accepting connections. `drain` (default): idle kept-alive connections are closed
   * now and every other one as soon as its answer is out; `drop`: every connection is closed
   * now. Resolves once none is left; calling it again returns the same promise.
   */
  close(how?: 'drain' | 'drop'): Promise<void>;
}

/** The address a server is bound to, `host:port` (`[v6]:port` for IPv6), or '' before it listens. */
export function boundAddress(server: Server): string {
  const addr = server.address();
  if (addr === null) return '';
  if (typeof addr === 'string') return addr;
  return `${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`;
}

/** Make an HTTP server (HTTPS with `tls`) carrying the listener limits; not listening yet. */
export function createListener(handler: RequestListener, o: ListenerOptions = {}): Listener {
  const base = {
    ...listenerOptions(),
    ...(o.keepAliveMs !== undefined ? { keepAliveTimeout: o.keepAliveMs } : {}),
  };
  const server: Server =
    o.tls === undefined
      ? http.createServer(base, handler)
      : https().createServer(
          { ...base, handshakeTimeout: LISTENER_LIMITS.handshakeTimeoutMs, ...o.tls },
          handler,
        );
  if (o.keepAliveMs !== undefined) server.keepAliveTimeout = o.keepAliveMs;
  capConnections(server, LISTENER_LIMITS.maxConnections);
  checkTimeoutsWhileConnected(server);
  server.on('clientError', answerClientError);
  let closing = false;
  let closed: Promise<void> | undefined;
  // While closing, a connection is closed as soon as its last answer is out, instead of
  // idling until its keep-alive timeout.
  const closeIdle = (): void => {
    server.closeIdleConnections();
  };
  server.on('request', (_req, res) => {
    res.once('finish', () => {
      if (closing) setImmediate(closeIdle);
    });
  });
  return {
    server,
    get closing() {
      return closing;
    },
    listen: (host, port) => listen(server, host, port, () => closing),
    close(how = 'drain') {
      closing = true;
      // The callback comes once every connection is gone (with an error when not listening).
      closed ??= new Promise<void>((resolve) => server.close(() => resolve()));
      if (how === 'drop') server.closeAllConnections();
      else server.closeIdleConnections();
      return closed;
    },
  };
}

/** The names Node (22 and 24) gives the timeout check's timer and the handler that starts it. */
const CHECK_TIMER = 'http.server.connectionsCheckingInterval';
const CHECK_SETUP = 'setupConnectionsTracking';

/**
 * Node checks the header and request timeouts of a server's connections every
 * `connectionsCheckingInterval` (1 s here) with a timer that runs for the server's whole
 * life, connections or not: on an agent that nothing asks, the only thing that woke it
 * (about 0.9 ms of CPU per second on the test machine). Here the check stops when the last
 * connection closes and starts again with the next one, so a connection is still checked
 * every second from its start (a slow client is cut off between 10 and 11 s). Node keeps the
 * timer under a private symbol and starts it in a `listening` handler; where either is not
 * found (another Node), the check runs as Node runs it.
 */
export function checkTimeoutsWhileConnected(server: Server): void {
  const setup = server.listeners('listening').find((f) => f.name === CHECK_SETUP) as
    ((this: Server) => void) | undefined;
  if (setup === undefined) return;
  const timer = (): symbol | undefined =>
    Object.getOwnPropertySymbols(server).find((s) => s.description === CHECK_TIMER);
  const holder = server as unknown as Record<symbol, ReturnType<typeof setInterval> | undefined>;
  let open = 0;
  let paused = false;
  const pause = (): void => {
    const key = timer();
    if (key === undefined || paused || open > 0 || !server.listening) return;
    clearInterval(holder[key]);
    paused = true;
  };
  // Node's handler was added when the server was made, so it has run when this one runs.
  server.on('listening', pause);
  server.on('connection', (socket: Socket) => {
    open++;
    if (paused) {
      paused = false;
      setup.call(server);
    }
    socket.once('close', () => {
      open--;
      pause();
    });
  });
}

/**
 * A new connection gets this long to start its request before it counts as idle (and may be
 * reclaimed for another when the listener is full).
 */
export const FRESH_GRACE_MS = 1000;

/** One open connection: its requests in progress, and since when it has been idle. */
interface Conn {
  busy: number;
  idleSince: number;
  served: boolean;
}

/**
 * The connection cap, idle connections first: when a new connection would pass `cap`, the
 * idle ones are closed, the longest idle first: kept-alive connections between requests,
 * and connections that have not started a request within {@link FRESH_GRACE_MS}. Only when
 * every open connection is busy is the new one closed. So a flood of idle clients never
 * locks out a scrape for longer than the grace; the busy connections are never touched.
 */
function capConnections(server: Server, cap: number): void {
  const open = new Map<Socket, Conn>();
  const reclaim = (now: number): void => {
    const idle = [...open].filter(
      ([, c]) => c.busy === 0 && (c.served || now - c.idleSince >= FRESH_GRACE_MS),
    );
    idle.sort((a, b) => a[1].idleSince - b[1].idleSince);
    // A batch at a time (an eighth of the cap), so a flood does not scan the list per connection.
    for (const [socket] of idle.slice(0, Math.max(1, Math.ceil(cap / 8)))) {
      open.delete(socket);
      socket.destroy();
    }
  };
  server.on('connection', (socket: Socket) => {
    const now = Date.now();
    if (open.size >= cap) reclaim(now);
    if (open.size >= cap) {
      socket.destroy();
      return;
    }
    open.set(socket, { busy: 0, idleSince: now, served: false });
    socket.once('close', () => open.delete(socket));
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    // Over TLS the request's socket is the TLS socket; the accepted one is its parent.
    const tls = req.socket as Socket & { _parent?: Socket };
    const conn = open.get(tls._parent ?? req.socket) ?? open.get(req.socket);
    if (conn === undefined) return;
    conn.busy++;
    res.once('close', () => {
      conn.busy--;
      conn.served = true;
      conn.idleSince = Date.now();
    });
  });
}

function listen(server: Server, host: string, port: number, closing: () => boolean): Promise<string> {
  if (closing()) return Promise.reject(new Error('the listener is closed'));
  return new Promise((resolve, reject) => {
    const done = (err?: Error): void => {
      server.off('error', done);
      server.off('close', onClose);
      server.off('listening', onListening);
      if (err !== undefined) reject(err);
      else resolve(boundAddress(server));
    };
    const onClose = (): void => done(new Error('the listener is closed'));
    const onListening = (): void => done();
    server.once('error', done);
    server.once('close', onClose);
    server.once('listening', onListening);
    server.listen({ port, ...(host !== '' ? { host } : {}) });
  });
}
