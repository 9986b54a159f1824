import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createConnection, type Connection } from 'mysql2/promise';
import type { Row } from '../../core/db.js';
import type { PooledDb } from '../../db/pool.js';
import { connectAs, startMariaDB, type MariaDB } from '../../../test/helpers/mariadb.js';
import { FakeDb, NO_SIGNAL, planOf } from '../kit/test-helpers.js';
import { RECORD_ATTRIBUTES } from '../kit/query/attributes.js';
import { Engine } from '../../engine/engine.js';
import { StatusRegistry } from '../../status/registry.js';
import { help, LockWaitCollector } from './index.js';
import { mdlBlocks } from './sql.js';

const SENTINEL = 'SENTINEL_l0ck';

void describe('lock.wait on MySQL 8, from recorded result sets', () => {
  void it('reads performance_schema.data_lock_waits and names both connections', async () => {
    const answer = (sql: string): Row[] => {
      if (sql.includes('COUNT(*)')) return [{ N: sql.includes('data_lock_waits') ? '1' : '0' }];
      if (sql.includes('data_lock_waits'))
        return [
          {
            WAITING_ID: '12',
            WAITING_USER: 'app',
            WAITING_QUERY: `UPDATE t SET v = '${SENTINEL}' WHERE id = 1`,
            WAIT_S: '7',
            BLOCKING_ID: '11',
            BLOCKING_USER: 'batch',
            BLOCKING_QUERY: null,
            BLOCKING_COMMAND: 'Sleep',
            BLOCKING_TIME: '30',
            LOCK_TABLE: 'app.t',
            LOCK_INDEX: 'PRIMARY',
            LOCK_MODE: 'X,REC_NOT_GAP',
          },
        ];
      if (sql.includes('@@performance_schema')) return [{ pfs: '1' }];
      if (sql.includes('setup_instruments')) return [{ ENABLED: 'YES' }];
      return [];
    };
    const db = new FakeDb('8.0.36', answer);
    const c = new LockWaitCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'lock.wait': {} } }), NO_SIGNAL);
    const res = await c.collect('l', NO_SIGNAL);
    assert.equal(res.error, undefined);
    assert.ok(db.queries.some((q) => q.sql.includes('performance_schema.data_lock_waits')));
    assert.ok(!db.queries.some((q) => q.sql.includes('INNODB_LOCK_WAITS')));
    assert.deepEqual(res.records?.[0]?.attributes, {
      'db.system.name': 'mysql',
      'sonde.lock.type': 'row',
      'sonde.lock.wait_seconds': 7,
      'sonde.lock.table': 'app.t',
      'sonde.lock.index': 'PRIMARY',
      'sonde.lock.mode': 'X,REC_NOT_GAP',
      'sonde.lock.waiting.session_id': 12,
      'sonde.lock.waiting.user': 'app',
      'sonde.lock.waiting.query_text': 'UPDATE t SET v = ? WHERE id = ?',
      'sonde.lock.blocking.session_id': 11,
      'sonde.lock.blocking.user': 'batch',
      'sonde.lock.blocking.idle': true,
      'sonde.lock.blocking.idle_seconds': 30,
    });
    assert.deepEqual(
      res.values.map((v) => [v.name, v.group?.['type'], v.value]),
      [
        ['waits', 'row', 1],
        ['oldest_wait_seconds', 'row', 7],
        ['waits', 'metadata', 0],
        ['oldest_wait_seconds', 'metadata', 0],
      ],
    );
  });

  void it('runs no join when the counts say nothing waits', async () => {
    const db = new FakeDb('8.0.36', (sql) => {
      if (sql.includes('COUNT(*)')) return [{ N: '0' }];
      if (sql.includes('@@performance_schema')) return [{ pfs: '1' }];
      if (sql.includes('setup_instruments')) return [{ ENABLED: 'YES' }];
      throw new Error(`not expected: ${sql}`);
    });
    const c = new LockWaitCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'lock.wait': {} } }), NO_SIGNAL);
    const before = db.queries.length;
    const res = await c.collect('l', NO_SIGNAL);
    assert.equal(res.error, undefined);
    const run = db.queries.slice(before).map((q) => q.sql);
    assert.equal(run.length, 2, run.join('\n'));
    assert.ok(run.every((q) => q.includes('COUNT(*)') && !q.includes('JOIN')));
    assert.deepEqual(
      res.values.map((v) => [v.name, v.group?.['type'], v.value]),
      [
        ['waits', 'row', 0],
        ['oldest_wait_seconds', 'row', 0],
        ['waits', 'metadata', 0],
        ['oldest_wait_seconds', 'metadata', 0],
      ],
    );
  });

  void it('knows which metadata locks block', () => {
    assert.equal(mdlBlocks('EXCLUSIVE', 'SHARED_READ'), true);
    assert.equal(mdlBlocks('SHARED_WRITE', 'SHARED_READ'), false);
    assert.equal(mdlBlocks('SHARED_WRITE', 'SHARED_NO_WRITE'), true);
  });
});

void describe('lock.wait against a real MariaDB', () => {
  let server: MariaDB;
  let db: PooledDb;
  const conns: Connection[] = [];
  const connect = async (): Promise<Connection> => {
    const c = await createConnection({ host: server.host, port: server.port, user: 'root', database: 'app' });
    conns.push(c);
    return c;
  };

  before(async () => {
    server = await startMariaDB({
      args: ['--performance-schema=ON', '--performance-schema-instrument=wait/lock/metadata/sql/mdl=ON'],
    });
    await server.createUser('mon', 'mon-pass-1', ['SELECT ON performance_schema.*', 'PROCESS ON *.*']);
    await server.query('CREATE DATABASE app');
    await server.query('CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(40)) ENGINE=InnoDB');
    await server.query('CREATE TABLE app.m (id INT PRIMARY KEY) ENGINE=InnoDB');
    await server.query("INSERT INTO app.t VALUES (1, 'a'), (2, 'b')");
    db = connectAs(server, 'mon', 'mon-pass-1');
  });
  after(async () => {
    for (const c of conns) c.destroy();
    await db.close();
    await server.stop();
  });

  void it('names the waiting connection and the idle blocker of a row lock and of an ALTER', async () => {
    const idleRow = await connect();
    const waiter = await connect();
    const idleMdl = await connect();
    const alter = await connect();
    const [[w]] = (await waiter.query('SELECT CONNECTION_ID() AS id')) as unknown as [[{ id: number }]];
    const [[b]] = (await idleRow.query('SELECT CONNECTION_ID() AS id')) as unknown as [[{ id: number }]];
    const [[a]] = (await alter.query('SELECT CONNECTION_ID() AS id')) as unknown as [[{ id: number }]];
    const [[m]] = (await idleMdl.query('SELECT CONNECTION_ID() AS id')) as unknown as [[{ id: number }]];
    await idleRow.query('BEGIN');
    await idleRow.query("UPDATE t SET v = 'held' WHERE id = 1");
    const blocked = waiter.query(`UPDATE t SET v = '${SENTINEL}' WHERE id = 1`).catch(() => undefined);
    await idleMdl.query('BEGIN');
    await idleMdl.query('SELECT * FROM m');
    const altering = alter.query('ALTER TABLE m ADD COLUMN z INT').catch(() => undefined);
    await new Promise((r) => setTimeout(r, 1200));

    const c = new LockWaitCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'lock.wait': {} } }), NO_SIGNAL);
    const res = await c.collect('l', NO_SIGNAL);
    await idleRow.query('ROLLBACK');
    await idleMdl.query('ROLLBACK');
    await Promise.all([blocked, altering]);

    assert.equal(res.error, undefined);
    const row = res.records?.find((r) => r.attributes['sonde.lock.type'] === 'row');
    const mdl = res.records?.find((r) => r.attributes['sonde.lock.type'] === 'metadata');
    assert.ok(row && mdl, JSON.stringify(res.records));
    assert.equal(row.event, 'sonde.lock_wait');
    assert.equal(row.attributes['sonde.lock.waiting.session_id'], w.id);
    assert.equal(row.attributes['sonde.lock.blocking.session_id'], b.id);
    assert.equal(row.attributes['sonde.lock.blocking.idle'], true);
    assert.equal(row.attributes['sonde.lock.table'], '`app`.`t`');
    assert.equal(row.attributes['sonde.lock.index'], 'PRIMARY');
    assert.equal(row.attributes['sonde.lock.waiting.query_text'], 'UPDATE t SET v = ? WHERE id = ?');
    assert.ok(Number(row.attributes['sonde.lock.wait_seconds']) >= 1);
    assert.equal(mdl.attributes['sonde.lock.waiting.session_id'], a.id);
    assert.equal(mdl.attributes['sonde.lock.blocking.session_id'], m.id);
    assert.equal(mdl.attributes['sonde.lock.blocking.idle'], true);
    assert.equal(mdl.attributes['sonde.lock.table'], 'app.m');
    assert.equal(mdl.attributes['sonde.lock.waiting.query_text'], 'ALTER TABLE m ADD COLUMN z INT');
    for (const r of res.records ?? [])
      for (const k of Object.keys(r.attributes)) assert.ok(RECORD_ATTRIBUTES.has(k), k);
    assert.ok(!JSON.stringify(res).includes(SENTINEL));
    const waits: Record<string, number> = Object.fromEntries(
      res.values
        .filter((v) => v.name === 'waits')
        .map((v): [string, number] => [v.group?.['type'] ?? '', v.value]),
    );
    assert.deepEqual(waits, { row: 1, metadata: 1 });
  });
});

/**
 * Three collections of lock.wait through the engine (as a monitor runs it): the row-lock
 * values of each, the `error:lock.wait` status line after each, and the error events.
 */
async function threeRuns(
  db: PooledDb,
): Promise<{ rowWaits: (number | undefined)[]; lines: string[]; errors: string[] }> {
  const plan = planOf({ l: { 'lock.wait': {} } });
  const status = new StatusRegistry();
  const errors: string[] = [];
  const engine = await Engine.prepare(
    {
      monitorId: 'm',
      active: {
        plan,
        emrMs: 9000,
        cmrMs: new Map([['lock.wait', 8000]]),
        domainFreqMs: new Map([['lock.wait', 10_000]]),
      },
      status: status.monitor('m'),
      events: {
        info: () => undefined,
        error: (e, _id, msg) => errors.push(`${e}: ${msg}`),
        debug: () => undefined,
      },
      collectors: { make: () => new LockWaitCollector({ monitorId: 'm', db }), help: () => help },
    },
    NO_SIGNAL,
  );
  const rowWaits: (number | undefined)[] = [];
  const lines: string[] = [];
  try {
    for (let n = 1; n <= 3; n++) {
      const r = await engine.run({
        interval: n,
        level: 'l',
        work: [{ domain: 'lock.wait', level: 'l' }],
        start: Date.now(),
      });
      const values = r.outcomes.flatMap((o) => o.values);
      assert.equal(
        values.find((v) => v.group?.['type'] === 'metadata'),
        undefined,
      );
      rowWaits.push(values.find((v) => v.name === 'waits' && v.group?.['type'] === 'row')?.value);
      lines.push(status.monitorStatus('m')?.['error:lock.wait'] ?? '');
    }
  } finally {
    await engine.close();
  }
  return { rowWaits, lines, errors };
}

void describe('lock.wait with performance_schema OFF', () => {
  let server: MariaDB;
  let db: PooledDb;
  before(async () => {
    server = await startMariaDB({ args: ['--performance-schema=OFF'] });
    await server.createUser('mon', 'mon-pass-1', ['PROCESS ON *.*']);
    db = connectAs(server, 'mon', 'mon-pass-1');
  });
  after(async () => {
    await db.close();
    await server.stop();
  });

  void it('still reports row-lock waits and says why metadata locks are not read', async () => {
    const c = new LockWaitCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'lock.wait': {} } }), NO_SIGNAL);
    const res = await c.collect('l', NO_SIGNAL);
    assert.equal(res.values.find((v) => v.name === 'waits' && v.group?.['type'] === 'row')?.value, 0);
    // Not measured is missing, never 0.
    assert.equal(
      res.values.find((v) => v.group?.['type'] === 'metadata'),
      undefined,
    );
    assert.equal(res.error?.policy, 'metadata-locks');
    assert.match(
      res.error?.message ?? '',
      /^metadata-lock waits not read: performance_schema is disabled \(set performance_schema=ON in my.cnf and restart the server\)$/,
    );
  });

  void it('keeps one status line naming the setting while row locks go on being collected', async () => {
    const { rowWaits, lines, errors } = await threeRuns(db);
    assert.deepEqual(rowWaits, [0, 0, 0]);
    assert.match(
      lines[0] ?? '',
      /^at \S+: test\/l\/1\/lock\.wait: metadata-lock waits not read: performance_schema is disabled \(set performance_schema=ON in my.cnf and restart the server\)$/,
    );
    assert.deepEqual(lines, [lines[0], lines[0], lines[0]]);
    assert.deepEqual(
      errors.filter((e) => e.startsWith('collector-error')),
      [`collector-error: ${(lines[0] ?? '').replace(/^at \S+: /, '')}`],
    );
  });
});

void describe('lock.wait with the metadata-lock instrument off', () => {
  let server: MariaDB;
  let db: PooledDb;
  before(async () => {
    server = await startMariaDB({
      args: ['--performance-schema=ON', '--performance-schema-instrument=wait/lock/metadata/sql/mdl=OFF'],
    });
    await server.createUser('mon', 'mon-pass-1', ['SELECT ON performance_schema.*', 'PROCESS ON *.*']);
    db = connectAs(server, 'mon', 'mon-pass-1');
  });
  after(async () => {
    await db.close();
    await server.stop();
  });

  void it('keeps one status line naming the instrument and both ways to enable it', async () => {
    const { rowWaits, lines, errors } = await threeRuns(db);
    assert.deepEqual(rowWaits, [0, 0, 0]);
    assert.match(
      lines[0] ?? '',
      /^at \S+: test\/l\/1\/lock\.wait: metadata-lock waits not read: performance_schema instrument wait\/lock\/metadata\/sql\/mdl disabled \(enable it: UPDATE performance_schema\.setup_instruments SET ENABLED='YES' WHERE NAME='wait\/lock\/metadata\/sql\/mdl', or start the server with performance-schema-instrument='wait\/lock\/metadata\/sql\/mdl=ON'\)$/,
    );
    assert.deepEqual(lines, [lines[0], lines[0], lines[0]]);
    assert.equal(errors.filter((e) => e.startsWith('collector-error')).length, 1);
  });
});
