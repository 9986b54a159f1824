import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createConnection } from 'mysql2/promise';
import { CollectError } from '../../core/collector.js';
import { type Db, type DbError, type QueryOptions, type Row, type ServerInfo } from '../../core/db.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import { createDb, type PooledDb } from '../../db/pool.js';
import { parseServerVersion } from '../../db/flavor.js';
import { NO_SIGNAL } from './test-helpers.js';
import { startMariaDB, type MariaDB, tcpSpec } from '../../../test/helpers/mariadb.js';
import {
  DEFAULT_TRUNCATE_TIMEOUT_MS,
  LevelTruncate,
  TRUNCATE_POLICY,
  TruncateTracker,
  lockWaitSeconds,
  parseTruncateTimeout,
  truncateHow,
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

  void it('the source table picks the statement form: SET STATEMENT on MariaDB, a plain TRUNCATE on MySQL', () => {
    assert.equal(truncateHow(parseServerVersion('10.11.6-MariaDB')), 'set-statement-truncate');
    assert.equal(truncateHow(parseServerVersion('8.0.36')), 'truncate');
    assert.equal(truncateHow(parseServerVersion('5.7.44-log')), 'truncate');
  });

  void it('MariaDB scopes lock_wait_timeout to the TRUNCATE itself; MySQL relies on the deadline', () => {
    assert.equal(
      truncateStatement('table_io_waits_summary_by_table', 250, 'set-statement-truncate'),
      'SET STATEMENT lock_wait_timeout=1 FOR TRUNCATE TABLE performance_schema.table_io_waits_summary_by_table',
    );
    assert.equal(
      truncateStatement('events_errors_summary_global_by_error', 2500, 'set-statement-truncate'),
      'SET STATEMENT lock_wait_timeout=3 FOR TRUNCATE TABLE performance_schema.events_errors_summary_global_by_error',
    );
    assert.equal(
      truncateStatement('events_statements_histogram_global', 250, 'truncate'),
      'TRUNCATE TABLE performance_schema.events_statements_histogram_global',
    );
    assert.throws(
      () => truncateStatement('x; DROP TABLE y', 250, 'truncate'),
      /invalid performance_schema table name/,
    );
  });

  void it('runs one statement with the truncate timeout as its deadline and the caller signal', async () => {
    const db = new SwitchDb();
    const ac = new AbortController();
    assert.equal(
      await tryTruncate(db, 'tbl_x', { timeoutMs: 300, how: 'truncate', signal: ac.signal }),
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
    const err = await tryTruncate(db, 'tbl_x', { timeoutMs: 250, how: 'truncate' });
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

void describe('truncate outcomes as typed errors for the engine', () => {
  const fail = () => new CollectError('truncate failed', { policy: TRUNCATE_POLICY, zero: [], errno: 1142 });

  void it('row 1: no failure before, ok now → values as collected, no error', () => {
    const t = new TruncateTracker();
    assert.deepEqual(t.result(VALUES, undefined), { values: VALUES });
    assert.equal(t.previousFailed, false);
  });

  void it('row 2: first failure → values as collected plus the error, which adds no zero values', () => {
    const t = new TruncateTracker();
    const e = fail();
    const res = t.result(VALUES, e);
    assert.equal(res.values, VALUES);
    assert.equal(res.error, e);
    assert.deepEqual(res.error?.zero, []);
    assert.equal(t.previousFailed, true);
  });

  void it('row 3: failing again → no values; the error carries the zeroed values for a zero policy', () => {
    const t = new TruncateTracker();
    t.result(VALUES, fail());
    const res = t.result(VALUES, fail());
    assert.deepEqual(res.values, []);
    assert.equal(res.error?.message, 'truncate failed');
    assert.equal(res.error?.policy, TRUNCATE_POLICY);
    assert.equal(res.error?.errno, 1142);
    assert.deepEqual(res.error?.zero, ZEROED);
    assert.equal(VALUES[0]?.value, 7, 'the collected values are not modified');
  });

  void it('row 4: ok after a failure → no values and a quiet error with the zeroed values', () => {
    const t = new TruncateTracker();
    t.result(VALUES, fail());
    const res = t.result(VALUES, undefined);
    assert.deepEqual(res.values, []);
    assert.equal(res.error?.quiet, true);
    assert.equal(res.error?.policy, TRUNCATE_POLICY);
    assert.deepEqual(res.error?.zero, ZEROED);
    assert.deepEqual(t.result(VALUES, undefined), { values: VALUES }, 'back to row 1');
  });

  void it('zeroed values keep name, type and group, and drop meta', () => {
    assert.deepEqual(zeroValues(VALUES), ZEROED);
  });

  void it('a level truncates by its options: default per domain, timeout parsed when truncating', async () => {
    const dp = (options: Record<string, string>) => ({ metrics: [], options, errors: {} });
    assert.equal(new LevelTruncate(dp({}), true).enabled, true);
    assert.equal(new LevelTruncate(dp({ 'truncate-table': 'no' }), true).enabled, false);
    assert.equal(new LevelTruncate(dp({}), false).enabled, false);
    assert.equal(
      new LevelTruncate(dp({ 'truncate-table': 'yes', 'truncate-timeout': '1s' }), false).timeoutMs,
      1000,
    );
    assert.equal(
      new LevelTruncate(dp({ 'truncate-table': 'no', 'truncate-timeout': 'x' }), true).timeoutMs,
      250,
    );
    assert.throws(
      () => new LevelTruncate(dp({ 'truncate-timeout': 'x' }), false, true),
      /Invalid truncate duration/,
    );
    const db = new SwitchDb();
    const off = new LevelTruncate(dp({ 'truncate-table': 'no' }), true);
    assert.deepEqual(await off.after(db, 'tbl_x', VALUES, 'truncate', NO_SIGNAL), { values: VALUES });
    assert.equal(db.calls.length, 0);
  });

  void it('a Db failing on demand walks the whole table', async () => {
    const db = new SwitchDb();
    const level = new LevelTruncate({ metrics: [], options: {}, errors: {} }, true);
    const step = () => level.after(db, 'tbl_x', VALUES, 'truncate', NO_SIGNAL);
    assert.deepEqual(await step(), { values: VALUES });
    db.fail = dbError('query timed out after 250ms and was cancelled');
    const r2 = await step();
    assert.deepEqual(r2.values, VALUES);
    assert.match(
      r2.error?.message ?? '',
      /^truncate table performance_schema\.tbl_x failed: query timed out/,
    );
    const r3 = await step();
    assert.deepEqual(r3.values, []);
    assert.deepEqual(r3.error?.zero, ZEROED);
    db.fail = undefined;
    const r4 = await step();
    assert.deepEqual([r4.values, r4.error?.quiet, r4.error?.zero], [[], true, ZEROED]);
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
    assert.equal(await tryTruncate(mon, TABLE, { timeoutMs: 250, how: 'set-statement-truncate' }), undefined);
    assert.equal(await countStar(), 0);
  });

  void it('without DROP the truncate fails with 1142 and the table keeps its counts', async () => {
    await server.query('INSERT INTO tr.t VALUES (5)');
    const before = await countStar();
    assert.ok(before >= 1);
    const err = await tryTruncate(ro, TABLE, { timeoutMs: 250, how: 'set-statement-truncate' });
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
      const err = await tryTruncate(mon, TABLE, { timeoutMs: 300, how: 'set-statement-truncate' });
      const took = Date.now() - t0;
      assert.match(err?.message ?? '', /query timed out after 300ms and was cancelled/);
      assert.ok(took >= 250 && took < 950, `client deadline ended it (took ${took}ms)`);

      // Without a client deadline, SET STATEMENT lock_wait_timeout=1 ends it on the server.
      t0 = Date.now();
      await assert.rejects(
        mon.query(truncateStatement(TABLE, 300, 'set-statement-truncate')),
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
    assert.equal(await tryTruncate(mon, TABLE, { timeoutMs: 250, how: 'set-statement-truncate' }), undefined);
  });
});
