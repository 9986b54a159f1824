import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { MetricType } from '../core/metrics.js';
import type { Metrics, MetricValue } from '../core/metrics.js';
import type { SinkContext } from '../core/sink.js';
import { metricsAt, sinkContext, startHttpReceiver, until } from './receivers.fixture.js';
import type { HttpReceiver } from './receivers.fixture.js';
import { RetrySink, withRetry } from './retry.js';
import {
  SIGNALFX_USER_AGENT,
  createSignalfxSink,
  encodeDatapoints,
  parseSignalfxOptions,
  signalfxSinkRegistration,
} from './signalfx.js';
import { registerSinkTranslator, sinkTranslators } from './translators.js';

process.env.TZ = 'UTC';

// The schema as SignalFx publishes it (signalfx_metrics.proto), decoded by protobufjs: an
// independent reader of what the sink writes by hand.
const SCHEMA = `
syntax = "proto2";
package com.signalfx.metrics.protobuf;
enum MetricType { GAUGE = 0; COUNTER = 1; ENUM = 2; CUMULATIVE_COUNTER = 3; }
message Datum { optional string strValue = 1; optional double doubleValue = 2; optional int64 intValue = 3; }
message Dimension { optional string key = 1; optional string value = 2; }
message DataPoint {
  optional string source = 1;
  optional string metric = 2;
  optional int64 timestamp = 3;
  optional Datum value = 4;
  optional MetricType metricType = 5;
  repeated Dimension dimensions = 6;
}
message DataPointUploadMessage { repeated DataPoint datapoints = 1; }
`;
const Upload = protobuf.parse(SCHEMA).root.lookupType('com.signalfx.metrics.protobuf.DataPointUploadMessage');

interface DecodedPoint {
  source?: string;
  metric: string;
  timestamp: string;
  value: { doubleValue?: number; intValue?: string; strValue?: string };
  metricType: string;
  dimensions?: Array<{ key: string; value: string }>;
}

function decode(body: Uint8Array): DecodedPoint[] {
  const obj = Upload.toObject(Upload.decode(body), { longs: String, enums: String }) as {
    datapoints?: DecodedPoint[];
  };
  return obj.datapoints ?? [];
}

const ctx = (options: Record<string, string>, tags: Record<string, string> = {}) =>
  sinkContext('signalfx', options, tags);

const BEGIN = Date.UTC(2024, 4, 1, 12, 0, 5, 123);

function metrics(values: Record<string, MetricValue[]>, beginMs = BEGIN): Metrics {
  return metricsAt(values, beginMs, 40);
}

describe('signalfx options', () => {
  it('needs a token and rejects unknown keys and an empty prefix', () => {
    assert.throws(() => parseSignalfxOptions({}), {
      message: 'signalfx sink requires either auth-token or auth-token-file',
    });
    assert.throws(() => parseSignalfxOptions({ 'auth-token': 't', 'send-timeout': '1s' }), {
      message: 'invalid option: send-timeout',
    });
    assert.throws(() => parseSignalfxOptions({ 'auth-token': 't', 'metric-prefix': '' }), {
      message: 'signalfx sink metric-prefix is empty string; value required when option is specified',
    });
    assert.throws(() => parseSignalfxOptions({ 'auth-token': 't', 'metric-translator': 'x' }), {
      message: 'invalid domain translator: x (not registered)',
    });
  });

  it('reads the token file trimmed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sonde-sfx-'));
    writeFileSync(join(dir, 'token'), 'tok-1\n');
    assert.equal(parseSignalfxOptions({ 'auth-token-file': join(dir, 'token') }).token, 'tok-1');
  });

  it('builds Retry → SignalFx named signalfx, the retry keys stripped', () => {
    const sink = signalfxSinkRegistration().create(
      ctx({ 'auth-token': 't', 'buffer-size': '3', 'send-timeout': '1s' }),
    );
    assert.ok(sink instanceof RetrySink);
    assert.equal(sink.name, 'signalfx');
    assert.equal(sink.config.bufferSize, 3);
  });
});

describe('signalfx wire format', () => {
  it('encodes a datapoint field by field in number order, source unset', () => {
    const bytes = encodeDatapoints([
      { metric: 'a', timestamp: 1, type: 0, double: 1, dimensions: [['k', 'v']] },
    ]);
    assert.equal(
      Buffer.from(bytes).toString('hex'),
      // 0a len: 12 01 'a' | 18 01 | 22 09 (11 + double 1.0) | 28 00 | 32 06 (0a 01 'k' 12 01 'v')
      '0a1a' + '120161' + '1801' + '2209' + '11000000000000f03f' + '2800' + '3206' + '0a016b' + '120176',
    );
  });
});

describe('signalfx sink', () => {
  let rx: HttpReceiver;
  before(async () => {
    rx = await startHttpReceiver();
    rx.reply = () => ({ status: 200, body: '"OK"' });
  });
  after(async () => {
    await rx.close();
  });

  function sink(c: SinkContext): ReturnType<typeof createSignalfxSink> {
    return createSignalfxSink(c, { url: `${rx.url}/v2/datapoint` });
  }

  it('posts the exact datapoints with token, protobuf type and user agent', async () => {
    rx.requests.length = 0;
    const c = ctx({ 'auth-token': 'tok-1' }, { env: 'prod', 'dc.name': 'east', db: 'from-tags' });
    await sink(c).send(
      metrics({
        'status.global': [
          { name: 'queries', value: 5382, type: MetricType.CumulativeCounter },
          { name: 'threads_running', value: 3.5, type: MetricType.Gauge },
        ],
        'size.table': [
          {
            name: 'bytes',
            value: 7.9,
            type: MetricType.DeltaCounter,
            group: { db: 'app', tbl: '' },
            meta: { ts: '1714564800999', 'ok/not': 'x' },
          },
          { name: 'neg', value: -3.5, type: MetricType.DeltaCounter, group: { db: '' } },
          { name: 'ro', value: 1, type: MetricType.Bool },
          { name: 'evt', value: 1, type: MetricType.Event },
        ],
      }),
    );
    const [r] = await rx.waitFor(1);
    assert.ok(r);
    assert.equal(r.method, 'POST');
    assert.equal(r.url, '/v2/datapoint');
    assert.equal(r.headers['content-type'], 'application/x-protobuf');
    assert.equal(r.headers['x-sf-token'], 'tok-1');
    assert.equal(r.headers['user-agent'], SIGNALFX_USER_AGENT);
    assert.equal(r.headers['connection'], 'keep-alive');
    assert.equal(r.headers['content-encoding'], undefined, 'small bodies are not compressed');
    const ts = String(BEGIN);
    const tagDims = [
      { key: 'db', value: 'from-tags' },
      { key: 'dc_name', value: 'east' },
      { key: 'env', value: 'prod' },
    ];
    assert.deepEqual(decode(r.body), [
      {
        metric: 'size.table.bytes',
        timestamp: '1714564800999',
        value: { intValue: '7' },
        metricType: 'COUNTER',
        // group db overwrites the tag; empty tbl dropped; `/` in a key becomes `_`
        dimensions: [
          { key: 'db', value: 'app' },
          { key: 'dc_name', value: 'east' },
          { key: 'env', value: 'prod' },
          { key: 'ok_not', value: 'x' },
        ],
      },
      {
        metric: 'size.table.neg',
        timestamp: ts,
        value: { intValue: '-3' },
        metricType: 'COUNTER',
        // group db="" overwrites the tag and is then dropped: the dimension disappears
        dimensions: tagDims.slice(1),
      },
      {
        metric: 'size.table.ro',
        timestamp: ts,
        value: { doubleValue: 1 },
        metricType: 'GAUGE',
        dimensions: tagDims,
      },
      {
        metric: 'status.global.queries',
        timestamp: ts,
        value: { doubleValue: 5382 },
        metricType: 'CUMULATIVE_COUNTER',
        dimensions: tagDims,
      },
      {
        metric: 'status.global.threads_running',
        timestamp: ts,
        value: { doubleValue: 3.5 },
        metricType: 'GAUGE',
        dimensions: tagDims,
      },
    ]);
    assert.match(
      c.status.map.get('signalfx') ?? '',
      /^last sent 5 metrics at \d{4}-\d\d-\d\dT[\d:]{8}\.\d{3}\+00:00$/,
    );
  });

  it('gzips bodies above 1500 bytes', async () => {
    rx.requests.length = 0;
    const values = Array.from({ length: 60 }, (_, i) => ({
      name: `metric_${i}`,
      value: i,
      type: MetricType.Gauge,
    }));
    await sink(ctx({ 'auth-token': 't' }, { env: 'prod' })).send(metrics({ 'status.global': values }));
    const [r] = await rx.waitFor(1);
    assert.equal(r?.headers['content-encoding'], 'gzip');
    assert.equal(r?.raw[0], 0x1f);
    const got = decode(r?.body ?? new Uint8Array());
    assert.equal(got.length, 60);
    assert.equal(got[59]?.metric, 'status.global.metric_59');
    assert.ok((r?.body.length ?? 0) > 1500);
  });

  it('applies metric-prefix and a registered translator', async () => {
    rx.requests.length = 0;
    registerSinkTranslator('test-mysql', (domain, metric) => `mysql.${domain.replace('.', '_')}.${metric}`);
    try {
      await sink(
        ctx({ 'auth-token': 't', 'metric-translator': 'test-mysql', 'metric-prefix': 'acme.' }),
      ).send(metrics({ 'status.global': [{ name: 'queries', value: 1, type: MetricType.Gauge }] }));
      const [r] = await rx.waitFor(1);
      assert.equal(decode(r?.body ?? new Uint8Array())[0]?.metric, 'acme.mysql.status_global.queries');
    } finally {
      sinkTranslators.delete('test-mysql');
    }
  });

  it('sends nothing for an empty collection, fails when nothing converts', async () => {
    rx.requests.length = 0;
    const s = sink(ctx({ 'auth-token': 't' }));
    await s.send(metrics({}));
    await s.send(metrics({ a: [] }));
    assert.equal(rx.requests.length, 0);
    await assert.rejects(s.send(metrics({ a: [{ name: 'e', value: 1, type: MetricType.Event }], b: [] })), {
      message: 'no SignalFx data points after processing 2 Blip metrics',
    });
  });

  it('needs a 2xx answer whose body is the JSON string "OK"', async () => {
    const s = sink(ctx({ 'auth-token': 't' }));
    const one = metrics({ g: [{ name: 'a', value: 1, type: MetricType.Gauge }] });
    rx.reply = () => ({ status: 400, body: 'bad token' });
    await assert.rejects(s.send(one), { message: 'invalid status code 400: bad token' });
    rx.reply = () => ({ status: 200, body: '"NOPE"' });
    await assert.rejects(s.send(one), { message: 'invalid response body "NOPE"' });
    rx.reply = () => ({ status: 200, body: 'OK' });
    await assert.rejects(s.send(one), /^Error: cannot unmarshal response body OK: /);
    rx.reply = () => ({ status: 200, body: '"OK"' });
    await assert.doesNotReject(s.send(one));
  });

  it('reports failures through Retry as events and error:signalfx-send, never as a failed send', async () => {
    rx.reply = () => ({ status: 503, body: 'busy' });
    const c = ctx({ 'auth-token': 't', 'send-timeout': '300ms', 'send-retry-wait': '50ms' });
    const s = signalfxSinkRegistration({ url: `${rx.url}/v2/datapoint` }).create(c);
    await assert.doesNotReject(s.send(metrics({ g: [{ name: 'a', value: 1, type: MetricType.Gauge }] })));
    await until(() => c.events.errors.length >= 1);
    await s.close?.();
    assert.equal(c.events.errors[0], 'sink-send-error: signalfx :invalid status code 503: busy');
    assert.match(
      c.status.map.get('error:signalfx-send') ?? '',
      /: signalfx :invalid status code 503: busy \(1 buffered\)$/,
    );
    assert.match(c.status.map.get('signalfx') ?? '', /^last sent 1 metrics at /, 'written on failure too');
    rx.reply = () => ({ status: 200, body: '"OK"' });
  });

  it('keeps the newest buffer-size collections through an outage and delivers them newest first', async () => {
    const up = await startHttpReceiver();
    up.reply = () => ({ status: 200, body: '"OK"' });
    up.down = true;
    const c = ctx({ 'auth-token': 't' }, { env: 'prod' });
    const inner = createSignalfxSink(c, { url: `${up.url}/v2/datapoint` });
    const retry = withRetry(inner, {
      monitorId: 'db1',
      events: c.events,
      status: c.status,
      bufferSize: 2,
      sendTimeoutMs: 200,
      sendRetryWaitMs: 20,
    });
    const at = (i: number): Metrics =>
      metrics(
        { 'status.global': [{ name: 'threads_running', value: i, type: MetricType.Gauge }] },
        BEGIN + i * 1000,
      );
    try {
      for (let i = 1; i <= 4; i++) {
        await assert.doesNotReject(retry.send(at(i)));
        await retry.idle();
      }
      assert.equal(retry.buffered, 2);
      // Reset connections, or the request in flight when the send's deadline hit.
      const outage =
        /^sink-send-error: signalfx :(POST http:\/\/127\.0\.0\.1:\d+\/v2\/datapoint: (socket hang up|.*ECONNRESET)|send-timeout 200ms exceeded)/;
      for (const e of c.events.errors) assert.match(e, outage);
      // One line per backoff step, not one per collection: all four arrived within one step.
      assert.ok(c.events.errors.length >= 1 && c.events.errors.length < 4, `${c.events.errors.length} lines`);
      assert.equal(retry.dropped, 2);
      assert.equal(up.requests.length, 0);
      up.down = false;
      await retry.send(at(5));
      const got = (await up.waitFor(2)).map((r) => decode(r.body).map((d) => d.value.doubleValue));
      assert.deepEqual(got, [[5], [4]]); // 1, 2 and 3 fell off the bottom of the 2-entry stack
      await until(() => retry.buffered === 0);
      assert.equal(up.requests.length, 2);
      assert.equal(c.status.map.has('error:signalfx-send'), false);
    } finally {
      await retry.close();
      await up.close();
    }
  });

  it('goes through http.proxy', async () => {
    const proxy = await startHttpReceiver();
    proxy.reply = () => ({ status: 200, body: '"OK"' });
    try {
      const c = { ...ctx({ 'auth-token': 't' }), httpProxy: proxy.url };
      await createSignalfxSink(c, { url: 'http://ingest.example/v2/datapoint' }).send(
        metrics({ g: [{ name: 'a', value: 1, type: MetricType.Gauge }] }),
      );
      const [r] = await proxy.waitFor(1);
      assert.equal(r?.url, 'http://ingest.example/v2/datapoint');
      assert.equal(r?.headers['x-sf-token'], 't');
    } finally {
      await proxy.close();
    }
  });
});
