import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createConnection, type Connection } from 'mysql2/promise';
import type { Row } from '../../core/db.js';
import type { PooledDb } from '../../db/pool.js';
import { connectAs, startMariaDB, type MariaDB } from '../../../test/helpers/mariadb.js';
import { FakeDb, NO_SIGNAL, planOf } from '../kit/test-helpers.js';
import { RECORD_ATTRIBUTES } from '../kit/query/attributes.js';
import { LockWaitCollector } from './index.js';
import { mdlBlocks } from './sql.js';

const SENTINEL = 'SENTINEL_l0ck';

void describe('lock.wait on MySQL 8, from recorded result sets', () => {
  void it('reads performance_schema.data_lock_waits and names both connections', async () => {
    const answer = (sql: string): Row[] => {
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
});
