/**
 * The built agent against a real MariaDB with the otlp, chronosphere and prom-pushgateway
 * sinks configured: the server's values and the monitor's tags (config-wide and its own)
 * arrive at a local OTLP receiver, a local Chronosphere receiver and a real Pushgateway,
 * and each sink reports its last send in /status/monitors.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import protobuf from 'protobufjs';
import { uncompress } from 'snappyjs';
import { startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { startAgent, type Agent, agentConfigHead } from '../helpers/agent.js';
import { startCaptureServer, type CaptureServer } from '../helpers/capture-http.js';
import { startPushgateway, type Pushgateway } from '../helpers/pushgateway.js';

const PASSWORD = 'Pw-e2e-push-SECRET';

// Just enough of the OTLP and OpenMetrics messages to read names, attributes and labels.
const root = protobuf.parse(`
syntax = "proto3";
message ExportMetricsServiceRequest { repeated ResourceMetrics resource_metrics = 1; }
message ResourceMetrics { Resource resource = 1; repeated ScopeMetrics scope_metrics = 2; }
message Resource { repeated KeyValue attributes = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue { oneof value { string string_value = 1; } }
message ScopeMetrics { repeated Metric metrics = 2; }
message Metric { string name = 1; Gauge gauge = 5; Sum sum = 7; }
message Gauge { repeated NumberDataPoint data_points = 1; }
message Sum { repeated NumberDataPoint data_points = 1; int32 aggregation_temporality = 2; bool is_monotonic = 3; }
message NumberDataPoint { fixed64 time_unix_nano = 3; double as_double = 4; }
message MetricSet { repeated MetricFamily metric_families = 1; }
message MetricFamily { string name = 1; repeated OmMetric metrics = 5; }
message OmMetric { repeated Label labels = 1; repeated MetricPoint metric_points = 2; }
message Label { string name = 1; string value = 2; }
message MetricPoint { GaugeValue gauge_value = 2; CounterValue counter_value = 3; }
message GaugeValue { double double_value = 1; }
message CounterValue { double double_value = 1; }
`).root;
const OtlpRequest = root.lookupType('ExportMetricsServiceRequest');
const MetricSet = root.lookupType('MetricSet');

interface Otlp {
  resourceMetrics: Array<{
    resource: { attributes: Array<{ key: string; value: { stringValue: string } }> };
    scopeMetrics: Array<{
      metrics: Array<{
        name: string;
        gauge?: { dataPoints: Array<{ asDouble: number }> };
        sum?: {
          dataPoints: Array<{ asDouble: number }>;
          aggregationTemporality: number;
          isMonotonic: boolean;
        };
      }>;
    }>;
  }>;
}
interface OmSet {
  metricFamilies: Array<{
    name: string;
    metrics: Array<{
      labels: Array<{ name: string; value: string }>;
      metricPoints: Array<{ gaugeValue?: { doubleValue: number }; counterValue?: { doubleValue: number } }>;
    }>;
  }>;
}

const PLAN = `fast:
  freq: 1s
  collect:
    status.global:
      metrics: [threads_connected, com_select, uptime]
    var.global:
      metrics: [max_connections]
`;

describe('otlp, chronosphere and prom-pushgateway sinks in the running agent', () => {
  let db: MariaDB;
  let agent: Agent;
  let otlp: CaptureServer;
  let chrono: CaptureServer;
  let gw: Pushgateway;

  before(async () => {
    [db, otlp, chrono, gw] = await Promise.all([
      startMariaDB(),
      startCaptureServer(),
      startCaptureServer(),
      startPushgateway(),
    ]);
    await db.createUser('sonde', PASSWORD, ['PROCESS, REPLICATION CLIENT ON *.*']);
    await db.query('SET GLOBAL max_connections = 345');
    agent = await startAgent(
      `${agentConfigHead(PASSWORD)}tags:
  env: e2e
  instance: "%{monitor.id}"
sinks:
  otlp:
    endpoint: ${otlp.base}
    header.x-api-key: k-123
  chronosphere:
    url: ${chrono.base}/openmetrics/write
  prom-pushgateway:
    addr: ${gw.base}
    send-timeout: 2s
monitors:
  - id: m1
    socket: ${db.socket}
    tags:
      team: dba
`,
      { files: { 'plan.yaml': PLAN } },
    );
  });

  after(async () => {
    await agent?.stop('SIGTERM');
    await Promise.all([db?.stop(), otlp?.close(), chrono?.close(), gw?.stop()]);
  });

  it('reports a last send for each sink in /status/monitors', async () => {
    const st = await agent.until(
      'all three sinks sent',
      async () => {
        const s = await agent.monitorsStatus();
        const m = s['m1'] ?? {};
        const keys = ['otlp', 'chronosphere', 'prom-pushgateway'];
        return keys.every((k) => (m[k] ?? '').startsWith('last sent ')) ? m : undefined;
      },
      20_000,
    );
    assert.match(
      st['otlp'] ?? '',
      /^last sent 4 metrics at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d$/,
    );
    assert.match(st['chronosphere'] ?? '', /^last sent 4 metrics at /);
    assert.match(st['prom-pushgateway'] ?? '', /^last sent metrics at /);
  });

  it('otlp: resource attributes carry the tags, the server value arrives, with the custom header', () => {
    const req = otlp.requests[0];
    assert.ok(req, 'no OTLP request');
    assert.equal(req.url, '/v1/metrics');
    assert.equal(req.headers['x-api-key'], 'k-123');
    const d = OtlpRequest.toObject(OtlpRequest.decode(req.body), { defaults: true, arrays: true }) as Otlp;
    const rm = d.resourceMetrics[0];
    assert.ok(rm);
    const attrs = Object.fromEntries(rm.resource.attributes.map((a) => [a.key, a.value.stringValue]));
    assert.deepEqual(attrs, {
      'service.name': 'sonde',
      'sonde.monitor.id': 'm1',
      env: 'e2e',
      instance: 'm1',
      team: 'dba',
    });
    const metrics = rm.scopeMetrics[0]?.metrics ?? [];
    const byName = new Map(metrics.map((m) => [m.name, m]));
    assert.deepEqual([...byName.keys()].sort(), [
      'status.global.com_select',
      'status.global.threads_connected',
      'status.global.uptime',
      'var.global.max_connections',
    ]);
    assert.equal(byName.get('var.global.max_connections')?.gauge?.dataPoints[0]?.asDouble, 345);
    assert.equal(byName.get('status.global.uptime')?.sum?.aggregationTemporality, 2);
    assert.equal(byName.get('status.global.uptime')?.sum?.isMonotonic, true);
  });

  it('chronosphere: every family is labelled with the tags', () => {
    const req = chrono.requests[0];
    assert.ok(req, 'no chronosphere request');
    assert.equal(req.url, '/openmetrics/write');
    const set = MetricSet.toObject(MetricSet.decode(uncompress(new Uint8Array(req.body))), {
      defaults: true,
      arrays: true,
    }) as OmSet;
    assert.deepEqual(set.metricFamilies.map((f) => f.name).sort(), [
      'mysql_status_com_select',
      'mysql_status_threads_connected',
      'mysql_status_uptime',
      'mysql_var_max_connections',
    ]);
    for (const f of set.metricFamilies) {
      assert.deepEqual(
        f.metrics[0]?.labels,
        [
          { name: 'env', value: 'e2e' },
          { name: 'instance', value: 'm1' },
          { name: 'team', value: 'dba' },
        ],
        f.name,
      );
    }
    const maxConn = set.metricFamilies.find((f) => f.name === 'mysql_var_max_connections');
    assert.equal(maxConn?.metrics[0]?.metricPoints[0]?.gaugeValue?.doubleValue, 345);
  });

  it('prom-pushgateway: the gateway holds the series with the tags as labels', async () => {
    const res = await fetch(`${gw.base}/metrics`);
    const lines = (await res.text()).split('\n');
    assert.ok(
      lines.includes(
        'mysql_global_variables_max_connections{env="e2e",instance="m1",job="blip",team="dba"} 345',
      ),
      lines.filter((l) => l.startsWith('mysql_')).join('\n'),
    );
    assert.ok(lines.includes('# TYPE mysql_global_status_commands_total counter'));
    assert.ok(
      lines.some((l) =>
        /^mysql_global_status_commands_total\{command="select",env="e2e",instance="m1",job="blip",team="dba"\} \d+$/.test(
          l,
        ),
      ),
    );
  });

  it('never shows the password in status or logs', async () => {
    const st = JSON.stringify(await agent.json('/status/monitors'));
    assert.ok(!st.includes(PASSWORD));
    assert.ok(!agent.stdout().includes(PASSWORD));
    assert.ok(!agent.stderr().includes(PASSWORD));
  });
});
