/**
 * The web page's routes on the real API listener (port 0): the page and its files open
 * without the token and under a Content-Security-Policy, cached by ETag and gzipped; the
 * JSON behind the token with its exact shape; state changes refused with `api.read-only`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import type { MonitorControl } from '../core/control.js';
import { MetricType, type Metrics } from '../core/metrics.js';
import type { Plan } from '../core/plan.js';
import type { UiFleet, UiMonitor } from '../core/ui.js';
import { SeriesBuffer } from './series.js';
import { uiSource, type UiMonitorLike } from './view.js';
import { buildApi, type Api } from '../server/api.js';
import { httpCall } from '../../test/helpers/http-call.js';
import { CSP, isPublicUiPath, uiRoutes } from './ui.js';
import { request } from 'node:http';

const TOKEN = 'page-token-42';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const NOW = Date.UTC(2026, 0, 1, 12, 0, 30);

const PLAN: Plan = {
  name: 'kpi',
  source: 'test',
  levels: {
    fast: {
      name: 'fast',
      freq: '2s',
      freqMs: 2000,
      collect: { 'status.global': { metrics: [], options: {}, errors: {} } },
    },
  },
};

function batch(at: number, queries: number, conns: number): Metrics {
  const begin = new Date(at);
  return {
    begin,
    end: begin,
    monitorId: 'db1',
    plan: 'kpi',
    level: 'fast',
    interval: 1,
    state: 'active',
    values: {
      'status.global': [
        { name: 'queries', value: queries, type: MetricType.CumulativeCounter },
        { name: 'threads_connected', value: conns, type: MetricType.Gauge },
      ],
    },
  };
}

const series = new SeriesBuffer();
series.add(batch(NOW - 20_000, 1000, 3));
series.add(batch(NOW - 10_000, 1200, 5));

const MONITORS: UiMonitorLike[] = [
  {
    id: 'db1',
    dsn: 'sonde:...@tcp(db1:3306)/',
    running: true,
    config: { sinks: { log: {} } },
    series,
    serverInfo: { flavor: 'mariadb', version: [10, 11, 6], versionString: '10.11.6-MariaDB' },
    activePlan: PLAN,
    timing: { onTime: 7, late: 1 },
    domainRecords: () =>
      new Map([['status.global', { at: NOW - 10_000, ms: 3, ok: true, error: '', metrics: 2 }]]),
  },
  { id: 'db2', dsn: '', running: false, config: {} },
];

const STATUS: Record<string, Record<string, string>> = {
  db1: {
    monitor: 'running since 2026-01-01T12:00:00+00:00',
    'level-plan': 'kpi',
    'level-state': 'active',
    log: 'last sent 2 metrics at 2026-01-01T12:00:20+00:00',
    'error:repl': 'at 2026-01-01T12:00:20+00:00: kpi/fast/1/repl: access denied',
  },
  db2: { monitor: 'stopped at 2026-01-01T12:00:10+00:00', dsn: 'sonde:...@tcp(db2:3306)/' },
};

const calls: string[] = [];
const control: MonitorControl = {
  monitors: () => ({ db1: 'sonde:...@tcp(db1:3306)/', db2: '' }),
  start: async (id) => void calls.push(`start ${id}`),
  stop: async (id) => void calls.push(`stop ${id}`),
  reload: async () => void calls.push('reload'),
};

let api: Api;
let port: number;

/** GET with gzip accepted: the raw body's size and the unzipped text. */
function getGzip(path: string): Promise<{ size: number; text: string; encoding: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, headers: { 'accept-encoding': 'gzip' }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          const gz = res.headers['content-encoding'] === 'gzip';
          resolve({
            size: body.length,
            text: (gz ? gunzipSync(body) : body).toString(),
            encoding: res.headers['content-encoding'],
          });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('the web page routes', () => {
  before(async () => {
    const source = uiSource({
      version: '1.2.3',
      monitors: () => MONITORS,
      statusOf: (id) => STATUS[id],
      uptimeS: () => 42,
      readOnly: true,
      now: () => NOW,
    });
    api = buildApi({
      control,
      status: { server: () => ({}), monitors: () => STATUS },
      info: {
        version: '1.2.3',
        config: {},
        registered: () => ({ collectors: [], sinks: [] }),
        toggleDebug: () => false,
      },
      renderConfig: { yaml: () => '', json: () => ({}) },
      bind: '127.0.0.1:0',
      token: { check: (h) => h === `Bearer ${TOKEN}` },
      extraRoutes: uiRoutes(source, { tokenRequired: true, readOnly: true }),
      public: isPublicUiPath,
      readOnly: true,
    });
    port = Number((await api.listen('127.0.0.1:0')).split(':').at(-1));
  });

  after(async () => {
    await api.close();
  });

  it('serves the page without the token, under a CSP, with no inline script', async () => {
    const res = await httpCall(port, '/');
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(res.headers['content-security-policy'], CSP);
    assert.match(CSP, /script-src 'self';/);
    assert.doesNotMatch(CSP, /unsafe-inline|unsafe-eval/);
    assert.equal(res.headers['x-frame-options'], 'DENY');
    for (const tag of res.body.match(/<script[^>]*>/g) ?? []) assert.match(tag, / src="\/ui\//);
    assert.doesNotMatch(res.body, /<script>|\son[a-z]+=|style="/);
  });

  it('serves its files (and uPlot from the package) with an ETag, gzipped when asked', async () => {
    for (const f of ['app.js', 'app.css', 'uplot.min.js', 'uplot.min.css', 'uplot-LICENSE.txt']) {
      const res = await httpCall(port, `/ui/${f}`);
      assert.equal(res.status, 200, f);
      const etag = String(res.headers.etag);
      assert.match(etag, /^"[\w-]{22}"$/);
      const again = await httpCall(port, `/ui/${f}`, { headers: { 'if-none-match': etag } });
      assert.equal(again.status, 304);
      assert.equal(again.body, '');
    }
    assert.match((await httpCall(port, '/ui/uplot-LICENSE.txt')).body, /MIT License/);
    const gz = await getGzip('/ui/app.js');
    assert.equal(gz.encoding, 'gzip');
    assert.match(gz.text, /sessionStorage/);
    // Unknown files are not public: the token is asked first.
    assert.equal((await httpCall(port, '/ui/nope.js')).status, 401);
    assert.equal((await httpCall(port, '/ui/nope.js', { headers: AUTH })).status, 404);
  });

  it('transfers under 300 KiB gzipped in total', async () => {
    let total = 0;
    for (const p of ['/', '/ui/app.js', '/ui/app.css', '/ui/uplot.min.js', '/ui/uplot.min.css'])
      total += (await getGzip(p)).size;
    assert.ok(total < 300 * 1024, `${total} bytes`);
  });

  it('tells the page whether to ask for the token, without the token', async () => {
    const res = await httpCall(port, '/api/ui/session');
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.body), { tokenRequired: true, readOnly: true });
  });

  it('answers the fleet behind the token', async () => {
    assert.equal((await httpCall(port, '/api/ui/fleet')).status, 401);
    const res = await httpCall(port, '/api/ui/fleet', { headers: AUTH });
    assert.equal(res.status, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
    const fleet = JSON.parse(res.body) as UiFleet;
    assert.equal(fleet.agent.version, '1.2.3');
    assert.equal(fleet.agent.uptimeS, 42);
    assert.deepEqual(fleet.agent.monitors, { running: 1, starting: 0, failing: 0, stopped: 1 });
    assert.equal(fleet.agent.collectionsOnTime, 7);
    assert.equal(fleet.agent.collectionsLate, 1);
    assert.ok(fleet.agent.rssBytes > 0);
    assert.equal(fleet.readOnly, true);
    assert.equal(fleet.refreshS, 2);
    assert.deepEqual(fleet.monitors, [
      {
        id: 'db1',
        dsn: 'sonde:...@tcp(db1:3306)/',
        state: 'running',
        stateText: 'running since 2026-01-01T12:00:00+00:00',
        failingWhy: '',
        flavor: 'mariadb',
        version: '10.11.6-MariaDB',
        plan: 'kpi',
        levelState: 'active',
        lastCollectionAgeS: 10,
        errors: 1,
        replLagS: null,
        qps: 20,
        connections: 5,
        maxConnections: null,
      },
      {
        id: 'db2',
        dsn: 'sonde:...@tcp(db2:3306)/',
        state: 'stopped',
        stateText: 'stopped at 2026-01-01T12:00:10+00:00',
        failingWhy: '',
        flavor: null,
        version: null,
        plan: null,
        levelState: null,
        lastCollectionAgeS: null,
        errors: 0,
        replLagS: null,
        qps: null,
        connections: null,
        maxConnections: null,
      },
    ]);
  });

  it("answers a monitor's charts and details", async () => {
    const res = await httpCall(port, '/api/ui/monitor?id=db1', { headers: AUTH });
    assert.equal(res.status, 200);
    const m = JSON.parse(res.body) as UiMonitor;
    assert.equal(m.row.id, 'db1');
    assert.deepEqual(m.plan, {
      name: 'kpi',
      levels: [{ name: 'fast', freq: '2s', domains: ['status.global'] }],
    });
    assert.deepEqual(m.domains, [
      { domain: 'status.global', at: NOW - 10_000, ms: 3, ok: true, error: '', metrics: 2 },
    ]);
    assert.deepEqual(m.sinks, [
      { name: 'log', last: 'last sent 2 metrics at 2026-01-01T12:00:20+00:00', error: null },
    ]);
    assert.deepEqual(Object.keys(m.errors), ['error:repl']);
    assert.deepEqual(m.series?.t, [NOW - 20_000, NOW - 10_000]);
    assert.deepEqual(m.series?.values.qps, [null, 20]);
    assert.deepEqual(m.series?.values.connections, [3, 5]);
    const stopped = JSON.parse(
      (await httpCall(port, '/api/ui/monitor?id=db2', { headers: AUTH })).body,
    ) as UiMonitor;
    assert.equal(stopped.series, null, 'no history kept for a monitor without a series buffer');
    assert.equal(stopped.plan, null);
  });

  it('refuses a missing or unknown id, and any method but GET and HEAD', async () => {
    const missing = await httpCall(port, '/api/ui/monitor', { headers: AUTH });
    assert.deepEqual([missing.status, missing.body], [400, 'missing id=monitorId in query\n']);
    const unknown = await httpCall(port, '/api/ui/monitor?id=%3Cb%3E', { headers: AUTH });
    assert.deepEqual([unknown.status, unknown.body], [404, 'monitor &lt;b&gt; not loaded\n']);
    const post = await httpCall(port, '/api/ui/fleet', { method: 'POST', headers: AUTH });
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, 'GET, HEAD');
  });

  it('refuses every state change with api.read-only', async () => {
    for (const path of ['/monitors/stop?id=db1', '/monitors/start?id=db2', '/monitors/reload', '/debug']) {
      const res = await httpCall(port, path, { method: 'POST', headers: AUTH });
      assert.deepEqual(
        [res.status, res.body],
        [403, 'read-only API: state changes are turned off (api.read-only)\n'],
      );
    }
    assert.deepEqual(calls, []);
  });
});
