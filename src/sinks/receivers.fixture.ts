/**
 * Local receivers for sink tests: an HTTP server that records every request (body inflated
 * when Content-Encoding says gzip) and answers what the test scripts, and a UDP socket that
 * records datagrams. Loopback only, port 0, closed by the test.
 */
import dgram from 'node:dgram';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

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
