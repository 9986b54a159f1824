import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createConnection, type Connection } from 'mysql2/promise';
import type { PooledDb } from '../../db/pool.js';
import { connectAs, startMariaDB, type MariaDB } from '../../../test/helpers/mariadb.js';
import { FakeDb, NO_SIGNAL, planOf } from '../kit/test-helpers.js';
import { RECORD_ATTRIBUTES } from '../kit/query/attributes.js';
import { Bookmark, QuerySampleCollector } from './index.js';

const SENTINEL = 'SENTINEL_s4mpl3';

void describe('query.sample bookmark', () => {
  void it('sends each statement once across reads, including ties at the bookmark', () => {
    const b = new Bookmark();
    b.reset(100n);
    const r = (t: number, e: number, end: number) => ({
      THREAD_ID: String(t),
      EVENT_ID: String(e),
      TIMER_END: String(end),
    });
    assert.deepEqual(
      b.take([r(1, 1, 100), r(1, 2, 150), r(2, 9, 150)]).map((x) => x.EVENT_ID),
      ['1', '2', '9'],
    );
    // The next read starts at the bookmark (>=): the two at 150 are not sent again.
    assert.deepEqual(
      b.take([r(1, 2, 150), r(2, 9, 150), r(3, 4, 150), r(1, 3, 170)]).map((x) => x.EVENT_ID),
      ['4', '3'],
    );
    assert.equal(b.at, 170n);
  });

  void it('counts a restart when the uptime went back or lagged the agent clock, not when end times pass it', () => {
    const b = new Bookmark();
    assert.equal(b.restarted(0, 0), false, 'the first read has nothing to compare');
    // A young server whose statement clock ran ahead of its uptime: no restart.
    b.reset(1_900_000_000_000n);
    assert.equal(b.restarted(1, 1_000), false);
    assert.equal(b.restarted(NaN, 2_000), false, 'an unreadable uptime decides nothing');
    assert.equal(b.restarted(2, 2_000), false);
    assert.equal(b.restarted(12, 12_500), false, 'uptime in whole seconds, a little behind');
    assert.equal(b.restarted(3, 13_000), true, 'uptime went back');
    assert.equal(b.restarted(4, 14_000), false);
    // Collections failed for a minute; the server came back 30 s ago: uptime grew by 26 s only.
    assert.equal(b.restarted(30, 74_000), true, 'a restart slept through');
  });
});

void describe('query.sample on MySQL 8, from recorded result sets', () => {
  void it('reads the history under MAX_EXECUTION_TIME past the bookmark, and obfuscates text and error', async () => {
    let reads = 0;
    const db = new FakeDb('8.0.36', (sql) => {
      if (sql.includes('@@performance_schema AS')) return [{ pfs: '1' }];
      if (sql.includes('setup_consumers'))
        return [
          'global_instrumentation',
          'thread_instrumentation',
          'events_statements_current',
          'events_statements_history_long',
        ].map((NAME) => ({ NAME, ENABLED: 'YES' }));
      if (sql.includes('UPTIME')) return [{ UPTIME: '1000' }];
      if (sql.includes('MAX(TIMER_END)')) return [{ M: '900000000000000' }];
      if (sql.includes('h.TIMER_END >=')) {
        reads++;
        return [
          {
            THREAD_ID: '77',
            EVENT_ID: '12',
            TIMER_END: '950000000000000',
            TIMER_WAIT: '2500000000000',
            LOCK_TIME: '1000000',
            SQL_TEXT: `INSERT INTO orders VALUES (1, '${SENTINEL}')`,
            DIGEST: 'beef',
            CURRENT_SCHEMA: 'shop',
            ROWS_EXAMINED: '0',
            ROWS_SENT: '0',
            ROWS_AFFECTED: '0',
            ERRORS: '1',
            MYSQL_ERRNO: '1062',
            MESSAGE_TEXT: `Duplicate entry '${SENTINEL}' for key 'orders.note'`,
            PROCESSLIST_USER: 'app',
            PROCESSLIST_HOST: '10.0.0.5',
            PROCESSLIST_ID: '31',
          },
        ];
      }
      return [];
    });
    const c = new QuerySampleCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'query.sample': {} } }), NO_SIGNAL);
    await c.collect('l', NO_SIGNAL);
    const res = await c.collect('l', NO_SIGNAL);
    assert.equal(res.error, undefined);
    const rec = res.records?.[0];
    assert.equal(rec?.attributes['db.query.text'], 'INSERT INTO orders VALUES (...)');
    assert.equal(rec?.attributes['db.response.status_code'], '1062');
    assert.equal(rec?.attributes['mysql.events_statements_current.timer_wait'], 2.5);
    assert.ok(!JSON.stringify(res).includes(SENTINEL));
    const read = db.queries.find((q) => q.sql.includes('h.TIMER_END >='));
    assert.match(read?.sql ?? '', /^SELECT \/\*\+ MAX_EXECUTION_TIME\(2000\) \*\/ h\.THREAD_ID/);
    assert.match(read?.sql ?? '', /h\.TIMER_END >= 900000000000000 AND h\.TIMER_WAIT >= 1000000000000 /);
    // The next read starts at the new bookmark and does not send the same statement again.
    assert.equal((await c.collect('l', NO_SIGNAL)).records, undefined);
    assert.equal(reads, 2);
  });
});

void describe('query.sample against a real MariaDB', () => {
  let server: MariaDB;
  let db: PooledDb;
  let app: Connection;

  before(async () => {
    server = await startMariaDB({
      args: [
        '--performance-schema=ON',
        '--performance-schema-consumer-events-statements-current=ON',
        '--performance-schema-consumer-events-statements-history-long=ON',
        '--performance-schema-consumer-events-waits-current=ON',
        '--performance-schema-consumer-events-waits-history-long=ON',
        '--performance-schema-instrument=wait/%=ON',
      ],
    });
    await server.createUser('mon', 'mon-pass-1', ['SELECT ON performance_schema.*', 'PROCESS ON *.*']);
    await server.query('CREATE DATABASE app');
    await server.query('CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(40))');
    db = connectAs(server, 'mon', 'mon-pass-1');
    app = await createConnection({ host: server.host, port: server.port, user: 'root', database: 'app' });
  });
  after(async () => {
    await app.end();
    await db.close();
    await server.stop();
  });

  void it('samples the statement above the threshold, not the one below, once, without its literal', async () => {
    const c = new QuerySampleCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'query.sample': { options: { threshold: '500ms' } } } }), NO_SIGNAL);
    const first = await c.collect('l', NO_SIGNAL);
    assert.equal(first.error, undefined);
    assert.equal(first.records, undefined);
    await app.query(`SELECT SLEEP(0.8), '${SENTINEL}' AS s FROM DUAL`);
    await app.query(`SELECT SLEEP(0.1), '${SENTINEL}-fast' AS s FROM DUAL`);
    const res = await c.collect('l', NO_SIGNAL);
    assert.equal(res.error, undefined);
    assert.equal(res.records?.length, 1, JSON.stringify(res.records));
    const rec = res.records?.[0];
    assert.equal(rec?.event, 'db.server.query_sample');
    for (const k of Object.keys(rec?.attributes ?? {})) assert.ok(RECORD_ATTRIBUTES.has(k), k);
    assert.equal(rec?.attributes['db.query.text'], 'SELECT SLEEP(?), ? AS s FROM DUAL');
    assert.equal(rec?.attributes['db.namespace'], 'app');
    assert.equal(rec?.attributes['user.name'], 'root');
    const secs = Number(rec?.attributes['mysql.events_statements_current.timer_wait']);
    assert.ok(secs >= 0.8 && secs < 5, String(secs));
    assert.equal(rec?.attributes['mysql.events_statements_current.rows_sent'], 1);
    assert.equal(typeof rec?.attributes['mysql.wait_type'], 'string', JSON.stringify(rec));
    assert.ok(Math.abs((rec?.time ?? 0) - Date.now()) < 10_000);
    assert.ok(!JSON.stringify([res, first]).includes(SENTINEL));
    // Sent once: the next interval has nothing.
    const again = await c.collect('l', NO_SIGNAL);
    assert.equal(again.records, undefined);
    assert.deepEqual(
      res.values.map((v) => [v.name, v.value]),
      [
        ['samples', 1],
        ['capped', 0],
      ],
    );
  });

  void it('caps samples per digest per hour', async () => {
    const c = new QuerySampleCollector({ monitorId: 'm', db });
    await c.prepare(
      planOf({ l: { 'query.sample': { options: { threshold: '100ms', 'max-per-digest': '2' } } } }),
      NO_SIGNAL,
    );
    await c.collect('l', NO_SIGNAL);
    for (let i = 0; i < 3; i++) await app.query(`SELECT SLEEP(0.15) + ${i}`);
    const res = await c.collect('l', NO_SIGNAL);
    assert.equal(res.records?.length, 2);
    assert.equal(res.values.find((v) => v.name === 'capped')?.value, 1);
  });
});

void describe('query.sample without the history consumers', () => {
  let server: MariaDB;
  let db: PooledDb;
  before(async () => {
    server = await startMariaDB({
      args: [
        '--performance-schema=ON',
        '--performance-schema-consumer-events-statements-current=ON',
        '--performance-schema-consumer-events-statements-history-long=OFF',
        '--performance-schema-consumer-events-statements-history=OFF',
      ],
    });
    await server.createUser('mon', 'mon-pass-1', ['SELECT ON performance_schema.*']);
    db = connectAs(server, 'mon', 'mon-pass-1');
  });
  after(async () => {
    await db.close();
    await server.stop();
  });

  void it('names the consumer and both fixes', async () => {
    const c = new QuerySampleCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'query.sample': {} } }), NO_SIGNAL);
    const res = await c.collect('l', NO_SIGNAL);
    assert.equal(res.error?.unsupported, true);
    assert.match(
      res.error?.message ?? '',
      /^query\.sample: not supported on mariadb .*: performance_schema consumer events_statements_history_long disabled \(enable it: UPDATE performance_schema\.setup_consumers SET ENABLED='YES' WHERE NAME='events_statements_history_long', or start the server with performance-schema-consumer-events-statements-history-long=ON\)$/,
    );
  });

  void it('with enable-consumers: yes and the grant, enables the consumer and samples', async () => {
    await server.query("GRANT UPDATE ON performance_schema.setup_consumers TO 'mon'@'%'");
    const c = new QuerySampleCollector({ monitorId: 'm', db });
    await c.prepare(
      planOf({ l: { 'query.sample': { options: { 'enable-consumers': 'yes', threshold: '100ms' } } } }),
      NO_SIGNAL,
    );
    const rows = await server.query(
      "SELECT ENABLED FROM performance_schema.setup_consumers WHERE NAME = 'events_statements_history_long'",
    );
    assert.equal(rows[0]?.['ENABLED'], 'YES');
    assert.equal((await c.collect('l', NO_SIGNAL)).error, undefined);
  });
});
