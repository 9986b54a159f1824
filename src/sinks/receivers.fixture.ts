/**
 * Shared fixtures for sink tests.
 *
 * Local receivers: an HTTP server that records every request (body inflated when
 * Content-Encoding says gzip) and answers what the test scripts, and a UDP socket that records
 * datagrams. Loopback only, port 0, closed by the test.
 *
 * Setup helpers: status/event recorders, sink contexts, sample Metrics, polling, and a
 * per-suite capture server, so each sink test states only what is particular to its sink.
 */
import dgram from 'node:dgram';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { startCaptureServer } from '../../test/helpers/capture-http.js';
import type { CaptureServer } from '../../test/helpers/capture-http.js';
import type { Events } from '../core/events.js';
import type { Metrics, MetricValue } from '../core/metrics.js';
import type { SinkContext } from '../core/sink.js';
import type { StatusWriter } from '../core/status.js';

/** One request as it arrived. */
export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  /** Bytes on the wire. */
  raw: Buffer;
  /** `raw`, gunzipped when `Content-Encoding: gzip`. */
  body: Buffer;
}

/** The answer to one request. */
export interface Reply {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

export interface HttpReceiver {
  readonly port: number;
  readonly url: string;
  readonly requests: Received[];
  /** Simulated outage: connections are reset before any request is read. */
  down: boolean;
  /** How to answer the next requests (default 202 `{}`). */
  reply: (req: Received) => Reply | Promise<Reply>;
  /** Resolve once `n` requests have arrived (reject after `timeoutMs`, default 10 s). */
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** Start an HTTP receiver on 127.0.0.1 (`port` 0 = any free port). */
export async function startHttpReceiver(port = 0): Promise<HttpReceiver> {
  const requests: Received[] = [];
  let wake: (() => void) | undefined;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
      const r: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, raw, body };
      requests.push(r);
      wake?.();
      void Promise.resolve(receiver.reply(r)).then((a) => {
        res.writeHead(a.status, { 'Content-Type': 'application/json', ...a.headers });
        res.end(a.body ?? '');
      });
    });
  });
  // While `down`, every connection is cut at once: an outage that keeps the port bound, so
  // no other test process can take it before the receiver comes back.
  server.on('connection', (socket) => {
    if (receiver.down) socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const addr = server.address() as AddressInfo;
  const receiver: HttpReceiver = {
    port: addr.port,
    url: `http://127.0.0.1:${addr.port}`,
    requests,
    down: false,
    reply: () => ({ status: 202, body: '{}' }),
    async waitFor(n, timeoutMs = 10000) {
      const until = Date.now() + timeoutMs;
      while (requests.length < n) {
        if (Date.now() >= until) throw new Error(`only ${requests.length} of ${n} requests arrived`);
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 100);
        });
      }
      return requests.slice(0, n);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}

export interface UdpReceiver {
  readonly port: number;
  readonly datagrams: string[];
  /** Resolve once `n` datagrams have arrived (reject after `timeoutMs`, default 10 s). */
  waitFor(n: number, timeoutMs?: number): Promise<string[]>;
  close(): Promise<void>;
}

/** A UDP socket on 127.0.0.1 recording every datagram as text. */
export async function startUdpReceiver(): Promise<UdpReceiver> {
  const sock = dgram.createSocket('udp4');
  const datagrams: string[] = [];
  let wake: (() => void) | undefined;
  sock.on('message', (msg) => {
    datagrams.push(msg.toString('utf8'));
    wake?.();
  });
  await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', resolve));
  return {
    port: sock.address().port,
    datagrams,
    async waitFor(n, timeoutMs = 10000) {
      const until = Date.now() + timeoutMs;
      while (datagrams.length < n) {
        if (Date.now() >= until) throw new Error(`only ${datagrams.length} of ${n} datagrams arrived`);
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 100);
        });
      }
      return datagrams.slice(0, n);
    },
    close: () => new Promise<void>((resolve) => sock.close(() => resolve())),
  };
}

/** What {@link recorder} hands a sink (status, events, monitor id, tags) plus what it saw. */
export interface Recorded {
  status: StatusWriter;
  events: Events;
  monitorId: string;
  tags: Record<string, string>;
  /** Current status per key. */
  keys: Map<string, string>;
  /** Every status write as `key: value`, in order. */
  history: string[];
  /** Every error event as `event monitorId message`. */
  errors: string[];
}

/**
 * Status writer and event sink that remember what a sink reports; the result also carries
 * `monitorId` (default `db1`) and `tags` (default none), so it can be passed as sink deps.
 */
export function recorder(who: { monitorId?: string; tags?: Record<string, string> } = {}): Recorded {
  const keys = new Map<string, string>();
  const history: string[] = [];
  const errors: string[] = [];
  return {
    monitorId: who.monitorId ?? 'db1',
    tags: who.tags ?? {},
    keys,
    history,
    errors,
    status: {
      set: (k, v) => {
        keys.set(k, v);
        history.push(`${k}: ${v}`);
      },
      delete: (k) => keys.delete(k),
    },
    events: {
      info: () => undefined,
      error: (event, monitorId, message) => errors.push(`${event} ${monitorId} ${message}`),
      debug: () => undefined,
    },
  };
}

/**
 * Start a capture server before the enclosing `describe` runs its tests and close it after;
 * `use` receives the server once it listens. Call it inside a `describe` callback.
 */
export function captureServerPerSuite(use: (rx: CaptureServer) => void): void {
  let rx: CaptureServer | undefined;
  before(async () => {
    rx = await startCaptureServer();
    use(rx);
  });
  after(async () => {
    await rx?.close();
  });
}

/** Events that keep error events as `event: message`. */
export class ErrorEvents implements Events {
  readonly errors: string[] = [];
  info(): void {}
  error(event: string, _monitorId: string, message: string): void {
    this.errors.push(`${event}: ${message}`);
  }
  debug(): void {}
}

/** Status writer backed by a map. */
export class MapStatus {
  readonly map = new Map<string, string>();
  set(k: string, v: string): void {
    this.map.set(k, v);
  }
  delete(k: string): void {
    this.map.delete(k);
  }
}

/** A SinkContext for monitor `db1` whose events and status can be inspected. */
export function sinkContext(
  sinkName: string,
  options: Record<string, string> = {},
  tags: Record<string, string> = {},
): SinkContext & { events: ErrorEvents; status: MapStatus } {
  return {
    sinkName,
    monitorId: 'db1',
    options,
    tags,
    status: new MapStatus(),
    events: new ErrorEvents(),
  };
}

/** A kpi collection of monitor `db1`, plan `p`, beginning at `beginMs` and lasting `spanMs`. */
export function metricsAt(values: Record<string, MetricValue[]>, beginMs: number, spanMs: number): Metrics {
  return {
    begin: new Date(beginMs),
    end: new Date(beginMs + spanMs),
    monitorId: 'db1',
    plan: 'p',
    level: 'kpi',
    interval: 1,
    state: 'active',
    values,
  };
}

/** Poll `cond` every 10 ms; fail after `ms` (generous: the machine may be loaded). */
export async function until(cond: () => boolean, ms = 10000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
