import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import protobuf from 'protobufjs';
import type { LogRecord, Records } from '../core/records.js';
import { MetricType } from '../core/metrics.js';
import type { Sink } from '../core/sink.js';
import { createLogSink, escapeLine, formatRecordLine } from './log.js';
import { createOtlpSink, otlpSinkRegistration, parseOtlpOptions } from './otlp.js';
import { datadogSinkRegistration } from './datadog.js';
import { DATADOG_LOGS_MAX_ENTRIES, datadogLogBodies, datadogLogsUrl } from './datadog-logs.js';
import { noopSink } from './noop.js';
import { SinkRegistry } from './registry.js';
import { withRetry } from './retry.js';
import {
  metricsAt,
  recorder,
  sinkContext,
  startHttpReceiver,
  until,
  type HttpReceiver,
} from './receivers.fixture.js';
import { decode as decodeMetrics, summarize } from './otlp.fixture.js';

// The logs messages a receiver reads, written from opentelemetry-proto (collector/logs/v1,
// logs/v1), independent of the sink's encoder.
const LOGS_PROTO = `
syntax = "proto3";
package otlplogs;
message ExportLogsServiceRequest { repeated ResourceLogs resource_logs = 1; }
message ResourceLogs { Resource resource = 1; repeated ScopeLogs scope_logs = 2; }
message Resource { repeated KeyValue attributes = 1; }
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; } }
message KeyValue { string key = 1; AnyValue value = 2; }
message InstrumentationScope { string name = 1; string version = 2; }
message ScopeLogs { InstrumentationScope scope = 1; repeated LogRecord log_records = 2; }
message LogRecord {
  fixed64 time_unix_nano = 1; fixed64 observed_time_unix_nano = 11; int32 severity_number = 2;
  string severity_text = 3; AnyValue body = 5; repeated KeyValue attributes = 6; string event_name = 12;
}
`;
const LogsRequest = protobuf.parse(LOGS_PROTO).root.lookupType('otlplogs.ExportLogsServiceRequest');

interface JsonLogs {
  resourceLogs: Array<{
    resource: { attributes: Array<{ key: string; value: Record<string, unknown> }> };
    scopeLogs: Array<{
      scope: { name: string };
      logRecords: Array<{
        timeUnixNano: string;
        severityNumber: number;
        severityText: string;
        eventName: string;
        body?: { stringValue: string };
        attributes: Array<{ key: string; value: Record<string, unknown> }>;
      }>;
    }>;
  }>;
}

function decodeLogs(body: Uint8Array): JsonLogs {
  return LogsRequest.toObject(LogsRequest.decode(body), {
    longs: String,
    defaults: false,
    arrays: true,
  }) as JsonLogs;
}

const T = Date.UTC(2026, 10, 27, 9, 0, 0);

const TOP: LogRecord = {
  event: 'db.server.top_query',
  time: T,
  severity: 'info',
  attributes: {
    'db.system.name': 'mysql',
    'db.query.text': 'SELECT * FROM t WHERE a = ?',
    'mysql.events_statements_summary_by_digest.count_star': 1000,
    'mysql.events_statements_summary_by_digest.sum_timer_wait': 0.25,
    'sonde.other': false,
  },
};

function batch(records: Record<string, LogRecord[]>): Records {
  return { monitorId: 'db1', plan: 'p', level: 'kpi', interval: 3, begin: new Date(T), records };
}

void describe('log sink records', () => {
  void it('prints one line per record, control characters escaped', async () => {
    const out: string[] = [];
    const sink = createLogSink({ write: (t: string) => out.push(t) });
    const evil: LogRecord = {
      ...TOP,
      body: 'two\nlines\r\tand "quotes" \\ \u0000',
      attributes: { 'db.query.text': 'SELECT 1\n-- x', n: 3 },
    };
    await sink.sendRecords?.(batch({ 'query.top': [TOP, evil] }));
    assert.equal(out.length, 1);
    const lines = (out[0] ?? '').split('\n');
    assert.equal(lines.length, 3); // two records and the final newline
    assert.equal(lines[2], '');
    assert.equal(
      lines[1],
      '# record 2026-11-27T09:00:00.000Z db1 query.top db.server.top_query info db.query.text="SELECT 1\\n-- x" n=3 body="two\\nlines\\r\\tand \\"quotes\\" \\\\ \\u0000"',
    );
    assert.match(lines[0] ?? '', /mysql\.events_statements_summary_by_digest\.count_star=1000 /);
  });

  void it('escapes line separators too', () => {
    assert.equal(escapeLine('a\u2028b\u0085c'), 'a\\u2028b\\u0085c');
    assert.ok(!formatRecordLine('m\nx', 'd', TOP).includes('\n'));
  });
});

void describe('otlp sink records', () => {
  let rx: HttpReceiver;
  before(async () => {
    rx = await startHttpReceiver();
  });
  after(async () => {
    await rx.close();
  });

  void it('posts OTLP logs in protobuf to /v1/logs with event names and typed attributes', async () => {
    rx.requests.length = 0;
    const sink = createOtlpSink(parseOtlpOptions({ endpoint: rx.url }), recorder());
    await sink.sendRecords?.(
      batch({ 'query.top': [TOP], 'lock.wait': [{ ...TOP, event: 'x', body: 'b', severity: 'warn' }] }),
    );
    const [req] = await rx.waitFor(1);
    assert.equal(req?.url, '/v1/logs');
    assert.equal(req?.headers['content-type'], 'application/x-protobuf');
    const d = decodeLogs(req?.body ?? new Uint8Array());
    const rl = d.resourceLogs[0];
    assert.deepEqual(rl?.resource.attributes.find((a) => a.key === 'sonde.monitor.id')?.value, {
      stringValue: 'db1',
    });
    const recs = rl?.scopeLogs[0]?.logRecords ?? [];
    assert.equal(rl?.scopeLogs[0]?.scope.name, 'sonde');
    assert.deepEqual(
      recs.map((r) => [r.eventName, r.severityNumber, r.severityText, r.timeUnixNano, r.body?.stringValue]),
      [
        ['x', 13, 'WARN', `${T}000000`, 'b'],
        ['db.server.top_query', 9, 'INFO', `${T}000000`, undefined],
      ],
    );
    const attrs = Object.fromEntries((recs[1]?.attributes ?? []).map((a) => [a.key, a.value]));
    assert.deepEqual(attrs, {
      'sonde.domain': { stringValue: 'query.top' },
      'db.system.name': { stringValue: 'mysql' },
      'db.query.text': { stringValue: 'SELECT * FROM t WHERE a = ?' },
      'mysql.events_statements_summary_by_digest.count_star': { intValue: '1000' },
      'mysql.events_statements_summary_by_digest.sum_timer_wait': { doubleValue: 0.25 },
      'sonde.other': { boolValue: false },
    });
  });

  void it('speaks OTLP/JSON for records and metrics with protocol http/json', async () => {
    rx.requests.length = 0;
    const sink = createOtlpSink(parseOtlpOptions({ endpoint: rx.url, protocol: 'http/json' }), recorder());
    await sink.sendRecords?.(batch({ 'query.top': [TOP] }));
    await sink.send(
      metricsAt(
        {
          'status.global': [
            { name: 'queries', value: 7, type: MetricType.CumulativeCounter },
            { name: 'threads_running', value: 1.5, type: MetricType.Gauge, group: { b: '2', a: '1' } },
          ],
        },
        T,
        5,
      ),
    );
    const [logs, metrics] = await rx.waitFor(2);
    assert.equal(logs?.url, '/v1/logs');
    assert.equal(logs?.headers['content-type'], 'application/json');
    const j = JSON.parse(logs?.body.toString('utf8') ?? '') as JsonLogs;
    const rec = j.resourceLogs[0]?.scopeLogs[0]?.logRecords[0];
    assert.equal(rec?.eventName, 'db.server.top_query');
    assert.equal(rec?.timeUnixNano, `${T}000000`);
    assert.deepEqual(
      rec?.attributes.find((a) => a.key === 'mysql.events_statements_summary_by_digest.count_star')?.value,
      { intValue: '1000' },
    );
    assert.equal(metrics?.url, '/v1/metrics');
    assert.equal(metrics?.headers['content-type'], 'application/json');
    // The JSON carries what the protobuf carries: decode both into the same summary.
    const proto = createOtlpSink(parseOtlpOptions({ endpoint: rx.url }), recorder());
    const m = metricsAt(
      {
        'status.global': [
          { name: 'queries', value: 7, type: MetricType.CumulativeCounter },
          { name: 'threads_running', value: 1.5, type: MetricType.Gauge, group: { b: '2', a: '1' } },
        ],
      },
      T,
      5,
    );
    await proto.send(m);
    const [, , pb] = await rx.waitFor(3);
    const fromJson = JSON.parse(metrics?.body.toString('utf8') ?? '') as Parameters<typeof summarize>[0];
    const viaProto = summarize(decodeMetrics(pb?.body ?? new Uint8Array()));
    // The JSON enum is a number; the decoder's is a name.
    const jsonSummary = summarize(fromJson).map((s) => ({
      ...s,
      unit: s.unit ?? '', // proto3 JSON omits a default
      kind: s.kind.replace('sum 2', 'sum AGGREGATION_TEMPORALITY_CUMULATIVE'),
    }));
    assert.deepEqual(jsonSummary, viaProto);
  });

  void it('takes http/json from OTEL_EXPORTER_OTLP_PROTOCOL and the logs URL from the environment', () => {
    const o = parseOtlpOptions(
      {},
      { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' },
    );
    assert.equal(o.protocol, 'http/json');
    assert.equal(o.url, 'http://c:4318/v1/metrics');
    assert.equal(o.logsUrl, 'http://c:4318/v1/logs');
    const full = parseOtlpOptions({}, { OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: 'http://l:1/x' });
    assert.equal(full.logsUrl, 'http://l:1/x');
    assert.throws(() => parseOtlpOptions({}, { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }), {
      message: 'invalid OTEL_EXPORTER_OTLP_PROTOCOL: grpc: the otlp sink sends http/protobuf or http/json',
    });
  });

  void it('retries records through the retry buffer like metrics', async () => {
    rx.requests.length = 0;
    let n = 0;
    rx.reply = () => ({ status: n++ === 0 ? 503 : 200, body: '{}' });
    const r = recorder();
    const sink = otlpSinkRegistration({}).create({
      ...r,
      sinkName: 'otlp',
      options: { endpoint: rx.url, 'send-retry-wait': '10ms' },
    });
    await sink.sendRecords?.(batch({ 'query.top': [TOP] }));
    await rx.waitFor(2);
    await until(
      () => r.keys.get('otlp') !== undefined && /last sent 1 records/.test(r.keys.get('otlp') ?? ''),
    );
    assert.equal(rx.requests[0]?.url, '/v1/logs');
    assert.equal(rx.requests[1]?.url, '/v1/logs');
    assert.match(r.errors[0] ?? '', /sink-send-error db1 otlp :otlp receiver HTTP status 503/);
    await sink.close?.();
    rx.reply = () => ({ status: 202, body: '{}' });
  });
});

void describe('datadog sink records', () => {
  let rx: HttpReceiver;
  before(async () => {
    rx = await startHttpReceiver();
  });
  after(async () => {
    await rx.close();
  });

  void it('posts a JSON array to the logs intake with DD-API-KEY', async () => {
    rx.requests.length = 0;
    const ctx = sinkContext(
      'datadog',
      { 'api-key-auth': 'k-123', 'app-key-auth': 'a-1', 'api-compress': 'no' },
      { env: 'prod' },
    );
    const sink = datadogSinkRegistration({
      logsUrl: `${rx.url}/api/v2/logs`,
      apiUrl: `${rx.url}/api/v2/series`,
    }).create(ctx);
    await sink.sendRecords?.(batch({ 'query.top': [TOP] }));
    const [req] = await rx.waitFor(1);
    assert.equal(req?.url, '/api/v2/logs');
    assert.equal(req?.headers['dd-api-key'], 'k-123');
    assert.equal(req?.headers['content-type'], 'application/json');
    const entries = JSON.parse(req?.body.toString('utf8') ?? '') as Array<Record<string, unknown>>;
    assert.equal(entries.length, 1);
    assert.deepEqual(
      { ...entries[0] },
      {
        ...TOP.attributes,
        ddsource: 'sonde',
        service: 'sonde',
        ddtags: 'env:prod,monitor_id:db1',
        message: 'db.server.top_query',
        timestamp: T,
        status: 'info',
        'evt.name': 'db.server.top_query',
        'sonde.domain': 'query.top',
      },
    );
    await sink.close?.();
  });

  void it('splits at 1000 entries per request and names the intake of DD_SITE', () => {
    const many = Array.from({ length: 2500 }, () => TOP);
    const bodies = datadogLogBodies(batch({ 'query.top': many }), {});
    assert.deepEqual(
      bodies.map((b) => (JSON.parse(b) as unknown[]).length),
      [DATADOG_LOGS_MAX_ENTRIES, DATADOG_LOGS_MAX_ENTRIES, 500],
    );
    assert.equal(
      datadogLogsUrl({ DD_SITE: 'datadoghq.eu' }),
      'https://http-intake.logs.datadoghq.eu/api/v2/logs',
    );
  });
});

void describe('records and sink registrations', () => {
  void it('gives sendRecords only to sinks whose registration declares records', async () => {
    const reg = new SinkRegistry();
    const plain: Sink = { name: 'x', send: async () => undefined };
    reg.register({ name: 'plain', description: '', create: () => plain });
    reg.register({
      name: 'liar',
      description: '',
      create: () => ({ ...plain, sendRecords: async () => undefined }),
    });
    reg.register({ name: 'claims', description: '', records: true, create: () => plain });
    const ctx = sinkContext('x');
    assert.equal('sendRecords' in (await reg.create('plain', ctx)), false);
    await assert.rejects(reg.create('liar', ctx), /does not declare records but the sink has sendRecords/);
    await assert.rejects(reg.create('claims', ctx), /declares records but the sink has no sendRecords/);
    assert.equal(noopSink.records, undefined);
  });

  void it('a retry-wrapped sink takes records only when its inner sink does', () => {
    const r = recorder();
    const plain = withRetry(
      { name: 'p', send: async () => undefined },
      { monitorId: 'db1', events: r.events },
    );
    assert.equal(plain.sendRecords, undefined);
    const rec = withRetry(
      { name: 'r', send: async () => undefined, sendRecords: async () => undefined },
      { monitorId: 'db1', events: r.events },
    );
    assert.equal(typeof rec.sendRecords, 'function');
  });
});
