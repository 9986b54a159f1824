/**
 * The sample plugin (examples/plugins/custom-table) loaded as the agent loads it, its
 * collector made by the registry and run against a throwaway MariaDB holding the application
 * tables, and its sink writing collections to a file.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startMariaDB, connectAs, type MariaDB } from '../../test/helpers/mariadb.js';
import type { PooledDb } from '../db/pool.js';
import { builtinCollectors } from '../collectors/builtin.js';
import { builtinSinks } from '../sinks/builtin.js';
import type { CollectorRegistry } from '../collectors/registry.js';
import type { SinkRegistry } from '../sinks/registry.js';
import { MetricType, type Metrics } from '../core/metrics.js';
import { parsePlan } from '../plan/parse.js';
import { loadPlugins } from './load.js';

const EXAMPLE = resolve(import.meta.dirname, '../../../examples/plugins/custom-table/index.js');
const PASSWORD = 'Pw-plugin-3c9';

let server: MariaDB;
let db: PooledDb;
let dir: string;
let collectors: CollectorRegistry;
let sinks: SinkRegistry;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sonde-plugin-example-'));
  server = await startMariaDB();
  await server.query('CREATE DATABASE app');
  await server.query('CREATE TABLE app.queue_depth (name VARCHAR(32) PRIMARY KEY, depth BIGINT NULL)');
  await server.query("INSERT INTO app.queue_depth VALUES ('mail', 7), ('sms', 0), ('push', NULL)");
  await server.query('CREATE TABLE app.jobs (queue VARCHAR(32), waiting INT)');
  await server.query("INSERT INTO app.jobs VALUES ('video', 41)");
  await server.createUser('sonde', PASSWORD, ['SELECT ON app.*']);
  db = connectAs(server, 'sonde', PASSWORD);
  collectors = builtinCollectors();
  sinks = builtinSinks();
  await loadPlugins([EXAMPLE], { baseDir: dir, collectors, sinks, translators: new Map() });
});

after(async () => {
  await db?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A one-level plan collecting custom.queue with `options` (YAML flow map text). */
const plan = (options: string) =>
  parsePlan(
    'queues',
    'q.yaml',
    `fast:\n  freq: 1s\n  collect:\n    custom.queue:\n      metrics: [depth]\n      options: {${options}}\n`,
  );

async function collectOnce(options: string) {
  const c = collectors.make('custom.queue', { monitorId: 'm1', db });
  await c.prepare(plan(options), AbortSignal.timeout(5000));
  return c.collect('fast', AbortSignal.timeout(5000));
}

describe('sample plugin: custom.queue', () => {
  it('reads one gauge per row, leaving a NULL depth out (missing, not 0)', async () => {
    const r = await collectOnce('');
    assert.deepEqual(
      r.values.map((v) => [v.name, v.value, v.type, v.group]).sort(),
      [
        ['depth', 0, MetricType.Gauge, { queue: 'sms' }],
        ['depth', 7, MetricType.Gauge, { queue: 'mail' }],
      ].sort(),
    );
  });

  it('reads another table and columns named by its options', async () => {
    const r = await collectOnce('table: app.jobs, name-column: queue, value-column: waiting');
    assert.deepEqual(
      r.values.map((v) => [v.value, v.group]),
      [[41, { queue: 'video' }]],
    );
  });

  it('a missing or forbidden table rejects with the errno its help maps to a policy (1146, 1142)', async () => {
    const errnoOf = async (options: string) =>
      collectOnce(options).then(
        () => undefined,
        (err: { errno?: number }) => err.errno,
      );
    const policyOf = (errno: number | undefined) =>
      collectors.help('custom.queue').errors.find((e) => errno !== undefined && e.errnos?.includes(errno))
        ?.name;
    assert.equal(policyOf(await errnoOf('table: app.nope')), 'table-missing');
    assert.equal(
      policyOf(await errnoOf('table: mysql.user, name-column: User, value-column: max_connections')),
      'access-denied',
    );
  });

  it('refuses a table option that is not a plain db.table name', async () => {
    await assert.rejects(
      collectOnce('table: "app.q; DROP TABLE x"'),
      /custom\.queue: option table: "app\.q; DROP TABLE x" is not a plain db\.table name/,
    );
  });
});

describe('sample plugin: jsonl sink', () => {
  it('appends one JSON line per value to the file of its option', async () => {
    const file = join(dir, 'out.jsonl');
    const status = { set: () => undefined, delete: () => undefined } as never;
    const sink = await sinks.create('jsonl', {
      sinkName: 'jsonl',
      monitorId: 'm1',
      options: { file },
      tags: {},
      status,
      events: {} as never,
    });
    const m: Metrics = {
      begin: new Date('2025-01-01T12:00:05Z'),
      end: new Date('2025-01-01T12:00:05.2Z'),
      monitorId: 'm1',
      plan: 'queues',
      level: 'fast',
      interval: 1,
      state: 'active',
      values: { 'custom.queue': (await collectOnce('')).values },
    };
    await sink.send(m);
    await sink.send(m);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    assert.equal(lines.length, 4);
    assert.deepEqual(JSON.parse(lines[0] ?? ''), {
      ts: '2025-01-01T12:00:05.000Z',
      monitor: 'm1',
      plan: 'queues',
      level: 'fast',
      domain: 'custom.queue',
      metric: 'depth',
      value: m.values['custom.queue']?.[0]?.value,
      type: 'gauge',
      group: m.values['custom.queue']?.[0]?.group,
    });
  });

  it('refuses an unknown option', async () => {
    await assert.rejects(
      sinks.create('jsonl', {
        sinkName: 'jsonl',
        monitorId: 'm1',
        options: { file: 'x', path: 'y' },
        tags: {},
        status: {} as never,
        events: {} as never,
      }),
      /jsonl sink: unknown option path \(it has: file\)/,
    );
  });
});
