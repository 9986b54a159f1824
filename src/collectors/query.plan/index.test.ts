import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createConnection, type Connection } from 'mysql2/promise';
import type { Row } from '../../core/db.js';
import type { PooledDb } from '../../db/pool.js';
import { connectAs, startMariaDB, type MariaDB } from '../../../test/helpers/mariadb.js';
import { FakeDb, NO_SIGNAL, planOf } from '../kit/test-helpers.js';
import { RECORD_ATTRIBUTES } from '../kit/query/attributes.js';
import { QueryPlanCollector } from './index.js';
import { planHash } from './plan.js';

const SENTINEL = 'SENTINEL_pl4n';

void describe('query.plan hash', () => {
  void it('ignores estimates and conditions, sees access type and join order', () => {
    const a = {
      query_block: {
        table: { table_name: 't', access_type: 'ALL', rows: 10, attached_condition: 't.v = 1' },
      },
    };
    const b = {
      query_block: {
        table: { table_name: 't', access_type: 'ALL', rows: 99, attached_condition: 't.v = 2' },
      },
    };
    const c = { query_block: { table: { table_name: 't', access_type: 'ref', key: 'v', rows: 1 } } };
    assert.equal(planHash(a), planHash(b));
    assert.notEqual(planHash(a), planHash(c));
  });
});

void describe('query.plan on MySQL, from recorded result sets', () => {
  const PLAN =
    '{"query_block": {"select_id": 1, "cost_info": {"query_cost": "2.05"}, "table": {"table_name": "orders", "access_type": "ALL", "rows_examined_per_scan": 18, "attached_condition": "(`app`.`orders`.`note` = \'SENTINEL_pl4n\')"}}}';
  const answer = (sql: string): Row[] => {
    if (sql.includes('information_schema.PROCESSLIST'))
      return [
        {
          ID: '42',
          USER: 'app',
          DB: 'app',
          MS: '3000',
          INFO: `SELECT * FROM orders WHERE note = '${SENTINEL}'`,
        },
        { ID: '43', USER: 'app', DB: 'app', MS: '2000', INFO: 'SHOW PROCESSLIST' },
      ];
    if (sql.startsWith('EXPLAIN FORMAT=JSON FOR CONNECTION 42')) return [{ EXPLAIN: PLAN }];
    if (sql.includes('events_statements_current')) return [{ DIGEST: 'abc123' }];
    if (sql.includes('@@performance_schema')) return [{ pfs: '1' }];
    return [];
  };

  void it('asks EXPLAIN FOR CONNECTION of the running SELECT only, and sends the plan without its literal once', async () => {
    const db = new FakeDb('8.0.36', answer);
    const c = new QueryPlanCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'query.plan': {} } }), NO_SIGNAL);
    const res = await c.collect('l', NO_SIGNAL);
    assert.equal(res.error, undefined);
    assert.equal(res.records?.length, 1);
    const rec = res.records?.[0];
    assert.equal(rec?.event, 'db.server.query_plan');
    assert.equal(rec?.attributes['mysql.events_statements_current.digest'], 'abc123');
    assert.equal(rec?.attributes['db.query.text'], 'SELECT * FROM orders WHERE note = ?');
    assert.match(
      String(rec?.attributes['mysql.query_plan']),
      /"attached_condition":"\(`app`\.`orders`\.`note` = \?\)"/,
    );
    for (const k of Object.keys(rec?.attributes ?? {})) assert.ok(RECORD_ATTRIBUTES.has(k), k);
    assert.ok(!JSON.stringify(res).includes(SENTINEL));
    const explains = db.queries.filter((q) => q.sql.includes('EXPLAIN'));
    assert.deepEqual(
      explains.map((q) => q.sql),
      ['EXPLAIN FORMAT=JSON FOR CONNECTION 42'],
    );
    // Every statement sonde sent is a read: no user statement, no ANALYZE, no DML or DDL.
    for (const q of db.queries)
      assert.match(q.sql, /^(SELECT|EXPLAIN FORMAT=JSON FOR CONNECTION \d+)\b/, q.sql);
    // The same plan again: no new record.
    assert.equal((await c.collect('l', NO_SIGNAL)).records, undefined);
  });

  void it('with query-text: raw, sends the text and the plan as the server has them', async () => {
    const c = new QueryPlanCollector({ monitorId: 'm', db: new FakeDb('8.0.36', answer) });
    await c.prepare(planOf({ l: { 'query.plan': { options: { 'query-text': 'raw' } } } }), NO_SIGNAL);
    const rec = (await c.collect('l', NO_SIGNAL)).records?.[0];
    assert.equal(rec?.attributes['db.query.text'], `SELECT * FROM orders WHERE note = '${SENTINEL}'`);
    assert.ok(String(rec?.attributes['mysql.query_plan']).includes(SENTINEL));
    await assert.rejects(
      c.prepare(planOf({ l: { 'query.plan': { options: { 'query-text': 'plain' } } } }), NO_SIGNAL),
      { message: 'invalid query-text: plain: valid values: obfuscated, raw' },
    );
  });
});

void describe('query.plan against a real MariaDB: a live plan of a long-running join', () => {
  let server: MariaDB;
  let db: PooledDb;
  let app: Connection;

  before(async () => {
    server = await startMariaDB({ args: ['--performance-schema=ON'] });
    await server.createUser('mon', 'mon-pass-1', ['SELECT ON performance_schema.*', 'PROCESS ON *.*']);
    await server.query('CREATE DATABASE app');
    await server.query('CREATE TABLE app.a (id INT PRIMARY KEY, v INT)');
    await server.query('CREATE TABLE app.b (id INT PRIMARY KEY, a_id INT, note VARCHAR(40))');
    await server.query('INSERT INTO app.a SELECT seq, seq FROM app.seq_1_to_3000');
    await server.query("INSERT INTO app.b SELECT seq, seq % 3000, 'x' FROM app.seq_1_to_3000");
    db = connectAs(server, 'mon', 'mon-pass-1');
    app = await createConnection({ host: server.host, port: server.port, user: 'root', database: 'app' });
  });
  after(async () => {
    await app.end();
    await db.close();
    await server.stop();
  });

  void it('explains the running join once, literals removed, without running it', async () => {
    const c = new QueryPlanCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'query.plan': { options: { threshold: '200ms' } } } }), NO_SIGNAL);
    const [[me]] = (await app.query('SELECT CONNECTION_ID() AS id')) as unknown as [[{ id: number }]];
    const running = app
      .query(`SELECT COUNT(*) FROM a JOIN b ON b.a_id = a.id + SLEEP(0.002) WHERE b.note <> '${SENTINEL}'`)
      .catch(() => undefined);
    await new Promise((r) => setTimeout(r, 600));
    const res = await c.collect('l', NO_SIGNAL);
    const again = await c.collect('l', NO_SIGNAL);
    await server.query(`KILL QUERY ${me.id}`);
    await running;
    assert.equal(res.error, undefined);
    assert.equal(res.records?.length, 1, JSON.stringify(res));
    const rec = res.records?.[0];
    const plan = JSON.parse(String(rec?.attributes['mysql.query_plan'])) as { query_block: unknown };
    assert.ok(plan.query_block);
    assert.match(String(rec?.attributes['mysql.query_plan']), /"table_name":"b"/);
    assert.match(String(rec?.attributes['mysql.query_plan.hash']), /^[0-9a-f]{64}$/);
    assert.equal(rec?.attributes['mysql.session.id'], me.id);
    assert.match(String(rec?.attributes['mysql.events_statements_current.digest']), /^sonde:/);
    assert.ok(!JSON.stringify([res, again]).includes(SENTINEL));
    assert.equal(again.records, undefined, 'the same plan is not sent again');
    assert.equal(res.values.find((v) => v.name === 'running')?.value, 1);
  });
});
