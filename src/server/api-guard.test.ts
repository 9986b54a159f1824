import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MonitorControl } from '../core/control.js';
import { connect, type Socket } from 'node:net';
import { LISTENER_LIMITS, TokenFile } from '../http/guard.js';
import { makeTlsFiles } from '../../test/helpers/tls.js';
import { rawExchange } from '../../test/helpers/agent.js';
import { httpCall } from '../../test/helpers/http-call.js';
import { buildApi, listenApi } from './api.js';
import type { Api, ApiDeps } from './api.js';

const TEXT = 'text/plain; charset=utf-8';

class Control implements MonitorControl {
  readonly calls: string[] = [];
  monitors(): Record<string, string> {
    return { db1: '' };
  }
  async start(id: string): Promise<void> {
    this.calls.push(`start ${id}`);
  }
  async stop(id: string): Promise<void> {
    this.calls.push(`stop ${id}`);
  }
  async reload(): Promise<void> {
    this.calls.push('reload');
  }
}

const apps: Api[] = [];
const dirs: string[] = [];
after(async () => {
  await Promise.all(apps.map((a) => a.close()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** An API listening on `bind` (port 0); returns its port and the control it drives. */
async function serve(
  extra: Partial<ApiDeps> = {},
  bind = '127.0.0.1:0',
): Promise<{ port: number; control: Control }> {
  const control = new Control();
  const app = buildApi({
    control,
    status: { server: () => ({ server: 'running' }), monitors: () => ({}) },
    info: {
      version: '1.0.0',
      config: {},
      registered: () => ({ collectors: [], sinks: [] }),
      toggleDebug: () => true,
    },
    renderConfig: { yaml: () => '', json: () => ({}) },
    bind,
    ...extra,
  });
  apps.push(app);
  const addr = await listenApi(app, bind);
  return { port: Number(addr.slice(addr.lastIndexOf(':') + 1)), control };
}

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sonde-guard-'));
  dirs.push(d);
  return d;
}

describe('API method and cross-site rules', () => {
  it('refuses GET on a state-changing path with 405 and an Allow header, and changes nothing', async () => {
    const { port, control } = await serve();
    const res = await httpCall(port, '/monitors/stop?id=db1');
    assert.equal(res.status, 405);
    assert.equal(res.headers.allow, 'POST');
    assert.equal(res.body, 'method not allowed\n');
    assert.deepEqual(control.calls, []);
  });

  it('refuses a cross-origin simple POST with 403 and a text reason', async () => {
    const { port, control } = await serve();
    const res = await httpCall(port, '/monitors/stop?id=db1', {
      method: 'POST',
      headers: { 'content-type': 'text/plain', origin: 'http://evil.example' },
    });
    assert.equal(res.status, 403);
    assert.equal(res.headers['content-type'], TEXT);
    assert.equal(res.body, 'cross-origin request refused: Origin is not this server\n');
    assert.deepEqual(control.calls, []);
  });

  it('refuses a POST whose Sec-Fetch-Site says another site sent it', async () => {
    const { port, control } = await serve();
    for (const site of ['cross-site', 'same-site']) {
      const res = await httpCall(port, '/monitors/reload', {
        method: 'POST',
        headers: { 'sec-fetch-site': site },
      });
      assert.equal(res.status, 403, site);
      assert.match(res.body, /^cross-site request refused/);
    }
    const nullOrigin = await httpCall(port, '/debug', { method: 'POST', headers: { origin: 'null' } });
    assert.equal(nullOrigin.status, 403);
    assert.deepEqual(control.calls, []);
  });

  it('accepts a POST from its own origin and one without Origin or Sec-Fetch-Site', async () => {
    const { port, control } = await serve();
    const own = await httpCall(port, '/monitors/reload', {
      method: 'POST',
      headers: { origin: `http://127.0.0.1:${port}`, 'sec-fetch-site': 'same-origin' },
    });
    assert.equal(own.status, 200);
    const curl = await httpCall(port, '/monitors/start?id=db1', { method: 'POST' });
    assert.equal(curl.status, 200);
    assert.deepEqual(control.calls, ['reload', 'start db1']);
  });

  it('never sends CORS headers, not even to a preflight', async () => {
    const { port } = await serve();
    const res = await httpCall(port, '/monitors/stop?id=db1', {
      method: 'OPTIONS',
      headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' },
    });
    assert.equal(res.status, 405);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    assert.equal(res.headers['access-control-allow-methods'], undefined);
  });
});

describe('API Host check', () => {
  it('accepts the bind address and the loopback names on the right port only', async () => {
    const { port } = await serve();
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST.:${port}`, `[::1]:${port}`]) {
      assert.equal((await httpCall(port, '/status', { headers: { host } })).status, 200, host);
    }
    for (const host of [`127.0.0.1:${port + 1}`, '127.0.0.1', `evil.example:${port}`, `10.1.2.3:${port}`]) {
      const res = await httpCall(port, '/status', { headers: { host } });
      assert.equal(res.status, 421, `Host: ${host}`);
      assert.equal(res.headers['content-type'], TEXT);
      assert.match(res.body, /^misdirected request: the Host header does not name this server/);
    }
  });

  it('refuses an empty Host header', async () => {
    const { port } = await serve();
    const raw = await rawExchange(port, ['GET /status HTTP/1.1\r\nHost: \r\nConnection: close\r\n\r\n']);
    assert.match(raw.answer, /^HTTP\/1\.1 (421|400) /);
  });

  it('refuses a DNS-rebinding Host on a state change before anything happens', async () => {
    const { port, control } = await serve();
    const res = await httpCall(port, '/monitors/reload', {
      method: 'POST',
      headers: { host: `attacker.example:${port}` },
    });
    assert.equal(res.status, 421);
    assert.deepEqual(control.calls, []);
  });

  it('accepts any IP literal but only listed DNS names when bound to every interface', async () => {
    const { port } = await serve({ allowedHosts: ['metrics.internal', 'proxy.example:8443'] }, ':0');
    for (const host of [
      `10.1.2.3:${port}`,
      `[fd00::1]:${port}`,
      `metrics.internal:${port}`,
      'proxy.example:8443',
    ]) {
      assert.equal((await httpCall(port, '/status', { headers: { host } })).status, 200, host);
    }
    for (const host of [`db.example:${port}`, 'metrics.internal:1', `proxy.example:${port}`]) {
      assert.equal((await httpCall(port, '/status', { headers: { host } })).status, 421, host);
    }
  });
});

describe('API token', () => {
  it('answers 401 with WWW-Authenticate without the bearer token, except on the probes', async () => {
    const dir = tempDir();
    const file = join(dir, 'token');
    writeFileSync(file, 's3cret-token\n');
    const { port, control } = await serve({
      token: new TokenFile(file, 'api.token-file'),
      ready: () => undefined,
    });
    for (const auth of [
      undefined,
      'Bearer wrong',
      'Basic czNjcmV0LXRva2Vu',
      'Bearer s3cret-token2',
      'Bearer',
    ]) {
      const headers: Record<string, string> = auth === undefined ? {} : { authorization: auth };
      const res = await httpCall(port, '/monitors/reload', { method: 'POST', headers });
      assert.equal(res.status, 401, String(auth));
      assert.equal(res.headers['www-authenticate'], 'Bearer');
      assert.equal(res.body, 'unauthorized: missing or wrong bearer token\n');
      assert.doesNotMatch(res.body, /s3cret/);
    }
    assert.equal((await httpCall(port, '/status')).status, 401);
    assert.equal((await httpCall(port, '/nope')).status, 401);
    assert.deepEqual(control.calls, []);
    assert.equal((await httpCall(port, '/healthz')).body, 'ok\n');
    assert.equal((await httpCall(port, '/readyz')).body, 'ready\n');
    const ok = await httpCall(port, '/monitors/reload', {
      method: 'POST',
      headers: { authorization: 'Bearer s3cret-token' },
    });
    assert.equal(ok.status, 200);
    assert.deepEqual(control.calls, ['reload']);
  });

  it('takes a new token once the file changes, and refuses all while the file is gone', async () => {
    const dir = tempDir();
    const file = join(dir, 'token');
    writeFileSync(file, 'first\n');
    let now = 0;
    const errors: string[] = [];
    const token = new TokenFile(file, 'api.token-file', { now: () => now, onError: (m) => errors.push(m) });
    assert.equal(token.check('Bearer first'), true);
    writeFileSync(file, 'second-and-longer\n');
    now += 1000;
    assert.equal(token.check('Bearer second-and-longer'), true);
    assert.equal(token.check('Bearer first'), false);
    rmSync(file);
    now += 1000;
    assert.equal(token.check('Bearer second-and-longer'), false);
    assert.deepEqual(errors, [`api.token-file: cannot read token file ${file}: ENOENT`]);
    writeFileSync(file, 'third');
    now += 1000;
    assert.equal(token.check('Bearer third'), true);
  });

  it('refuses a missing or empty token file with an error naming the key and the file only', () => {
    const dir = tempDir();
    const file = join(dir, 'token');
    assert.throws(() => new TokenFile(file, 'api.token-file'), {
      message: `api.token-file: cannot read token file ${file}: ENOENT`,
    });
    writeFileSync(file, '\n');
    assert.throws(() => new TokenFile(file, 'api.token-file'), {
      message: `api.token-file: token file ${file} is empty`,
    });
    writeFileSync(file, 'two words\n');
    assert.throws(
      () => new TokenFile(file, 'api.token-file'),
      (err: Error) => !err.message.includes('two words'),
    );
  });
});

describe('API probes', () => {
  it('answers /healthz with ok and /readyz with the readiness, to GET and HEAD only', async () => {
    let why: string | undefined = 'starting monitors';
    const { port } = await serve({ ready: () => why });
    const live = await httpCall(port, '/healthz');
    assert.equal(live.status, 200);
    assert.equal(live.headers['content-type'], TEXT);
    assert.equal(live.body, 'ok\n');
    const notYet = await httpCall(port, '/readyz');
    assert.equal(notYet.status, 503);
    assert.equal(notYet.body, 'not ready: starting monitors\n');
    why = undefined;
    assert.equal((await httpCall(port, '/readyz')).status, 200);
    assert.equal((await httpCall(port, '/readyz', { method: 'HEAD' })).status, 200);
    const post = await httpCall(port, '/healthz', { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, 'GET, HEAD');
  });
});

describe('API over TLS', () => {
  const files = makeTlsFiles();
  dirs.push(files.dir);
  const ca = readFileSync(files.ca);

  it('serves HTTPS with the configured certificate', async () => {
    const tls = { cert: readFileSync(files.cert), key: readFileSync(files.key) };
    const { port } = await serve({ tls });
    const res = await httpCall(port, '/version', { tls: { ca } });
    assert.equal(res.status, 200);
    assert.equal(res.body, 'v1.0.0');
    const own = await httpCall(port, '/debug', {
      method: 'POST',
      tls: { ca },
      headers: { origin: `https://127.0.0.1:${port}` },
    });
    assert.equal(own.status, 200);
    const plainOrigin = await httpCall(port, '/debug', {
      method: 'POST',
      tls: { ca },
      headers: { origin: `http://127.0.0.1:${port}` },
    });
    assert.equal(plainOrigin.status, 403);
  });

  it('requires a client certificate signed by the client CA when one is set', async () => {
    const tls = { cert: readFileSync(files.cert), key: readFileSync(files.key), clientCa: ca };
    const { port } = await serve({ tls });
    await assert.rejects(httpCall(port, '/version', { tls: { ca } }));
    // The server certificate is signed by the same CA, so it serves as a client certificate too.
    const res = await httpCall(port, '/version', {
      tls: { ca, cert: readFileSync(files.cert), key: readFileSync(files.key) },
    });
    assert.equal(res.status, 200);
  });
});

/** Open a connection and resolve once it is established. */
function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1', () => resolve(sock));
    sock.on('error', reject);
  });
}

describe('API limits', () => {
  it('closes connections beyond the cap of 512 at once and serves again when they go', async () => {
    const { port } = await serve();
    const held: Socket[] = [];
    try {
      for (let i = 0; i < LISTENER_LIMITS.maxConnections; i++) held.push(await open(port));
      // The server counts a connection once it accepted it: wait until all are counted.
      const extra = await rawExchange(port, [`GET /status HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`], {
        timeoutMs: 5_000,
      });
      assert.equal(extra.closed, true);
      assert.equal(extra.answer, '');
    } finally {
      for (const s of held) s.destroy();
    }
    // The server notices the closed connections shortly; ask until it answers again.
    let answer = '';
    for (let i = 0; i < 100 && !answer.startsWith('HTTP/1.1 200 OK\r\n'); i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 100));
      const req = `GET /status HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`;
      answer = (await rawExchange(port, [req])).answer;
    }
    assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/);
  });

  it('cuts off a client that sends its headers too slowly within 12 s, with a 408', async (t) => {
    const { port } = await serve();
    const parts = ['GET /status HTTP/1.1\r\n', `Host: 127.0.0.1:${port}\r\n`];
    for (let i = 0; i < 40; i++) parts.push(`X-Slow-${i}: 1\r\n`);
    const slow = await rawExchange(port, parts, { gapMs: 500, timeoutMs: 25_000 });
    t.diagnostic(`slow headers: closed after ${slow.elapsedMs} ms`);
    assert.equal(slow.closed, true);
    assert.ok(slow.elapsedMs < 12_000, `closed after ${slow.elapsedMs} ms`);
    assert.match(slow.answer, /^HTTP\/1\.1 408 Request Timeout\r\n/);
  });

  it('cuts off a client that sends its body too slowly within 12 s', async () => {
    const { port } = await serve();
    const head = `POST /monitors/reload HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Length: 100\r\n\r\n`;
    const parts = [head, ...Array.from({ length: 100 }, () => 'x')];
    const slow = await rawExchange(port, parts, { gapMs: 500, timeoutMs: 25_000 });
    assert.equal(slow.closed, true);
    assert.ok(slow.elapsedMs < 12_000, `closed after ${slow.elapsedMs} ms`);
  });
});
