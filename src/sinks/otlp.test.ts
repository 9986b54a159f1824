import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { MetricType } from '../core/metrics.js';
import type { Metrics } from '../core/metrics.js';
import type { CaptureServer } from '../../test/helpers/capture-http.js';
import {
  createOtlpSink,
  encodeOtlpMetrics,
  otlpSinkRegistration,
  parseHeaderList,
  parseOtlpOptions,
} from './otlp.js';
import { captureServerPerSuite, recorder, until } from './receivers.fixture.js';
import { Response, RpcStatus, attrs, decode } from './otlp.fixture.js';
import { RetrySink } from './retry.js';

const BEGIN = new Date('2024-05-01T12:00:05.123Z');
const BEGIN_NS = '1714564805123000000';

function sample(): Metrics {
  return {
    begin: BEGIN,
    end: new Date(BEGIN.getTime() + 12),
    monitorId: 'db1',
    plan: 'default-mysql',
    level: 'performance',
    interval: 3,
    state: 'active',
    values: {
      'status.global': [
        { name: 'queries', value: 5382, type: MetricType.CumulativeCounter },
        { name: 'threads_running', value: 3, type: MetricType.Gauge },
      ],
      'size.table': [
        { name: 'bytes', value: 16384, type: MetricType.Gauge, group: { tbl: 'users', db: 'app' } },
        { name: 'bytes', value: 1024, type: MetricType.Gauge, group: { db: 'app', tbl: 'orders' } },
      ],
      'aws.rds': [{ name: 'cpu', value: 0.25, type: MetricType.Gauge, meta: { ts: '1714564800000' } }],
      trx: [{ name: 'completed', value: 17, type: MetricType.DeltaCounter }],
      tls: [{ name: 'enabled', value: 1, type: MetricType.Bool }],
      repl: [
        { name: 'running', value: 1, type: MetricType.Event },
        { name: 'source', value: 0, type: MetricType.Unknown },
        { name: 'lag', value: 7, type: MetricType.Gauge, meta: { ts: 'soon' } },
      ],
      'query.response-time': [{ name: 'p99', value: 1.5, type: MetricType.Gauge, meta: { p99: '99.2' } }],
    },
  };
}

const STAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d$/;

describe('otlp encoding', () => {
  it('maps counters to cumulative or delta monotonic sums, gauges and bools to gauges, groups to attributes', () => {
    const { body, points } = encodeOtlpMetrics(sample(), { 'service.name': 'sonde', env: 'prod' });
    assert.equal(points, 8);
    const d = decode(body);
    assert.equal(d.resourceMetrics.length, 1);
    const rm = d.resourceMetrics[0];
    assert.ok(rm);
    assert.deepEqual(attrs(rm.resource.attributes), ['service.name=sonde', 'env=prod']);
    assert.equal(rm.scopeMetrics.length, 1);
    const sm = rm.scopeMetrics[0];
    assert.ok(sm);
    assert.equal(sm.scope.name, 'sonde');
    const summary = sm.metrics.map((m) => {
      const kind = m.gauge
        ? 'gauge'
        : `sum ${m.sum?.aggregationTemporality ?? '?'} monotonic=${String(m.sum?.isMonotonic)}`;
      const pts = (m.gauge ?? m.sum)?.dataPoints ?? [];
      return {
        name: m.name,
        kind,
        points: pts.map((p) => ({
          value: p.asDouble,
          time: p.timeUnixNano,
          start: p.startTimeUnixNano,
          attributes: attrs(p.attributes),
        })),
      };
    });
    // Domains in ascending order, values in collector order; EVENT, UNKNOWN and the value
    // with an unparsable `ts` are skipped; meta other than `ts` is not sent.
    const at = (time: string, value: number, attributes: string[] = []): object => ({
      value,
      time,
      start: '0',
      attributes,
    });
    assert.deepEqual(summary, [
      { name: 'aws.rds.cpu', kind: 'gauge', points: [at('1714564800000000000', 0.25)] },
      { name: 'query.response-time.p99', kind: 'gauge', points: [at(BEGIN_NS, 1.5)] },
      {
        name: 'size.table.bytes',
        kind: 'gauge',
        points: [at(BEGIN_NS, 16384, ['db=app', 'tbl=users']), at(BEGIN_NS, 1024, ['db=app', 'tbl=orders'])],
      },
      {
        name: 'status.global.queries',
        kind: 'sum AGGREGATION_TEMPORALITY_CUMULATIVE monotonic=true',
        points: [at(BEGIN_NS, 5382)],
      },
      { name: 'status.global.threads_running', kind: 'gauge', points: [at(BEGIN_NS, 3)] },
      { name: 'tls.enabled', kind: 'gauge', points: [at(BEGIN_NS, 1)] },
      {
        name: 'trx.completed',
        kind: 'sum AGGREGATION_TEMPORALITY_DELTA monotonic=true',
        points: [at(BEGIN_NS, 17)],
      },
    ]);
  });

  it('writes a zero value and keeps exact doubles', () => {
    const m = sample();
    m.values = {
      g: [
        { name: 'zero', value: 0, type: MetricType.Gauge },
        { name: 'big', value: 2 ** 63, type: MetricType.CumulativeCounter },
        { name: 'frac', value: 0.1, type: MetricType.Gauge },
      ],
    };
    const d = decode(encodeOtlpMetrics(m, {}, { prefix: 'mysql.' }).body);
    const metrics = d.resourceMetrics[0]?.scopeMetrics[0]?.metrics ?? [];
    assert.deepEqual(
      metrics.map((x) => [x.name, (x.gauge ?? x.sum)?.dataPoints[0]?.asDouble]),
      [
        ['mysql.g.zero', 0],
        ['mysql.g.big', 2 ** 63],
        ['mysql.g.frac', 0.1],
      ],
    );
  });
});

describe('otlp options', () => {
  it('parses headers in the OTEL_EXPORTER_OTLP_HEADERS convention', () => {
    assert.deepEqual(parseHeaderList(' api-key = s3cr%2Cet , X-Tenant=a=b,, '), {
      'api-key': 's3cr,et',
      'X-Tenant': 'a=b',
    });
    assert.throws(() => parseHeaderList('a=1,novalue'), {
      message: 'invalid otlp option headers: entry 2 is not name=value',
    });
    assert.throws(() => parseHeaderList('=x'), {
      message: 'invalid otlp option headers: entry 1 is not name=value',
    });
  });

  it('takes header.<name> keys over the headers list, and defaults', () => {
    assert.deepEqual(parseOtlpOptions({}), {
      url: 'http://127.0.0.1:4318/v1/metrics',
      logsUrl: 'http://127.0.0.1:4318/v1/logs',
      protocol: 'http/protobuf',
      headers: {},
      compression: 'none',
      metricPrefix: '',
      naming: 'sonde',
      resource: {},
    });
    assert.deepEqual(
      parseOtlpOptions({
        endpoint: 'https://otel.example:4318/',
        headers: 'a=1,b=2',
        'header.b': 'two',
        'header.Authorization': 'Bearer x',
        compression: 'GZIP',
        'metric-prefix': 'mysql.',
      }),
      {
        url: 'https://otel.example:4318/v1/metrics',
        logsUrl: 'https://otel.example:4318/v1/logs',
        protocol: 'http/protobuf',
        headers: { a: '1', b: 'two', Authorization: 'Bearer x' },
        compression: 'gzip',
        metricPrefix: 'mysql.',
        naming: 'sonde',
        resource: {},
      },
    );
  });

  it('rejects unknown keys, bad compression and headers the sink owns, without echoing values', () => {
    assert.throws(() => parseOtlpOptions({ url: 'x' }), { message: 'invalid option: url' });
    assert.throws(() => parseOtlpOptions({ compression: 'zstd' }), {
      message: 'invalid otlp option compression: zstd: valid values: none, gzip',
    });
    assert.throws(() => parseOtlpOptions({ 'header.Content-Type': 'text/plain' }), {
      message: 'invalid otlp header Content-Type: the sink sets it',
    });
    assert.throws(() => parseOtlpOptions({ 'header.bad name': 'v' }), {
      message: 'invalid otlp header name: "bad name"',
    });
    assert.throws(() => parseOtlpOptions({ headers: 'x-key=abc%0Adef' }), {
      message: 'invalid otlp header x-key: value has a control character',
    });
    const r = recorder();
    assert.throws(() => createOtlpSink(parseOtlpOptions({ endpoint: 'ftp://u:pw@host' }), r), {
      message: 'invalid otlp endpoint: scheme must be http or https, not ftp',
    });
  });
});

describe('otlp sink against a local receiver', () => {
  let rx: CaptureServer;
  captureServerPerSuite((server) => (rx = server));

  it('POSTs protobuf to <endpoint>/v1/metrics with custom headers; tags and monitor id are resource attributes', async () => {
    rx.requests.length = 0;
    const r = recorder({ tags: { env: 'prod', 'service.name': 'mysql-fleet' } });
    const sink = createOtlpSink(
      parseOtlpOptions({
        endpoint: `${rx.base}/otel/`,
        headers: 'x-api-key=k1',
        'header.X-Scope-OrgID': 'team-a',
      }),
      r,
    );
    assert.equal(sink.name, 'otlp');
    await sink.send(sample());
    assert.equal(rx.requests.length, 1);
    const req = rx.requests[0];
    assert.ok(req);
    assert.equal(req.method, 'POST');
    assert.equal(req.url, '/otel/v1/metrics');
    assert.equal(req.headers['content-type'], 'application/x-protobuf');
    assert.equal(req.headers['content-encoding'], undefined);
    assert.equal(req.headers['x-api-key'], 'k1');
    assert.equal(req.headers['x-scope-orgid'], 'team-a');
    const d = decode(req.body);
    // A tag wins over the default service.name; key order: defaults, then tags.
    assert.deepEqual(attrs(d.resourceMetrics[0]?.resource.attributes ?? []), [
      'service.name=mysql-fleet',
      'sonde.monitor.id=db1',
      'env=prod',
    ]);
    assert.equal(d.resourceMetrics[0]?.scopeMetrics[0]?.metrics.length, 7);
    assert.deepEqual(r.history.slice(0, 1), ['otlp: sending metrics']);
    const last = r.keys.get('otlp') ?? '';
    assert.match(last, /^last sent 8 metrics at /);
    assert.match(last.slice('last sent 8 metrics at '.length), STAMP);
    assert.deepEqual(r.errors, []);
  });

  it('gzips the body when compression is gzip, and sends nothing for an empty collection', async () => {
    rx.requests.length = 0;
    const r = recorder({ monitorId: 'db2' });
    const sink = createOtlpSink(parseOtlpOptions({ endpoint: rx.base, compression: 'gzip' }), r);
    const empty = sample();
    empty.values = {};
    await sink.send(empty);
    assert.equal(rx.requests.length, 0);
    assert.equal(r.keys.get('otlp'), undefined);
    await sink.send(sample());
    const req = rx.requests[0];
    assert.ok(req);
    assert.equal(req.url, '/v1/metrics');
    assert.equal(req.headers['content-encoding'], 'gzip');
    const d = decode(gunzipSync(req.body));
    assert.deepEqual(attrs(d.resourceMetrics[0]?.resource.attributes ?? []), [
      'service.name=sonde',
      'sonde.monitor.id=db2',
    ]);
  });

  it('rejects on a retryable status with the google.rpc.Status message, and drops a 400 with an event', async () => {
    rx.requests.length = 0;
    const r = recorder();
    const sink = createOtlpSink(parseOtlpOptions({ endpoint: rx.base }), r);
    const status = RpcStatus.encode(RpcStatus.create({ code: 14, message: 'ingester overloaded' })).finish();
    rx.answer(
      { status: 503, headers: { 'content-type': 'application/x-protobuf' }, body: status },
      { status: 400, headers: { 'content-type': 'text/plain' }, body: 'bad metric name\n' },
    );
    await assert.rejects(sink.send(sample()), {
      message: `otlp receiver HTTP status 503 from ${rx.base}/v1/metrics: ingester overloaded`,
    });
    assert.match(
      r.keys.get('otlp') ?? '',
      new RegExp(
        `^error on last send at \\S+: otlp receiver HTTP status 503 from ${rx.base}/v1/metrics: ingester overloaded$`,
      ),
    );
    await sink.send(sample()); // 400: resolves (must not be retried)
    assert.deepEqual(r.errors, [
      `sink-send-error db1 otlp :otlp receiver HTTP status 400 from ${rx.base}/v1/metrics: bad metric name (not retried)`,
    ]);
    assert.match(r.keys.get('otlp') ?? '', /^error on last send at .*: otlp receiver HTTP status 400 /);
    assert.equal(rx.requests.length, 2);
  });

  it('reports a partial success as sink-server-error and still counts the send', async () => {
    const r = recorder();
    const sink = createOtlpSink(parseOtlpOptions({ endpoint: rx.base }), r);
    const partial = Response.encode(
      Response.create({ partialSuccess: { rejectedDataPoints: 2, errorMessage: 'name too long' } }),
    ).finish();
    rx.answer(
      { status: 200, headers: { 'content-type': 'application/x-protobuf' }, body: partial },
      {
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: '{"partialSuccess":{"rejectedDataPoints":"1","errorMessage":"dup"}}',
      },
      { status: 200, headers: { 'content-type': 'application/x-protobuf' }, body: new Uint8Array() },
    );
    await sink.send(sample());
    await sink.send(sample());
    await sink.send(sample());
    assert.deepEqual(r.errors, [
      'sink-server-error db1 otlp receiver rejected 2 of 8 data points: name too long',
      'sink-server-error db1 otlp receiver rejected 1 of 8 data points: dup',
    ]);
    assert.match(r.keys.get('otlp') ?? '', /^last sent 8 metrics at /);
  });

  it('sends user:password from the endpoint as basic auth and never prints the password', async () => {
    rx.requests.length = 0;
    const r = recorder();
    const withCreds = rx.base.replace('http://', 'http://alice:pa%40ss@');
    const sink = createOtlpSink(parseOtlpOptions({ endpoint: withCreds }), r);
    rx.answer({ status: 502, body: 'bad gateway' });
    const err = await sink.send(sample()).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof Error);
    assert.equal(err.message, `otlp receiver HTTP status 502 from ${rx.base}/v1/metrics: bad gateway`);
    assert.equal(
      rx.requests[0]?.headers.authorization,
      `Basic ${Buffer.from('alice:pa@ss').toString('base64')}`,
    );
    assert.doesNotMatch(r.keys.get('otlp') ?? '', /pa/);
  });

  it('rejects with the URL and the transport error when nothing listens', async () => {
    const r = recorder();
    const sink = createOtlpSink(parseOtlpOptions({ endpoint: 'http://127.0.0.1:9' }), r);
    await assert.rejects(
      sink.send(sample()),
      /^Error: POST http:\/\/127\.0\.0\.1:9\/v1\/metrics: .*ECONNREFUSED/,
    );
    assert.match(r.keys.get('otlp') ?? '', /^error on last send at .*ECONNREFUSED/);
  });

  it('through the registration: Retry resends after a 503 but never after a 400', async () => {
    rx.requests.length = 0;
    const r = recorder({ tags: { env: 'prod' } });
    const sink = otlpSinkRegistration().create({
      ...r,
      sinkName: 'otlp',
      options: { endpoint: rx.base, 'send-timeout': '3s', 'send-retry-wait': '10ms', 'buffer-size': '4' },
    });
    assert.ok(sink instanceof RetrySink);
    assert.equal(sink.name, 'otlp');
    rx.answer({ status: 503, body: 'busy' });
    await sink.send(sample());
    await until(() => rx.requests.length === 2 && sink.buffered === 0);
    await sink.idle();
    assert.equal(rx.requests.length, 2);
    assert.deepEqual(rx.requests[1]?.body, rx.requests[0]?.body);
    assert.deepEqual(r.errors, [
      `sink-send-error db1 otlp :otlp receiver HTTP status 503 from ${rx.base}/v1/metrics: busy`,
    ]);
    assert.match(r.keys.get('otlp') ?? '', /^last sent 8 metrics at /);

    rx.requests.length = 0;
    r.errors.length = 0;
    rx.answer({ status: 400, body: 'bad' });
    await sink.send(sample());
    await sink.idle();
    assert.equal(rx.requests.length, 1);
    assert.equal(sink.buffered, 0);
    assert.deepEqual(r.errors, [
      `sink-send-error db1 otlp :otlp receiver HTTP status 400 from ${rx.base}/v1/metrics: bad (not retried)`,
    ]);
    await sink.close();
  });
});
