/**
 * Sinks against hostile peers on real local sockets: a port that refuses, a receiver that
 * accepts and never answers, one that answers 500, one that stops in the middle of its
 * answer, and an `http.proxy` that never answers its CONNECT (or answers it and then goes
 * quiet). Every socket the POST layer opens must be closed when the send's deadline or
 * abort fires, a failing sink must log one line per backoff step and name itself, count
 * what it drops, and never delay the other sinks of its monitor.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import { makeTlsFiles } from '../../test/helpers/tls.js';
import type { TlsFiles } from '../../test/helpers/tls.js';
import { MetricType } from '../core/metrics.js';
import type { Metrics } from '../core/metrics.js';
import type { Sink } from '../core/sink.js';
import { datadogSinkRegistration } from './datadog.js';
import { httpPost } from './http.js';
import type { HttpPostRequest } from './http.js';
import { otlpSinkRegistration } from './otlp.js';
import { sinkContext, startHttpReceiver, until } from './receivers.fixture.js';
import type { HttpReceiver } from './receivers.fixture.js';
import { RetrySink } from './retry.js';

/** A listening server whose accepted sockets are tracked until they close. */
interface Hostile {
  readonly port: number;
  /** Sockets accepted so far. */
  accepted: number;
  /** Sockets accepted and not yet closed. */
  open(): number;
  close(): Promise<void>;
}

/** Track every connection of `server`, listen on 127.0.0.1, and close it all at the end. */
async function track(server: net.Server): Promise<Hostile> {
  const sockets = new Set<net.Socket>();
  const h: Hostile = {
    port: 0,
    accepted: 0,
    open: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  server.on('connection', (s: net.Socket) => {
    h.accepted++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  (h as { port: number }).port = (server.address() as net.AddressInfo).port;
  return h;
}

/** Accepts, reads everything, never writes a byte. */
function hangServer(): Promise<Hostile> {
  return track(net.createServer((s) => s.resume()));
}

/** Reads a request head, writes `answer`, then goes quiet. */
function answerThenHang(answer: string): Promise<Hostile> {
  return track(
    net.createServer((s) => {
      let head = '';
      const onData = (c: Buffer): void => {
        head += c.toString('latin1');
        if (!head.includes('\r\n\r\n')) return;
        s.off('data', onData);
        s.resume();
        s.write(answer);
      };
      s.on('data', onData);
    }),
  );
}

/** A CONNECT proxy that tunnels to whatever is asked (tracked like the others). */
function tunnellingProxy(): Promise<Hostile> {
  return track(
    net.createServer((client) => {
      client.once('data', (c: Buffer) => {
        const [, authority = ''] = /^CONNECT (\S+) /.exec(c.toString('latin1')) ?? [];
        const i = authority.lastIndexOf(':');
        const upstream = net.connect(Number(authority.slice(i + 1)), authority.slice(0, i), () => {
          client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          upstream.pipe(client).pipe(upstream);
        });
        upstream.on('error', () => client.destroy());
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
    }),
  );
}

/** A TLS server that completes the handshake, reads the request, never answers. */
function tlsHangServer(files: TlsFiles): Promise<Hostile> {
  const server = tls.createServer({ cert: readFileSync(files.cert), key: readFileSync(files.key) }, (s) =>
    s.resume(),
  );
  return track(server);
}

/** Answers every request 500 with keep-alive. */
function fiveHundredServer(): Promise<Hostile> {
  return track(
    http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(500, { 'Content-Type': 'text/plain' }).end('internal error'));
    }),
  );
}

/** A port on which nothing listens (bound once, then released). */
async function refusedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** Open descriptors of this process. */
function openFds(): number {
  return readdirSync('/proc/self/fd').length;
}

const N = 50;
/** Descriptors a batch may leave behind for reasons of its own (timers, the DNS cache…). */
const FD_SLACK = 8;

/**
 * Run N POSTs at once, each with a short deadline, and check that each failed with a
 * message that hides the credentials, that the peer saw every socket closed, and that this
 * process holds no more descriptors than before.
 */
async function assertNoLeak(peers: Hostile[], make: (i: number) => HttpPostRequest): Promise<string[]> {
  const fds = openFds();
  const results = await Promise.allSettled(Array.from({ length: N }, (_, i) => httpPost(make(i))));
  const messages = results.map((r) => {
    assert.equal(r.status, 'rejected', 'no POST may succeed against a hostile peer');
    return r.status === 'rejected' ? String((r.reason as Error).message) : '';
  });
  for (const m of messages) assert.doesNotMatch(m, /s3cret|hunter2/, 'no credential in an error');
  for (const p of peers) await until(() => p.open() === 0, 5000);
  await until(() => openFds() <= fds + FD_SLACK, 5000);
  return messages;
}

describe('the POST layer closes every socket when the deadline or abort fires', () => {
  let files: TlsFiles;
  before(() => {
    files = makeTlsFiles();
  });

  it('closes each socket to a receiver that accepts and never answers', async () => {
    const rx = await hangServer();
    try {
      const msgs = await assertNoLeak([rx], (i) => ({
        url: `http://user:s3cret@127.0.0.1:${rx.port}/x`,
        body: 'x',
        ...(i % 2 === 0 ? { timeoutMs: 150 } : { signal: AbortSignal.timeout(150) }),
      }));
      assert.equal(rx.accepted, N);
      for (const m of msgs) {
        assert.match(
          m,
          /^POST http:\/\/127\.0\.0\.1:\d+\/x: (request timeout after 150 ms|request aborted: )/,
        );
      }
    } finally {
      await rx.close();
    }
  });

  it('closes each socket to an https receiver that never starts the TLS handshake', async () => {
    const rx = await hangServer();
    try {
      await assertNoLeak([rx], () => ({ url: `https://127.0.0.1:${rx.port}/x`, body: 'x', timeoutMs: 150 }));
    } finally {
      await rx.close();
    }
  });

  it('closes each socket to a receiver that stops in the middle of its body', async () => {
    const rx = await answerThenHang('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\npartial');
    try {
      const msgs = await assertNoLeak([rx], () => ({
        url: `http://127.0.0.1:${rx.port}/x`,
        body: 'x',
        timeoutMs: 150,
      }));
      for (const m of msgs) assert.match(m, /: request timeout after 150 ms$/);
    } finally {
      await rx.close();
    }
  });

  it('closes each socket to a forward proxy that never answers', async () => {
    const proxy = await hangServer();
    try {
      await assertNoLeak([proxy], () => ({
        url: 'http://intake.example/x',
        body: 'x',
        proxy: `http://user:hunter2@127.0.0.1:${proxy.port}`,
        timeoutMs: 150,
      }));
      assert.equal(proxy.accepted, N);
    } finally {
      await proxy.close();
    }
  });

  it('closes each CONNECT socket to a proxy that never answers the CONNECT', async () => {
    const proxy = await hangServer();
    try {
      const msgs = await assertNoLeak([proxy], (i) => ({
        url: 'https://intake.example/x',
        body: 'x',
        proxy: `http://user:hunter2@127.0.0.1:${proxy.port}`,
        ...(i % 2 === 0 ? { timeoutMs: 150 } : { signal: AbortSignal.timeout(150) }),
      }));
      assert.equal(proxy.accepted, N);
      for (const m of msgs) assert.match(m, /^POST https:\/\/intake\.example\/x: /);
    } finally {
      await proxy.close();
    }
  });

  it('closes each tunnel whose proxy answers the CONNECT and then goes quiet during the TLS handshake', async () => {
    const proxy = await answerThenHang('HTTP/1.1 200 Connection Established\r\n\r\n');
    try {
      await assertNoLeak([proxy], () => ({
        url: 'https://intake.example/x',
        body: 'x',
        proxy: `http://127.0.0.1:${proxy.port}`,
        timeoutMs: 150,
      }));
    } finally {
      await proxy.close();
    }
  });

  it('closes each tunnel to an https receiver that completes TLS and never answers', async () => {
    const rx = await tlsHangServer(files);
    const proxy = await tunnellingProxy();
    try {
      await assertNoLeak([proxy, rx], () => ({
        url: `https://127.0.0.1:${rx.port}/x`,
        body: 'x',
        proxy: `http://127.0.0.1:${proxy.port}`,
        ca: readFileSync(files.ca),
        timeoutMs: 300,
      }));
      assert.equal(rx.accepted, N, 'every tunnel reached the receiver');
    } finally {
      await proxy.close();
      await rx.close();
    }
  });

  it('keeps one connection to a receiver that answers 500 and closes it with its agent', async () => {
    const rx = await fiveHundredServer();
    const agent = new http.Agent({ keepAlive: true });
    const fds = openFds();
    try {
      for (let i = 0; i < N; i++) {
        const res = await httpPost({
          url: `http://127.0.0.1:${rx.port}/x`,
          body: 'x',
          agent,
          timeoutMs: 2000,
        });
        assert.equal(res.status, 500);
        assert.ok(rx.open() <= 1, `${rx.open()} sockets open`);
      }
      assert.equal(rx.accepted, 1);
      agent.destroy();
      await until(() => rx.open() === 0, 5000);
      await until(() => openFds() <= fds + FD_SLACK, 5000);
    } finally {
      agent.destroy();
      await rx.close();
    }
  });

  it('holds no descriptor after sends to a port that refuses', async () => {
    const port = await refusedPort();
    const msgs = await assertNoLeak([], () => ({
      url: `http://127.0.0.1:${port}/x`,
      body: 'x',
      timeoutMs: 2000,
    }));
    for (const m of msgs) assert.match(m, /ECONNREFUSED/);
  });
});

/** One collection of one gauge. */
function collection(i: number): Metrics {
  const at = new Date(Date.UTC(2024, 4, 1, 12, 0, i));
  return {
    begin: at,
    end: at,
    monitorId: 'db1',
    plan: 'p',
    level: 'l',
    interval: 1,
    state: 'active',
    values: { 'status.global': [{ name: 'threads_running', value: i, type: MetricType.Gauge }] },
  };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('retried sinks under faults', () => {
  let good: HttpReceiver;
  before(async () => {
    good = await startHttpReceiver();
  });
  after(async () => {
    await good.close();
  });

  it('holds at most one socket open to a hung CONNECT proxy and closes it with the sink', async () => {
    const proxy = await hangServer();
    const c = sinkContext('datadog', {
      'api-key-auth': 'api-s3cret',
      'app-key-auth': 'app-s3cret',
      'send-timeout': '100ms',
    });
    const sink = datadogSinkRegistration().create({
      ...c,
      httpProxy: `http://u:hunter2@127.0.0.1:${proxy.port}`,
    });
    const fds = openFds();
    try {
      // 4 s of collections every 100 ms: with a 100 ms send-timeout, about 6 attempts.
      for (let i = 0; i < 40; i++) {
        await sink.send(collection(i));
        assert.ok(proxy.open() <= 1, `${proxy.open()} sockets open at the proxy`);
        await sleep(100);
      }
      assert.ok(proxy.accepted >= 3, `${proxy.accepted} attempts`);
      assert.ok(c.events.errors.length === proxy.accepted || c.events.errors.length === proxy.accepted - 1);
      for (const e of c.events.errors) {
        assert.match(e, /^sink-send-error: datadog :/);
        assert.doesNotMatch(e, /s3cret|hunter2/);
      }
    } finally {
      await sink.close?.();
    }
    await until(() => proxy.open() === 0, 5000);
    await until(() => openFds() <= fds + FD_SLACK, 5000);
    await proxy.close();
  });

  it('against a refusing port logs one line per backoff step, counts the drops and shows them in status', async () => {
    const port = await refusedPort();
    const c = sinkContext('otlp', { endpoint: `http://u:s3cret@127.0.0.1:${port}`, 'buffer-size': '3' });
    const sink = otlpSinkRegistration().create(c);
    assert.ok(sink instanceof RetrySink);
    try {
      // 2 s of collections every 100 ms. A fixed 200 ms pace would log about 10 lines; the
      // backoff (0.5 s, 0.75 s, 1.1 s…, each ±50 %) logs at most 5.
      for (let i = 0; i < 20; i++) {
        await sink.send(collection(i));
        await sleep(100);
      }
      assert.ok(
        c.events.errors.length >= 2 && c.events.errors.length <= 5,
        `${c.events.errors.length} lines`,
      );
      for (const e of c.events.errors) {
        assert.match(
          e,
          /^sink-send-error: otlp :POST http:\/\/127\.0\.0\.1:\d+\/v1\/metrics: .*ECONNREFUSED/,
        );
        assert.doesNotMatch(e, /s3cret/);
      }
      assert.equal(sink.dropped, 17);
      assert.match(c.status.map.get('otlp') ?? '', /; 17 collections dropped since \S+$/);
      assert.match(
        c.status.map.get('error:otlp-send') ?? '',
        /^at \S+: otlp :POST .*ECONNREFUSED.* \(3 buffered; \d+ collections dropped since \S+\)$/,
      );
    } finally {
      await sink.close?.();
    }
  });

  it('keeps a good sink of the same monitor on time while another hangs, and drains the hung one on recovery', async () => {
    const hung = await hangServer();
    const flaky = await startHttpReceiver();
    flaky.down = true;
    const c = sinkContext('otlp', { endpoint: `http://127.0.0.1:${hung.port}`, 'send-timeout': '2s' });
    const hanging = otlpSinkRegistration().create(c);
    const cutting = otlpSinkRegistration().create(
      sinkContext('otlp', { endpoint: flaky.url, 'buffer-size': '100' }),
    );
    const fine = otlpSinkRegistration().create(sinkContext('otlp', { endpoint: good.url }));
    const sinks: Sink[] = [hanging, cutting, fine];
    good.requests.length = 0;
    try {
      // As the level collector does: each collection to each sink in turn, awaited.
      const t0 = Date.now();
      for (let i = 0; i < 10; i++) {
        const before = Date.now();
        for (const s of sinks) await s.send(collection(i));
        const took = Date.now() - before;
        assert.ok(took < 500, `handing collection ${i} to the sinks took ${took} ms`);
        await good.waitFor(i + 1, 2000);
        await sleep(100);
      }
      assert.ok(Date.now() - t0 < 8000, 'ten collections went out on schedule');
      assert.equal(good.requests.length, 10, 'the good sink got every collection');
      assert.ok(hung.open() <= 1, `${hung.open()} sockets open at the hung receiver`);

      flaky.down = false; // the receiver comes back: the buffer drains within a backoff step
      await flaky.waitFor(10, 10000);
      await until(() => (cutting as RetrySink).buffered === 0, 10000);
    } finally {
      for (const s of sinks) await s.close?.();
      await flaky.close();
      await until(() => hung.open() === 0, 5000);
      await hung.close();
    }
  });
});
