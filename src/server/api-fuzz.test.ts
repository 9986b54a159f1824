/**
 * Malformed requests against the API on a real socket: 10,000 of them, built from a fixed
 * seed, each wrong in some way (method, path, query, Host, Origin, headers, body, bytes).
 * The server must never fail: every answer is a 4xx with a text/plain reason (or the
 * connection is closed by Node's parser without an answer, counted apart), nothing changes,
 * no unexpected failure is reported, and a normal request is still answered afterwards.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import type { AgentInfo, MonitorControl } from '../core/control.js';
import { SondeError } from '../core/errors.js';
import type { Events } from '../core/events.js';
import { buildApi, listenApi } from './api.js';

const REQUESTS = 10_000;
const SEED = 0x50de;
const WORKERS = 16;

/** A small deterministic generator (mulberry32). */
function prng(seed: number): () => number {
  let s = seed | 0;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rnd = () => number;
const int = (r: Rnd, n: number): number => Math.floor(r() * n);
const pick = <T>(r: Rnd, list: readonly T[]): T => list[int(r, list.length)] as T;

const READ_PATHS = [
  '/monitors',
  '/config',
  '/registered',
  '/version',
  '/status',
  '/status/monitors',
  '/healthz',
];
const CHANGE_PATHS = ['/monitors/reload', '/monitors/start', '/monitors/stop', '/debug'];
const PATH_CHARS = "abcxyz019-._~!$&'()*+,;=:@/%?#[]";

function randomText(r: Rnd, chars: string, max: number): string {
  let s = '';
  for (let n = 1 + int(r, max); n > 0; n--) s += chars[int(r, chars.length)];
  return s;
}

function randomBytes(r: Rnd, max: number): Buffer {
  return Buffer.from(Array.from({ length: 1 + int(r, max) }, () => int(r, 256)));
}

/** A request head with `lines` as headers; the Host names the server unless given. */
function head(method: string, target: string, host: string, lines: string[] = []): string {
  const hasHost = lines.some((l) => /^host:/i.test(l));
  return `${method} ${target} HTTP/1.1\r\n${hasHost ? '' : `Host: ${host}\r\n`}${lines.map((l) => `${l}\r\n`).join('')}\r\n`;
}

/** Each maker builds one malformed request; `host` is the server's own `host:port`. */
const MAKERS: ((r: Rnd, host: string) => Buffer | string)[] = [
  // A method the path does not take.
  (r, host) => {
    if (r() < 0.5)
      return head(pick(r, ['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']), pick(r, CHANGE_PATHS), host);
    return head(pick(r, ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']), pick(r, READ_PATHS), host);
  },
  // A method Node does not know.
  (r, host) => head(`X${randomText(r, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 12)}`, pick(r, READ_PATHS), host),
  // An unknown path, often badly percent-encoded.
  (r, host) => head(pick(r, ['GET', 'POST', 'HEAD']), `/zz${randomText(r, PATH_CHARS, 200)}`, host),
  // A state change with a bad query: no id, an unknown id, invalid escapes or UTF-8.
  (r, host) => {
    const q = pick(r, [
      '',
      'id=',
      'id=%zz',
      'id=%ff%fe',
      'id=%c3%28',
      `id=q${randomText(r, PATH_CHARS, 40)}`,
    ]);
    return head('POST', `${pick(r, ['/monitors/start', '/monitors/stop'])}?${q}`, host);
  },
  // A Host that does not name the server.
  (r, host) => {
    const port = host.slice(host.lastIndexOf(':'));
    const bad = pick(r, [
      `evil.example${port}`,
      '127.0.0.1:1',
      `10.9.8.7${port}`,
      randomText(r, 'abc.-:', 30),
    ]);
    return head(pick(r, ['GET', 'POST']), pick(r, [...READ_PATHS, ...CHANGE_PATHS]), host, [`Host: ${bad}`]);
  },
  // A state change from another site.
  (r, host) => {
    const line =
      r() < 0.5 ? `Origin: http://${randomText(r, 'abc.-', 20)}.example` : 'Sec-Fetch-Site: cross-site';
    return head('POST', pick(r, ['/monitors/reload', '/debug', '/monitors/stop?id=db1']), host, [
      line,
      'Content-Type: text/plain',
      'Content-Length: 0',
    ]);
  },
  // Headers over Node's 16 KiB limit.
  (r, host) => head('GET', pick(r, READ_PATHS), host, [`X-Big: ${'a'.repeat(17_000 + int(r, 40_000))}`]),
  // Raw bytes, invalid UTF-8 included, in the request target.
  (r, host) =>
    Buffer.concat([
      Buffer.from('GET /zz'),
      randomBytes(r, 60).map((b) => (b === 0x20 || b === 0x0d || b === 0x0a ? 0x80 : b)),
      Buffer.from(` HTTP/1.1\r\nHost: ${host}\r\n\r\n`),
    ]),
  // Broken header lines.
  (r, host) =>
    head('GET', pick(r, READ_PATHS), host, [
      pick(r, [
        'X Bad: 1',
        'X\u0001: 2',
        'NoColon',
        ' folded: x',
        'Content-Length: abc',
        'Content-Length: -1',
      ]),
    ]),
  // A body where none is expected, or a broken chunked body.
  (r, host) => {
    const body = randomBytes(r, 300);
    if (r() < 0.5) {
      return Buffer.concat([
        Buffer.from(head('POST', pick(r, READ_PATHS), host, [`Content-Length: ${body.length}`])),
        body,
      ]);
    }
    const chunk = `${randomText(r, 'xyz0123456789', 6)}\r\n${body.toString('latin1')}\r\n0\r\n\r\n`;
    return head('POST', '/monitors/start', host, ['Transfer-Encoding: chunked']) + chunk;
  },
  // Bytes that are not HTTP at all.
  (r) => (r() < 0.5 ? randomBytes(r, 200) : Buffer.concat([randomBytes(r, 100), Buffer.from('\r\n\r\n')])),
  // An HTTP version Node does not speak, or none.
  (r, host) =>
    `GET ${pick(r, READ_PATHS)} ${pick(r, ['HTTP/9.9', 'HTTP/1', 'HTTP/1.1x', 'FTP/1.1'])}\r\nHost: ${host}\r\n\r\n`,
];

/** A body over the 1 MiB limit on a state change without an id: refused before it is used. */
function oversize(host: string): Buffer {
  const body = Buffer.alloc(1024 * 1024 + 1, 0x78);
  const h = head('POST', '/monitors/start', host, [
    'Content-Type: application/octet-stream',
    `Content-Length: ${body.length}`,
  ]);
  return Buffer.concat([Buffer.from(h), body]);
}

/** Send one request, half-close, and read until the server closes the connection. */
function exchange(port: number, data: Buffer | string): Promise<string> {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const done = (): void => resolve(Buffer.concat(chunks).toString('latin1'));
    sock.setTimeout(15_000, () => sock.destroy());
    sock.on('data', (d: Buffer) => chunks.push(d));
    sock.on('error', () => undefined);
    sock.on('close', done);
    sock.on('connect', () => sock.end(data));
  });
}

class StillControl implements MonitorControl {
  readonly calls: string[] = [];
  monitors(): Record<string, string> {
    return { db1: '' };
  }
  async start(id: string): Promise<void> {
    this.calls.push(`start ${id}`);
    throw new SondeError('MONITOR_NOT_LOADED', `monitor ${id} not loaded`);
  }
  async stop(id: string): Promise<void> {
    this.calls.push(`stop ${id}`);
    throw new SondeError('MONITOR_NOT_LOADED', `monitor ${id} not loaded`);
  }
  async reload(): Promise<void> {
    this.calls.push('reload');
  }
}

describe('API under malformed requests', () => {
  it(
    'answers 10,000 malformed requests with 4xx text reasons and keeps serving',
    { timeout: 60_000 },
    async (t) => {
      const control = new StillControl();
      const failures: string[] = [];
      const events: Events = {
        info: () => undefined,
        error: (event, _id, msg) => failures.push(`${event}: ${msg}`),
        debug: () => undefined,
      };
      let toggled = 0;
      const info: AgentInfo = {
        version: '1.0.0',
        config: {},
        registered: () => ({ collectors: [], sinks: [] }),
        toggleDebug: () => ++toggled > 0,
      };
      const app = buildApi({
        control,
        status: { server: () => ({ server: 'running' }), monitors: () => ({}) },
        info,
        events,
        renderConfig: { yaml: () => '', json: () => ({}) },
        bind: '127.0.0.1:0',
      });
      const addr = await listenApi(app, '127.0.0.1:0');
      const port = Number(addr.slice(addr.lastIndexOf(':') + 1));
      const r = prng(SEED);
      const requests = Array.from({ length: REQUESTS }, (_, i) =>
        i % 1000 === 999 ? oversize(addr) : (MAKERS[i % MAKERS.length] ?? MAKERS[0])!(r, addr),
      );
      const byStatus = new Map<string, number>();
      const started = Date.now();
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < requests.length) {
          const i = next++;
          const answer = await exchange(port, requests[i] ?? '');
          const m = /^HTTP\/1\.1 (\d{3}) [^\r\n]*\r\n([\s\S]*?)\r\n\r\n/.exec(answer);
          const key = answer === '' ? 'closed' : (m?.[1] ?? 'unparsed');
          byStatus.set(key, (byStatus.get(key) ?? 0) + 1);
          if (answer === '') continue;
          if (m === null || !/^4\d\d$/.test(m[1] ?? '') || !/^content-type: text\/plain/im.test(m[2] ?? ''))
            failures.push(`request ${i} (maker ${i % MAKERS.length}): ${answer.slice(0, 200)}`);
        }
      };
      try {
        await Promise.all(Array.from({ length: WORKERS }, worker));
        const seconds = ((Date.now() - started) / 1000).toFixed(1);
        t.diagnostic(
          `${REQUESTS} requests in ${seconds} s: ${JSON.stringify(Object.fromEntries([...byStatus].sort()))}`,
        );
        assert.deepEqual(failures.slice(0, 5), []);
        assert.deepEqual(
          control.calls.filter((c) => c === 'reload'),
          [],
        );
        assert.equal(toggled, 0);
        const after = await fetch(`http://${addr}/status`);
        assert.equal(after.status, 200);
        assert.deepEqual(await after.json(), { server: 'running' });
      } finally {
        await app.close();
      }
    },
  );
});
