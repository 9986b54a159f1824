/**
 * The built agent against a real MariaDB with an `otlp` sink set to `naming: otel` and
 * configured only through the standard OTEL_* environment variables: a local receiver gets
 * the server's values under the OpenTelemetry MySQL receiver's names, units and attributes,
 * at `<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/metrics`, with the environment's headers, resource
 * attributes and service name.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { startAgent, type Agent, agentConfigHead } from '../helpers/agent.js';
import { startCaptureServer, type CaptureServer } from '../helpers/capture-http.js';
import { decode, resourceOf, summarize, type MetricSummary } from '../../src/sinks/otlp.fixture.js';

const PASSWORD = 'Pw-e2e-otel-SECRET';

const PLAN = `fast:
  freq: 1s
  collect:
    status.global:
      metrics: [threads_connected, threads_running, com_select, uptime, handler_read_key,
        innodb_buffer_pool_pages_data, innodb_buffer_pool_pages_dirty, innodb_buffer_pool_pages_free,
        bytes_received, max_used_connections]
    var.global:
      metrics: [innodb_buffer_pool_size]
`;

/** `→ int:<n>` of a point, as a number. */
function intOf(point: string | undefined): number {
  const m = / → int:(-?\d+)$/.exec(point ?? '');
  assert.ok(m, `not an integer point: ${String(point)}`);
  return Number(m[1]);
}

describe('otlp sink with naming: otel and the OTEL_* environment, in the running agent', () => {
  let db: MariaDB;
  let agent: Agent;
  let rx: CaptureServer;
  let metrics: Map<string, MetricSummary>;

  before(async () => {
    [db, rx] = await Promise.all([startMariaDB(), startCaptureServer()]);
    await db.createUser('sonde', PASSWORD, ['PROCESS, REPLICATION CLIENT ON *.*']);
    agent = await startAgent(
      `${agentConfigHead(PASSWORD)}tags:
  team: dba
sinks:
  otlp:
    naming: otel
monitors:
  - id: m1
    socket: ${db.socket}
`,
      {
        files: { 'plan.yaml': PLAN },
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: `${rx.base}/otel`,
          OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=k%2C1-secret',
          OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=e2e,team=overridden',
          OTEL_SERVICE_NAME: 'mysql-fleet',
        },
      },
    );
    await agent.until(
      'the otlp sink sent',
      async () => ((await agent.monitorsStatus())['m1']?.['otlp'] ?? '').startsWith('last sent '),
      20_000,
    );
    const req = rx.requests[0];
    assert.ok(req, 'no OTLP request');
    metrics = new Map(summarize(decode(req.body)).map((m) => [m.name, m]));
  });

  after(async () => {
    await agent?.stop('SIGTERM');
    await Promise.all([db?.stop(), rx?.close()]);
  });

  it('POSTs to the environment endpoint with its headers; resource from the environment and the tags', () => {
    const req = rx.requests[0];
    assert.ok(req);
    assert.equal(req.url, '/otel/v1/metrics');
    assert.equal(req.headers['x-api-key'], 'k,1-secret');
    const resource = resourceOf(decode(req.body));
    assert.deepEqual(resource, {
      'mysql.instance.endpoint': `unix://${db.socket}`,
      'service.name': 'mysql-fleet',
      'sonde.monitor.id': 'm1',
      'deployment.environment': 'e2e',
      team: 'dba',
    });
    assert.doesNotMatch(agent.stdout() + agent.stderr(), /k,1-secret|k%2C1-secret/);
  });

  it('sends the server values under the receiver names, units and attributes', async () => {
    assert.deepEqual([...metrics.keys()].sort(), [
      'mysql.buffer_pool.data_pages',
      'mysql.buffer_pool.limit',
      'mysql.buffer_pool.pages',
      'mysql.client.network.io',
      'mysql.commands',
      'mysql.handlers',
      'mysql.threads',
      'mysql.uptime',
      'status.global.max_used_connections',
    ]);
    const threads = metrics.get('mysql.threads');
    assert.equal(threads?.unit, '1');
    assert.equal(threads?.kind, 'sum AGGREGATION_TEMPORALITY_CUMULATIVE monotonic=false');
    assert.deepEqual(
      threads?.points.map((p) => p.split(' → ')[0]),
      ['kind=connected', 'kind=running'],
    );
    assert.ok(intOf(threads?.points[0]) >= 1);
    assert.equal(
      metrics.get('mysql.commands')?.kind,
      'sum AGGREGATION_TEMPORALITY_CUMULATIVE monotonic=true',
    );
    assert.match(metrics.get('mysql.commands')?.points[0] ?? '', /^command=select → int:\d+$/);
    assert.match(metrics.get('mysql.handlers')?.points[0] ?? '', /^kind=read_key → int:\d+$/);
    assert.equal(metrics.get('mysql.uptime')?.unit, 's');
    assert.match(metrics.get('mysql.client.network.io')?.points[0] ?? '', /^kind=received → int:[1-9]\d*$/);
    assert.equal(metrics.get('mysql.client.network.io')?.unit, 'By');

    const [row] = await db.query('SELECT @@innodb_buffer_pool_size AS size');
    const limit = metrics.get('mysql.buffer_pool.limit');
    assert.equal(limit?.unit, 'By');
    assert.equal(intOf(limit?.points[0]), Number(row?.['size']));

    // clean = data − dirty, as the receiver computes it.
    const pages = metrics.get('mysql.buffer_pool.pages')?.points ?? [];
    const dataPages = intOf(pages.find((p) => p.startsWith('kind=data ')));
    const split = metrics.get('mysql.buffer_pool.data_pages')?.points ?? [];
    const dirty = intOf(split.find((p) => p.startsWith('status=dirty ')));
    const clean = intOf(split.find((p) => p.startsWith('status=clean ')));
    assert.equal(dirty + clean, dataPages);
    assert.ok(dataPages > 0);

    // No receiver equivalent: sonde's name and type.
    assert.equal(metrics.get('status.global.max_used_connections')?.kind, 'gauge');
  });
});
