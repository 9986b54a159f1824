import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createConnection } from 'mysql2/promise';
import { CollectError } from '../core/collector.js';
import { type Db, type DbError, type QueryOptions, type Row, type ServerInfo } from '../core/db.js';
import { MetricType, type MetricValue } from '../core/metrics.js';
import { createDb, type PooledDb } from '../db/pool.js';
import { parseServerVersion } from '../db/flavor.js';
import { startMariaDB, type MariaDB, tcpSpec } from '../../test/helpers/mariadb.js';
import {
  DEFAULT_TRUNCATE_TIMEOUT_MS,
  TRUNCATE_POLICY,
  TruncatePolicy,
  lockWaitSeconds,
  parseTruncateTimeout,
  truncateStatement,
  tryTruncate,
  zeroValues,
} from './truncate.js';

/**
 * sonde's own Db interface, failing TRUNCATE on demand: `fail` is the error the next
 * truncates reject with (undefined = they work). Records every statement and its options.
 */
class SwitchDb implements Db {
  fail: DbError | undefined;
  readonly calls: { sql: string; opts: QueryOptions | undefined }[] = [];
  readonly #info: ServerInfo = parseServerVersion('8.0.36');

  async query(sql: string, _params?: readonly unknown[], opts?: QueryOptions): Promise<Row[]> {
    this.calls.push({ sql, opts });
    if (this.fail !== undefined) throw this.fail;
    return [];
  }
  async serverInfo(): Promise<ServerInfo> {
    return this.#info;
  }
  async ping(): Promise<void> {}
}

function dbError(message: string, errno?: number): DbError {
  const e: DbError = new Error(message);
  if (errno !== undefined) e.errno = errno;
  return e;
}

const VALUES: MetricValue[] = [
  { name: 'count_star', value: 7, type: MetricType.DeltaCounter, group: { db: 'd', tbl: 't1' } },
  { name: 'count_star', value: 3, type: MetricType.DeltaCounter, group: { db: 'd', tbl: 't2' } },
  { name: 'p99', value: 12.5, type: MetricType.Gauge, meta: { p99: '99.2' } },
];
const ZEROED: MetricValue[] = [
  { name: 'count_star', value: 0, type: MetricType.DeltaCounter, group: { db: 'd', tbl: 't1' } },
  { name: 'count_star', value: 0, type: MetricType.DeltaCounter, group: { db: 'd', tbl: 't2' } },
  { name: 'p99', value: 0, type: MetricType.Gauge },
];

void describe('truncate procedure', () => {
  void it('lock_wait_timeout is the truncate timeout rounded up to whole seconds, at least 1', () => {
    assert.deepEqual([1, 250, 999, 1000, 1001, 2500, 60_000].map(lockWaitSeconds), [1, 1, 1, 1, 2, 3, 60]);
  });

  void it('truncate-timeout: 250ms when unset, Go durations otherwise, Blip error text when invalid', () => {
    assert.equal(parseTruncateTimeout(undefined), DEFAULT_TRUNCATE_TIMEOUT_MS);
    assert.equal(parseTruncateTimeout(''), 250);
    assert.equal(parseTruncateTimeout('1.5s'), 1500);
    assert.equal(parseTruncateTimeout(' 100ms '), 100);
    assert.throws(
      () => parseTruncateTimeout('soon'),
      /^Error: Invalid truncate duration: time: invalid duration "soon"$/,
    );
    assert.throws(() => parseTruncateTimeout('250'), /^Error: Invalid truncate duration: time: missing unit/);
    assert.throws(
      () => parseTruncateTimeout('0s'),
      /^Error: Invalid truncate duration: must be greater than 0: 0s$/,
    );
    assert.throws(() => parseTruncateTimeout('-1s'), /Invalid truncate duration/);
  });

  void it('MariaDB scopes lock_wait_timeout to the TRUNCATE itself; MySQL relies on the deadline', () => {
    assert.equal(
      truncateStatement('table_io_waits_summary_by_table', 250, 'mariadb'),
      'SET STATEMENT lock_wait_timeout=1 FOR TRUNCATE TABLE performance_schema.table_io_waits_summary_by_table',
    );
    assert.equal(
      truncateStatement('events_errors_summary_global_by_error', 2500, 'mariadb'),
      'SET STATEMENT lock_wait_timeout=3 FOR TRUNCATE TABLE performance_schema.events_errors_summary_global_by_error',
    );
    assert.equal(
      truncateStatement('events_statements_histogram_global', 250, 'mysql'),
      'TRUNCATE TABLE performance_schema.events_statements_histogram_global',
    );
    assert.throws(
      () => truncateStatement('x; DROP TABLE y', 250, 'mysql'),
      /invalid performance_schema table name/,
    );
  });

  void it('runs one statement with the truncate timeout as its deadline and the caller signal', async () => {
    const db = new SwitchDb();
    const ac = new AbortController();
    assert.equal(
      await tryTruncate(db, 'tbl_x', { timeoutMs: 300, flavor: 'mysql', signal: ac.signal }),
      undefined,
    );
    assert.equal(db.calls.length, 1);
    assert.equal(db.calls[0]?.sql, 'TRUNCATE TABLE performance_schema.tbl_x');
    assert.equal(db.calls[0]?.opts?.timeoutMs, 300);
    assert.equal(db.calls[0]?.opts?.signal, ac.signal);
  });

  void it('a failure becomes a truncate-timeout error keeping the errno, with no engine zeros', async () => {
    const db = new SwitchDb();
    db.fail = dbError("DROP command denied to user 'mon'@'localhost' for table 'tbl_x'", 1142);
    const err = await tryTruncate(db, 'tbl_x', { timeoutMs: 250, flavor: 'mysql' });
    assert.ok(err instanceof CollectError);
    assert.equal(
      err.message,
      "truncate table performance_schema.tbl_x failed: DROP command denied to user 'mon'@'localhost' for table 'tbl_x'",
    );
    assert.equal(err.policy, TRUNCATE_POLICY);
    assert.equal(err.errno, 1142);
    assert.deepEqual(err.zero, []);
  });
});

void describe('truncate-error policy (§0.5 table)', () => {
  const fail = () => new CollectError('truncate failed', { policy: TRUNCATE_POLICY, zero: [] });

  void it('row 1: no failure before, ok now → values as collected, no error', () => {
    const p = new TruncatePolicy('');
    assert.deepEqual(p.apply(VALUES, undefined), { values: VALUES });
    assert.equal(p.previousFailed, false);
  });

  void it('row 2: first failure → values as collected plus the error', () => {
    const p = new TruncatePolicy('report,zero,retry');
    const e = fail();
    const res = p.apply(VALUES, e);
    assert.equal(res.values, VALUES);
    assert.equal(res.error, e);
    assert.equal(p.previousFailed, true);
    assert.equal(p.stopped, false);
  });

  void it('rows 3 and 4 with drop: no values; the error only while the truncate still fails', () => {
    const p = new TruncatePolicy('');
    p.apply(VALUES, fail()); // row 2
    const e = fail();
    assert.deepEqual(p.apply(VALUES, e), { values: [], error: e }); // row 3
    assert.deepEqual(p.apply(VALUES, undefined), { values: [] }); // row 4: sample spans >1 interval
    assert.deepEqual(p.apply(VALUES, undefined), { values: VALUES }); // back to row 1
  });

  void it('rows 3 and 4 with zero: the values with value 0, group kept, meta dropped', () => {
    const p = new TruncatePolicy('ignore,zero');
    p.apply(VALUES, fail());
    const e = fail();
    assert.deepEqual(p.apply(VALUES, e), { values: ZEROED, error: e });
    assert.deepEqual(p.apply(VALUES, undefined), { values: ZEROED });
    assert.deepEqual(p.apply(VALUES, undefined), { values: VALUES });
    assert.deepEqual(zeroValues(VALUES), ZEROED);
    assert.equal(VALUES[0]?.value, 7, 'the collected values are not modified');
  });

  void it('stop: the first call entering rows 2–4 stops the level', () => {
    const p = new TruncatePolicy('report,drop,stop');
    assert.deepEqual(p.apply(VALUES, undefined), { values: VALUES });
    assert.equal(p.stopped, false);
    const e = fail();
    assert.deepEqual(p.apply(VALUES, e), { values: VALUES, error: e });
    assert.equal(p.stopped, true);
  });

  void it('a Db failing on demand walks the whole table', async () => {
    const db = new SwitchDb();
    const p = new TruncatePolicy('zero');
    const step = async () =>
      p.apply(VALUES, await tryTruncate(db, 'tbl_x', { timeoutMs: 250, flavor: 'mysql' }));
    assert.deepEqual(await step(), { values: VALUES });
    db.fail = dbError('query timed out after 250ms and was cancelled');
    const r2 = await step();
    assert.deepEqual(r2.values, VALUES);
    assert.match(
      r2.error?.message ?? '',
      /^truncate table performance_schema\.tbl_x failed: query timed out/,
    );
    const r3 = await step();
    assert.deepEqual(r3.values, ZEROED);
    assert.ok(r3.error instanceof CollectError);
    db.fail = undefined;
    assert.deepEqual(await step(), { values: ZEROED });
    assert.deepEqual(await step(), { values: VALUES });
    assert.equal(db.calls.length, 5);
  });
});

void describe('truncate against a real MariaDB performance_schema', () => {
  let server: MariaDB;
  let mon: PooledDb;
  let ro: PooledDb;
  const TABLE = 'table_io_waits_summary_by_table';

  const spec = (user: string, password: string) => tcpSpec(server, user, password);

  const countStar = async (): Promise<number> => {
    const rows = await server.query(
      `SELECT COUNT_STAR FROM performance_schema.${TABLE} WHERE OBJECT_SCHEMA='tr' AND OBJECT_NAME='t'`,
    );
    return Number(rows[0]?.COUNT_STAR);
  };

  before(async () => {
    server = await startMariaDB({ args: ['--performance-schema=ON'] });
    await server.query('CREATE DATABASE tr');
    await server.query('CREATE TABLE tr.t (id INT PRIMARY KEY) ENGINE=InnoDB');
    await server.createUser('mon', 'mon-pass-9', [
      'SELECT ON performance_schema.*',
      `DROP ON performance_schema.${TABLE}`,
    ]);
    await server.createUser('ro', 'ro-pass-9', ['SELECT ON performance_schema.*']);
    mon = createDb(spec('mon', 'mon-pass-9'));
    ro = createDb(spec('ro', 'ro-pass-9'));
  });
  after(async () => {
    await mon.close();
    await ro.close();
    await server.stop();
  });

  void it('empties the table with only the DROP privilege on it', async () => {
    await server.query('INSERT INTO tr.t VALUES (1), (2), (3), (4)');
    assert.equal(await countStar(), 4);
    assert.equal(await tryTruncate(mon, TABLE, { timeoutMs: 250, flavor: 'mariadb' }), undefined);
    assert.equal(await countStar(), 0);
  });

  void it('without DROP the truncate fails with 1142 and the table keeps its counts', async () => {
    await server.query('INSERT INTO tr.t VALUES (5)');
    const before = await countStar();
    assert.ok(before >= 1);
    const err = await tryTruncate(ro, TABLE, { timeoutMs: 250, flavor: 'mariadb' });
    assert.equal(err?.errno, 1142);
    assert.equal(err?.policy, TRUNCATE_POLICY);
    assert.match(
      err?.message ?? '',
      /^truncate table performance_schema\.table_io_waits_summary_by_table failed: .*DROP.* denied/,
    );
    assert.doesNotMatch(err?.message ?? '', /ro-pass-9/);
    assert.equal(await countStar(), before);
  });

  void it('a metadata lock held elsewhere: the deadline ends the wait; the server guard is scoped to the statement', async () => {
    const holder = await createConnection({ socketPath: server.socket, user: 'root' });
    try {
      // An open transaction that read the table holds a shared metadata lock on it.
      await holder.query('BEGIN');
      await holder.query(`SELECT COUNT(*) FROM performance_schema.${TABLE}`);

      let t0 = Date.now();
      const err = await tryTruncate(mon, TABLE, { timeoutMs: 300, flavor: 'mariadb' });
      const took = Date.now() - t0;
      assert.match(err?.message ?? '', /query timed out after 300ms and was cancelled/);
      assert.ok(took >= 250 && took < 950, `client deadline ended it (took ${took}ms)`);

      // Without a client deadline, SET STATEMENT lock_wait_timeout=1 ends it on the server.
      t0 = Date.now();
      await assert.rejects(
        mon.query(truncateStatement(TABLE, 300, 'mariadb')),
        (e: DbError) => e.errno === 1205,
      );
      const serverTook = Date.now() - t0;
      assert.ok(
        serverTook >= 900 && serverTook < 4000,
        `lock_wait_timeout=1 ended it (took ${serverTook}ms)`,
      );

      // ...and did not change the pooled sessions' own lock_wait_timeout.
      const rows = await mon.query('SELECT @@session.lock_wait_timeout AS lwt');
      assert.equal(rows[0]?.lwt, '5');
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    assert.equal(await tryTruncate(mon, TABLE, { timeoutMs: 250, flavor: 'mariadb' }), undefined);
  });
});
