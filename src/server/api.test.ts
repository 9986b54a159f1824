import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request, type IncomingHttpHeaders } from 'node:http';
import net from 'node:net';
import type { AgentInfo, MonitorControl } from '../core/control.js';
import { SondeError } from '../core/errors.js';
import type { Events } from '../core/events.js';
import type { StatusReader } from '../core/status.js';
import { escapeHtml } from '../util/text.js';
import { rawExchange } from '../../test/helpers/agent.js';
import { API_KEEP_ALIVE_MS, buildApi, listenApi } from './api.js';
import type { Api, ApiDeps } from './api.js';

const TEXT = 'text/plain; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * In-memory MonitorControl: sonde's own interface, so a fake is fine here (the real one is
 * wired by the CLI). Records every call; `running` drives the 409 on start.
 */
class FakeControl implements MonitorControl {
  readonly calls: string[] = [];
  readonly loaded = new Map<string, { dsn: string; running: boolean }>([
    ['db1', { dsn: 'sonde:...@tcp(db1:3306)/', running: true }],
    ['db2', { dsn: '', running: false }],
  ]);
  reloadError: Error | undefined;
  stopError: Error | undefined;
  startError: Error | undefined;
  /** Resolves the pending stop (to test blocking stop and shutdown). */
  holdStop: Promise<void> | undefined;

  monitors(): Record<string, string> {
    this.calls.push('monitors');
    return Object.fromEntries([...this.loaded].map(([id, m]) => [id, m.dsn]));
  }
  async start(id: string): Promise<void> {
    this.calls.push(`start ${id}`);
    if (this.startError !== undefined) throw this.startError;
    const m = this.loaded.get(id);
    if (!m) throw new SondeError('MONITOR_NOT_LOADED', `monitor ${id} not loaded`);
    if (m.running) throw new SondeError('MONITOR_START_FAILED', 'already running');
    m.running = true;
  }
  async stop(id: string): Promise<void> {
    this.calls.push(`stop ${id}`);
    if (this.stopError !== undefined) throw this.stopError;
    const m = this.loaded.get(id);
    if (!m) throw new SondeError('MONITOR_NOT_LOADED', `monitor ${id} not loaded`);
    if (this.holdStop) await this.holdStop;
    m.running = false;
  }
  async reload(): Promise<void> {
    this.calls.push('reload');
    if (this.reloadError !== undefined) throw this.reloadError;
  }
}

class RecordingEvents implements Events {
  readonly lines: string[] = [];
  info(event: string, monitorId: string, message = ''): void {
    this.lines.push(`info ${event} [${monitorId}] ${message}`);
  }
  error(event: string, monitorId: string, message: string): void {
    this.lines.push(`error ${event} [${monitorId}] ${message}`);
  }
  debug(message: string): void {
    this.lines.push(`debug ${message}`);
  }
}

const SERVER_STATUS = {
  'monitor-loader': '2 monitors started at 2026-11-21T22:37:33+00:00',
  monitors: '2',
  server: 'running since 2026-11-21T22:37:33+00:00',
  started: '2026-11-21T22:37:30+00:00',
  uptime: '22',
  version: '1.4.2',
};
const MONITOR_STATUS = {
  db1: { dsn: 'sonde:...@tcp(db1:3306)/', 'level-state': 'active', monitor: 'running since x' },
  db2: {},
};

function setup(): { deps: ApiDeps; control: FakeControl; events: RecordingEvents; debug: boolean[] } {
  const control = new FakeControl();
  const events = new RecordingEvents();
  const debug: boolean[] = [];
  let debugging = false;
  const status: StatusReader = { server: () => SERVER_STATUS, monitors: () => MONITOR_STATUS };
  const info: AgentInfo = {
    version: '1.4.2',
    config: {},
    registered: () => ({ collectors: ['status.global', 'var.global'], sinks: ['log', 'noop'] }),
    toggleDebug: () => {
      debugging = !debugging;
      debug.push(debugging);
      return debugging;
    },
  };
  const deps: ApiDeps = {
    control,
    status,
    info,
    events,
    bind: '127.0.0.1:0',
    renderConfig: {
      yaml: () => 'api:\n  bind: 127.0.0.1:7522\nmysql:\n  password: ...\n',
      json: () => ({ api: { bind: '127.0.0.1:7522' }, mysql: { password: '...' } }),
    },
  };
  return { deps, control, events, debug };
}

/** One answer over a real connection. */
interface Answer {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: string;
  json<T = unknown>(): T;
}

interface Ask {
  method?: string;
  url: string;
  payload?: string;
  headers?: Record<string, string>;
}

/** A listening API and a way to ask it one request per connection. */
interface Served {
  api: Api;
  addr: string;
  port: number;
  inject(ask: Ask): Promise<Answer>;
}

const served: Api[] = [];
after(async () => {
  await Promise.all(served.map((a) => a.close()));
});

/** Send one request to 127.0.0.1:`port` on its own connection (Host names the listener). */
function ask(port: number, a: Ask): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: a.url,
        method: a.method ?? 'GET',
        headers: { host: `127.0.0.1:${port}`, ...a.headers },
        agent: false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () =>
          resolve({
            statusCode: res.statusCode ?? 0,
            headers: res.headers,
            body,
            json: <T>() => JSON.parse(body) as T,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(a.payload);
  });
}

/** A raw HTTP/1.1 answer (one) as status, lower-case headers and body. */
function parseAnswer(raw: string): { statusCode: number; headers: Record<string, string>; body: string } {
  const end = raw.indexOf('\r\n\r\n');
  const [status = '', ...lines] = raw.slice(0, end < 0 ? raw.length : end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { statusCode: Number(status.split(' ')[1]), headers, body: end < 0 ? '' : raw.slice(end + 4) };
}

/** Build the API on `deps` and listen on 127.0.0.1, port 0; closed after the tests. */
async function serve(deps: ApiDeps): Promise<Served> {
  const api = buildApi(deps);
  served.push(api);
  const addr = await listenApi(api, '127.0.0.1:0');
  const port = Number(addr.slice(addr.lastIndexOf(':') + 1));
  return { api, addr, port, inject: (a) => ask(port, a) };
}

/** The API with a stop that waits for `release()`, asked on a raw keep-alive connection. */
async function heldStop() {
  const { deps, control } = setup();
  const app = buildApi(deps);
  const raw = await rawConnection(app);
  let release = (): void => undefined;
  control.holdStop = new Promise((r) => (release = r));
  raw.sock.write(`POST /monitors/stop?id=db1 HTTP/1.1\r\nHost: ${raw.addr}\r\nContent-Length: 0\r\n\r\n`);
  return { ...raw, app, control, release };
}

/** The API listening on a free port, and one raw keep-alive connection to it. */
async function rawConnection(app: ReturnType<typeof buildApi>) {
  const addr = await listenApi(app, '127.0.0.1:0');
  const port = Number(addr.slice(addr.lastIndexOf(':') + 1));
  const sock = net.connect(port, '127.0.0.1');
  let text = '';
  sock.on('data', (d: Buffer) => (text += d.toString()));
  const ended = new Promise<void>((r) => sock.on('close', () => r()));
  return { addr, sock, ended, data: () => text };
}

describe('management API', () => {
  it('lists loaded monitors as id → redacted DSN JSON', async () => {
    const { deps } = setup();
    const res = await (await serve(deps)).inject({ method: 'GET', url: '/monitors' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    assert.deepEqual(res.json(), { db1: 'sonde:...@tcp(db1:3306)/', db2: '' });
  });

  it('reloads with POST, answering 200 with an empty body', async () => {
    const { deps, control } = setup();
    const res = await (await serve(deps)).inject({ method: 'POST', url: '/monitors/reload' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '');
    assert.equal(res.headers['content-type'], undefined);
    assert.deepEqual(control.calls, ['reload']);
  });

  it('refuses every method but POST on the state-changing paths with 405 and changes nothing', async () => {
    const { deps, control, debug } = setup();
    const app = await serve(deps);
    const paths = ['/monitors/reload', '/monitors/start?id=db2', '/monitors/stop?id=db1', '/debug'];
    for (const url of paths) {
      for (const method of ['GET', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const) {
        const res = await app.inject({ method, url });
        assert.equal(res.statusCode, 405, `${method} ${url}`);
        assert.equal(res.headers.allow, 'POST');
        assert.equal(res.headers['content-type'], TEXT);
        if (method !== 'HEAD') assert.equal(res.body, 'method not allowed\n');
        assert.equal(res.headers['access-control-allow-origin'], undefined);
      }
    }
    assert.deepEqual(control.calls, []);
    assert.deepEqual(debug, []);
    assert.equal(control.loaded.get('db1')?.running, true);
  });

  it('answers 412 with the fixed text when stop-loss blocks a reload', async () => {
    const { deps, control } = setup();
    control.reloadError = new SondeError('STOP_LOSS', 'before: 10; now: 4; lost 6 > limit 5');
    const res = await (await serve(deps)).inject({ method: 'POST', url: '/monitors/reload' });
    assert.equal(res.statusCode, 412);
    assert.equal(res.headers['content-type'], TEXT);
    assert.equal(res.body, 'Stop-loss prevented reloading; see sonde error log for details\n');
  });

  it('answers 409 with the escaped, single-line error when a reload fails', async () => {
    const { deps, control } = setup();
    control.reloadError = new SondeError('RELOAD_FAILED', 'monitors.yaml: bad <key>\nline 2');
    const res = await (await serve(deps)).inject({ method: 'POST', url: '/monitors/reload' });
    assert.equal(res.statusCode, 409);
    assert.equal(res.headers['content-type'], TEXT);
    assert.equal(res.body, 'Error reloading monitors: monitors.yaml: bad &lt;key&gt;\\nline 2\n');
  });

  it('treats any SondeError from a reload (e.g. invalid config) as a 409 load failure', async () => {
    const { deps, control } = setup();
    control.reloadError = new SondeError('CONFIG_INVALID', 'monitors.yaml: monitors[0].hostname: required');
    const res = await (await serve(deps)).inject({ method: 'POST', url: '/monitors/reload' });
    assert.equal(res.statusCode, 409);
    assert.equal(res.body, 'Error reloading monitors: monitors.yaml: monitors[0].hostname: required\n');
  });

  it('answers 500 with a fixed text and reports the event when a reload throws unexpectedly', async () => {
    const { deps, control, events } = setup();
    control.reloadError = new Error('driver said password=hunter2');
    const res = await (await serve(deps)).inject({ method: 'POST', url: '/monitors/reload' });
    assert.equal(res.statusCode, 500);
    assert.equal(res.headers['content-type'], TEXT);
    assert.equal(res.body, 'internal server error\n');
    assert.doesNotMatch(res.body, /hunter2|at |stack/);
    assert.deepEqual(events.lines, ['error server-api-error [] driver said password=hunter2']);
  });

  it('starts a stopped monitor with POST: 200 and an empty body', async () => {
    const { deps, control } = setup();
    const app = await serve(deps);
    const res = await app.inject({ method: 'POST', url: '/monitors/start?id=db2' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '');
    assert.equal(control.loaded.get('db2')?.running, true);
    assert.deepEqual(control.calls, ['start db2']);
  });

  it('answers 409 `already running` when starting a running monitor', async () => {
    const { deps } = setup();
    const res = await (await serve(deps)).inject({ method: 'POST', url: '/monitors/start?id=db1' });
    assert.equal(res.statusCode, 409);
    assert.equal(res.headers['content-type'], TEXT);
    assert.equal(res.body, 'Error starting monitor db1: already running\n');
  });

  it('does not repeat the prefix when the controller already wrote it', async () => {
    const { deps, control } = setup();
    control.startError = new SondeError(
      'MONITOR_START_FAILED',
      'Error starting monitor db1: already running',
    );
    const res = await (await serve(deps)).inject({ method: 'POST', url: '/monitors/start?id=db1' });
    assert.equal(res.body, 'Error starting monitor db1: already running\n');
  });

  it('answers 400 when id is missing or empty, without calling the controller', async () => {
    const { deps, control } = setup();
    const app = await serve(deps);
    for (const url of [
      '/monitors/start',
      '/monitors/start?id=',
      '/monitors/stop',
      '/monitors/stop?id=&x=1',
    ]) {
      const res = await app.inject({ method: 'POST', url });
      assert.equal(res.statusCode, 400, url);
      assert.equal(res.headers['content-type'], TEXT);
      assert.equal(res.body, 'missing id=monitorId in query\n');
    }
    assert.deepEqual(control.calls, []);
  });

  it('answers 404 `monitor <id> not loaded` for an unknown id, HTML-escaped and without CR/LF', async () => {
    const { deps } = setup();
    const app = await serve(deps);
    const res = await app.inject({ method: 'POST', url: '/monitors/start?id=nope' });
    assert.equal(res.statusCode, 404);
    assert.equal(res.headers['content-type'], TEXT);
    assert.equal(res.body, 'monitor nope not loaded\n');
    const evil = encodeURIComponent('<b>"x"&\'y\'\r\nInjected: 1');
    const res2 = await app.inject({ method: 'POST', url: `/monitors/stop?id=${evil}` });
    assert.equal(res2.statusCode, 404);
    assert.equal(res2.body, 'monitor &lt;b&gt;&#34;x&#34;&amp;&#39;y&#39;Injected: 1 not loaded\n');
  });

  it('uses the first id when the key is repeated (as Go does)', async () => {
    const { deps, control } = setup();
    await (await serve(deps)).inject({ method: 'POST', url: '/monitors/stop?id=db1&id=db2' });
    assert.deepEqual(control.calls, ['stop db1']);
  });

  it('stops a monitor (blocking until stopped), keeping it listed', async () => {
    const { deps, control } = setup();
    const app = await serve(deps);
    let release = (): void => undefined;
    control.holdStop = new Promise((r) => (release = r));
    const pending = app.inject({ method: 'POST', url: '/monitors/stop?id=db1' });
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(control.loaded.get('db1')?.running, true);
    release();
    const res = await pending;
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '');
    assert.equal(control.loaded.get('db1')?.running, false);
    const list = await app.inject({ url: '/monitors' });
    assert.deepEqual(Object.keys(list.json<Record<string, string>>()), ['db1', 'db2']);
  });

  it('maps a stop failure to its SondeError status', async () => {
    const { deps, control } = setup();
    control.stopError = new SondeError('MONITOR_STOP_FAILED', 'timed out after 5s');
    const res = await (await serve(deps)).inject({ method: 'POST', url: '/monitors/stop?id=db1' });
    assert.equal(res.statusCode, 500);
    assert.equal(res.body, 'Error stopping monitor db1: timed out after 5s\n');
  });

  it('maps other SondeError codes through the error registry', async () => {
    const { deps, control } = setup();
    control.startError = new SondeError('NOT_SUPPORTED', 'aws <auth> not supported');
    const res = await (await serve(deps)).inject({ method: 'POST', url: '/monitors/start?id=db1' });
    assert.equal(res.statusCode, 501);
    assert.equal(res.body, 'aws &lt;auth&gt; not supported\n');
  });

  it('serves the config as YAML text, or JSON with the ?json presence flag', async () => {
    const { deps } = setup();
    const app = await serve(deps);
    const yaml = await app.inject({ url: '/config' });
    assert.equal(yaml.statusCode, 200);
    assert.equal(yaml.headers['content-type'], TEXT);
    assert.equal(yaml.body, 'api:\n  bind: 127.0.0.1:7522\nmysql:\n  password: ...\n');
    for (const url of ['/config?json', '/config?json=', '/config?json=true']) {
      const res = await app.inject({ url });
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.headers['content-type'], JSON_TYPE);
      assert.deepEqual(res.json(), { api: { bind: '127.0.0.1:7522' }, mysql: { password: '...' } });
    }
    const other = await app.inject({ url: '/config?jsonx' });
    assert.equal(other.headers['content-type'], TEXT);
  });

  it('sends a JSON string from renderConfig.json() as JSON, not as text', async () => {
    const { deps } = setup();
    deps.renderConfig = { yaml: () => '', json: () => 'just a string' };
    const res = await (await serve(deps)).inject({ url: '/config?json' });
    assert.equal(res.body, '"just a string"');
    assert.equal(res.headers['content-type'], JSON_TYPE);
  });

  it('lists registered collectors and sinks', async () => {
    const { deps } = setup();
    const res = await (await serve(deps)).inject({ url: '/registered' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    assert.equal(res.body, '{"collectors":["status.global","var.global"],"sinks":["log","noop"]}');
  });

  it('serves the version as text/plain v<x.y.z>', async () => {
    const { deps } = setup();
    const res = await (await serve(deps)).inject({ url: '/version' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], TEXT);
    assert.equal(res.body, 'v1.4.2');
  });

  it('returns the status maps as-is', async () => {
    const { deps } = setup();
    const app = await serve(deps);
    const server = await app.inject({ url: '/status' });
    assert.equal(server.statusCode, 200);
    assert.equal(server.headers['content-type'], JSON_TYPE);
    assert.deepEqual(server.json(), SERVER_STATUS);
    const monitors = await app.inject({ url: '/status/monitors' });
    assert.equal(monitors.statusCode, 200);
    assert.deepEqual(monitors.json(), MONITOR_STATUS);
  });

  it('toggles debug on POST /debug and answers the new state', async () => {
    const { deps, debug } = setup();
    const app = await serve(deps);
    const on = await app.inject({ method: 'POST', url: '/debug' });
    assert.equal(on.headers['content-type'], JSON_TYPE);
    assert.equal(on.body, '{"debugging":true}');
    const off = await app.inject({ method: 'POST', url: '/debug' });
    assert.equal(off.body, '{"debugging":false}');
    assert.deepEqual(debug, [true, false]);
  });

  it('answers 404 `404 page not found` for unknown paths, including trailing slashes', async () => {
    const { deps } = setup();
    const app = await serve(deps);
    for (const url of ['/', '/nope', '/monitors/', '/status/monitors/db1', '/plugins', '/MONITORS']) {
      const res = await app.inject({ url });
      assert.equal(res.statusCode, 404, url);
      assert.equal(res.headers['content-type'], TEXT);
      assert.equal(res.body, '404 page not found\n');
    }
  });

  it('answers 405 with an Allow header for a wrong method on a known path', async () => {
    const { deps, control } = setup();
    const app = await serve(deps);
    const del = await app.inject({ method: 'DELETE', url: '/monitors' });
    assert.equal(del.statusCode, 405);
    assert.equal(del.headers.allow, 'GET, HEAD');
    assert.equal(del.headers['content-type'], TEXT);
    assert.equal(del.body, 'method not allowed\n');
    const put = await app.inject({ method: 'PUT', url: '/monitors/stop?id=db1' });
    assert.equal(put.statusCode, 405);
    assert.equal(put.headers.allow, 'POST');
    const post = await app.inject({ method: 'POST', url: '/status' });
    assert.equal(post.statusCode, 405);
    assert.equal(post.headers.allow, 'GET, HEAD');
    // HEAD must never change state.
    const head = await app.inject({ method: 'HEAD', url: '/monitors/reload' });
    assert.equal(head.statusCode, 405);
    assert.deepEqual(control.calls, []);
  });

  it('ignores request bodies of any content type, even malformed JSON', async () => {
    const { deps, control } = setup();
    const app = await serve(deps);
    const form = await app.inject({
      method: 'POST',
      url: '/monitors/reload',
      payload: 'a=b',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(form.statusCode, 200);
    const json = await app.inject({
      method: 'POST',
      url: '/monitors/reload',
      payload: '{not json',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(json.statusCode, 200);
    const none = await app.inject({ method: 'POST', url: '/monitors/reload', payload: 'xyz' });
    assert.equal(none.statusCode, 200);
    assert.deepEqual(control.calls, ['reload', 'reload', 'reload']);
  });

  it('answers a badly encoded URL with 400 text', async () => {
    const { deps } = setup();
    const res = await (await serve(deps)).inject({ url: '/monitors/%zz' });
    assert.equal(res.statusCode, 400);
    assert.equal(res.headers['content-type'], TEXT);
    assert.equal(res.body, 'Bad Request\n');
  });

  it('answers a body over the limit with 413 text', async () => {
    const { deps, control } = setup();
    const { port } = await serve(deps);
    // The declared length is refused before the body is read.
    const head = `POST /monitors/reload HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: text/plain\r\nContent-Length: ${1024 * 1024 + 1}\r\n\r\n`;
    const res = parseAnswer((await rawExchange(port, [head])).answer);
    assert.equal(res.statusCode, 413);
    assert.equal(res.headers['content-type'], TEXT);
    assert.equal(res.body, 'Payload Too Large\n');
    assert.deepEqual(control.calls, []);
  });

  it('refuses a chunked body once it grows past the limit, and closes the connection', async () => {
    const { deps, control } = setup();
    const { port } = await serve(deps);
    const head = `POST /debug HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const chunk = `${(64 * 1024).toString(16)}\r\n${'x'.repeat(64 * 1024)}\r\n`;
    // 16 chunks of 64 KiB (1 MiB), then one byte more; the body never ends.
    const raw = await rawExchange(port, [head, ...Array.from({ length: 16 }, () => chunk), '1\r\nx\r\n']);
    const res = parseAnswer(raw.answer);
    assert.equal(res.statusCode, 413);
    assert.equal(res.headers.connection, 'close');
    assert.equal(res.body, 'Payload Too Large\n');
    assert.equal(raw.closed, true);
    assert.deepEqual(control.calls, []);
  });

  it('reads and drops a body of exactly the limit, and serves the next request on the connection', async () => {
    const { deps, debug } = setup();
    const { port } = await serve(deps);
    const host = `Host: 127.0.0.1:${port}\r\n`;
    const body = 'x'.repeat(1024 * 1024);
    const raw = await rawExchange(port, [
      `POST /debug HTTP/1.1\r\n${host}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      `GET /version HTTP/1.1\r\n${host}Connection: close\r\n\r\n`,
    ]);
    const [first, second] = raw.answer.split(/(?=HTTP\/1\.1 )/);
    assert.equal(parseAnswer(first ?? '').body, '{"debugging":true}');
    assert.equal(parseAnswer(second ?? '').body, 'v1.4.2');
    assert.deepEqual(debug, [true]);
  });
});

describe('listening', () => {
  it('serves real HTTP on port 0 and reports the bound address', async () => {
    const { deps, control } = setup();
    const app = buildApi(deps);
    const addr = await listenApi(app, '127.0.0.1:0');
    try {
      assert.match(addr, /^127\.0\.0\.1:\d+$/);
      assert.notEqual(addr, '127.0.0.1:0');
      const version = await fetch(`http://${addr}/version`);
      assert.equal(version.status, 200);
      assert.equal(version.headers.get('content-type'), TEXT);
      assert.equal(await version.text(), 'v1.4.2');
      const stop = await fetch(`http://${addr}/monitors/stop?id=db1`, { method: 'POST' });
      assert.equal(stop.status, 200);
      assert.equal(await stop.text(), '');
      const start = await fetch(`http://${addr}/monitors/start?id=db1`, { method: 'POST' });
      assert.equal(start.status, 200);
      const again = await fetch(`http://${addr}/monitors/start?id=db1`, { method: 'POST' });
      assert.equal(again.status, 409);
      assert.equal(await again.text(), 'Error starting monitor db1: already running\n');
      const missing = await fetch(`http://${addr}/nope`);
      assert.equal(missing.status, 404);
      assert.equal(await missing.text(), '404 page not found\n');
      assert.deepEqual(control.calls, ['stop db1', 'start db1', 'start db1']);
    } finally {
      await app.close();
    }
  });

  it('listens on all interfaces for `:port`', async () => {
    const { deps } = setup();
    const app = buildApi(deps);
    const addr = await listenApi(app, ':0');
    try {
      assert.match(addr, /^(\[::\]|0\.0\.0\.0):\d+$/);
      const port = addr.slice(addr.lastIndexOf(':') + 1);
      const res = await fetch(`http://127.0.0.1:${port}/status`);
      assert.deepEqual(await res.json(), SERVER_STATUS);
    } finally {
      await app.close();
    }
  });

  it('answers malformed HTTP with a plain 400 and closes the connection', async () => {
    const { deps } = setup();
    const app = buildApi(deps);
    const addr = await listenApi(app, '127.0.0.1:0');
    try {
      const port = Number(addr.slice(addr.lastIndexOf(':') + 1));
      const answer = await new Promise<string>((resolve, reject) => {
        const sock = net.connect(port, '127.0.0.1');
        let data = '';
        sock.on('data', (d: Buffer) => (data += d.toString()));
        sock.on('end', () => resolve(data));
        sock.on('error', reject);
        sock.write('THIS IS NOT HTTP\r\n\r\n');
      });
      assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/);
      assert.match(answer, /\r\nContent-Type: text\/plain; charset=utf-8\r\n/);
      assert.doesNotMatch(answer, /[{}]/);
    } finally {
      await app.close();
    }
  });

  it('answers requests arriving while closing with a text 503', async () => {
    const { app, addr, sock, ended, data, release } = await heldStop();
    // A slow stop is in flight on a keep-alive connection; a second request follows on it.
    await new Promise((r) => setTimeout(r, 50));
    const closing = app.close();
    sock.write(`GET /status HTTP/1.1\r\nHost: ${addr}\r\n\r\n`);
    await new Promise((r) => setTimeout(r, 20));
    release();
    await closing;
    await ended;
    const [first, second] = data().split(/(?=HTTP\/1\.1 )/);
    assert.match(first ?? '', /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(second ?? '', /^HTTP\/1\.1 503 Service Unavailable\r\n/);
    // Header names are case-insensitive; sonde writes them the way Go does (Content-Type).
    assert.match(second ?? '', /\r\ncontent-type: text\/plain; charset=utf-8\r\n/i);
    assert.match(second ?? '', /\r\n\r\nserver is shutting down\n$/);
  });

  it('closes idle kept-alive connections on close(), then refuses new ones', async () => {
    const { deps } = setup();
    const app = buildApi(deps);
    const { addr, sock, ended, data } = await rawConnection(app);
    sock.write(`GET /version HTTP/1.1\r\nHost: ${addr}\r\n\r\n`);
    while (!data().endsWith('v1.4.2')) await new Promise((r) => setTimeout(r, 10));
    const closing = app.close();
    assert.equal(app.close(), closing);
    await closing;
    await ended;
    assert.match(data(), /^HTTP\/1\.1 200 OK\r\n/);
    await assert.rejects(fetch(`http://${addr}/version`));
  });

  // Within less than the keep-alive time: the connection is closed because close() asked,
  // not because it idled out.
  it(
    'closes a connection as soon as its answer in flight is out during close()',
    { timeout: API_KEEP_ALIVE_MS - 1_000 },
    async () => {
      const { app, control, ended, data, release } = await heldStop();
      while (control.calls.length === 0) await new Promise((r) => setTimeout(r, 10));
      const closing = app.close();
      release();
      await closing;
      await ended;
      assert.match(data(), /^HTTP\/1\.1 200 OK\r\n/);
      assert.equal(data().split('HTTP/1.1 ').length, 2, 'one answer only');
      assert.equal(control.loaded.get('db1')?.running, false);
    },
  );

  it('closes before listening, and then refuses to listen', async () => {
    const app = buildApi(setup().deps);
    await app.close();
    await assert.rejects(listenApi(app, '127.0.0.1:0'), /the listener is closed/);
  });

  it('refuses a bind address without a usable port before listening', async () => {
    const app = buildApi(setup().deps);
    for (const bad of ['7522', '127.0.0.1', 'host:', 'host:70000', 'host:7a']) {
      await assert.rejects(listenApi(app, bad), /invalid bind address/, bad);
    }
    await app.close();
  });

  it('escapes HTML like Go', () => {
    assert.equal(escapeHtml(`<a href="x">'&'</a>`), '&lt;a href=&#34;x&#34;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });
});
