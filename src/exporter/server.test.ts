import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import bcrypt from 'bcryptjs';
import { rawExchange } from '../../test/helpers/agent.js';
import type { ServerInfo } from '../core/db.js';
import type { Events } from '../core/events.js';
import type { ExporterHandle, ExporterSource, ScrapeResult } from '../core/exporter.js';
import { MetricType, type Metrics } from '../core/metrics.js';
import {
  collectFilter,
  collectorLabel,
  scrapeTimeoutMs,
  startExporter,
  type StartExporterArgs,
} from './server.js';

// ---- helpers ----------------------------------------------------------------------------

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function get(
  address: string,
  path: string,
  opts: { headers?: Record<string, string>; method?: string } = {},
): Promise<Reply> {
  const [host, port] = address.split(':');
  return new Promise((resolve, reject) => {
    const req = request(
      { host, port: Number(port), path, method: opts.method ?? 'GET', headers: opts.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function metrics(values: Metrics['values']): Metrics {
  return {
    begin: new Date(0),
    end: new Date(0),
    monitorId: 'db1',
    plan: 'default-exporter',
    level: 'prom',
    interval: 1,
    state: '',
    values,
  };
}

const UP: ScrapeResult = {
  up: true,
  metrics: metrics({
    'status.global': [
      { name: 'threads_connected', value: 3, type: MetricType.Gauge },
      { name: 'com_select', value: 12, type: MetricType.CumulativeCounter },
    ],
    'var.global': [{ name: 'max_connections', value: 151, type: MetricType.Gauge }],
  }),
  domains: [
    { domain: 'status.global', ok: true, seconds: 0.25 },
    { domain: 'var.global', ok: true, seconds: 0.5 },
  ],
  error: '',
  connectSeconds: 0.001,
  text: {
    version: '10.11.19-MariaDB',
    version_comment: 'Debian 12',
    transaction_isolation: 'REPEATABLE-READ',
  },
};

/** A scripted ExporterSource: each scrape takes the next result (the last one repeats). */
class FakeSource implements ExporterSource {
  calls: { domains: readonly string[] | undefined; signal: AbortSignal }[] = [];
  results: ScrapeResult[];
  info: ServerInfo | undefined = {
    flavor: 'mariadb',
    version: [10, 11, 19],
    versionString: '10.11.19-MariaDB-x',
  };
  /** when set, scrape waits for the signal and resolves with `down` */
  waitForAbort = false;
  constructor(...results: ScrapeResult[]) {
    this.results = results;
  }
  async scrape(signal: AbortSignal, domains?: readonly string[]): Promise<ScrapeResult> {
    this.calls.push({ domains, signal });
    if (this.waitForAbort) {
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      return { up: false, metrics: undefined, domains: [], error: 'aborted' };
    }
    return (this.results.length > 1 ? this.results.shift() : this.results[0]) ?? UP;
  }
  async serverInfo(): Promise<ServerInfo | undefined> {
    return this.info;
  }
  domains(): string[] {
    return ['status.global', 'var.global', 'innodb'];
  }
}

class Recorder {
  status = new Map<string, string>();
  errors: string[] = [];
  warnings: string[] = [];
  writer = {
    set: (k: string, v: string) => this.status.set(k, v),
    delete: (k: string) => this.status.delete(k),
  };
  events: Events = {
    info: () => undefined,
    error: (event, _id, msg) => this.errors.push(`${event}: ${msg}`),
    warn: (event, _id, msg) => this.warnings.push(`${event}: ${msg ?? ''}`),
    debug: () => undefined,
  };
}

const handles: ExporterHandle[] = [];
after(async () => {
  await Promise.all(handles.map((h) => h.close()));
});

async function start(source: ExporterSource, extra: Partial<StartExporterArgs> = {}) {
  const rec = new Recorder();
  const h = await startExporter({
    monitorId: 'db1',
    listen: '127.0.0.1:0',
    path: '/metrics',
    source,
    status: rec.writer,
    events: rec.events,
    ...extra,
  });
  handles.push(h);
  return { h, rec };
}

const sampleLines = (body: Buffer) =>
  body
    .toString()
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'));

// ---- tests ------------------------------------------------------------------------------

describe('exporter endpoint', () => {
  it('serves mysqld_exporter names, self-metrics and mysql_version_info as text 0.0.4', async () => {
    const source = new FakeSource(UP);
    const { h, rec } = await start(source);
    assert.match(h.address, /^127\.0\.0\.1:\d+$/);
    assert.equal(rec.status.get('exporter'), `listening on ${h.address}`);
    const r = await get(h.address, '/metrics');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    assert.equal(r.headers['content-encoding'], undefined);
    assert.equal(
      r.body.toString(),
      [
        '# HELP mysql_exporter_collector_duration_seconds Collector time duration.',
        '# TYPE mysql_exporter_collector_duration_seconds gauge',
        'mysql_exporter_collector_duration_seconds{collector="collect.global_status"} 0.25',
        'mysql_exporter_collector_duration_seconds{collector="collect.global_variables"} 0.5',
        'mysql_exporter_collector_duration_seconds{collector="connection"} 0.001',
        '# HELP mysql_exporter_collector_success mysqld_exporter: Whether a collector succeeded.',
        '# TYPE mysql_exporter_collector_success gauge',
        'mysql_exporter_collector_success{collector="collect.global_status"} 1',
        'mysql_exporter_collector_success{collector="collect.global_variables"} 1',
        '# HELP mysql_exporter_last_scrape_error Whether the last scrape of metrics from MySQL resulted in an error (1 for error, 0 for success).',
        '# TYPE mysql_exporter_last_scrape_error gauge',
        'mysql_exporter_last_scrape_error 0',
        '# HELP mysql_exporter_scrapes_total Total number of times MySQL was scraped for metrics.',
        '# TYPE mysql_exporter_scrapes_total counter',
        'mysql_exporter_scrapes_total 1',
        '# HELP mysql_global_status_commands_total Total number of executed MySQL commands.',
        '# TYPE mysql_global_status_commands_total counter',
        'mysql_global_status_commands_total{command="select"} 12',
        '# HELP mysql_global_status_threads_connected Generic metric from SHOW GLOBAL STATUS.',
        '# TYPE mysql_global_status_threads_connected untyped',
        'mysql_global_status_threads_connected 3',
        '# HELP mysql_global_variables_max_connections Generic gauge metric from SHOW GLOBAL VARIABLES.',
        '# TYPE mysql_global_variables_max_connections gauge',
        'mysql_global_variables_max_connections 151',
        '# HELP mysql_transaction_isolation MySQL transaction isolation.',
        '# TYPE mysql_transaction_isolation gauge',
        'mysql_transaction_isolation{level="REPEATABLE-READ"} 1',
        '# HELP mysql_up Whether the MySQL server is up.',
        '# TYPE mysql_up gauge',
        'mysql_up 1',
        '# HELP mysql_version_info MySQL version and distribution.',
        '# TYPE mysql_version_info gauge',
        'mysql_version_info{innodb_version="",version="10.11.19-MariaDB",version_comment="Debian 12"} 1',
        '',
      ].join('\n'),
    );
    const again = await get(h.address, '/metrics');
    assert.ok(sampleLines(again.body).includes('mysql_exporter_scrapes_total 2'));
    assert.equal(source.calls.length, 2);
    assert.equal(source.calls[0]?.domains, undefined);
    assert.deepEqual(rec.errors, []);
  });

  it('answers 200 with mysql_up 0 when MySQL is down, and counts the scrape as an error', async () => {
    const down: ScrapeResult = { up: false, metrics: undefined, domains: [], error: 'connect ECONNREFUSED' };
    const { h } = await start(new FakeSource(down));
    const r = await get(h.address, '/metrics');
    assert.equal(r.status, 200);
    assert.deepEqual(sampleLines(r.body), [
      'mysql_exporter_last_scrape_error 1',
      'mysql_exporter_scrapes_total 1',
      'mysql_up 0',
    ]);
  });

  it('reports a failed collector like mysqld_exporter: success 0, scrape_errors_total, last_scrape_error', async () => {
    const partial: ScrapeResult = {
      ...UP,
      metrics: metrics({
        'status.global': [{ name: 'uptime', value: 5, type: MetricType.CumulativeCounter }],
      }),
      domains: [
        { domain: 'status.global', ok: true, seconds: 0.1 },
        { domain: 'innodb', ok: false, seconds: 8 },
      ],
      error: 'innodb: timeout after 8000 ms',
    };
    const source = new FakeSource(partial, partial, UP);
    const { h, rec } = await start(source);
    await get(h.address, '/metrics');
    const r = await get(h.address, '/metrics');
    const lines = sampleLines(r.body);
    assert.ok(
      lines.includes('mysql_exporter_collector_success{collector="collect.info_schema.innodb_metrics"} 0'),
    );
    assert.ok(
      lines.includes('mysql_exporter_scrape_errors_total{collector="collect.info_schema.innodb_metrics"} 2'),
    );
    assert.ok(lines.includes('mysql_exporter_last_scrape_error 1'));
    assert.ok(lines.includes('mysql_global_status_uptime 5'));
    // status.global was collected without var.global: no version info (as upstream)
    assert.ok(!lines.some((l) => l.startsWith('mysql_version_info')));
    // Collection errors are reported by the engine behind the source, not by the HTTP side.
    assert.deepEqual(rec.errors, []);
    // A good scrape clears last_scrape_error; the error counter stays.
    const ok = sampleLines((await get(h.address, '/metrics')).body);
    assert.ok(ok.includes('mysql_exporter_last_scrape_error 0'));
    assert.ok(
      ok.includes('mysql_exporter_scrape_errors_total{collector="collect.info_schema.innodb_metrics"} 2'),
    );
  });

  it('takes mysql_version_info from serverInfo() when the source gives no text values', async () => {
    const { text: _text, ...noText } = UP;
    const { h } = await start(new FakeSource(noText));
    const lines = sampleLines((await get(h.address, '/metrics')).body);
    assert.ok(
      lines.includes(
        'mysql_version_info{innodb_version="",version="10.11.19-MariaDB-x",version_comment=""} 1',
      ),
    );
  });

  it('maps collect[] to domains, ignoring unknown names like mysqld_exporter', async () => {
    const source = new FakeSource(UP);
    const { h } = await start(source);
    await get(h.address, '/metrics?collect[]=global_status&collect[]=info_schema.innodb_metrics');
    await get(h.address, '/metrics?collect%5B%5D=global_variables');
    await get(h.address, '/metrics?collect[]=var.global&collect[]=nope');
    await get(h.address, '/metrics?collect[]=slave_status');
    assert.deepEqual(
      source.calls.map((c) => c.domains),
      [['status.global', 'innodb'], ['var.global'], ['var.global'], undefined],
    );
  });

  it('gzips the body when the client accepts gzip', async () => {
    const { h } = await start(new FakeSource(UP));
    const plain = await get(h.address, '/metrics');
    const r = await get(h.address, '/metrics', { headers: { 'Accept-Encoding': 'gzip, deflate' } });
    assert.equal(r.headers['content-encoding'], 'gzip');
    assert.equal(r.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    const text = gunzipSync(r.body).toString();
    assert.equal(
      text.replace('mysql_exporter_scrapes_total 2', 'mysql_exporter_scrapes_total 1'),
      plain.body.toString(),
    );
    // again (the text is rendered into the buffer the last gzip answer was made from)
    const again = await get(h.address, '/metrics', { headers: { 'Accept-Encoding': 'gzip' } });
    assert.equal(
      gunzipSync(again.body)
        .toString()
        .replace('mysql_exporter_scrapes_total 3', 'mysql_exporter_scrapes_total 1'),
      plain.body.toString(),
    );
  });

  it('uses X-Prometheus-Scrape-Timeout-Seconds minus 0.25 s as the scrape deadline', async () => {
    const source = new FakeSource(UP);
    source.waitForAbort = true;
    const { h } = await start(source);
    const t0 = Date.now();
    const r = await get(h.address, '/metrics', { headers: { 'X-Prometheus-Scrape-Timeout-Seconds': '0.6' } });
    const elapsed = Date.now() - t0;
    assert.equal(r.status, 200);
    assert.ok(elapsed >= 340 && elapsed < 1000, `elapsed ${elapsed} ms`);
    assert.match(String(source.calls[0]?.signal.reason), /scrape timeout after 0.35 s/);
    assert.ok(sampleLines(r.body).includes('mysql_up 0'));
  });

  it('cancels the scrape when the client goes away', async () => {
    const source = new FakeSource(UP);
    source.waitForAbort = true;
    const { h } = await start(source);
    const [host, port] = h.address.split(':');
    await new Promise<void>((resolve) => {
      const req = request({ host, port: Number(port), path: '/metrics' });
      req.on('error', () => resolve());
      req.end();
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 100);
    });
    for (let i = 0; i < 50 && source.calls[0]?.signal.aborted !== true; i++)
      await new Promise((r) => setTimeout(r, 20));
    assert.equal(source.calls[0]?.signal.aborted, true);
    assert.match(String(source.calls[0]?.signal.reason), /client closed the connection/);
  });

  it('serves a landing page at / and 404 elsewhere; HEAD has no body', async () => {
    const { h } = await start(new FakeSource(UP), { path: 'custom' }); // a missing slash is added
    const landing = await get(h.address, '/');
    assert.equal(landing.status, 200);
    assert.equal(landing.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(landing.body.toString(), /<a href='\/custom'>Metrics<\/a>/);
    for (const p of ['/metrics', '/custom/', '/foo', '/custom/x']) {
      const r = await get(h.address, p);
      assert.equal(r.status, 404, p);
      assert.equal(r.body.toString(), '404 page not found\n');
    }
    const scrape = await get(h.address, '/custom?x=1', { method: 'POST' });
    assert.equal(scrape.status, 200);
    const head = await get(h.address, '/custom', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    assert.ok(Number(head.headers['content-length']) > 0);
  });

  it('reloads on POST /-/reload: 200 ok, or 500 with the error; refuses other methods; 404 without a hook', async () => {
    let reloads = 0;
    const next: { error?: string } = {};
    const { h } = await start(new FakeSource(UP, UP), {
      reload: async () => {
        reloads++;
        return { ...next };
      },
    });
    const get405 = await get(h.address, '/-/reload');
    assert.equal(get405.status, 405);
    assert.equal(get405.headers.allow, 'POST');
    assert.equal(reloads, 0);
    const post = await get(h.address, '/-/reload', { method: 'POST' });
    assert.deepEqual([post.status, post.body.toString()], [200, 'ok']);
    assert.equal(reloads, 1);
    next.error = 'POST /-/reload: cannot read mycnf: x.cnf: line 2: missing option name';
    const bad = await get(h.address, '/-/reload', { method: 'POST' });
    assert.deepEqual([bad.status, bad.body.toString()], [500, `reload failed: ${next.error}\n`]);
    assert.equal((await get(h.address, '/metrics')).status, 200, 'still serving');
    const { h: plain } = await start(new FakeSource(UP));
    assert.equal((await get(plain.address, '/-/reload', { method: 'POST' })).status, 404);
  });

  it('drops a duplicate series instead of failing the scrape: counted, told once', async () => {
    const dup: ScrapeResult = {
      ...UP,
      metrics: metrics({
        'status.global': [
          { name: 'a.b', value: 1, type: MetricType.Gauge },
          { name: 'a-b', value: 2, type: MetricType.Gauge },
          { name: 'threads_running', value: 3, type: MetricType.Gauge },
        ],
      }),
    };
    const { h, rec } = await start(new FakeSource(dup, dup));
    const first = await get(h.address, '/metrics');
    assert.equal(first.status, 200);
    const body = first.body.toString();
    assert.match(body, /^mysql_global_status_a_b 1$/m, 'the first of the two is kept');
    assert.doesNotMatch(body, /^mysql_global_status_a_b 2$/m);
    assert.match(body, /^mysql_global_status_threads_running 3$/m);
    assert.match(body, /^mysql_up 1$/m);
    assert.match(body, /^# TYPE sonde_exporter_duplicate_series_total counter$/m);
    assert.match(body, /^sonde_exporter_duplicate_series_total 1$/m);
    const second = (await get(h.address, '/metrics')).body.toString();
    assert.match(second, /^sonde_exporter_duplicate_series_total 2$/m);
    assert.deepEqual(rec.warnings, [
      'exporter-duplicate-series: exporter: duplicate series mysql_global_status_a_b left out of the scrape',
    ]);
  });

  it('sets status stopped on close and rejects an address in use', async () => {
    const { h, rec } = await start(new FakeSource(UP));
    await assert.rejects(
      startExporter({
        monitorId: 'db2',
        listen: h.address,
        path: '/metrics',
        source: new FakeSource(UP),
        status: new Recorder().writer,
        events: new Recorder().events,
      }),
      /cannot listen on 127\.0\.0\.1:\d+: listen EADDRINUSE/,
    );
    await h.close();
    await h.close(); // idempotent
    assert.equal(rec.status.get('exporter'), 'stopped');
    await assert.rejects(get(h.address, '/metrics'), /ECONNREFUSED/);
  });
});

describe('exporter protections', () => {
  it('asks for the bearer token on every path when exporter.token-file is set', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sonde-exporter-token-'));
    try {
      const file = join(dir, 'token');
      writeFileSync(file, 'scrape-token\n');
      const source = new FakeSource(UP);
      const { h } = await start(source, { tokenFile: file });
      for (const path of ['/metrics', '/', '/nope']) {
        const res = await get(h.address, path);
        assert.equal(res.status, 401, path);
        assert.equal(res.headers['www-authenticate'], 'Bearer');
        assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
        assert.equal(res.body.toString(), 'unauthorized: missing or wrong bearer token\n');
      }
      const wrong = await get(h.address, '/metrics', { headers: { authorization: 'Bearer other' } });
      assert.equal(wrong.status, 401);
      assert.equal(source.calls.length, 0);
      const ok = await get(h.address, '/metrics', { headers: { authorization: 'Bearer scrape-token' } });
      assert.equal(ok.status, 200);
      assert.equal(source.calls.length, 1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails to start with an error naming the key and the file when the token file is missing', async () => {
    const file = join(tmpdir(), 'sonde-no-such-token-file');
    await assert.rejects(start(new FakeSource(UP), { tokenFile: file }), {
      message: `exporter.token-file: cannot read token file ${file}: ENOENT`,
    });
  });

  it('listens on every address of a comma-separated web.listen-address', async () => {
    const source = new FakeSource(UP);
    const { h, rec } = await start(source, { listen: '127.0.0.1:0, 127.0.0.1:0' });
    assert.equal(h.addresses.length, 2);
    assert.equal(h.address, h.addresses[0]);
    assert.equal(rec.status.get('exporter'), `listening on ${h.addresses.join(', ')}`);
    for (const a of h.addresses) assert.equal((await get(a, '/metrics')).status, 200);
    assert.equal(source.calls.length, 2);
    await h.close();
    assert.equal(rec.status.get('exporter'), 'stopped');
  });

  it('asks for basic auth from web.config.file before any scrape', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sonde-exporter-web-'));
    try {
      const file = join(dir, 'web.yml');
      writeFileSync(file, `basic_auth_users:\n  prometheus: ${bcrypt.hashSync('pw', 4)}\n`);
      const source = new FakeSource(UP);
      const { h } = await start(source, { webConfigFile: file });
      const none = await get(h.address, '/metrics');
      assert.equal(none.status, 401);
      assert.equal(none.headers['www-authenticate'], 'Basic');
      const auth = (p: string) => ({
        authorization: `Basic ${Buffer.from(`prometheus:${p}`).toString('base64')}`,
      });
      assert.equal((await get(h.address, '/metrics', { headers: auth('nope') })).status, 401);
      assert.equal(source.calls.length, 0);
      const ok = await get(h.address, '/metrics', { headers: auth('pw') });
      assert.equal(ok.status, 200);
      assert.equal(source.calls.length, 1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails to start with one line naming the flag, the file and the key when web.config.file is bad', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sonde-exporter-web-'));
    try {
      const file = join(dir, 'web.yml');
      writeFileSync(file, 'tls_server_config:\n  cert_file: nope.pem\n  key_file: nope.key\n');
      await assert.rejects(start(new FakeSource(UP), { webConfigFile: file }), {
        message: `exporter.flags.web.config.file: ${file}: tls_server_config.cert_file: cannot read ${join(dir, 'nope.pem')}: ENOENT`,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('cuts off a client that sends its headers too slowly within 12 s, keeping a long keep-alive', async () => {
    const { h } = await start(new FakeSource(UP));
    const port = Number(h.address.slice(h.address.lastIndexOf(':') + 1));
    const parts = ['GET /metrics HTTP/1.1\r\n', `Host: ${h.address}\r\n`];
    for (let i = 0; i < 40; i++) parts.push(`X-Slow-${i}: 1\r\n`);
    const slow = await rawExchange(port, parts, { gapMs: 500, timeoutMs: 25_000 });
    assert.equal(slow.closed, true);
    assert.ok(slow.elapsedMs < 12_000, `closed after ${slow.elapsedMs} ms`);
    assert.match(slow.answer, /^HTTP\/1\.1 408 Request Timeout\r\n/);
    const res = await get(h.address, '/metrics');
    assert.match(String(res.headers['keep-alive']), /timeout=65/);
  });
});

describe('exporter helpers', () => {
  it('parses the scrape timeout header', () => {
    assert.equal(scrapeTimeoutMs(undefined), 10_000);
    assert.equal(scrapeTimeoutMs(''), 10_000);
    assert.equal(scrapeTimeoutMs('abc'), 10_000);
    assert.equal(scrapeTimeoutMs('-1'), 10_000);
    assert.equal(scrapeTimeoutMs('10'), 9750);
    assert.equal(scrapeTimeoutMs('0.2'), 200);
    // timeout-offset
    assert.equal(scrapeTimeoutMs('10', 1.5), 8500);
    assert.equal(scrapeTimeoutMs('10', 0), 10_000);
    assert.equal(scrapeTimeoutMs('1', 2), 1000);
    // Clamped to 300 s: a value past what a timer holds never becomes an instant timeout.
    assert.equal(scrapeTimeoutMs('300'), 299_750);
    assert.equal(scrapeTimeoutMs('2147484'), 299_750);
    assert.equal(scrapeTimeoutMs('Infinity'), 299_750);
    assert.equal(scrapeTimeoutMs('1e308'), 299_750);
  });

  it('names collectors and filters like mysqld_exporter', () => {
    assert.equal(collectorLabel('status.global'), 'collect.global_status');
    assert.equal(collectorLabel('var.global'), 'collect.global_variables');
    assert.equal(collectorLabel('innodb'), 'collect.info_schema.innodb_metrics');
    assert.equal(collectorLabel('repl'), 'collect.repl');
    assert.deepEqual(collectFilter([], ['innodb']), undefined);
    assert.deepEqual(collectFilter(['global_status'], ['innodb']), undefined);
    assert.deepEqual(collectFilter(['global_status', 'innodb'], ['innodb', 'status.global']), [
      'innodb',
      'status.global',
    ]);
  });
});
