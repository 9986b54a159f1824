import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import protobuf from 'protobufjs';
import { uncompress } from 'snappyjs';
import { MetricType } from '../core/metrics.js';
import type { Metrics } from '../core/metrics.js';
import type { CaptureServer } from '../../test/helpers/capture-http.js';
import {
  chronosphereSinkRegistration,
  createChronosphereSink,
  parseChronosphereOptions,
} from './chronosphere.js';
import { captureServerPerSuite, recorder } from './receivers.fixture.js';
import { RetrySink } from './retry.js';

// The subset of the OpenMetrics protobuf schema the sink writes, declared here independently
// of the encoder (google.protobuf.Timestamp declared locally: same wire format).
const OPENMETRICS_PROTO = `
syntax = "proto3";
package openmetrics;
message MetricSet { repeated MetricFamily metric_families = 1; }
enum MetricType { UNKNOWN = 0; GAUGE = 1; COUNTER = 2; STATE_SET = 3; INFO = 4; HISTOGRAM = 5; GAUGE_HISTOGRAM = 6; SUMMARY = 7; }
message MetricFamily { string name = 1; MetricType type = 2; string unit = 3; string help = 4; repeated Metric metrics = 5; }
message Metric { repeated Label labels = 1; repeated MetricPoint metric_points = 2; }
message Label { string name = 1; string value = 2; }
message MetricPoint {
  oneof value { GaugeValue gauge_value = 2; CounterValue counter_value = 3; }
  Timestamp timestamp = 8;
}
message GaugeValue { oneof value { double double_value = 1; int64 int_value = 2; } }
message CounterValue { oneof total { double double_value = 1; uint64 int_value = 2; } Timestamp created = 3; }
message Timestamp { int64 seconds = 1; int32 nanos = 2; }
`;
const MetricSet = protobuf.parse(OPENMETRICS_PROTO).root.lookupType('openmetrics.MetricSet');

interface Decoded {
  metricFamilies: Array<{
    name: string;
    type: string;
    unit: string;
    help: string;
    metrics: Array<{
      labels: Array<{ name: string; value: string }>;
      metricPoints: Array<{
        value?: string;
        gaugeValue?: { doubleValue?: number };
        counterValue?: { doubleValue?: number };
        timestamp: { seconds: string; nanos: number };
      }>;
    }>;
  }>;
}

/** Snappy block format → MetricSet, checking it is the block (not the framed) format. */
function decodeBody(body: Buffer): Decoded {
  // Framed snappy starts with the stream identifier chunk 0xff 0x06 0x00 0x00 "sNaPpY";
  // block format starts with the uncompressed length as a varint.
  assert.notEqual(body[0], 0xff, 'snappy framed format, expected block format');
  const raw = uncompress(new Uint8Array(body));
  let len = 0;
  let shift = 0;
  for (let i = 0; ; i++) {
    const b = body[i] ?? 0;
    len += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if ((b & 0x80) === 0) break;
  }
  assert.equal(len, raw.length);
  return MetricSet.toObject(MetricSet.decode(raw), {
    longs: String,
    enums: String,
    defaults: true,
    arrays: true,
    oneofs: true,
  }) as Decoded;
}

const BEGIN = new Date('2024-05-01T12:00:05.123Z');

function sample(): Metrics {
  return {
    begin: BEGIN,
    end: new Date(BEGIN.getTime() + 40),
    monitorId: 'db1',
    plan: 'default-mysql',
    level: 'kpi',
    interval: 7,
    state: 'active',
    values: {
      'var.global': [{ name: 'max_connections', value: 151, type: MetricType.Gauge }],
      'status.global': [
        { name: 'queries', value: 5382, type: MetricType.CumulativeCounter },
        { name: 'threads_running', value: 3, type: MetricType.Gauge },
        { name: 'com_select', value: 9, type: MetricType.CumulativeCounter },
        { name: 'wsrep.Odd-Name', value: 0.5, type: MetricType.Gauge },
        { name: 'slow_queries_delta', value: 2, type: MetricType.DeltaCounter },
      ],
      innodb: [
        {
          name: 'trx_rseg_history_len',
          value: 0,
          type: MetricType.Gauge,
          meta: { subsystem: 'transaction', ts: '1' },
        },
      ],
      'size.table': [
        { name: 'bytes', value: 16384, type: MetricType.Gauge, group: { db: 'app', tbl: 'users' } },
      ],
    },
  };
}

/** One family per point as `name type labels kind=value @seconds.nanos`. */
function summary(d: Decoded): string[] {
  return d.metricFamilies.map((f) => {
    assert.equal(f.metrics.length, 1);
    const m = f.metrics[0];
    assert.ok(m);
    assert.equal(m.metricPoints.length, 1);
    const p = m.metricPoints[0];
    assert.ok(p);
    const labels = m.labels.map((l) => `${l.name}=${l.value}`).join(',');
    const v =
      p.value === 'gaugeValue'
        ? `gauge=${p.gaugeValue?.doubleValue}`
        : `counter=${p.counterValue?.doubleValue}`;
    return `${f.name} ${f.type}${f.unit}${f.help} {${labels}} ${v} @${p.timestamp.seconds}.${p.timestamp.nanos}`;
  });
}

describe('chronosphere options', () => {
  it('defaults, Blip booleans and unknown keys', () => {
    assert.deepEqual(parseChronosphereOptions({}), {
      url: 'http://127.0.0.1:3030/openmetrics/write',
      strictTr: false,
      debug: false,
    });
    assert.deepEqual(
      parseChronosphereOptions({ url: 'http://c:3030/x', 'strict-tr': 'Yes', debug: 'enabled' }),
      {
        url: 'http://c:3030/x',
        strictTr: true,
        debug: true,
      },
    );
    assert.equal(parseChronosphereOptions({ 'strict-tr': 'on' }).strictTr, false);
    assert.throws(() => parseChronosphereOptions({ addr: 'x' }), { message: 'invalid option: addr' });
  });

  it('accepts the retry options through the registration and refuses them nowhere else', () => {
    const r = recorder();
    const sink = chronosphereSinkRegistration().create({
      ...r,
      sinkName: 'chronosphere',
      options: { 'buffer-size': '5', 'send-timeout': '2s', 'send-retry-wait': '10ms' },
    });
    assert.ok(sink instanceof RetrySink);
    assert.equal(sink.name, 'chronosphere');
    assert.deepEqual(sink.config, {
      bufferSize: 5,
      sendTimeoutMs: 2000,
      sendRetryWaitMs: 10,
      backoffCapMs: 10,
    });
    assert.throws(() => parseChronosphereOptions({ 'buffer-size': '5' }), {
      message: 'invalid option: buffer-size',
    });
  });
});

describe('chronosphere sink against a local receiver', () => {
  let rx: CaptureServer;
  captureServerPerSuite((server) => (rx = server));

  it('POSTs a snappy MetricSet: Blip names, tags as labels, gauge/counter values, begin as time', async () => {
    rx.requests.length = 0;
    const r = recorder({ tags: { env: 'prod', az: 'us-east-1a' } });
    const sink = createChronosphereSink(parseChronosphereOptions({ url: `${rx.base}/openmetrics/write` }), r);
    assert.equal(sink.name, 'chronosphere');
    await sink.send(sample());
    assert.equal(rx.requests.length, 1);
    const req = rx.requests[0];
    assert.ok(req);
    assert.equal(req.method, 'POST');
    assert.equal(req.url, '/openmetrics/write');
    assert.equal(req.headers['content-type'], 'application/octet-stream');
    assert.equal(req.headers['content-encoding'], undefined);
    // Domains ascending; delta counters and meta dropped; ts ignored; size.table (a sonde
    // domain) with its Prometheus name and its group as labels.
    assert.deepEqual(summary(decodeBody(req.body)), [
      'mysql_innodb_trx_rseg_history_len UNKNOWN {az=us-east-1a,env=prod} gauge=0 @1714564805.123000000',
      'mysql_size_table_bytes UNKNOWN {az=us-east-1a,db=app,env=prod,tbl=users} gauge=16384 @1714564805.123000000',
      'mysql_status_queries UNKNOWN {az=us-east-1a,env=prod} counter=5382 @1714564805.123000000',
      'mysql_status_threads_running UNKNOWN {az=us-east-1a,env=prod} gauge=3 @1714564805.123000000',
      'mysql_status_com_select UNKNOWN {az=us-east-1a,env=prod} counter=9 @1714564805.123000000',
      'mysql_status_wsrep_odd_name UNKNOWN {az=us-east-1a,env=prod} gauge=0.5 @1714564805.123000000',
      'mysql_var_max_connections UNKNOWN {az=us-east-1a,env=prod} gauge=151 @1714564805.123000000',
    ]);
    assert.deepEqual(r.history[0], 'chronosphere: sending metrics from 2024-05-01T12:00:05.123+00:00');
    assert.match(
      r.keys.get('chronosphere') ?? '',
      /^last sent 7 metrics at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d$/,
    );
    assert.deepEqual(r.errors, []);
  });

  it('sends no labels without tags and a whole-second time without nanos', async () => {
    rx.requests.length = 0;
    const r = recorder();
    const sink = createChronosphereSink(parseChronosphereOptions({ url: rx.base }), r);
    const m = sample();
    m.begin = new Date('2024-05-01T12:00:05Z');
    m.values = { 'status.global': [{ name: 'uptime', value: 10, type: MetricType.CumulativeCounter }] };
    await sink.send(m);
    assert.equal(rx.requests[0]?.url, '/');
    assert.deepEqual(summary(decodeBody(rx.requests[0]?.body ?? Buffer.alloc(0))), [
      'mysql_status_uptime UNKNOWN {} counter=10 @1714564805.0',
    ]);
  });

  it('sends sonde domains with units converted; a tag named like a series label becomes tag_<name>', async () => {
    rx.requests.length = 0;
    const r = recorder({ tags: { db: 'primary-1' } });
    const sink = createChronosphereSink(parseChronosphereOptions({ url: rx.base }), r);
    const m = sample();
    m.values = {
      'repl.lag': [{ name: 'current', value: 1500, type: MetricType.Gauge }],
      'size.database': [{ name: 'bytes', value: 4096, type: MetricType.Gauge, group: { db: 'app' } }],
      'wait.io.table': [
        { name: 'count_read', value: 3, type: MetricType.DeltaCounter, group: { db: 'a', tbl: 't' } },
      ],
    };
    await sink.send(m);
    assert.deepEqual(summary(decodeBody(rx.requests[0]?.body ?? Buffer.alloc(0))), [
      'mysql_repl_lag_current_seconds UNKNOWN {db=primary-1} gauge=1.5 @1714564805.123000000',
      'mysql_size_database_bytes UNKNOWN {db=app,tag_db=primary-1} gauge=4096 @1714564805.123000000',
    ]);
  });

  it('with strict-tr fails on a domain without translator before sending anything', async () => {
    rx.requests.length = 0;
    const r = recorder();
    const sink = createChronosphereSink(parseChronosphereOptions({ url: rx.base, 'strict-tr': 'true' }), r);
    const m = sample();
    m.values['exporter.slave_status'] = [
      { name: 'mysql_slave_status_sql_delay', value: 0, type: MetricType.Unknown },
    ];
    await assert.rejects(sink.send(m), { message: 'no translator for exporter.slave_status' });
    assert.equal(rx.requests.length, 0);
    assert.match(
      r.keys.get('chronosphere') ?? '',
      /^error on last send at \S+: no translator for exporter\.slave_status$/,
    );
    assert.deepEqual(r.errors, [], 'the retry decorator logs the error, not the sink');
  });

  it('with debug prints the set instead of sending it', async () => {
    rx.requests.length = 0;
    const r = recorder({ tags: { env: 'prod' } });
    const lines: string[] = [];
    const sink = createChronosphereSink(parseChronosphereOptions({ url: rx.base, debug: 'yes' }), {
      ...r,
      out: { write: (t: string) => lines.push(t) },
    });
    const m = sample();
    m.values = { 'var.global': [{ name: 'port', value: 3306, type: MetricType.Gauge }] };
    await sink.send(m);
    assert.equal(rx.requests.length, 0);
    assert.deepEqual(lines, [
      'chronosphere db1: metric_families:{name:"mysql_var_port" metrics:{labels:{name:"env" value:"prod"} ' +
        'metric_points:{gauge_value:{double_value:3306} timestamp:{seconds:1714564805 nanos:123000000}}}}\n',
    ]);
    assert.match(r.keys.get('chronosphere') ?? '', /^last sent 1 metrics at /);
  });

  it('reports a non-2xx answer with code and body in the error and in status', async () => {
    rx.requests.length = 0;
    const r = recorder();
    const sink = createChronosphereSink(parseChronosphereOptions({ url: rx.base }), r);
    rx.answer({ status: 400, body: 'decode error: snappy\n' });
    const text = 'chronocollector HTTP response code 400, expected 2xx: decode error: snappy';
    await assert.rejects(sink.send(sample()), { message: text });
    assert.deepEqual(r.errors, []);
    assert.match(r.keys.get('chronosphere') ?? '', new RegExp(`^error on last send at \\S+: ${text}$`));
    rx.answer({ status: 302, body: '' });
    await assert.rejects(sink.send(sample()), {
      message: 'chronocollector HTTP response code 302, expected 2xx: ',
    });
  });

  it('through the registration: Retry delivers to the collector, the monitor tags included', async () => {
    rx.requests.length = 0;
    const r = recorder({ monitorId: 'db9', tags: { team: 'dba' } });
    const sink = chronosphereSinkRegistration().create({
      ...r,
      sinkName: 'chronosphere',
      options: { url: rx.base, 'send-timeout': '2s' },
    });
    assert.ok(sink instanceof RetrySink);
    await sink.send(sample());
    await sink.idle();
    assert.equal(rx.requests.length, 1);
    const d = decodeBody(rx.requests[0]?.body ?? Buffer.alloc(0));
    assert.deepEqual(d.metricFamilies[0]?.metrics[0]?.labels, [{ name: 'team', value: 'dba' }]);
    await sink.close();
  });
});
