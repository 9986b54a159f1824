import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { MetricType } from '../core/metrics.js';
import type { Metrics, MetricValue } from '../core/metrics.js';
import type { SinkContext } from '../core/sink.js';
import {
  createDatadogSink,
  DATADOG_MAX_PAYLOAD,
  DATADOG_MAX_POINTS,
  DATADOG_MAX_UNCOMPRESSED,
  datadogSeriesUrl,
  datadogSinkRegistration,
  dogstatsdLines,
  nextMaxPerRequest,
  packDatagrams,
  parseDatadogOptions,
  payloadParts,
  plainDecimal,
} from './datadog.js';
import { DeltaSink, withDelta } from './delta.js';
import { metricsAt, sinkContext, startHttpReceiver, startUdpReceiver, until } from './receivers.fixture.js';
import type { HttpReceiver } from './receivers.fixture.js';
import type { RetrySink } from './retry.js';
import { withRetry } from './retry.js';

process.env.TZ = 'UTC';

const C = MetricType.CumulativeCounter;
const D = MetricType.DeltaCounter;
const G = MetricType.Gauge;

const ctx = (options: Record<string, string>, tags: Record<string, string> = {}) =>
  sinkContext('datadog', options, tags);

/** begin = 2024-05-01T12:00:05.900Z (Unix 1714564805.9). */
function metrics(
  values: Record<string, MetricValue[]>,
  beginMs = Date.UTC(2024, 4, 1, 12, 0, 5, 900),
): Metrics {
  return metricsAt(values, beginMs, 50);
}

const API_KEYS = { 'api-key-auth': 'api-123', 'app-key-auth': 'app-456' };

describe('datadog options', () => {
  it('needs both keys in API mode', () => {
    assert.throws(() => parseDatadogOptions({}), {
      message: 'datadog sink requires either api-key-auth or api-key-auth-file',
    });
    assert.throws(() => parseDatadogOptions({ 'api-key-auth': 'a' }), {
      message: 'datadog sink requires either app-key-auth or app-key-auth-file',
    });
    const cfg = parseDatadogOptions(API_KEYS);
    assert.equal(cfg.mode, 'api');
    assert.equal(cfg.compress, true);
  });

  it('rejects unknown keys, an empty prefix and an unregistered translator', () => {
    assert.throws(() => parseDatadogOptions({ ...API_KEYS, 'buffer-size': '5' }), {
      message: 'invalid option: buffer-size',
    });
    assert.throws(() => parseDatadogOptions({ ...API_KEYS, 'metric-prefix': '' }), {
      message: 'datadog sink metric-prefix is empty string; value required when option is specified',
    });
    assert.throws(() => parseDatadogOptions({ ...API_KEYS, 'metric-translator': 'nope' }), {
      message: 'invalid domain translator: nope (not registered)',
    });
  });

  it('chooses DogStatsD with a host, refuses host plus both keys, and adds the default port', () => {
    assert.equal(parseDatadogOptions({ 'dogstatsd-host': 'agent' }).dogstatsdHost, 'agent:8125');
    assert.equal(parseDatadogOptions({ 'dogstatsd-host': 'agent:9125' }).dogstatsdHost, 'agent:9125');
    const one = parseDatadogOptions({ 'dogstatsd-host': '10.0.0.1', 'api-key-auth': 'k' });
    assert.equal(one.mode, 'dogstatsd');
    assert.throws(() => parseDatadogOptions({ ...API_KEYS, 'dogstatsd-host': 'agent' }), {
      message:
        'datadog sink requires either dogstatsd host or (api-key-auth and app-key-auth), not both at the same time',
    });
  });

  it('reads key files, trimmed, and fails on an unreadable one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sonde-dd-'));
    writeFileSync(join(dir, 'api'), 'api-from-file\n');
    writeFileSync(join(dir, 'app'), '  app-from-file\n');
    const cfg = parseDatadogOptions({
      'api-key-auth-file': join(dir, 'api'),
      'app-key-auth-file': join(dir, 'app'),
    });
    assert.equal(cfg.apiKey, 'api-from-file');
    assert.equal(cfg.appKey, 'app-from-file');
    assert.throws(() => parseDatadogOptions({ 'api-key-auth-file': join(dir, 'missing') }), /ENOENT/);
  });

  it('parses api-compress as a Blip bool', () => {
    assert.equal(parseDatadogOptions({ ...API_KEYS, 'api-compress': 'no' }).compress, false);
    assert.equal(parseDatadogOptions({ ...API_KEYS, 'api-compress': 'Enabled' }).compress, true);
  });

  it('uses DD_SITE for the API host', () => {
    assert.equal(datadogSeriesUrl({}), 'https://api.datadoghq.com/api/v2/series');
    assert.equal(datadogSeriesUrl({ DD_SITE: 'datadoghq.eu' }), 'https://api.datadoghq.eu/api/v2/series');
  });

  it('builds Delta → Retry → Datadog named datadog, retry keys stripped before the inner sink', () => {
    const sink = datadogSinkRegistration().create(
      ctx({ ...API_KEYS, 'buffer-size': '5', 'send-timeout': '1s', 'send-retry-wait': '10ms' }),
    );
    assert.ok(sink instanceof DeltaSink);
    assert.equal(sink.name, 'datadog');
  });
});

describe('datadog API mode', () => {
  let rx: HttpReceiver;
  before(async () => {
    rx = await startHttpReceiver();
  });
  after(async () => {
    await rx.close();
  });

  /** The production chain with a handle on the retry stage. */
  function chain(c: SinkContext): { delta: DeltaSink; retry: RetrySink } {
    const inner = createDatadogSink(c, { apiUrl: `${rx.url}/api/v2/series` });
    const retry = withRetry(inner, {
      monitorId: c.monitorId,
      events: c.events,
      status: c.status,
      sendTimeoutMs: 2000,
      sendRetryWaitMs: 10,
    });
    return { delta: withDelta(retry), retry };
  }

  it('posts the exact series JSON, gzipped, with both keys, counters as deltas', async () => {
    rx.requests.length = 0;
    rx.reply = () => ({ status: 202, body: '{"errors":[]}' });
    const c = ctx(API_KEYS, { env: 'prod', host: 'db1.local' });
    const { delta, retry } = chain(c);
    const batch = (queries: number, running: number): Metrics =>
      metrics({
        'status.global': [
          { name: 'queries', value: queries, type: C },
          { name: 'threads_running', value: running, type: G },
        ],
        'size.table': [
          {
            name: 'rows',
            value: 12.5,
            type: G,
            group: { tbl: 'users', db: 'app' },
            meta: { ts: '1714564800123', note: '' },
          },
          { name: 'ok', value: 1, type: MetricType.Bool },
          { name: 'evt', value: 1, type: MetricType.Event },
          { name: 'sent', value: 7.25, type: D, group: { db: '' } },
        ],
      });
    await delta.send(batch(5000, 3));
    await retry.idle();
    await delta.send(batch(5382, 4));
    await retry.idle();
    const [, second] = await rx.waitFor(2);
    assert.ok(second);
    assert.equal(second.method, 'POST');
    assert.equal(second.url, '/api/v2/series');
    assert.equal(second.headers['content-type'], 'application/json');
    assert.equal(second.headers['accept'], 'application/json');
    assert.equal(second.headers['dd-api-key'], 'api-123');
    assert.equal(second.headers['dd-application-key'], 'app-456');
    assert.equal(second.headers['content-encoding'], 'gzip');
    assert.equal(second.raw[0], 0x1f, 'gzip magic on the wire');
    const host = [{ name: 'db1.local', type: 'host' }];
    const tags = ['env:prod', 'host:db1.local'];
    // Domains in name order; `ts` meta sets the point time and is not a tag.
    const expected = {
      series: [
        {
          metric: 'size.table.rows',
          type: 3,
          points: [{ timestamp: 1714564800, value: 12.5 }],
          tags: [...tags, 'note:', 'db:app', 'tbl:users'],
          resources: host,
        },
        {
          metric: 'size.table.ok',
          type: 3,
          points: [{ timestamp: 1714564805, value: 1 }],
          tags,
          resources: host,
        },
        {
          metric: 'size.table.sent',
          type: 1,
          points: [{ timestamp: 1714564805, value: 7.25 }],
          tags: [...tags, 'db:'],
          resources: host,
        },
        {
          metric: 'status.global.queries',
          type: 1,
          points: [{ timestamp: 1714564805, value: 382 }],
          tags,
          resources: host,
        },
        {
          metric: 'status.global.threads_running',
          type: 3,
          points: [{ timestamp: 1714564805, value: 4 }],
          tags,
          resources: host,
        },
      ],
    };
    assert.equal(second.body.toString(), JSON.stringify(expected));
    // The first collection had no counter delta yet: 4 series, no queries.
    const first = JSON.parse(rx.requests[0]?.body.toString() ?? '') as { series: Array<{ metric: string }> };
    assert.deepEqual(
      first.series.map((s) => s.metric),
      ['size.table.rows', 'size.table.ok', 'size.table.sent', 'status.global.threads_running'],
    );
    assert.match(
      c.status.map.get('datadog') ?? '',
      /^last sent 5 metrics at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/,
    );
    assert.deepEqual(c.events.errors, []);
  });

  it('sends plain JSON without tags or resources when compression is off and there are no tags', async () => {
    rx.requests.length = 0;
    const c = ctx({ ...API_KEYS, 'api-compress': 'false', 'metric-prefix': 'mysql.' });
    const sink = createDatadogSink(c, { apiUrl: `${rx.url}/api/v2/series` });
    await sink.send(metrics({ innodb: [{ name: 'trx_active', value: 0.5, type: G }] }));
    const [r] = await rx.waitFor(1);
    assert.equal(r?.headers['content-encoding'], undefined);
    assert.equal(
      r?.raw.toString(),
      '{"series":[{"metric":"mysql.innodb.trx_active","type":3,"points":[{"timestamp":1714564805,"value":0.5}]}]}',
    );
  });

  it('sends nothing for an empty collection and reports one with nothing convertible', async () => {
    rx.requests.length = 0;
    const c = ctx(API_KEYS);
    const sink = createDatadogSink(c, { apiUrl: `${rx.url}/api/v2/series` });
    await sink.send(metrics({ 'status.global': [] }));
    assert.equal(c.status.map.has('datadog'), false);
    await sink.send(metrics({ x: [{ name: 'e', value: 1, type: MetricType.Event }] }));
    assert.equal(rx.requests.length, 0);
    assert.deepEqual(c.events.errors, [
      'sink-invalid-metrics: zero data points created after processing Blip metrics: 1 values in 1 domains',
    ]);
  });

  it('sizes large batches before sending: every request within the intake limits, none refused, none lost', async () => {
    // The intake's documented limits, enforced as the real one does (413 when over).
    const over = (r: { raw: Buffer; body: Buffer }): string | undefined => {
      const n = (JSON.parse(r.body.toString()) as { series: { points: unknown[] }[] }).series.reduce(
        (a, s) => a + s.points.length,
        0,
      );
      if (r.raw.length > DATADOG_MAX_PAYLOAD) return `payload ${r.raw.length} bytes`;
      if (r.body.length >= DATADOG_MAX_UNCOMPRESSED) return `decompressed ${r.body.length} bytes`;
      if (n > DATADOG_MAX_POINTS) return `${n} points`;
      return undefined;
    };
    const refused: string[] = [];
    rx.reply = (req) => {
      const why = over(req);
      if (why !== undefined) refused.push(why);
      return why === undefined
        ? { status: 202, body: '{}' }
        : { status: 413, body: '{"errors":["Payload too large"]}' };
    };
    const cases: [string, Record<string, string>, MetricValue[]][] = [
      // Many small series, compressed: the points cap cuts them.
      [
        '25000 series, gzip',
        API_KEYS,
        Array.from({ length: 25_000 }, (_, i) => ({ name: `m${i}`, value: i, type: G })),
      ],
      // Uncompressed: the 512000-byte payload cuts them.
      [
        '3000 series of 500 bytes, no compression',
        { ...API_KEYS, 'api-compress': 'no' },
        Array.from({ length: 3000 }, (_, i) => ({
          name: `m${i}`,
          value: i,
          type: G,
          group: { t: 'x'.repeat(450) },
        })),
      ],
      // Incompressible tags: the compressed size cuts them below the raw limits.
      [
        '9000 series of random tags, gzip',
        API_KEYS,
        Array.from({ length: 9000 }, (_, i) => ({
          name: `m${i}`,
          value: i,
          type: G,
          group: { t: randomBytes(450).toString('base64') },
        })),
      ],
    ];
    for (const [what, options, values] of cases) {
      rx.requests.length = 0;
      refused.length = 0;
      const sink = createDatadogSink(ctx(options), { apiUrl: `${rx.url}/api/v2/series` });
      await sink.send(metrics({ g: values }));
      assert.deepEqual(refused, [], what);
      const names = rx.requests.flatMap((r) =>
        (JSON.parse(r.body.toString()) as { series: { metric: string }[] }).series.map((s) => s.metric),
      );
      assert.equal(names.length, values.length, what);
      assert.equal(new Set(names).size, values.length, what);
      assert.ok(rx.requests.length >= 2, `${what}: ${rx.requests.length} requests`);
      await sink.close?.();
    }
    rx.reply = () => ({ status: 202, body: '{}' });
  });

  it('splits after HTTP 413 down to what the server takes and keeps the smaller batch size', async () => {
    rx.requests.length = 0;
    rx.reply = (req) => {
      const n = (JSON.parse(req.body.toString()) as { series: unknown[] }).series.length;
      return n > 2 ? { status: 413, body: '{"errors":["Payload too large"]}' } : { status: 202, body: '{}' };
    };
    const c = ctx(API_KEYS);
    const sink = createDatadogSink(c, { apiUrl: `${rx.url}/api/v2/series` });
    const five = metrics({ g: ['a', 'b', 'c', 'd', 'e'].map((name) => ({ name, value: 1, type: G })) });
    await sink.send(five);
    const sizes = (): number[] =>
      rx.requests.map((r) => (JSON.parse(r.body.toString()) as { series: unknown[] }).series.length);
    // 5 → 413 → 90 % = 4 → 413 → 3 → 413 → 2: then 2, 2, 1 accepted.
    assert.deepEqual(sizes(), [5, 4, 3, 2, 2, 1]);
    assert.equal(sink.maxPerRequest, 2);
    rx.requests.length = 0;
    await sink.send(five);
    assert.deepEqual(sizes(), [2, 2, 1]);
    rx.reply = () => ({ status: 202, body: '{}' });
  });

  it('keeps the gzipped body that sizing made, so that a part is compressed once', () => {
    // About 700 kB of JSON that gzips well under the 512000-byte limit: sizing compresses it
    // to measure it, and the part keeps that body for the send.
    const series = Array.from({ length: 7000 }, (_, i) => ({
      metric: `mysql.status.m${i}`,
      type: 3,
      points: [{ timestamp: 1714564805, value: i / 7 }],
      tags: ['env:prod', `n:"ü${i}\\"`],
    }));
    const [part, ...rest] = payloadParts(series, true);
    assert.equal(rest.length, 0);
    assert.deepEqual(part?.series, series);
    const body = JSON.stringify({ series });
    assert.ok(Buffer.byteLength(body) > DATADOG_MAX_PAYLOAD, `${Buffer.byteLength(body)} bytes`);
    assert.equal(gunzipSync(part?.gzip ?? Buffer.alloc(0)).toString('utf8'), body);
    // Small compressed parts are not compressed to size them; uncompressed sends keep no gzip.
    assert.equal(payloadParts(series.slice(0, 10), true)[0]?.gzip, undefined);
    assert.ok(payloadParts(series, false).every((p) => p.gzip === undefined));
  });

  it('sizes batches from the estimated bytes per series', () => {
    // About 100 kB per series: 511700 / 100 kB = 5 fit.
    const series = Array.from({ length: 4 }, (_, i) => ({ metric: `m${i}`, tags: ['x'.repeat(99_990)] }));
    const six = [...series, ...series.slice(0, 2)];
    assert.equal(nextMaxPerRequest(six, 10, false), 5);
    // The estimate (5) is no smaller than the current size (4): 90 % of it instead.
    assert.equal(nextMaxPerRequest(series, 4, false), 3);
    // The current size is at most the refused chunk, even when no limit was set yet.
    assert.equal(nextMaxPerRequest(series, Number.POSITIVE_INFINITY, false), 3);
    assert.equal(nextMaxPerRequest(series.slice(0, 1), 1, false), 1);
    // Compressed, the zlib size makes the estimate: base64 noise shrinks to about 3/4.
    const noisy = Array.from({ length: 2000 }, () => ({ tags: [randomBytes(600).toString('base64')] }));
    const plain = nextMaxPerRequest(noisy, Number.POSITIVE_INFINITY, false);
    const zipped = nextMaxPerRequest(noisy, Number.POSITIVE_INFINITY, true);
    assert.ok(plain > 500 && plain < 700, `${plain}`);
    assert.ok(zipped > plain * 1.2 && zipped < 2000, `${zipped}`);
  });

  it('fails with 413 at one series per request, and with other statuses, joined per chunk', async () => {
    rx.requests.length = 0;
    rx.reply = () => ({ status: 403, body: '{"errors":["Forbidden"]}' });
    const sink = createDatadogSink(ctx(API_KEYS), { apiUrl: `${rx.url}/api/v2/series` });
    await assert.rejects(sink.send(metrics({ g: [{ name: 'a', value: 1, type: G }] })), {
      message: '403 Forbidden (HTTP status 403: {"errors":["Forbidden"]})',
    });
    rx.reply = () => ({ status: 413, body: 'too big' });
    const sink2 = createDatadogSink(ctx(API_KEYS), { apiUrl: `${rx.url}/api/v2/series` });
    await assert.rejects(
      sink2.send(metrics({ g: [{ name: 'a', value: 1, type: G }] })),
      // 1 series: max → 1 after the first 413; the second 413 is final.
      { message: '413 Payload Too Large (HTTP status 413: too big)' },
    );
    rx.reply = () => ({ status: 202, body: '{}' });
  });

  it('reports errors inside a 2xx answer as sink-server-error and succeeds', async () => {
    rx.reply = () => ({ status: 202, body: '{"errors":["bad tag","bad name"]}' });
    const c = ctx(API_KEYS);
    const sink = createDatadogSink(c, { apiUrl: `${rx.url}/api/v2/series` });
    await sink.send(metrics({ g: [{ name: 'a', value: 1, type: G }] }));
    assert.deepEqual(c.events.errors, [
      'sink-server-error: Datadog returned success and 2 errors: bad tag, bad name',
    ]);
    rx.reply = () => ({ status: 202, body: '{}' });
  });

  it('surfaces send errors as events and error:datadog-send through Retry, never as a failed send', async () => {
    rx.reply = () => ({ status: 500, body: 'oops' });
    const c = ctx({ ...API_KEYS, 'send-timeout': '200ms', 'send-retry-wait': '50ms' });
    const sink = datadogSinkRegistration({ apiUrl: `${rx.url}/api/v2/series` }).create(c);
    await assert.doesNotReject(sink.send(metrics({ g: [{ name: 'a', value: 1, type: G }] })));
    await until(() => c.events.errors.length >= 1);
    await sink.close?.();
    assert.equal(
      c.events.errors[0],
      'sink-send-error: datadog :500 Internal Server Error (HTTP status 500: oops)',
    );
    assert.match(
      c.status.map.get('error:datadog-send') ?? '',
      /^at \S+: datadog :500 Internal Server Error \(HTTP status 500: oops\) \(1 buffered\)$/,
    );
    rx.reply = () => ({ status: 202, body: '{}' });
  });

  it('loses only the oldest collections beyond buffer-size while the receiver is down', async () => {
    const rx2 = await startHttpReceiver();
    rx2.down = true;
    const c = ctx(API_KEYS);
    const inner = createDatadogSink(c, { apiUrl: `${rx2.url}/api/v2/series` });
    const retry = withRetry(inner, {
      monitorId: 'db1',
      events: c.events,
      status: c.status,
      bufferSize: 3,
      sendTimeoutMs: 200,
      sendRetryWaitMs: 20,
    });
    const delta = withDelta(retry);
    const t0 = Date.UTC(2024, 4, 1, 12, 0, 0);
    const at = (i: number): Metrics =>
      metrics(
        {
          'status.global': [
            { name: 'queries', value: 1000 + i * i, type: C },
            { name: 'threads_running', value: i, type: G },
          ],
        },
        t0 + i * 1000,
      );
    const up = rx2;
    try {
      // Collections 0..4 while the receiver is down: every send returns, entries pile up.
      for (let i = 0; i <= 4; i++) {
        await assert.doesNotReject(delta.send(at(i)));
        await retry.idle();
      }
      assert.equal(retry.buffered, 3);
      // Refused requests, or the one in flight when the send's deadline hit.
      const outage =
        /^(network error \(nil response\): .*(socket hang up|ECONNRESET).*|send-timeout 200ms exceeded)/;
      for (const e of c.events.errors) assert.match(e.replace('sink-send-error: datadog :', ''), outage);
      // One line per backoff step, not one per collection: all five arrived within one step.
      assert.ok(c.events.errors.length >= 1 && c.events.errors.length < 5, `${c.events.errors.length} lines`);
      assert.equal(retry.dropped, 2);
      assert.match((c.status.map.get('error:datadog-send') ?? '').replace(/^at \S+: datadog :/, ''), outage);
      assert.equal(rx2.requests.length, 0);

      rx2.down = false;
      await delta.send(at(5));
      const got = (await up.waitFor(3)).map((r) =>
        (
          JSON.parse(r.body.toString()) as {
            series: Array<{ metric: string; points: Array<{ timestamp: number; value: number }> }>;
          }
        ).series.map((s) => `${s.metric}@${(s.points[0]?.timestamp ?? 0) - t0 / 1000}=${s.points[0]?.value}`),
      );
      // Newest first; 0 and 1 fell off the bottom (2 was pushed off by 5). Deltas were made in
      // collection order: queries(i) − queries(i−1) = 2i − 1.
      assert.deepEqual(got, [
        ['status.global.queries@5=9', 'status.global.threads_running@5=5'],
        ['status.global.queries@4=7', 'status.global.threads_running@4=4'],
        ['status.global.queries@3=5', 'status.global.threads_running@3=3'],
      ]);
      await until(() => retry.buffered === 0);
      assert.equal(c.status.map.has('error:datadog-send'), false);
    } finally {
      await retry.close();
      await up.close();
    }
  });

  it('goes through http.proxy', async () => {
    const proxy = await startHttpReceiver();
    try {
      const c = { ...ctx(API_KEYS), httpProxy: proxy.url };
      const sink = createDatadogSink(c, { apiUrl: 'http://intake.example:8080/api/v2/series' });
      await sink.send(metrics({ g: [{ name: 'a', value: 1, type: G }] }));
      const [r] = await proxy.waitFor(1);
      assert.equal(r?.url, 'http://intake.example:8080/api/v2/series');
      assert.equal(r?.headers['host'], 'intake.example:8080');
    } finally {
      await proxy.close();
    }
  });
});

describe('datadog DogStatsD mode', () => {
  it('formats plain decimals with the shortest round-trip digits', () => {
    assert.equal(plainDecimal(1.0842021724855044e-19), '0.00000000000000000010842021724855044');
    assert.equal(plainDecimal(1e21), '1000000000000000000000');
    assert.equal(plainDecimal(-2.5e-7), '-0.00000025');
    assert.equal(plainDecimal(1.5e22), '15000000000000000000000');
    assert.equal(plainDecimal(0.1), '0.1');
    assert.equal(plainDecimal(123.456), '123.456');
  });

  it('writes count and gauge lines with tags, global env tags first', () => {
    const lines = dogstatsdLines(
      [
        { metric: 'a.b', kind: 'count', value: 5.9, timestamp: 0, tags: ['env:prod', 'db:'] },
        { metric: 'a.c', kind: 'count', value: -3.7, timestamp: 0, tags: [] },
        { metric: 'a.d', kind: 'gauge', value: 1e-7, timestamp: 0, tags: ['x:y'] },
      ],
      ['service:sonde'],
    );
    assert.deepEqual(lines, [
      'a.b:5|c|#service:sonde,env:prod,db:',
      'a.c:-3|c|#service:sonde',
      'a.d:0.0000001|g|#service:sonde,x:y',
    ]);
  });

  it('packs lines into datagrams of at most 1432 bytes', () => {
    const lines = Array.from({ length: 50 }, (_, i) => `m${i}:${'1'.repeat(90)}|g`);
    const grams = packDatagrams(lines);
    assert.ok(grams.length > 1);
    for (const g of grams) assert.ok(g.length <= 1432, `${g.length}`);
    assert.deepEqual(
      grams
        .map((g) => g.toString())
        .join('\n')
        .split('\n'),
      lines,
    );
    assert.deepEqual(
      packDatagrams(['x'.repeat(2000), 'y']).map((g) => g.length),
      [2000, 1],
    );
  });

  it('sends the exact datagrams to the agent, counters as deltas, tags applied', async () => {
    const udp = await startUdpReceiver();
    try {
      const c = ctx({ 'dogstatsd-host': `127.0.0.1:${udp.port}` }, { env: 'prod' });
      const sink = datadogSinkRegistration({ env: { DD_SERVICE: 'mysql' } }).create(c);
      const batch = (q: number): Metrics =>
        metrics({
          'status.global': [
            { name: 'queries', value: q, type: C },
            { name: 'threads_running', value: 3, type: G },
          ],
          autoinc: [
            {
              name: 'usage',
              value: 1 / (2 ** 63 - 1),
              type: G,
              group: { db: 'app', tbl: 't' },
              meta: { ts: '1' },
            },
          ],
          repl: [{ name: 'running', value: 1, type: MetricType.Bool }],
        });
      await sink.send(batch(100));
      await sink.send(batch(142.8));
      const grams = await udp.waitFor(2);
      await sink.close?.();
      const first = [
        'autoinc.usage:0.00000000000000000010842021724855044|g|#service:mysql,env:prod,db:app,tbl:t',
        'repl.running:1|g|#service:mysql,env:prod',
        'status.global.threads_running:3|g|#service:mysql,env:prod',
      ];
      assert.deepEqual(grams, [
        first.join('\n'),
        [first[0], first[1], 'status.global.queries:42|c|#service:mysql,env:prod', first[2]].join('\n'),
      ]);
      assert.match(c.status.map.get('datadog') ?? '', /^last sent 4 metrics at /);
    } finally {
      await udp.close();
    }
  });

  it('omits |# without tags and never fails when nobody listens', async () => {
    const udp = await startUdpReceiver();
    const port = udp.port;
    try {
      const sink = createDatadogSink(ctx({ 'dogstatsd-host': `127.0.0.1:${port}` }));
      await sink.send(metrics({ g: [{ name: 'a', value: 2, type: G }] }));
      assert.deepEqual(await udp.waitFor(1), ['g.a:2|g']);
      await udp.close();
      await assert.doesNotReject(sink.send(metrics({ g: [{ name: 'a', value: 2, type: G }] })));
      await sink.close?.();
    } finally {
      await udp.close().catch(() => undefined);
    }
  });
});
