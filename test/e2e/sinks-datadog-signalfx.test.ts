/**
 * The built agent against a real MariaDB with the datadog (API and DogStatsD) and signalfx
 * sinks. Their endpoints are fixed https URLs (api.datadoghq.com, ingest.signalfx.com), so
 * the agent reaches them the way a user behind a proxy would: `http.proxy` points at a
 * local CONNECT proxy that tunnels every host to one local HTTPS intake, whose certificate
 * (for both names) is signed by a throwaway CA the agent trusts via NODE_EXTRA_CA_CERTS.
 *
 * Checks: the monitor tags reach both services as tags/dimensions, the server's values
 * arrive, counters go to Datadog as deltas, and /status/monitors shows each sink's last
 * send and the last error of a failing one.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs';
import { startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { makeTlsFiles, type TlsFiles } from '../helpers/tls.js';
import { startAgent, type Agent } from '../helpers/agent.js';

const PASSWORD = 'Pw-e2e-dd-SECRET';
const DD_API = 'dd-api-e2e-key';
const DD_APP = 'dd-app-e2e-key';

const Upload = protobuf
  .parse(
    `syntax = "proto2";
message Datum { optional string strValue = 1; optional double doubleValue = 2; optional int64 intValue = 3; }
message Dimension { optional string key = 1; optional string value = 2; }
message DataPoint { optional string source = 1; optional string metric = 2; optional int64 timestamp = 3;
  optional Datum value = 4; optional int32 metricType = 5; repeated Dimension dimensions = 6; }
message DataPointUploadMessage { repeated DataPoint datapoints = 1; }`,
  )
  .root.lookupType('DataPointUploadMessage');

interface SfxPoint {
  metric: string;
  timestamp: string;
  value: { doubleValue?: number; intValue?: string };
  metricType: number;
  dimensions: Array<{ key: string; value: string }>;
}
interface DdSeries {
  metric: string;
  type: number;
  points: Array<{ timestamp: number; value: number }>;
  tags?: string[];
  resources?: Array<{ name: string; type: string }>;
}
interface Req {
  host: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

const PLAN = `fast:
  freq: 1s
  collect:
    status.global:
      metrics: [threads_connected, com_select]
    var.global:
      metrics: [max_connections]
`;

describe('datadog and signalfx sinks in the running agent', () => {
  let db: MariaDB;
  let agent: Agent;
  let certs: TlsFiles;
  let intake: https.Server;
  let proxy: http.Server;
  let udp: dgram.Socket;
  const tunnels = new Set<net.Socket>();
  const connects: string[] = [];
  const requests: Req[] = [];
  const datagrams: string[] = [];

  before(async () => {
    certs = makeTlsFiles(['DNS:api.datadoghq.com', 'DNS:ingest.signalfx.com']);
    intake = https.createServer(
      { cert: readFileSync(certs.cert), key: readFileSync(certs.key) },
      (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const raw = Buffer.concat(chunks);
          const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
          const host = req.headers.host ?? '';
          requests.push({ host, url: req.url ?? '', headers: req.headers, body });
          if (host.startsWith('ingest.signalfx.com')) {
            const ok = req.headers['x-sf-token'] === 'sfx-good';
            res.writeHead(ok ? 200 : 401, { 'Content-Type': 'application/json' });
            res.end(ok ? '"OK"' : '{"message":"invalid token"}');
          } else {
            res.writeHead(202, { 'Content-Type': 'application/json' });
            res.end('{"errors":[]}');
          }
        });
      },
    );
    await new Promise<void>((resolve) => intake.listen(0, '127.0.0.1', resolve));
    const intakePort = (intake.address() as AddressInfo).port;
    // Forward proxy: every CONNECT, whatever the host, is tunnelled to the intake.
    proxy = http.createServer((_req, res) => {
      res.writeHead(405);
      res.end();
    });
    proxy.on('connect', (req: http.IncomingMessage, client: net.Socket) => {
      connects.push(req.url ?? '');
      const up = net.connect(intakePort, '127.0.0.1', () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        up.pipe(client);
        client.pipe(up);
      });
      tunnels.add(client).add(up);
      up.on('error', () => client.destroy());
      client.on('error', () => up.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    udp = dgram.createSocket('udp4');
    udp.on('message', (m) => datagrams.push(m.toString()));
    await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));

    db = await startMariaDB();
    await db.createUser('sonde', PASSWORD, ['PROCESS, REPLICATION CLIENT ON *.*']);
    await db.query('SET GLOBAL max_connections = 345');
    agent = await startAgent(
      `api:
  bind: {{API}}
http:
  proxy: http://127.0.0.1:${(proxy.address() as AddressInfo).port}
mysql:
  username: sonde
  password: ${PASSWORD}
plans:
  files: [plan.yaml]
tags:
  env: e2e
  instance: "%{monitor.id}"
monitors:
  - id: m1
    socket: ${db.socket}
    tags:
      host: db1.local
    sinks:
      datadog:
        api-key-auth: ${DD_API}
        app-key-auth: ${DD_APP}
      signalfx:
        auth-token: sfx-good
  - id: m2
    socket: ${db.socket}
    sinks:
      datadog:
        dogstatsd-host: 127.0.0.1:${udp.address().port}
  - id: m3
    socket: ${db.socket}
    sinks:
      signalfx:
        auth-token: sfx-bad
        send-timeout: 500ms
`,
      {
        files: { 'plan.yaml': PLAN },
        env: { NODE_EXTRA_CA_CERTS: certs.ca, DD_SITE: '', DD_ENV: '', DD_SERVICE: '', DD_VERSION: '' },
      },
    );
  });

  after(async () => {
    await agent?.stop('SIGTERM');
    for (const t of tunnels) t.destroy();
    intake?.closeAllConnections();
    proxy?.closeAllConnections();
    await Promise.all([
      db?.stop(),
      new Promise<void>((resolve) => (intake ? intake.close(() => resolve()) : resolve())),
      new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve())),
      new Promise<void>((resolve) => (udp ? udp.close(() => resolve()) : resolve())),
    ]);
    if (certs) rmSync(certs.dir, { recursive: true, force: true });
  });

  function ddSeries(): DdSeries[] {
    return requests
      .filter((r) => r.host.startsWith('api.datadoghq.com'))
      .flatMap((r) => (JSON.parse(r.body.toString()) as { series: DdSeries[] }).series);
  }

  it('shows each sink last send, and the failing sink last error, in /status/monitors', async () => {
    const st = await agent.until(
      'sinks sent and m3 failed',
      async () => {
        const s = await agent.monitorsStatus();
        const ok =
          (s['m1']?.['datadog'] ?? '').startsWith('last sent ') &&
          (s['m1']?.['signalfx'] ?? '').startsWith('last sent ') &&
          (s['m2']?.['datadog'] ?? '').startsWith('last sent ') &&
          s['m3']?.['error:signalfx-send'] !== undefined &&
          ddSeries().some((x) => x.metric === 'status.global.com_select') &&
          datagrams.some((d) => d.includes('status.global.com_select:'));
        return ok ? s : undefined;
      },
      30_000,
    );
    assert.match(
      st['m1']?.['datadog'] ?? '',
      /^last sent \d+ metrics at \d{4}-\d\d-\d\dT[\d:]{8}\.\d{3}[+-]\d\d:\d\d$/,
    );
    assert.match(st['m1']?.['signalfx'] ?? '', /^last sent 3 metrics at /);
    assert.match(
      st['m3']?.['error:signalfx-send'] ?? '',
      /^at \S+: signalfx :invalid status code 401: \{"message":"invalid token"\} \(\d+ buffered\)$/,
    );
    assert.equal(st['m1']?.['error:signalfx-send'], undefined);
    assert.match(agent.stderr(), /\[sink-send-error +\] \[m3\] ERROR: signalfx :invalid status code 401/);
  });

  it('datadog API: series through the proxy with both keys, tags, host resource, counters as deltas', () => {
    assert.ok(connects.includes('api.datadoghq.com:443'), connects.join(','));
    const req = requests.find((r) => r.host.startsWith('api.datadoghq.com'));
    assert.ok(req);
    assert.equal(req.url, '/api/v2/series');
    assert.equal(req.headers['dd-api-key'], DD_API);
    assert.equal(req.headers['dd-application-key'], DD_APP);
    assert.equal(req.headers['content-encoding'], 'gzip');
    const series = ddSeries();
    const tags = ['env:e2e', 'host:db1.local', 'instance:m1'];
    const resources = [{ name: 'db1.local', type: 'host' }];
    const maxConn = series.find((s) => s.metric === 'var.global.max_connections');
    assert.deepEqual(
      { ...maxConn, points: maxConn?.points.map((p) => p.value) },
      {
        metric: 'var.global.max_connections',
        type: 3,
        points: [345],
        tags,
        resources,
      },
    );
    const selects = series.filter((s) => s.metric === 'status.global.com_select');
    assert.ok(selects.length >= 1);
    for (const s of selects) {
      assert.equal(s.type, 1);
      assert.deepEqual(s.tags, tags);
      // A delta per second of an idle server, not the running total.
      const v = s.points[0]?.value ?? -1;
      assert.ok(v >= 0 && v < 50, `com_select delta ${v}`);
    }
  });

  it('signalfx: datapoints through the proxy with the token and the tags as dimensions', () => {
    assert.ok(connects.includes('ingest.signalfx.com:443'), connects.join(','));
    const req = requests.find(
      (r) => r.host.startsWith('ingest.signalfx.com') && r.headers['x-sf-token'] === 'sfx-good',
    );
    assert.ok(req);
    assert.equal(req.url, '/v2/datapoint');
    assert.equal(req.headers['content-type'], 'application/x-protobuf');
    const dps = (
      Upload.toObject(Upload.decode(req.body), { longs: String, defaults: false }) as {
        datapoints: SfxPoint[];
      }
    ).datapoints;
    const dims = [
      { key: 'env', value: 'e2e' },
      { key: 'host', value: 'db1.local' },
      { key: 'instance', value: 'm1' },
    ];
    const by = new Map(dps.map((d) => [d.metric, d]));
    const maxConn = by.get('var.global.max_connections');
    assert.ok(maxConn);
    const { timestamp, ...rest } = maxConn;
    assert.deepEqual(rest, {
      metric: 'var.global.max_connections',
      value: { doubleValue: 345 },
      metricType: 0,
      dimensions: dims,
    });
    // Unix milliseconds of the collection, within the last minute.
    assert.ok(Math.abs(Date.now() - Number(timestamp)) < 60_000, timestamp);
    assert.equal(by.get('status.global.com_select')?.metricType, 3); // CUMULATIVE_COUNTER
    assert.deepEqual(by.get('status.global.threads_connected')?.dimensions, dims);
  });

  it('datadog DogStatsD: datagrams with the tags, counters as count deltas', () => {
    const lines = datagrams.flatMap((d) => d.split('\n'));
    assert.ok(lines.includes('var.global.max_connections:345|g|#env:e2e,instance:m2'), lines.join('\n'));
    assert.ok(lines.some((l) => /^status\.global\.threads_connected:\d+\|g\|#env:e2e,instance:m2$/.test(l)));
    const counts = lines.filter((l) => l.startsWith('status.global.com_select:'));
    assert.ok(counts.length >= 1);
    for (const l of counts) assert.match(l, /^status\.global\.com_select:\d{1,2}\|c\|#env:e2e,instance:m2$/);
  });

  it('never shows a key, token or the password in status or logs', async () => {
    const st = JSON.stringify(await agent.json('/status/monitors'));
    for (const secret of [PASSWORD, DD_API, DD_APP, 'sfx-good', 'sfx-bad']) {
      assert.ok(!st.includes(secret), secret);
      assert.ok(!agent.stdout().includes(secret), secret);
      assert.ok(!agent.stderr().includes(secret), secret);
    }
  });
});
