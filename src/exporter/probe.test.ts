import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { httpCall } from '../../test/helpers/http-call.js';
import type { ServerInfo } from '../core/db.js';
import { NO_EVENTS } from '../core/events.js';
import type { ExporterSource, ScrapeResult } from '../core/exporter.js';
import { MetricType } from '../core/metrics.js';
import type { MonitorTallies, ProbeOpen, ProbeTarget, ProbeTargets } from '../core/probe.js';
import { checkWebConfigFile, labelName, startProbe, targetLabels, type ProbeHandle } from './probe.js';

const UP: ScrapeResult = {
  up: true,
  metrics: {
    begin: new Date(0),
    end: new Date(0),
    monitorId: 'db1',
    plan: 'default-exporter',
    level: 'prom',
    interval: 1,
    state: '',
    values: { 'status.global': [{ name: 'threads_connected', value: 3, type: MetricType.Gauge }] },
  },
  domains: [{ domain: 'status.global', ok: true, seconds: 0.25 }],
  error: '',
  connectSeconds: 0.001,
};

/** A scripted source: records each scrape's domains and signal. */
class FakeSource implements ExporterSource {
  calls: { domains: readonly string[] | undefined; signal: AbortSignal }[] = [];
  /** when set, a scrape lasts until its signal aborts */
  waitForAbort = false;
  async scrape(signal: AbortSignal, domains?: readonly string[]): Promise<ScrapeResult> {
    this.calls.push({ domains, signal });
    if (this.waitForAbort) {
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      return { up: false, metrics: undefined, domains: [], error: String((signal.reason as Error).message) };
    }
    return UP;
  }
  async serverInfo(): Promise<ServerInfo | undefined> {
    return undefined;
  }
  domains(): string[] {
    return ['status.global', 'var.global', 'innodb'];
  }
}

/**
 * Scripted targets: `db1` (127.0.0.1:3306) and `db2`; open() of anything else is refused the
 * way the real one refuses it. Every open() and release() is recorded.
 */
class FakeTargets implements ProbeTargets {
  opened: { target: string; authModule: string }[] = [];
  released = 0;
  sources = new Map<string, FakeSource>();
  tally: MonitorTallies[] = [
    { monitor: 'db1', level: { collections: 7, errors: 1 }, scrape: { collections: 2, errors: 0 } },
  ];
  list(): ProbeTarget[] {
    return [
      { id: 'db1', address: '127.0.0.1:3306', tags: { env: 'prod', 'team-name': 'core', '9lives': 'x' } },
      { id: 'db2', address: 'unix:///run/mysqld.sock', tags: {} },
    ];
  }
  async open(target: string, authModule: string): Promise<ProbeOpen> {
    this.opened.push({ target, authModule });
    const t = this.list().find((x) => x.id === target || x.address === target);
    if (t === undefined)
      return { ok: false, status: 404, reason: `unknown target ${JSON.stringify(target)}` };
    if (authModule !== '' && authModule !== 'good')
      return { ok: false, status: 400, reason: `auth_module ${authModule}: no section` };
    const key = `${t.id}/${authModule}`;
    let source = this.sources.get(key);
    if (source === undefined) {
      source = new FakeSource();
      this.sources.set(key, source);
    }
    return {
      ok: true,
      id: t.id,
      authModule,
      source,
      timeoutOffsetS: 0.25,
      release: async () => {
        this.released++;
      },
    };
  }
  tallies(): MonitorTallies[] {
    return this.tally;
  }
}

const handles: ProbeHandle[] = [];
after(async () => {
  await Promise.all(handles.map((h) => h.close()));
});

async function start(): Promise<{ port: number; targets: FakeTargets }> {
  const targets = new FakeTargets();
  const h = await startProbe({ bind: '127.0.0.1:0', targets, events: NO_EVENTS });
  handles.push(h);
  return { port: Number(h.address.split(':')[1]), targets };
}

const value = (body: string, series: string): number | undefined => {
  const line = body.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe('probe listener: refusals', () => {
  it('answers 400 "target is required" without a target, an empty one or only other parameters', async () => {
    const { port, targets } = await start();
    for (const path of ['/probe', '/probe?target=', '/probe?auth_module=good&collect[]=global_status']) {
      const r = await httpCall(port, path);
      assert.equal(r.status, 400, path);
      assert.equal(r.body, 'target is required\n');
      assert.equal(r.headers['content-type'], 'text/plain; charset=utf-8');
    }
    assert.deepEqual(targets.opened, [], 'nothing is resolved without a target');
  });

  it('passes the resolver’s refusal on as status and one-line reason, and scrapes nothing', async () => {
    const { port, targets } = await start();
    const unknown = await httpCall(port, '/probe?target=db9:3306');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body, 'unknown target "db9:3306"\n');
    const badModule = await httpCall(port, '/probe?target=db1&auth_module=nope');
    assert.equal(badModule.status, 400);
    assert.equal(badModule.body, 'auth_module nope: no section\n');
    assert.deepEqual(targets.opened, [
      { target: 'db9:3306', authModule: '' },
      { target: 'db1', authModule: 'nope' },
    ]);
    assert.equal(targets.sources.size, 0, 'no source was lent');
    assert.equal(targets.released, 0);
  });

  it('answers 405 to other methods, 404 to other paths, 400 to a request line it cannot read', async () => {
    const { port, targets } = await start();
    const post = await httpCall(port, '/probe?target=db1', { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, 'GET, HEAD');
    assert.equal(post.body, 'method POST not allowed\n');
    const other = await httpCall(port, '/probe/x?target=db1');
    assert.equal(other.status, 404);
    assert.equal(other.body, '404 page not found\n');
    const raw = await httpCall(port, '//[bad');
    assert.equal(raw.status, 400);
    assert.deepEqual(targets.opened, [], 'none of these reached the resolver');
  });

  it('puts every path behind probe.web-config-file’s basic auth; a bad file fails naming the key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sonde-probe-web-'));
    try {
      const file = join(dir, 'web.yml');
      writeFileSync(file, `basic_auth_users:\n  prometheus: ${bcrypt.hashSync('pr0be-pw', 4)}\n`);
      checkWebConfigFile(file);
      checkWebConfigFile(undefined);
      checkWebConfigFile('');
      const targets = new FakeTargets();
      const h = await startProbe({ bind: '127.0.0.1:0', webConfigFile: file, targets, events: NO_EVENTS });
      handles.push(h);
      const port = Number(h.address.split(':')[1]);
      const basic = (user: string, pw: string) => ({
        authorization: `Basic ${Buffer.from(`${user}:${pw}`).toString('base64')}`,
      });
      for (const path of ['/probe?target=db1', '/probe', '/targets', '/metrics']) {
        const r = await httpCall(port, path);
        assert.equal(r.status, 401, path);
        assert.equal(r.headers['www-authenticate'], 'Basic');
        const wrong = await httpCall(port, path, { headers: basic('prometheus', 'nope') });
        assert.equal(wrong.status, 401, path);
      }
      assert.deepEqual(targets.opened, [], 'nothing resolved before authentication');
      const ok = await httpCall(port, '/probe?target=db1', { headers: basic('prometheus', 'pr0be-pw') });
      assert.equal(ok.status, 200);
      assert.equal(value(ok.body, 'mysql_up'), 1);

      const bad = join(dir, 'bad.yml');
      writeFileSync(bad, 'basic_auth_users:\n  prometheus: plain\n');
      assert.throws(() => checkWebConfigFile(bad), {
        message: new RegExp(`^probe\\.web-config-file: ${bad}: `),
      });
      await assert.rejects(
        startProbe({
          bind: '127.0.0.1:0',
          webConfigFile: join(dir, 'missing.yml'),
          targets,
          events: NO_EVENTS,
        }),
        { message: `probe.web-config-file: ${join(dir, 'missing.yml')}: cannot read: ENOENT` },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('probe listener: probes', () => {
  it('scrapes the target like the monitor endpoint: collect[], timeout header, self-metrics per target', async () => {
    const { port, targets } = await start();
    const r = await httpCall(port, '/probe?target=db1&collect[]=global_status', {
      headers: { 'x-prometheus-scrape-timeout-seconds': '3' },
    });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    assert.equal(value(r.body, 'mysql_up'), 1);
    assert.equal(value(r.body, 'mysql_global_status_threads_connected'), 3);
    assert.equal(value(r.body, 'mysql_exporter_scrapes_total'), 1);
    const src = targets.sources.get('db1/');
    assert.deepEqual(src?.calls[0]?.domains, ['status.global']);
    assert.equal(targets.released, 1, 'the lease is released once answered');

    // A second probe of db1 counts on; db1 with an auth module and db2 count apart.
    assert.equal(value((await httpCall(port, '/probe?target=db1')).body, 'mysql_exporter_scrapes_total'), 2);
    const withModule = await httpCall(port, '/probe?target=db1&auth_module=good');
    assert.equal(value(withModule.body, 'mysql_exporter_scrapes_total'), 1);
    const db2 = await httpCall(port, '/probe?target=unix:///run/mysqld.sock');
    assert.equal(value(db2.body, 'mysql_exporter_scrapes_total'), 1);
    assert.equal(targets.released, 4);
  });

  it('cuts the scrape deadline to the header minus 0.25 s', async () => {
    const { port, targets } = await start();
    const source = new FakeSource();
    source.waitForAbort = true;
    targets.sources.set('db1/', source);
    // The header says 0.5 s: the scrape is aborted by a 0.25 s deadline and answered mysql_up 0.
    const r = await httpCall(port, '/probe?target=db1', {
      headers: { 'x-prometheus-scrape-timeout-seconds': '0.5' },
    });
    assert.equal(r.status, 200);
    assert.equal(value(r.body, 'mysql_up'), 0);
    assert.match(String((source.calls[0]?.signal.reason as Error).message), /^scrape timeout after 0\.25 s$/);
    assert.equal(targets.released, 1);
  });
});

describe('probe listener: /targets and /metrics', () => {
  it('lists the monitors for http_sd_configs with tags as labels and the address', async () => {
    const { port } = await start();
    const r = await httpCall(port, '/targets');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(r.body), [
      {
        targets: ['db1'],
        labels: { tag_9lives: 'x', env: 'prod', team_name: 'core', mysql_address: '127.0.0.1:3306' },
      },
      { targets: ['db2'], labels: { mysql_address: 'unix:///run/mysqld.sock' } },
    ]);
  });

  it('makes tag names valid label names', () => {
    assert.equal(labelName('env'), 'env');
    assert.equal(labelName('team-name.x'), 'team_name_x');
    assert.equal(labelName('9lives'), 'tag_9lives');
    assert.equal(labelName('__name__'), 'tag___name__');
    assert.equal(labelName('_x'), '_x');
    assert.equal(labelName('é'), '_');
    assert.equal(labelName(''), '');
    // Two tags with one label name: the first in name order wins; the address always wins.
    assert.deepEqual(targetLabels({ 'a-b': '2', a_b: '1', '': 'x', mysql_address: 'mine' }, 'h:1'), {
      a_b: '2',
      mysql_address: 'h:1',
    });
  });

  it('serves process, Node.js and per-monitor collection metrics', async () => {
    const { port, targets } = await start();
    const r = await httpCall(port, '/metrics');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'process_virtual_memory_bytes',
      'process_open_fds',
      'process_max_fds',
      'process_start_time_seconds',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_seconds',
    ])
      assert.ok(value(r.body, name) !== undefined, `${name} served`);
    assert.equal(value(r.body, 'sonde_collections_total{monitor="db1",reader="level"}'), 7);
    assert.equal(value(r.body, 'sonde_collections_total{monitor="db1",reader="scrape"}'), 2);
    assert.equal(value(r.body, 'sonde_collection_errors_total{monitor="db1",reader="level"}'), 1);
    assert.match(r.body, /^# TYPE sonde_collections_total counter$/m);
    // Read when scraped: a monitor that goes away leaves, new counts show.
    targets.tally = [
      { monitor: 'db2', level: { collections: 1, errors: 0 }, scrape: { collections: 0, errors: 0 } },
    ];
    const again = (await httpCall(port, '/metrics')).body;
    assert.equal(value(again, 'sonde_collections_total{monitor="db1",reader="level"}'), undefined);
    assert.equal(value(again, 'sonde_collections_total{monitor="db2",reader="level"}'), 1);
  });

  it('serves a landing page at /', async () => {
    const { port } = await start();
    const r = await httpCall(port, '/');
    assert.equal(r.status, 200);
    assert.match(r.body, /href='\/targets'/);
  });
});
