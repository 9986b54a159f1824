import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createConnection, type Connection } from 'mysql2/promise';
import type { LogRecord } from '../../core/records.js';
import type { PooledDb } from '../../db/pool.js';
import { connectAs, startMariaDB, type MariaDB } from '../../../test/helpers/mariadb.js';
import { FakeDb, NO_SIGNAL, planOf } from '../kit/test-helpers.js';
import type { Row } from '../../core/db.js';
import { RECORD_ATTRIBUTES } from '../kit/query/attributes.js';
import { QueryTopCollector, topRecords } from './index.js';
import { StmtSchemaCollector } from '../stmt.schema/index.js';
import { DigestTracker, type DigestDelta, type DigestRead } from '../kit/query/digests.js';

const P = 'mysql.events_statements_summary_by_digest.';
const SENTINEL = 'SENTINEL_q7x91';
const MARIADB = {
  flavor: 'mariadb' as const,
  version: [10, 11, 0] as [number, number, number],
  versionString: '',
};

const row = (digest: string | null, firstSeen: string, count: number, time = count * 10) => ({
  schema: 'app',
  digest,
  counters: [BigInt(count), BigInt(time), 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n],
  max: 5n,
  firstSeen,
});
const readAt = (at: string, ...rows: ReturnType<typeof row>[]): DigestRead => ({ rows, readAt: at });

void describe('query.top delta rules on given reads', () => {
  void it('reports nothing for the first read, then exact deltas', () => {
    const t = new DigestTracker();
    assert.deepEqual(t.update(readAt('2026-01-01 10:00:00', row('a', '2026-01-01 09:00:00', 5))), []);
    const d = t.update(readAt('2026-01-01 10:01:00', row('a', '2026-01-01 09:00:00', 12)));
    assert.deepEqual(
      d.map((x) => [x.digest, x.counters[0], x.counters[1]]),
      [['a', 7n, 70n]],
    );
  });

  void it('an idle interval reports nothing', () => {
    const t = new DigestTracker();
    t.update(readAt('2026-01-01 10:00:00', row('a', '2026-01-01 09:00:00', 5)));
    assert.deepEqual(t.update(readAt('2026-01-01 10:01:00', row('a', '2026-01-01 09:00:00', 5))), []);
  });

  void it('after a TRUNCATE or restart, a re-created row counts from zero; an old unknown row only baselines', () => {
    const t = new DigestTracker();
    t.update(
      readAt(
        '2026-01-01 10:00:00',
        row('a', '2026-01-01 09:00:00', 100),
        row('b', '2026-01-01 09:00:00', 50),
      ),
    );
    // a: truncated and re-created after the read with 3 calls; b: gone; c: unknown, born before the read.
    const d = t.update(
      readAt('2026-01-01 10:01:00', row('a', '2026-01-01 10:00:30', 3), row('c', '2026-01-01 09:30:00', 9)),
    );
    assert.deepEqual(
      d.map((x) => [x.digest, x.counters[0]]),
      [['a', 3n]],
    );
    // Re-created within the same second as its first sighting: counters went down.
    const t2 = new DigestTracker();
    t2.update(readAt('2026-01-01 10:00:00', row('a', '2026-01-01 10:00:00', 100)));
    assert.deepEqual(
      t2.update(readAt('2026-01-01 10:01:00', row('a', '2026-01-01 10:00:00', 4))).map((x) => x.counters[0]),
      [4n],
    );
    // b came back: a new row, counted whole.
    assert.deepEqual(
      t
        .update(readAt('2026-01-01 10:02:00', row('b', '2026-01-01 10:01:10', 2)))
        .map((x) => [x.digest, x.counters[0]]),
      [['b', 2n]],
    );
  });

  void it('keeps exact integers beyond 2^53 picoseconds', () => {
    const t = new DigestTracker();
    const big = 2n ** 62n;
    t.update(
      readAt('2026-01-01 10:00:00', {
        ...row('a', 'x', 1),
        counters: [1n, big, ...Array<bigint>(13).fill(0n)],
      }),
    );
    const d = t.update(
      readAt('2026-01-01 10:01:00', {
        ...row('a', 'x', 2),
        counters: [2n, big + 7n, ...Array<bigint>(13).fill(0n)],
      }),
    );
    assert.equal(d[0]?.counters[1], 7n);
  });

  void it('top N by time plus one other record that adds up', () => {
    const deltas: DigestDelta[] = [1, 5, 3, 2].map((n, i) => ({
      schema: 's',
      digest: `d${i}`,
      counters: [BigInt(n), BigInt(n * 100), ...Array<bigint>(13).fill(0n)],
    }));
    deltas.push({ schema: null, digest: null, counters: [4n, 40n, ...Array<bigint>(13).fill(0n)] });
    const recs = topRecords(deltas, 2, MARIADB, 0, (d) => `text ${d}`);
    assert.deepEqual(
      recs.map((r) => [
        r.attributes[`${P}digest`],
        r.attributes[`${P}count_star`],
        r.attributes['db.query.text'],
      ]),
      [
        ['d1', 5, 'text d1'],
        ['d2', 3, 'text d2'],
        ['other', 7, undefined],
      ],
    );
    assert.equal(recs[2]?.attributes['sonde.query.digests'], 3);
    const total = recs.reduce((n, r) => n + Number(r.attributes[`${P}count_star`]), 0);
    assert.equal(total, 1 + 5 + 3 + 2 + 4);
  });
});

void describe('query.top on MySQL 8, from recorded result sets', () => {
  void it('reads under MAX_EXECUTION_TIME, with microsecond FIRST_SEEN, and reports the delta', async () => {
    let reads = 0;
    const digestRow = (count: string, time: string): Row => ({
      SCHEMA_NAME: 'shop',
      DIGEST: 'f3a9c0ffee',
      COUNT_STAR: count,
      SUM_TIMER_WAIT: time,
      SUM_LOCK_TIME: '0',
      SUM_ERRORS: '0',
      SUM_WARNINGS: '0',
      SUM_ROWS_AFFECTED: '0',
      SUM_ROWS_SENT: count,
      SUM_ROWS_EXAMINED: '500',
      SUM_CREATED_TMP_DISK_TABLES: '0',
      SUM_CREATED_TMP_TABLES: '0',
      SUM_SORT_ROWS: '0',
      SUM_SELECT_SCAN: '0',
      SUM_SELECT_FULL_JOIN: '0',
      SUM_NO_INDEX_USED: '0',
      SUM_NO_GOOD_INDEX_USED: '0',
      MAX_TIMER_WAIT: '9000000',
      FIRST_SEEN: '2026-11-27 09:00:00.123456',
      READ_AT: reads === 1 ? '2026-11-27 09:10:00' : '2026-11-27 09:11:00',
    });
    const db = new FakeDb('8.0.36', (sql) => {
      if (sql.includes('@@performance_schema AS')) return [{ pfs: '1' }];
      if (sql.includes('setup_consumers')) return [{ NAME: 'statements_digest', ENABLED: 'YES' }];
      if (sql.includes('DIGEST_TEXT'))
        return [{ DIGEST: 'f3a9c0ffee', DIGEST_TEXT: "SELECT * FROM `orders` WHERE `id` = 'x9'" }];
      if (sql.includes('FIRST_SEEN')) {
        reads++;
        return reads === 1 ? [digestRow('100', '5000000000')] : [digestRow('130', '6500000000')];
      }
      return [];
    });
    const c = new QueryTopCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'query.top': {} } }), NO_SIGNAL);
    assert.equal((await c.collect('l', NO_SIGNAL)).records, undefined);
    const res = await c.collect('l', NO_SIGNAL);
    const rec = res.records?.[0];
    assert.equal(rec?.attributes['db.system.name'], 'mysql');
    assert.equal(rec?.attributes[`${P}count_star`], 30);
    assert.equal(rec?.attributes[`${P}sum_timer_wait`], 0.0015);
    assert.equal(rec?.attributes[`${P}returned_rows`], 30);
    // A literal left in a digest text is obfuscated too.
    assert.equal(rec?.attributes['db.query.text'], 'SELECT * FROM `orders` WHERE `id` = ?');
    const read = db.queries.find((q) => q.sql.includes('FIRST_SEEN'));
    assert.match(read?.sql ?? '', /^SELECT \/\*\+ MAX_EXECUTION_TIME\(2000\) \*\/ SCHEMA_NAME, DIGEST, /);
  });
});

void describe('query.top and stmt.schema against a real MariaDB', () => {
  let server: MariaDB;
  let db: PooledDb;
  let app: Connection;

  before(async () => {
    server = await startMariaDB({ args: ['--performance-schema=ON'] });
    await server.createUser('mon', 'mon-pass-1', ['SELECT ON performance_schema.*', 'PROCESS ON *.*']);
    await server.query('CREATE DATABASE app');
    await server.query('CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(40))');
    await server.query("INSERT INTO app.t VALUES (1, 'a'), (2, 'b'), (3, 'c')");
    db = connectAs(server, 'mon', 'mon-pass-1');
    app = await createConnection({ host: server.host, port: server.port, user: 'root', database: 'app' });
  });
  after(async () => {
    await app.end();
    await db.close();
    await server.stop();
  });

  async function serverRow(like: string): Promise<{ digest: string; count: bigint; time: bigint }> {
    const rows = await server.query(
      "SELECT DIGEST, CAST(COUNT_STAR AS CHAR) c, CAST(SUM_TIMER_WAIT AS CHAR) t FROM performance_schema.events_statements_summary_by_digest WHERE SCHEMA_NAME = 'app' AND DIGEST_TEXT LIKE ?",
      [like],
    );
    const r = rows[0];
    if (r === undefined) return { digest: '', count: 0n, time: 0n };
    return { digest: String(r['DIGEST']), count: BigInt(String(r['c'])), time: BigInt(String(r['t'])) };
  }

  /**
   * The server's row once it counts `want` statements (it adds a statement to the summary
   * after answering the client, so a read right after the last answer may miss it), or as
   * it stands after 2 s.
   */
  async function settledRow(like: string, want: bigint): Promise<Awaited<ReturnType<typeof serverRow>>> {
    const until = Date.now() + 2000;
    for (;;) {
      const row = await serverRow(like);
      if (row.count >= want || Date.now() > until) return row;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  void it('reports the exact delta of a statement run 1,000 times, with the server digest and no literal', async () => {
    const c = new QueryTopCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'query.top': { options: { limit: '5' } } } }), NO_SIGNAL);
    const first = await c.collect('l', NO_SIGNAL);
    assert.equal(first.error, undefined);
    assert.equal(first.records, undefined, 'the first read only remembers');
    const before = await serverRow('SELECT `v` FROM `t` WHERE `v` = ? AND ID = ?%');
    for (let i = 0; i < 1000; i++) await app.query(`SELECT v FROM t WHERE v = '${SENTINEL}' AND id = ${i}`);
    const afterRow = await settledRow('SELECT `v` FROM `t` WHERE `v` = ? AND ID = ?%', before.count + 1000n);
    const res = await c.collect('l', NO_SIGNAL);
    assert.equal(res.error, undefined);
    const rec = res.records?.find((r) => r.attributes[`${P}digest`] === afterRow.digest);
    assert.ok(rec, JSON.stringify(res.records));
    assert.equal(rec.event, 'db.server.top_query');
    for (const k of Object.keys(rec?.attributes ?? {})) assert.ok(RECORD_ATTRIBUTES.has(k), k);
    assert.equal(rec.attributes[`${P}count_star`], Number(afterRow.count - before.count));
    assert.equal(rec.attributes[`${P}count_star`], 1000);
    const serverSeconds = Number(afterRow.time - before.time) / 1e12;
    const seconds = Number(rec.attributes[`${P}sum_timer_wait`]);
    assert.ok(Math.abs(seconds - serverSeconds) <= serverSeconds * 0.01, `${seconds} vs ${serverSeconds}`);
    assert.equal(rec.attributes['db.namespace'], 'app');
    assert.equal(rec.attributes['db.query.text'], 'SELECT `v` FROM `t` WHERE `v` = ? AND ID = ?');
    const everything = JSON.stringify([res, first]);
    assert.ok(!everything.includes(SENTINEL));
    // sonde's own statements are not among the records.
    assert.ok(!everything.includes('FIRST_SEEN'), everything);
    assert.ok(!everything.includes('performance_schema_digests_size'), everything);
    assert.ok(!everything.includes('session_connect_attrs'), everything);
    const calls = res.values.find((v) => v.name === 'calls')?.value;
    const sum = (res.records ?? []).reduce(
      (n, r: LogRecord) => n + Number(r.attributes[`${P}count_star`]),
      0,
    );
    assert.equal(calls, sum, 'records add up to the calls counted');
  });

  void it("leaves out every statement sonde's own pool ran, whichever domain ran it", async () => {
    const c = new QueryTopCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'query.top': {} } }), NO_SIGNAL);
    await c.collect('l', NO_SIGNAL);
    // What another domain of the same monitor runs (status.global), and the same text from an application.
    await db.query("SHOW GLOBAL STATUS WHERE Variable_name IN ('Uptime', 'Questions')");
    const like = 'SELECT COUNT ( * ) FROM `t` WHERE ID > ?%';
    const before = await serverRow(like);
    await app.query('SELECT COUNT(*) FROM t WHERE id > 1');
    // the server counts a statement just after answering it
    assert.equal((await settledRow(like, before.count + 1n)).count, before.count + 1n);
    const res = await c.collect('l', NO_SIGNAL);
    const texts = (res.records ?? []).map((r) => String(r.attributes['db.query.text']));
    assert.ok(!texts.some((t) => t.startsWith('SHOW GLOBAL STATUS')), texts.join('\n'));
    assert.ok(
      texts.some((t) => t.startsWith('SELECT COUNT ( * ) FROM `t`')),
      texts.join('\n'),
    );
  });

  void it('sends nothing for an idle interval', async () => {
    const c = new QueryTopCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'query.top': {} } }), NO_SIGNAL);
    await c.collect('l', NO_SIGNAL);
    await c.collect('l', NO_SIGNAL); // the test's own statements of the test before
    const idle = await c.collect('l', NO_SIGNAL);
    assert.equal(idle.records, undefined, JSON.stringify(idle.records));
    assert.equal(idle.values.find((v) => v.name === 'calls')?.value, 0);
  });

  void it('never reports a negative or inflated delta after a TRUNCATE (sonde never truncates)', async () => {
    const c = new QueryTopCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'query.top': {} } }), NO_SIGNAL);
    await c.collect('l', NO_SIGNAL);
    for (let i = 0; i < 10; i++) await app.query(`SELECT id FROM t WHERE id = ${i} OR v = 'zz'`);
    const count = async (): Promise<number | undefined> => {
      const res = await c.collect('l', NO_SIGNAL);
      const rec = res.records?.find((r) =>
        String(r.attributes['db.query.text']).startsWith('SELECT ID FROM `t` WHERE ID = ? OR'),
      );
      return rec === undefined ? undefined : Number(rec.attributes[`${P}count_star`]);
    };
    // The server counts a statement just after answering it: wait until it holds all ten.
    assert.equal((await settledRow('SELECT ID FROM `t` WHERE ID = ? OR `v` = ?%', 10n)).count, 10n);
    assert.equal(await count(), 10);
    await server.query('TRUNCATE performance_schema.events_statements_summary_by_digest');
    for (let i = 0; i < 3; i++) await app.query(`SELECT id FROM t WHERE id = ${i} OR v = 'zz'`);
    // The emptied table counts from zero: the delta is what the server holds now (the 3
    // statements; the server may miss one that raced the TRUNCATE), never 13 nor negative.
    const held = await settledRow('SELECT ID FROM `t` WHERE ID = ? OR `v` = ?%', 3n);
    assert.ok(held.count >= 2n && held.count <= 3n, String(held.count));
    assert.equal(await count(), Number(held.count));
    assert.equal(await count(), undefined);
  });

  void it('counts from zero after a server restart, never negative nor inflated', async () => {
    const c = new QueryTopCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'query.top': {} } }), NO_SIGNAL);
    await c.collect('l', NO_SIGNAL);
    const run = async (n: number): Promise<void> => {
      const conn = await createConnection({
        host: server.host,
        port: server.port,
        user: 'root',
        database: 'app',
      });
      for (let i = 0; i < n; i++) await conn.query(`SELECT id FROM t WHERE id > ${i} AND v <> 'r'`);
      await conn.end();
    };
    const count = async (): Promise<number | undefined> => {
      const res = await c.collect('l', NO_SIGNAL);
      assert.equal(res.error, undefined);
      const rec = res.records?.find((r) =>
        String(r.attributes['db.query.text']).startsWith('SELECT ID FROM `t` WHERE ID > ? AND `v` '),
      );
      return rec === undefined ? undefined : Number(rec.attributes[`${P}count_star`]);
    };
    const counted = async (n: bigint): Promise<void> =>
      assert.equal((await settledRow('SELECT ID FROM `t` WHERE ID > ? AND `v` != ?%', n)).count, n);
    await run(6);
    await counted(6n); // the server counts a statement just after answering it
    assert.equal(await count(), 6);
    await app.end();
    await server.restart();
    app = await createConnection({ host: server.host, port: server.port, user: 'root', database: 'app' });
    await run(4);
    await counted(4n);
    assert.equal(await count(), 4);
  });

  void it('stmt.schema sums the counters per schema as the server does', async () => {
    const c = new StmtSchemaCollector({ monitorId: 'm', db });
    await c.prepare(
      planOf({ l: { 'stmt.schema': { metrics: ['count_star', 'sum_rows_sent'] } } }),
      NO_SIGNAL,
    );
    await c.collect('l', NO_SIGNAL); // may share the read query.top made just before
    // The server's own sums for schema app (its reads run without a schema: not counted there).
    const sums = async (): Promise<[number, number]> => {
      const [r] = await server.query(
        "SELECT CAST(SUM(COUNT_STAR) AS CHAR) c, CAST(SUM(SUM_ROWS_SENT) AS CHAR) s FROM performance_schema.events_statements_summary_by_digest WHERE SCHEMA_NAME = 'app' AND DIGEST IS NOT NULL",
      );
      return [Number(r?.['c']), Number(r?.['s'])];
    };
    const [count0] = await sums();
    await app.query('SELECT * FROM t');
    // The server adds a statement to its digest table just after answering it: on a quick
    // machine a read from another connection can come first. Wait until it is counted.
    let want = await sums();
    for (const until = Date.now() + 2000; want[0] <= count0 && Date.now() < until; want = await sums())
      await new Promise((r) => setTimeout(r, 20));
    assert.ok(want[0] > count0, 'the SELECT is counted');
    const res = await c.collect('l', NO_SIGNAL);
    assert.equal(res.error, undefined);
    const app_ = res.values.filter((v) => v.group?.['db'] === 'app');
    assert.deepEqual(
      app_.map((v) => [v.name, v.value]),
      [
        ['count_star', want[0]],
        ['sum_rows_sent', want[1]],
      ],
    );
    assert.deepEqual(await sums(), want, 'nothing else ran in schema app meanwhile');
    assert.ok(!res.values.some((v) => v.group?.['db'] === 'performance_schema'));
  });
});

void describe('query.top with performance_schema OFF', () => {
  let server: MariaDB;
  let db: PooledDb;
  before(async () => {
    server = await startMariaDB({ args: ['--performance-schema=OFF'] });
    await server.createUser('mon', 'mon-pass-1', ['SELECT ON performance_schema.*']);
    db = connectAs(server, 'mon', 'mon-pass-1');
  });
  after(async () => {
    await db.close();
    await server.stop();
  });

  void it('says what is missing and how to fix it, once, as an unsupported error', async () => {
    for (const C of [QueryTopCollector, StmtSchemaCollector]) {
      const c = new C({ monitorId: 'm', db });
      const domain = c.domain;
      await c.prepare(planOf({ l: { [domain]: {} } }), NO_SIGNAL);
      const res = await c.collect('l', NO_SIGNAL);
      assert.equal(res.error?.unsupported, true);
      assert.match(
        res.error?.message ?? '',
        new RegExp(
          `^${domain.replace('.', '\\.')}: not supported on mariadb .*: performance_schema is disabled \\(set performance_schema=ON in my.cnf and restart the server\\)$`,
        ),
      );
    }
  });
});
