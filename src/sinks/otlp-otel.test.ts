/**
 * The otlp sink's OpenTelemetry side: `naming: otel` (the MySQL receiver's names, units and
 * attributes, decoded from what a local receiver gets) and the standard OTEL_* environment
 * variables (endpoint, headers, timeout, compression, protocol, resource attributes, service
 * name) with their precedence under the sink's own options.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { MetricType } from '../core/metrics.js';
import type { Metrics } from '../core/metrics.js';
import type { CaptureServer } from '../../test/helpers/capture-http.js';
import { createOtlpSink, otlpSinkRegistration, parseOtlpOptions } from './otlp.js';
import type { SinkContext } from '../core/sink.js';
import { captureServerPerSuite, recorder, until } from './receivers.fixture.js';
import { decode, resourceOf, summarize } from './otlp.fixture.js';

const BEGIN = new Date('2024-05-01T12:00:05.123Z');

/** A collection as the status.global, var.global, repl.lag and wait.io.table collectors give it. */
function collection(): Metrics {
  const c = MetricType.CumulativeCounter;
  const g = MetricType.Gauge;
  return {
    begin: BEGIN,
    end: new Date(BEGIN.getTime() + 20),
    monitorId: 'db1',
    plan: 'p',
    level: 'kpi',
    interval: 1,
    state: 'active',
    values: {
      'status.global': [
        { name: 'com_select', value: 120, type: c },
        { name: 'com_insert', value: 7, type: c },
        { name: 'threads_running', value: 2, type: g },
        { name: 'threads_cached', value: 5, type: c },
        { name: 'innodb_buffer_pool_pages_data', value: 300, type: c },
        { name: 'innodb_buffer_pool_pages_dirty', value: 12, type: g },
        { name: 'innodb_buffer_pool_pages_free', value: 700, type: g },
        { name: 'handler_read_key', value: 4242, type: c },
        { name: 'uptime', value: 3600, type: c },
        { name: 'max_used_connections', value: 9, type: g },
      ],
      'var.global': [
        { name: 'innodb_buffer_pool_size', value: 134217728, type: g },
        { name: 'max_connections', value: 151, type: g },
      ],
      'repl.lag': [{ name: 'current', value: 1500, type: g }],
      'wait.io.table': [
        { name: 'count_fetch', value: 31, type: MetricType.DeltaCounter, group: { db: 'app', tbl: 'users' } },
        {
          name: 'sum_timer_fetch',
          value: 2_500_000,
          type: MetricType.DeltaCounter,
          group: { db: 'app', tbl: 'users' },
        },
        { name: 'count_star', value: 40, type: MetricType.DeltaCounter, group: { db: 'app', tbl: 'users' } },
      ],
    },
  };
}

const SUM_CUM = 'sum AGGREGATION_TEMPORALITY_CUMULATIVE';
const SUM_DELTA = 'sum AGGREGATION_TEMPORALITY_DELTA';

describe('otlp naming: otel, as a local receiver decodes it', () => {
  let rx: CaptureServer;
  captureServerPerSuite((server) => (rx = server));

  it('sends the receiver names, units, sum kinds and attributes; values without an equivalent keep sonde names', async () => {
    rx.requests.length = 0;
    const r = recorder();
    const ctx: SinkContext = {
      ...r,
      sinkName: 'otlp',
      options: { endpoint: rx.base, naming: 'otel', 'metric-prefix': 'sonde.' },
      monitorAddress: 'db1.internal:3306',
    };
    const sink = otlpSinkRegistration({}).create(ctx);
    await sink.send(collection());
    await until(() => rx.requests.length === 1);
    // The request arrived; closing before its answer is read would abort the send.
    await until(() => /^last sent/.test(r.keys.get('otlp') ?? ''));
    await sink.close?.();
    const d = decode(rx.requests[0]?.body ?? new Uint8Array());
    assert.deepEqual(resourceOf(d), {
      'service.name': 'sonde',
      'sonde.monitor.id': 'db1',
      'mysql.instance.endpoint': 'db1.internal:3306',
    });
    assert.deepEqual(summarize(d), [
      {
        name: 'mysql.replica.time_behind_source',
        unit: 's',
        kind: `${SUM_CUM} monotonic=false`,
        points: [' → double:1.5'],
      },
      {
        name: 'mysql.commands',
        unit: '1',
        kind: `${SUM_CUM} monotonic=true`,
        points: ['command=select → int:120', 'command=insert → int:7'],
      },
      {
        name: 'mysql.threads',
        unit: '1',
        kind: `${SUM_CUM} monotonic=false`,
        points: ['kind=running → int:2', 'kind=cached → int:5'],
      },
      {
        name: 'mysql.buffer_pool.pages',
        unit: '1',
        kind: `${SUM_CUM} monotonic=false`,
        points: ['kind=data → int:300', 'kind=free → int:700'],
      },
      {
        name: 'mysql.buffer_pool.data_pages',
        unit: '1',
        kind: `${SUM_CUM} monotonic=false`,
        points: ['status=dirty → int:12', 'status=clean → int:288'],
      },
      {
        name: 'mysql.handlers',
        unit: '1',
        kind: `${SUM_CUM} monotonic=true`,
        points: ['kind=read_key → int:4242'],
      },
      { name: 'mysql.uptime', unit: 's', kind: `${SUM_CUM} monotonic=true`, points: [' → int:3600'] },
      { name: 'sonde.status.global.max_used_connections', unit: '', kind: 'gauge', points: [' → double:9'] },
      {
        name: 'mysql.buffer_pool.limit',
        unit: 'By',
        kind: `${SUM_CUM} monotonic=false`,
        points: [' → int:134217728'],
      },
      { name: 'sonde.var.global.max_connections', unit: '', kind: 'gauge', points: [' → double:151'] },
      {
        name: 'mysql.table.io.wait.count',
        unit: '1',
        kind: `${SUM_DELTA} monotonic=true`,
        points: ['operation=fetch,schema=app,table=users → int:31'],
      },
      {
        name: 'mysql.table.io.wait.time',
        unit: 'ns',
        kind: `${SUM_DELTA} monotonic=true`,
        points: ['operation=fetch,schema=app,table=users → int:2500'],
      },
      {
        name: 'sonde.wait.io.table.count_star',
        unit: '',
        kind: `${SUM_DELTA} monotonic=true`,
        points: ['db=app,tbl=users → double:40'],
      },
    ]);
    // 16 values and the derived clean pages.
    assert.match(r.keys.get('otlp') ?? '', /^last sent 17 metrics at /);
  });

  it('keeps a -1 lag sentinel and other group keys, and the instance-endpoint option wins over the monitor address', async () => {
    rx.requests.length = 0;
    const m = collection();
    m.values = {
      'repl.lag': [{ name: 'current', value: -1, type: MetricType.Gauge, group: { channel: 'c1' } }],
    };
    const opts = parseOtlpOptions({ endpoint: rx.base, naming: 'otel', 'instance-endpoint': 'primary:3306' });
    const sink = createOtlpSink(opts, { ...recorder(), monitorAddress: 'unix:///tmp/x.sock' });
    await sink.send(m);
    const d = decode(rx.requests[0]?.body ?? new Uint8Array());
    assert.equal(resourceOf(d)['mysql.instance.endpoint'], 'primary:3306');
    assert.deepEqual(summarize(d), [
      {
        name: 'mysql.replica.time_behind_source',
        unit: 's',
        kind: `${SUM_CUM} monotonic=false`,
        points: ['channel=c1 → int:-1'],
      },
    ]);
  });

  it('sends sonde names and no instance endpoint under the default naming', async () => {
    rx.requests.length = 0;
    const r = recorder();
    const sink = createOtlpSink(parseOtlpOptions({ endpoint: rx.base }), {
      ...r,
      monitorAddress: 'db1:3306',
    });
    await sink.send(collection());
    const d = decode(rx.requests[0]?.body ?? new Uint8Array());
    assert.deepEqual(resourceOf(d), { 'service.name': 'sonde', 'sonde.monitor.id': 'db1' });
    const names = summarize(d).map((s) => s.name);
    assert.ok(names.includes('status.global.com_select'));
    assert.ok(!names.some((n) => n.startsWith('mysql.')), names.join(' '));
  });

  it('refuses a naming value it does not know, naming the key', () => {
    assert.throws(() => parseOtlpOptions({ naming: 'prometheus' }), {
      message: 'invalid otlp option naming: prometheus: valid values: sonde, otel',
    });
    assert.equal(parseOtlpOptions({ naming: 'OTel' }).naming, 'otel');
  });
});

describe('otlp and the OTEL_* environment', () => {
  let rx: CaptureServer;
  captureServerPerSuite((server) => (rx = server));

  it('uses OTEL_EXPORTER_OTLP_ENDPOINT + /v1/metrics, its headers, resource attributes and service name', async () => {
    rx.requests.length = 0;
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: `${rx.base}/collector/`,
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=env%2Dkey, x-tenant = t1',
      OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
      OTEL_RESOURCE_ATTRIBUTES:
        'deployment.environment=prod,service.name=ignored,team=db%20ops,sonde.monitor.id=nope',
      OTEL_SERVICE_NAME: 'mysql-fleet',
    };
    const r = recorder({ tags: { team: 'dba' } });
    const sink = createOtlpSink(parseOtlpOptions({}, env), r);
    await sink.send(collection());
    const req = rx.requests[0];
    assert.ok(req);
    assert.equal(req.url, '/collector/v1/metrics');
    assert.equal(req.headers['x-api-key'], 'env-key');
    assert.equal(req.headers['x-tenant'], 't1');
    assert.equal(req.headers['content-encoding'], 'gzip');
    // OTEL_SERVICE_NAME wins over service.name in the list; the monitor id stays the
    // monitor's; a monitor tag wins over the environment.
    assert.deepEqual(resourceOf(decode(gunzipSync(req.body))), {
      'service.name': 'mysql-fleet',
      'sonde.monitor.id': 'db1',
      'deployment.environment': 'prod',
      team: 'dba',
    });
  });

  it('uses OTEL_EXPORTER_OTLP_METRICS_ENDPOINT as it is, over the generic one, and metrics headers over generic ones', async () => {
    rx.requests.length = 0;
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9/unused',
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${rx.base}/custom/path`,
      OTEL_EXPORTER_OTLP_HEADERS: 'x-generic=1',
      OTEL_EXPORTER_OTLP_METRICS_HEADERS: 'x-metrics=2',
    };
    const sink = createOtlpSink(parseOtlpOptions({}, env), recorder());
    await sink.send(collection());
    const req = rx.requests[0];
    assert.ok(req);
    assert.equal(req.url, '/custom/path');
    assert.equal(req.headers['x-metrics'], '2');
    assert.equal(req.headers['x-generic'], undefined);
  });

  it('lets explicit sink options win over the environment', async () => {
    rx.requests.length = 0;
    const env = {
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://127.0.0.1:9/v1/metrics',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=from-env',
      OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
    };
    const opts = parseOtlpOptions(
      { endpoint: rx.base, 'header.x-tenant': 'opt', compression: 'none', protocol: 'http/protobuf' },
      env,
    );
    const sink = createOtlpSink(opts, recorder());
    await sink.send(collection());
    const req = rx.requests[0];
    assert.ok(req);
    assert.equal(req.url, '/v1/metrics');
    assert.equal(req.headers['x-tenant'], 'opt');
    // Headers are one setting: the env's are not merged into the sink's own.
    assert.equal(req.headers['x-api-key'], undefined);
    assert.equal(req.headers['content-encoding'], undefined);
  });

  it('takes OTEL_EXPORTER_OTLP_TIMEOUT as the send-timeout unless the sink sets one', async () => {
    rx.requests.length = 0;
    rx.hold();
    const r = recorder();
    const reg = otlpSinkRegistration({ OTEL_EXPORTER_OTLP_TIMEOUT: '150' });
    const sink = reg.create({
      ...r,
      sinkName: 'otlp',
      options: { endpoint: rx.base, 'send-retry-wait': '10s', 'buffer-size': '1' },
    });
    await sink.send(collection());
    await until(() => r.errors.length > 0);
    rx.release();
    await sink.close?.();
    assert.match(r.errors[0] ?? '', /send-timeout 150ms exceeded/);
  });

  it('refuses a protocol, timeout, compression or list it cannot use, naming the variable and no header value', () => {
    const bad: Array<[Record<string, string>, string]> = [
      [
        { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
        'invalid OTEL_EXPORTER_OTLP_PROTOCOL: grpc: the otlp sink sends http/protobuf or http/json',
      ],
      [
        { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'grpc' },
        'invalid OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: grpc: the otlp sink sends http/protobuf or http/json',
      ],
      [
        { OTEL_EXPORTER_OTLP_TIMEOUT: '10s' },
        'invalid OTEL_EXPORTER_OTLP_TIMEOUT: 10s: want a positive number of milliseconds',
      ],
      [
        { OTEL_EXPORTER_OTLP_METRICS_COMPRESSION: 'zstd' },
        'invalid OTEL_EXPORTER_OTLP_METRICS_COMPRESSION: zstd: valid values: none, gzip',
      ],
      [
        { OTEL_EXPORTER_OTLP_HEADERS: 'a=1,secret-without-equals' },
        'invalid OTEL_EXPORTER_OTLP_HEADERS: entry 2 is not name=value',
      ],
      [{ OTEL_RESOURCE_ATTRIBUTES: 'a=1,=x' }, 'invalid OTEL_RESOURCE_ATTRIBUTES: entry 2 is not name=value'],
      [
        { OTEL_EXPORTER_OTLP_HEADERS: 'Content-Type=text/plain' },
        'invalid otlp header Content-Type: the sink sets it',
      ],
    ];
    for (const [env, message] of bad) assert.throws(() => parseOtlpOptions({}, env), { message });
    assert.throws(() => parseOtlpOptions({ protocol: 'grpc' }), {
      message: 'invalid otlp option protocol: grpc: valid values: http/protobuf, http/json',
    });
    // Empty variables count as unset.
    assert.equal(
      parseOtlpOptions({}, { OTEL_EXPORTER_OTLP_ENDPOINT: ' ', OTEL_EXPORTER_OTLP_PROTOCOL: '' }).url,
      'http://127.0.0.1:4318/v1/metrics',
    );
  });
});
