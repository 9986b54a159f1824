import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Events } from '../core/events.js';
import { MetricType } from '../core/metrics.js';
import type { Metrics } from '../core/metrics.js';
import type { StatusWriter } from '../core/status.js';
import { isSondePromDomain, translateBlip } from '../prom/translate.js';
import { BUILTIN } from '../collectors/implementations.js';
import { startCaptureServer } from '../../test/helpers/capture-http.js';
import type { CaptureServer } from '../../test/helpers/capture-http.js';
import { startPushgateway } from '../../test/helpers/pushgateway.js';
import type { Pushgateway } from '../../test/helpers/pushgateway.js';
import {
  TRANSLATION_LABELS,
  createPushgatewaySink,
  groupingPath,
  parsePushgatewayOptions,
  promPushgatewaySinkRegistration,
  pushBody,
} from './prom-pushgateway.js';
import { RetrySink } from './retry.js';

const C = MetricType.CumulativeCounter;
const G = MetricType.Gauge;

function sample(): Metrics {
  const begin = new Date('2024-05-01T12:00:05.123Z');
  return {
    begin,
    end: new Date(begin.getTime() + 30),
    monitorId: 'db1',
    plan: 'default-mysql',
    level: 'kpi',
    interval: 2,
    state: 'active',
    values: {
      'status.global': [
        { name: 'com_select', value: 9, type: C },
        { name: 'threads_running', value: 3, type: G },
        { name: 'bytes_sent', value: 1379287523, type: C },
        { name: 'com_insert', value: 4, type: C },
        { name: 'innodb_buffer_pool_pages_free', value: 100, type: G },
        { name: 'slow_queries', value: 1, type: MetricType.DeltaCounter },
      ],
      'var.global': [{ name: 'max_connections', value: 151, type: G }],
      innodb: [
        { name: 'trx_rseg_history_len', value: 0, type: G, meta: { subsystem: 'transaction' } },
        { name: 'buffer_pool_pages_free', value: 3755, type: G, meta: { subsystem: 'buffer' } },
      ],
      'size.table': [{ name: 'bytes', value: 16384, type: G, group: { db: 'app', tbl: 'users' } }],
      repl: [{ name: 'running', value: 1, type: G, meta: { source: 'db0' } }],
      'repl.lag': [{ name: 'current', value: 2500, type: G, meta: { source: '1' } }],
    },
  };
}

// Written by hand in Blip's text format (not produced by the renderer under test).
const SAMPLE_TEXT = [
  '# HELP mysql_global_status_buffer_pool_pages Innodb buffer pool pages by state.',
  '# TYPE mysql_global_status_buffer_pool_pages gauge',
  'mysql_global_status_buffer_pool_pages{state="free"} 100',
  '# HELP mysql_global_status_bytes_sent Generic counter metric from SHOW GLOBAL STATUS.',
  '# TYPE mysql_global_status_bytes_sent counter',
  'mysql_global_status_bytes_sent 1.379287523e+09',
  '# HELP mysql_global_status_commands_total Total number of executed MySQL commands.',
  '# TYPE mysql_global_status_commands_total counter',
  'mysql_global_status_commands_total{command="insert"} 4',
  'mysql_global_status_commands_total{command="select"} 9',
  '# HELP mysql_global_status_threads_running Generic gauge metric from SHOW GLOBAL STATUS.',
  '# TYPE mysql_global_status_threads_running gauge',
  'mysql_global_status_threads_running 3',
  '# HELP mysql_global_variables_max_connections Generic gauge metric.',
  '# TYPE mysql_global_variables_max_connections gauge',
  'mysql_global_variables_max_connections 151',
  '# HELP mysql_info_schema_innodb_metrics_buffer_pool_pages Total number of buffer pool pages by state.',
  '# TYPE mysql_info_schema_innodb_metrics_buffer_pool_pages gauge',
  'mysql_info_schema_innodb_metrics_buffer_pool_pages{state="free"} 3755',
  '# HELP mysql_info_schema_innodb_metrics_transaction_trx_rseg_history_len_total Generic gauge metric from SHOW GLOBAL STATUS.',
  '# TYPE mysql_info_schema_innodb_metrics_transaction_trx_rseg_history_len_total gauge',
  'mysql_info_schema_innodb_metrics_transaction_trx_rseg_history_len_total 0',
  '# HELP mysql_repl_lag_current_seconds Replication lag in seconds from the heartbeat (or Performance Schema); -1 = no heartbeat or not a replica.',
  '# TYPE mysql_repl_lag_current_seconds gauge',
  'mysql_repl_lag_current_seconds 2.5',
  '# HELP mysql_repl_running Replication state from SHOW SLAVE/REPLICA STATUS: 1 = both threads running without error, 0 = stopped, connecting or broken, -1 = not a replica.',
  '# TYPE mysql_repl_running gauge',
  'mysql_repl_running 1',
  '# HELP mysql_size_table_bytes Data plus index bytes of the table ("" = total).',
  '# TYPE mysql_size_table_bytes gauge',
  'mysql_size_table_bytes{db="app",tbl="users"} 16384',
  '',
].join('\n');

function recorder(): { status: StatusWriter; events: Events; keys: Map<string, string>; history: string[] } {
  const keys = new Map<string, string>();
  const history: string[] = [];
  return {
    keys,
    history,
    status: {
      set: (k, v) => {
        keys.set(k, v);
        history.push(`${k}: ${v}`);
      },
      delete: (k) => keys.delete(k),
    },
    events: { info: () => undefined, error: () => undefined, debug: () => undefined },
  };
}

const STAMP = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}[+-]\\d\\d:\\d\\d';

describe('prom-pushgateway options and grouping key', () => {
  it('defaults addr, adds http:// when the scheme is missing and drops one trailing slash', () => {
    assert.deepEqual(parsePushgatewayOptions({}), { addr: 'http://127.0.0.1:9091' });
    assert.deepEqual(parsePushgatewayOptions({ addr: 'gw.internal:9091' }), {
      addr: 'http://gw.internal:9091',
    });
    assert.deepEqual(parsePushgatewayOptions({ addr: 'https://gw/' }), { addr: 'https://gw' });
    assert.deepEqual(parsePushgatewayOptions({ addr: 'https://gw//' }), { addr: 'https://gw/' });
    assert.throws(() => parsePushgatewayOptions({ url: 'x' }), { message: 'invalid option: url' });
    assert.throws(() => parsePushgatewayOptions({ 'send-timeout': '1s' }), {
      message: 'invalid option: send-timeout',
    });
  });

  it('is /metrics/job/blip without tags and carries the tags, sorted, as grouping labels', () => {
    assert.equal(groupingPath({}, TRANSLATION_LABELS), '/metrics/job/blip');
    assert.equal(
      groupingPath({ instance: 'db1', env: 'prod', 'dc.zone': 'eu-1', '9x': 'a' }, TRANSLATION_LABELS),
      '/metrics/job/blip/dc_zone/eu-1/env/prod/instance/db1/tag_9x/a',
    );
  });

  it('renames tags that clash with series labels, takes job from a tag, base64-encodes odd values', () => {
    assert.equal(
      groupingPath({ command: 'x', job: 'mysql', path: 'a/b', empty: '', __meta: 'm' }, TRANSLATION_LABELS),
      `/metrics/job/mysql/empty@base64/=/path@base64/${Buffer.from('a/b').toString('base64url')}` +
        '/tag___meta/m/tag_command/x',
    );
  });

  it('reserves every label name the translation puts on series', () => {
    const names = new Set<string>();
    const add = (domain: string, metric: string, meta?: Record<string, string>): void => {
      const v = meta ? { name: metric, value: 1, type: C, meta } : { name: metric, value: 1, type: C };
      for (const s of translateBlip(domain, [v])) for (const k of Object.keys(s.labels ?? {})) names.add(k);
    };
    for (const m of [
      'com_select',
      'handler_read_key',
      'connection_errors_accept',
      'innodb_buffer_pool_pages_data',
      'innodb_buffer_pool_pages_flushed',
      'innodb_rows_read',
      'performance_schema_mutex_instances_lost',
      'uptime',
    ])
      add('status.global', m);
    add('var.global', 'port');
    add('innodb', 'buffer_page_read_index_leaf', { subsystem: 'buffer_page_io' });
    add('innodb', 'buffer_pool_pages_data', { subsystem: 'buffer' });
    add('innodb', 'lock_timeouts', { subsystem: 'lock' });
    // sonde's own domains: every group key a collector declares, on each declared metric.
    for (const reg of BUILTIN) {
      const { domain, groups, metrics } = reg.help;
      if (!isSondePromDomain(domain)) continue;
      const group = Object.fromEntries(groups.map((g) => [g.key, 'x']));
      for (const m of metrics.length > 0 ? metrics.map((x) => x.name) : ['count_read', 'pool_size'])
        for (const s of translateBlip(domain, [{ name: m, value: 1, type: G, group }]))
          for (const k of Object.keys(s.labels ?? {})) names.add(k);
    }
    assert.deepEqual([...names].sort(), [...TRANSLATION_LABELS].sort());
  });
});

describe('prom-pushgateway body', () => {
  it("is Blip's translation of status.global, var.global and innodb, sonde's names for its own domains", () => {
    const body = pushBody(sample());
    assert.equal(body.text, SAMPLE_TEXT);
    assert.equal(body.series, 11);
  });

  it('refuses duplicate series (nothing would be pushed)', () => {
    const m = sample();
    m.values = {
      'status.global': [
        { name: 'com_select', value: 1, type: C },
        { name: 'com_select', value: 2, type: C },
      ],
    };
    assert.throws(() => pushBody(m), {
      message: 'duplicate series mysql_global_status_commands_total{command="select"}',
    });
  });
});

describe('prom-pushgateway requests (local receiver)', () => {
  let rx: CaptureServer;
  before(async () => {
    rx = await startCaptureServer();
  });
  after(async () => {
    await rx.close();
  });

  it('POSTs the text to <addr>/metrics/job/blip with the 0.0.4 content type', async () => {
    rx.requests.length = 0;
    const r = recorder();
    const sink = createPushgatewaySink(parsePushgatewayOptions({ addr: `${rx.base}/` }), {
      ...r,
      monitorId: 'db1',
      tags: {},
    });
    assert.equal(sink.name, 'prom-pushgateway');
    await sink.send(sample());
    assert.equal(rx.requests.length, 1);
    const req = rx.requests[0];
    assert.ok(req);
    assert.equal(req.method, 'POST');
    assert.equal(req.url, '/metrics/job/blip');
    assert.equal(req.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    assert.equal(req.body.toString('utf8'), SAMPLE_TEXT);
    assert.equal(r.history[0], 'prom-pushgateway: sending metrics');
    assert.match(r.keys.get('prom-pushgateway') ?? '', new RegExp(`^last sent metrics at ${STAMP}$`));
  });

  it('accepts 202, fails any other status with code, URL and body', async () => {
    rx.requests.length = 0;
    const r = recorder();
    const sink = createPushgatewaySink(parsePushgatewayOptions({ addr: rx.base.replace('http://', '') }), {
      ...r,
      monitorId: 'db1',
      tags: { env: 'prod' },
    });
    const url = `${rx.base}/metrics/job/blip/env/prod`;
    rx.answer({ status: 202 }, { status: 500, body: 'disk full\n' }, { status: 204 });
    await sink.send(sample());
    await assert.rejects(sink.send(sample()), {
      message: `unexpected status code 500 while pushing to ${url}: disk full`,
    });
    assert.match(
      r.keys.get('prom-pushgateway') ?? '',
      new RegExp(`^error on last send at ${STAMP}: unexpected status code 500 while pushing to `),
    );
    await assert.rejects(sink.send(sample()), {
      message: `unexpected status code 204 while pushing to ${url}: `,
    });
    assert.deepEqual(
      rx.requests.map((q) => q.url),
      ['/metrics/job/blip/env/prod', '/metrics/job/blip/env/prod', '/metrics/job/blip/env/prod'],
    );
  });

  it('sends nothing for a duplicate series or a collection without translatable domains', async () => {
    rx.requests.length = 0;
    const r = recorder();
    const sink = createPushgatewaySink(parsePushgatewayOptions({ addr: rx.base }), {
      ...r,
      monitorId: 'db1',
      tags: {},
    });
    const dup = sample();
    dup.values = {
      'var.global': [
        { name: 'port', value: 1, type: G },
        { name: 'PORT', value: 2, type: G },
      ],
    };
    await assert.rejects(sink.send(dup), {
      message: `cannot push to ${rx.base}/metrics/job/blip: duplicate series mysql_global_variables_port`,
    });
    const other = sample();
    other.values = { 'custom.plugin': other.values['size.table'] ?? [] };
    await sink.send(other);
    assert.equal(rx.requests.length, 0);
    assert.match(r.keys.get('prom-pushgateway') ?? '', /^last sent metrics at /);
  });
});

/** GET a gateway path as text. */
async function get(base: string, path: string): Promise<string> {
  const res = await fetch(`${base}${path}`);
  assert.equal(res.status, 200);
  return res.text();
}

interface ApiFamily {
  type: string;
  help: string;
  metrics: Array<{ labels: Record<string, string>; value: string }>;
}
type ApiGroup = { labels: Record<string, string> } & Record<string, unknown>;

describe('prom-pushgateway against a real Prometheus Pushgateway', () => {
  let gw: Pushgateway;
  before(async () => {
    gw = await startPushgateway();
  });
  after(async () => {
    await gw.stop();
  });

  it('stores every family with its type, help, labels and value; tags become grouping labels', async () => {
    const r = recorder();
    const reg = promPushgatewaySinkRegistration();
    const sink = reg.create({
      sinkName: 'prom-pushgateway',
      monitorId: 'db1',
      options: { addr: gw.base, 'send-timeout': '3s' },
      tags: { env: 'prod', instance: 'db1' },
      status: r.status,
      events: r.events,
    });
    assert.ok(sink instanceof RetrySink);
    assert.equal(sink.name, 'prom-pushgateway');
    await sink.send(sample());
    await sink.idle();
    assert.match(r.keys.get('prom-pushgateway') ?? '', /^last sent metrics at /, gw.log());

    // A second monitor without tags lands in its own group: nothing is overwritten.
    const plain = createPushgatewaySink(parsePushgatewayOptions({ addr: gw.base }), {
      ...recorder(),
      monitorId: 'db2',
      tags: {},
    });
    const m2 = sample();
    m2.values = { 'var.global': [{ name: 'max_connections', value: 500, type: G }] };
    await plain.send(m2);

    const api = JSON.parse(await get(gw.base, '/api/v1/metrics')) as { status: string; data: ApiGroup[] };
    assert.equal(api.status, 'success');
    const groups = new Map(api.data.map((g) => [JSON.stringify(g.labels), g]));
    assert.deepEqual([...groups.keys()].sort(), [
      '{"env":"prod","instance":"db1","job":"blip"}',
      '{"job":"blip"}',
    ]);
    const g1 = groups.get('{"env":"prod","instance":"db1","job":"blip"}');
    assert.ok(g1);
    assert.equal(g1['last_push_successful'], true);
    const fam = (name: string): ApiFamily => {
      const f = g1[name] as ApiFamily | undefined;
      assert.ok(f, `family ${name} missing in the gateway`);
      return f;
    };
    const rows = (name: string): string[] =>
      fam(name)
        .metrics.map((m) => {
          const { env, instance, job, ...own } = m.labels;
          assert.deepEqual({ env, instance, job }, { env: 'prod', instance: 'db1', job: 'blip' });
          return `${JSON.stringify(own)} ${Number(m.value)}`;
        })
        .sort();
    assert.equal(fam('mysql_global_status_commands_total').type, 'COUNTER');
    assert.equal(fam('mysql_global_status_commands_total').help, 'Total number of executed MySQL commands.');
    assert.deepEqual(rows('mysql_global_status_commands_total'), [
      '{"command":"insert"} 4',
      '{"command":"select"} 9',
    ]);
    assert.equal(fam('mysql_global_status_bytes_sent').type, 'COUNTER');
    assert.deepEqual(rows('mysql_global_status_bytes_sent'), ['{} 1379287523']);
    assert.equal(fam('mysql_global_status_threads_running').type, 'GAUGE');
    assert.deepEqual(rows('mysql_global_status_threads_running'), ['{} 3']);
    assert.deepEqual(rows('mysql_global_status_buffer_pool_pages'), ['{"state":"free"} 100']);
    assert.equal(fam('mysql_global_variables_max_connections').help, 'Generic gauge metric.');
    assert.deepEqual(rows('mysql_global_variables_max_connections'), ['{} 151']);
    assert.equal(
      fam('mysql_info_schema_innodb_metrics_transaction_trx_rseg_history_len_total').type,
      'GAUGE',
    );
    assert.deepEqual(rows('mysql_info_schema_innodb_metrics_buffer_pool_pages'), ['{"state":"free"} 3755']);
    // sonde's own domains: their names, TYPE, HELP, labels from the group, units converted.
    assert.equal(fam('mysql_size_table_bytes').type, 'GAUGE');
    assert.equal(fam('mysql_size_table_bytes').help, 'Data plus index bytes of the table ("" = total).');
    assert.deepEqual(rows('mysql_size_table_bytes'), ['{"db":"app","tbl":"users"} 16384']);
    assert.deepEqual(rows('mysql_repl_running'), ['{} 1']);
    assert.deepEqual(rows('mysql_repl_lag_current_seconds'), ['{} 2.5']);
    const ours = Object.keys(g1).filter((k) => k.startsWith('mysql_'));
    assert.equal(ours.length, 10);

    // What Prometheus would scrape from the gateway.
    const text = await get(gw.base, '/metrics');
    for (const line of [
      'mysql_global_status_commands_total{command="select",env="prod",instance="db1",job="blip"} 9',
      'mysql_global_status_bytes_sent{env="prod",instance="db1",job="blip"} 1.379287523e+09',
      'mysql_global_variables_max_connections{env="prod",instance="db1",job="blip"} 151',
      'mysql_global_variables_max_connections{instance="",job="blip"} 500',
      '# TYPE mysql_global_status_commands_total counter',
      '# TYPE mysql_info_schema_innodb_metrics_transaction_trx_rseg_history_len_total gauge',
      'mysql_size_table_bytes{db="app",env="prod",instance="db1",job="blip",tbl="users"} 16384',
      'mysql_repl_lag_current_seconds{env="prod",instance="db1",job="blip"} 2.5',
      '# TYPE mysql_repl_running gauge',
    ]) {
      assert.ok(text.split('\n').includes(line), `missing in the gateway's /metrics: ${line}`);
    }
  });

  it('replaces only the pushed families of its group on the next push', async () => {
    const sink = createPushgatewaySink(parsePushgatewayOptions({ addr: gw.base }), {
      ...recorder(),
      monitorId: 'db3',
      tags: { instance: 'db3' },
    });
    await sink.send(sample());
    const m = sample();
    m.values = { 'status.global': [{ name: 'threads_running', value: 42, type: G }] };
    await sink.send(m);
    const text = await get(gw.base, '/metrics');
    const lines = text.split('\n');
    assert.ok(lines.includes('mysql_global_status_threads_running{instance="db3",job="blip"} 42'));
    // Families not in the second push keep the first push's values.
    assert.ok(lines.includes('mysql_global_variables_max_connections{instance="db3",job="blip"} 151'));
  });

  it('reports the gateway refusing a push that conflicts with stored metrics', async () => {
    // Another client stores mysql_global_status_uptime as a gauge; sonde pushes a counter.
    const res = await fetch(`${gw.base}/metrics/job/other`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain; version=0.0.4' },
      body: '# TYPE mysql_global_status_uptime gauge\nmysql_global_status_uptime 1\n',
    });
    assert.equal(res.status, 200);
    const r = recorder();
    const sink = createPushgatewaySink(parsePushgatewayOptions({ addr: gw.base }), {
      ...r,
      monitorId: 'db4',
      tags: { instance: 'db4' },
    });
    const m = sample();
    m.values = { 'status.global': [{ name: 'uptime', value: 3600, type: C }] };
    const err = await sink.send(m).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof Error, 'the push should fail');
    assert.match(
      err.message,
      new RegExp(
        `^unexpected status code 400 while pushing to ${gw.base}/metrics/job/blip/instance/db4: ` +
          'pushed metrics are invalid or inconsistent with existing metrics: .*mysql_global_status_uptime',
      ),
    );
    assert.match(r.keys.get('prom-pushgateway') ?? '', /^error on last send at .*unexpected status code 400/);
  });
});
