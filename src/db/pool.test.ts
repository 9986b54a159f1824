import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConnectionSpec } from '../core/db.js';
import { createConnection } from 'mysql2/promise';
import { startMariaDB, type MariaDB } from '../../test/helpers/mariadb.js';
import { DB_ERROR_CODES, createDb, type PooledDb } from './pool.js';

function specFor(
  server: MariaDB,
  username: string,
  password: string,
  via: 'socket' | 'tcp' = 'tcp',
  port = server.port,
): ConnectionSpec {
  return new ConnectionSpec({
    username,
    password,
    ...(via === 'socket' ? { socket: server.socket } : { host: server.host, port }),
    connectTimeoutMs: 3000,
    redactedDsn:
      via === 'socket'
        ? `${username}:...@unix(${server.socket})/?interpolateParams=true&parseTime=true`
        : `${username}:...@tcp(${server.host}:${port})/?interpolateParams=true&parseTime=true`,
  });
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Poll the server until no statement with exactly this text runs (or fail after ~3 s). */
async function waitNotRunning(server: MariaDB, sql: string): Promise<number> {
  const start = Date.now();
  while (Date.now() - start < 3000) {
    const rows = await server.query(
      'SELECT COUNT(*) AS n FROM information_schema.processlist WHERE info = ?',
      [sql],
    );
    if (Number(rows[0]?.n) === 0) return Date.now() - start;
    await sleep(20);
  }
  throw new Error(`${sql} still running after 3 s`);
}

void describe('createDb (mysql2 pool) against a real MariaDB', () => {
  let server: MariaDB;
  let db: PooledDb;
  const open: PooledDb[] = [];
  const track = (d: PooledDb) => {
    open.push(d);
    return d;
  };

  before(async () => {
    server = await startMariaDB();
    await server.createUser('mon', 'mon-secret-pw', []);
    db = track(createDb(specFor(server, 'mon', 'mon-secret-pw')));
  });
  after(async () => {
    for (const d of open) await d.close();
    await server.stop();
  });

  void it('returns every column as text and NULL as null', async () => {
    const rows = await db.query(
      'SELECT 1 AS a, 1.50 AS b, ? AS c, NULL AS d, CAST(18446744073709551615 AS UNSIGNED) AS e, -3 AS f',
      ["it's"],
    );
    assert.deepEqual(rows, [{ a: '1', b: '1.50', c: "it's", d: null, e: '18446744073709551615', f: '-3' }]);
  });

  void it('reads rows the same on the first run of a statement and later (text columns without the typeCast hook)', async () => {
    const root = track(createDb(specFor(server, 'root', '', 'socket')));
    // The reference: every column through the typeCast hook, every time (a hook of the modifyDb kind).
    const viaHook = track(
      createDb(specFor(server, 'root', '', 'socket'), {
        modifyOptions: (o) => ({ ...o, typeCast: (field) => field.string() }),
      }),
    );
    await server.query('CREATE DATABASE IF NOT EXISTS textrows');
    await server.query('DROP TABLE IF EXISTS textrows.t');
    await server.query(
      "CREATE TABLE textrows.t (s VARCHAR(20), b BIGINT UNSIGNED, c CHAR(3), x TEXT, e ENUM('a','b'), vb VARBINARY(4)) CHARACTER SET utf8mb4",
    );
    await server.query(
      "INSERT INTO textrows.t VALUES ('héllo ✓', 18446744073709551615, 'ab', 'long text', 'b', 'ab'), (NULL, NULL, NULL, NULL, NULL, NULL)",
    );
    const fixed = [
      'SELECT s, b, c, x, e FROM textrows.t',
      'SELECT s, b, c, x, e, vb FROM textrows.t',
      "SELECT 1 AS a, 1.50 AS d, 2.5e0 AS f, CAST('2024-01-02' AS DATE) AS dt, CAST('2024-01-02 03:04:05' AS DATETIME) AS ts",
      'SELECT CAST(-3 AS SIGNED) AS n, NULL AS z, CAST(7 AS UNSIGNED) AS u',
    ];
    // Values that move between two reads: the same rows, names and kinds of value.
    const moving = [
      'SHOW GLOBAL STATUS',
      'SHOW GLOBAL VARIABLES',
      'SELECT subsystem, name, count FROM information_schema.innodb_metrics',
    ];
    const shape = (rows: Record<string, string | null>[]) =>
      rows.map((r) => Object.entries(r).map(([k, v], i) => [k, i === 0 || k === 'name' ? v : typeof v]));
    for (let run = 0; run < 3; run++) {
      for (const sql of fixed) assert.deepEqual(await root.query(sql), await viaHook.query(sql), sql);
      for (const sql of moving)
        assert.deepEqual(shape(await root.query(sql)), shape(await viaHook.query(sql)), sql);
    }
    const [row] = await root.query('SELECT s, b, c, x, e, vb FROM textrows.t');
    assert.deepEqual(row, {
      s: 'héllo ✓',
      b: '18446744073709551615',
      c: 'ab',
      x: 'long text',
      e: 'b',
      vb: 'ab',
    });
    // Columns that change type under a statement read without the hook: read again through it.
    await server.query('DROP TABLE IF EXISTS textrows.z');
    await server.query('CREATE TABLE textrows.z (v VARCHAR(10))');
    await server.query("INSERT INTO textrows.z VALUES ('007')");
    for (let run = 0; run < 2; run++)
      assert.deepEqual(await root.query('SELECT v FROM textrows.z'), [{ v: '007' }]);
    await server.query('ALTER TABLE textrows.z MODIFY v INT(3) ZEROFILL');
    for (let run = 0; run < 2; run++)
      assert.deepEqual(await root.query('SELECT v FROM textrows.z'), [{ v: '007' }]);
  });

  void it('leaves a literal ? alone when there are no parameters', async () => {
    assert.deepEqual(await db.query("SELECT '?' AS q", []), [{ q: '?' }]);
  });

  void it('returns [] for a statement without a result set', async () => {
    assert.deepEqual(await db.query('DO 1'), []);
  });

  void it('sets lock_wait_timeout=5 on each session', async () => {
    const rows = await db.query('SELECT @@SESSION.lock_wait_timeout AS t');
    assert.deepEqual(rows, [{ t: '5' }]);
  });

  void it('works over the unix socket too', async () => {
    const s = track(createDb(specFor(server, 'root', '', 'socket')));
    assert.deepEqual(await s.query('SELECT CURRENT_USER() AS u'), [{ u: 'root@localhost' }]);
  });

  void it('detects MariaDB 10.11 once per pool', async () => {
    const info = await db.serverInfo();
    assert.equal(info.flavor, 'mariadb');
    assert.deepEqual(info.version.slice(0, 2), [10, 11]);
    assert.match(info.versionString, /^10\.11\.\d+-MariaDB/);
    assert.equal(await db.serverInfo(), info);
  });

  void it('pings', async () => {
    await db.ping();
  });

  void it('kills a query at its timeout and keeps the pool usable', async () => {
    const [before] = await db.query('SELECT CONNECTION_ID() AS id');
    const aborted = async () =>
      Number((await server.query("SHOW GLOBAL STATUS LIKE 'Aborted_clients'"))[0]?.Value);
    const abortedBefore = await aborted();
    const t0 = Date.now();
    await assert.rejects(
      db.query('SELECT SLEEP(10)', [], { timeoutMs: 300 }),
      (err: Error & { code?: string }) => {
        assert.equal(err.code, DB_ERROR_CODES.timeout);
        assert.match(err.message, /timed out after 300ms/);
        return true;
      },
    );
    assert.ok(Date.now() - t0 < 1000, `rejected after ${Date.now() - t0} ms`);
    // The server really stopped running it (KILL QUERY), well within a second.
    const waited = await waitNotRunning(server, 'SELECT SLEEP(10)');
    assert.ok(Date.now() - t0 < 1500, `still running ${waited} ms after rejection`);
    await sleep(50);
    // The same connection went back to the pool: the KILL did not cost it.
    assert.deepEqual(await db.query('SELECT CONNECTION_ID() AS id'), [before]);
    // The KILL's side connection is gone, and it said goodbye (COM_QUIT): the server counts
    // no aborted client for it.
    const monConnections = async () =>
      Number(
        (await server.query("SELECT COUNT(*) AS n FROM information_schema.processlist WHERE user = 'mon'"))[0]
          ?.n,
      );
    for (let i = 0; i < 100 && (await monConnections()) > 1; i++) await sleep(20);
    assert.equal(await monConnections(), 1);
    assert.equal(await aborted(), abortedBefore);
    // And the pool serves three statements at once.
    const many = await Promise.all([1, 2, 3].map((n) => db.query('SELECT ? + SLEEP(0.1) AS n', [n])));
    assert.deepEqual(many, [[{ n: '1' }], [{ n: '2' }], [{ n: '3' }]]);
  });

  void it('kills a query when its signal aborts', async () => {
    const ac = new AbortController();
    const t0 = Date.now();
    setTimeout(() => ac.abort(new Error('deadline passed')), 200);
    await assert.rejects(
      db.query('SELECT SLEEP(9)', [], { signal: ac.signal }),
      (err: Error & { code?: string }) => {
        assert.equal(err.code, DB_ERROR_CODES.cancelled);
        assert.equal(err.message, 'query cancelled: deadline passed');
        return true;
      },
    );
    assert.ok(Date.now() - t0 < 1000);
    await waitNotRunning(server, 'SELECT SLEEP(9)');
    assert.ok(Date.now() - t0 < 1500);
    assert.deepEqual(await db.query('SELECT 2 AS x'), [{ x: '2' }]);
  });

  void it('runs a statement batch in one request: rows per statement, on a connection of its own', async () => {
    const [one] = await db.query('SELECT CONNECTION_ID() AS id');
    const sqls = [
      'SELECT 1 AS a, NULL AS b -- a trailing comment',
      "SHOW GLOBAL VARIABLES LIKE 'lock\\_wait\\_timeout'",
      'DO 1',
      'SELECT CONNECTION_ID() AS id, @@SESSION.lock_wait_timeout AS t',
      'SELECT 2 AS a FROM DUAL WHERE 1 = 0',
    ];
    const results = await db.queryBatch(sqls);
    assert.equal(results.length, 5);
    assert.deepEqual(results[0], [{ a: '1', b: null }]);
    assert.equal(results[1]?.[0]?.Variable_name, 'lock_wait_timeout');
    assert.deepEqual(results[2], []);
    // its own connection, set up like every other (lock_wait_timeout=5)
    assert.notEqual(results[3]?.[0]?.id, one?.id);
    assert.equal(results[3]?.[0]?.t, '5');
    assert.deepEqual(results[4], []);
    for (const sql of sqls) assert.ok(db.statementsRun?.().has(sql), sql);
    // the statements' own connections still take one statement per request
    await assert.rejects(db.query('SELECT 1; SELECT 2'), { errno: 1064 });
    // the session variables a batch asks for apply to its statements
    const withSession = await db.queryBatch(['SELECT @@SESSION.lock_wait_timeout AS t', 'DO 2'], {
      session: { lock_wait_timeout: 7 },
    });
    assert.deepEqual(withSession, [[{ t: '7' }], []]);
  });

  void it("reads each result set of a batch as the server's text, whatever its columns' types", async () => {
    // Numbers, a date, a decimal, NULL and binary as the server writes them, between result
    // sets of text and BIGINT columns, twice (mysql2 keeps a row parser per set of columns).
    const typed =
      "SELECT 42 AS i, CAST(1e21 AS DOUBLE) AS d, CAST('2026-01-02 03:04:05' AS DATETIME) AS t, " +
      "CAST(1.5 AS DECIMAL(5,2)) AS m, CAST(NULL AS SIGNED) AS n, _binary'ab' AS b";
    const sqls = [
      "SELECT 'x' AS s, CAST(9007199254740993 AS SIGNED) AS big",
      typed,
      "SHOW GLOBAL VARIABLES LIKE 'lock\\_wait\\_timeout'",
      typed,
      "SELECT 'y' AS s",
    ];
    const want = { i: '42', d: '1e21', t: '2026-01-02 03:04:05', m: '1.50', n: null, b: 'ab' };
    for (let round = 0; round < 2; round++) {
      const results = await db.queryBatch(sqls);
      assert.deepEqual(results[0], [{ s: 'x', big: '9007199254740993' }]);
      assert.deepEqual(results[1], [want]);
      assert.equal(results[2]?.[0]?.Variable_name, 'lock_wait_timeout');
      assert.match(results[2]?.[0]?.Value ?? '', /^\d+$/);
      assert.deepEqual(results[3], [want]);
      assert.deepEqual(results[4], [{ s: 'y' }]);
      // the same text as each statement read on its own
      assert.deepEqual(results[1], await db.query(typed));
    }
  });

  void it('fails a statement batch at its first failing statement, with the server error', async () => {
    await assert.rejects(
      db.queryBatch(['SELECT 1 AS a', 'SELECT * FROM mysql.user', 'SELECT 3 AS c']),
      (err: Error & Record<string, unknown>) => {
        assert.equal(err.errno, 1142);
        assert.equal(err.sqlState, '42000');
        return true;
      },
    );
    // a statement holding a `;` of its own gives more results than statements
    await assert.rejects(db.queryBatch(['SELECT 1; SELECT 2', 'SELECT 3']), /expected 2 results, got 3/);
    assert.deepEqual(await db.queryBatch(['SELECT 4 AS d', 'SELECT 5 AS e']), [[{ d: '4' }], [{ e: '5' }]]);
  });

  // The server sends a batch's answer as its network buffer fills (it does not flush between
  // the statements of one request): a result set is seen complete once the statements after
  // it have produced a buffer's worth. The big row below does that; GET_LOCK then holds the
  // batch on the server until the test lets it go.
  const held = async (): Promise<{ release: () => Promise<void> }> => {
    const conn = await createConnection({
      socketPath: server.socket,
      user: 'mon',
      password: 'mon-secret-pw',
    });
    await conn.query("SELECT GET_LOCK('sonde_batch_test', 5)");
    return {
      release: async () => {
        await conn.query("DO RELEASE_LOCK('sonde_batch_test')");
        await conn.end();
      },
    };
  };

  void it("tells each statement's rows of a batch once its result set is complete, while the rest runs", async () => {
    const lock = await held();
    const told: [number, unknown][] = [];
    let settled = false;
    const sqls = [
      'SELECT 1 AS a',
      'DO 1',
      "SELECT LENGTH(REPEAT('x', 40000)) AS n, REPEAT('x', 40000) AS big",
      // the lock is let go at once: the batch's connection must not keep it
      "SELECT GET_LOCK('sonde_batch_test', 20) + RELEASE_LOCK('sonde_batch_test') AS l",
      'SELECT 2 AS a FROM DUAL WHERE 1 = 0',
    ];
    const running = db.queryBatch(sqls, {}, (i, rows) => told.push([i, rows.map((r) => r.a ?? r.n ?? r.l)]));
    const done = running.finally(() => (settled = true));
    // the first two are told while the server waits for the lock in the fourth
    while (told.length < 2 && !settled) await sleep(5);
    assert.equal(settled, false);
    assert.deepEqual(told, [
      [0, ['1']],
      [1, []],
    ]);
    await lock.release();
    const results = await done;
    assert.equal(results.length, 5);
    assert.deepEqual(told, [
      [0, ['1']],
      [1, []],
      [2, ['40000']],
      [3, ['2']],
      [4, []],
    ]);
    // a failing statement: the batch rejects with its error, and nothing from it or after it is told
    const before: number[] = [];
    await assert.rejects(
      db.queryBatch(['SELECT 1 AS a', 'SELECT * FROM mysql.user', 'SELECT 3 AS c'], {}, (i) =>
        before.push(i),
      ),
      { errno: 1142 },
    );
    assert.ok(
      before.every((i) => i < 1),
      String(before),
    );
    // a statement with a `;` of its own: told in order, the count checked at the end
    const counted: number[] = [];
    await assert.rejects(
      db.queryBatch(['SELECT 1; SELECT 2', 'SELECT 3'], {}, (i) => counted.push(i)),
      /expected 2 results, got 3/,
    );
    assert.deepEqual(counted, [0, 1]);
  });

  void it('rejects a batch whose connection is killed while it runs', async () => {
    const lock = await held();
    // a pool of its own: the killed connection must not meet the other tests' statements
    const own = track(createDb(specFor(server, 'mon', 'mon-secret-pw')));
    let id = '';
    const running = own.queryBatch(
      [
        'SELECT CONNECTION_ID() AS id',
        "SELECT REPEAT('x', 40000) AS big",
        "SELECT GET_LOCK('sonde_batch_test', 20)",
        'SELECT 1',
      ],
      {},
      (i, rows) => {
        if (i === 0) id = rows[0]?.id ?? '';
      },
    );
    // the batch's end, taken at once: it fails while the test still awaits the KILL
    let settled = false;
    const outcome = running.then(
      () => 'resolved',
      (err: unknown) => err,
    );
    void outcome.then(() => (settled = true));
    while (id === '' && !settled) await sleep(5);
    await server.query(`KILL ${Number(id)}`);
    assert.ok((await outcome) instanceof Error);
    await lock.release();
  });

  void it('cancels a statement batch when its signal aborts', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('deadline passed')), 200);
    await assert.rejects(db.queryBatch(['SELECT 1', 'SELECT SLEEP(9)', 'SELECT 2'], { signal: ac.signal }), {
      code: DB_ERROR_CODES.cancelled,
      message: 'query cancelled: deadline passed',
    });
    // the server stopped it (KILL QUERY), whatever the process list shows as its text
    const t0 = Date.now();
    const running = async (): Promise<number> =>
      Number(
        (
          await server.query(
            "SELECT COUNT(*) AS n FROM information_schema.processlist WHERE info LIKE '%SLEEP(9)%' AND info NOT LIKE '%processlist%'",
          )
        )[0]?.n,
      );
    while ((await running()) > 0 && Date.now() - t0 < 3000) await sleep(20);
    assert.equal(await running(), 0);
    assert.deepEqual(await db.queryBatch(['SELECT 6 AS f', 'SELECT 7 AS g']), [[{ f: '6' }], [{ g: '7' }]]);
  });

  void it('rejects at once when the signal is already aborted', async () => {
    await assert.rejects(db.query('SELECT 1', [], { signal: AbortSignal.abort() }), {
      code: DB_ERROR_CODES.cancelled,
    });
  });

  void it('gives up waiting for a pool slot at the timeout', async () => {
    const busy = [1, 2, 3].map(() => db.query('SELECT SLEEP(0.8)'));
    await sleep(50);
    const t0 = Date.now();
    await assert.rejects(db.query('SELECT 1', [], { timeoutMs: 150 }), { code: DB_ERROR_CODES.timeout });
    assert.ok(Date.now() - t0 < 600);
    assert.equal((await Promise.all(busy)).length, 3);
    assert.deepEqual(await db.query('SELECT 3 AS x'), [{ x: '3' }]);
  });

  void it('reports a server error with errno, code and sqlState', async () => {
    await assert.rejects(db.query('SELECT * FROM mysql.user'), (err: Error & Record<string, unknown>) => {
      assert.equal(err.errno, 1142);
      assert.equal(err.code, 'ER_TABLEACCESS_DENIED_ERROR');
      assert.equal(err.sqlState, '42000');
      assert.match(err.message, /SELECT command denied to user 'mon'@'127.0.0.1' for table `mysql`\.`user`/);
      return true;
    });
  });

  void it('reports access denied as errno 1045 without the password', async () => {
    const bad = track(createDb(specFor(server, 'mon', 'wrong-password-xyz')));
    await assert.rejects(bad.query('SELECT 1'), (err: Error & Record<string, unknown>) => {
      assert.equal(err.errno, 1045);
      assert.equal(err.code, 'ER_ACCESS_DENIED_ERROR');
      assert.equal(err.sqlState, '28000');
      assert.match(err.message, /Access denied for user 'mon'/);
      assert.doesNotMatch(err.message + JSON.stringify(err), /wrong-password-xyz/);
      return true;
    });
  });

  void it('scrubs the password from any error text defensively', async () => {
    await server.createUser('scrub', 'SecretPw123', []);
    const d = track(createDb(specFor(server, 'scrub', 'SecretPw123')));
    await assert.rejects(d.query('SELECT no_such_col_SecretPw123'), (err: Error & { errno?: number }) => {
      assert.equal(err.errno, 1054);
      assert.equal(err.message, "Unknown column 'no_such_col_...' in 'SELECT'");
      return true;
    });
  });

  void it('reports a refused TCP connection as a DbError', async () => {
    const nowhere = track(createDb(specFor(server, 'mon', 'x', 'tcp', 1)));
    await assert.rejects(nowhere.ping(), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'ECONNREFUSED');
      assert.notEqual(err.message, '');
      return true;
    });
  });

  void it('closes the extra connections a second after statements ran in parallel, keeps one, and sets no timer while idle', async () => {
    const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const idleTimers = timers();
    // A user of its own: the other tests' pools each keep an idle connection as 'mon'.
    await server.createUser('idler', 'idler-secret-pw', []);
    const d = track(createDb(specFor(server, 'idler', 'idler-secret-pw')));
    await d.query('SELECT 1');
    assert.equal(timers(), idleTimers, 'a pool with one idle connection sets no timer');
    const connections = async (): Promise<number> =>
      Number(
        (
          await server.query("SELECT COUNT(*) AS n FROM information_schema.processlist WHERE user = 'idler'")
        )[0]?.n,
      );
    const aborted = async (): Promise<number> =>
      Number((await server.query("SHOW GLOBAL STATUS LIKE 'Aborted_clients'"))[0]?.Value);
    const abortedBefore = await aborted();
    const [c1, c2, c3] = await Promise.all([
      d.query('SELECT SLEEP(0.2) AS a'),
      d.query('SELECT SLEEP(0.2) AS b'),
      d.query('SELECT SLEEP(0.2) AS c'),
    ]);
    assert.deepEqual(
      [c1, c2, c3].map((r) => r.length),
      [1, 1, 1],
    );
    const during = await connections();
    assert.ok(during >= 3, `${during} connections after three statements at once`);
    const start = Date.now();
    while ((await connections()) > 1 && Date.now() - start < 5000) await sleep(50);
    assert.equal(await connections(), 1, 'one connection kept');
    assert.equal(await aborted(), abortedBefore, 'closed with COM_QUIT, not dropped');
    assert.equal(timers(), idleTimers, 'no timer left once only one connection is idle');
    // The kept connection still serves.
    assert.deepEqual(await d.query('SELECT 2 AS v'), [{ v: '2' }]);
  });

  void it('rejects after close()', async () => {
    const d = createDb(specFor(server, 'mon', 'mon-secret-pw'));
    await d.query('SELECT 1');
    await d.close();
    await d.close();
    await assert.rejects(d.query('SELECT 1'), { code: DB_ERROR_CODES.closed });
  });

  void it('opens fresh connections after the server restarted', async () => {
    const d = track(createDb(specFor(server, 'mon', 'mon-secret-pw')));
    await Promise.all([1, 2, 3].map(() => d.query('SELECT SLEEP(0.05)')));
    await server.kill();
    await assert.rejects(d.query('SELECT 1', [], { timeoutMs: 2000 }));
    await server.restart();
    assert.deepEqual(await d.query('SELECT 4 AS x'), [{ x: '4' }]);
    assert.equal((await d.serverInfo()).flavor, 'mariadb');
  });

  void describe('password reload on access denied', () => {
    /** Kill every connection of `user` so the pool must open new ones. */
    async function dropConnections(user: string): Promise<void> {
      const rows = await server.query('SELECT id FROM information_schema.processlist WHERE user = ?', [user]);
      for (const r of rows) await server.query(`KILL CONNECTION ${Number(r.id)}`);
      await sleep(100);
    }

    void it('swaps to the reloaded password and retries, one reload for concurrent failures', async () => {
      await server.createUser('rel', 'first-password', []);
      let reloads = 0;
      let current = 'first-password';
      const d = track(
        createDb(specFor(server, 'rel', 'first-password'), {
          reloadCredentials: async () => {
            reloads++;
            await sleep(50);
            return specFor(server, 'rel', current);
          },
          onPasswordReloadError: () => assert.fail('no reload error expected'),
        }),
      );
      assert.deepEqual(await d.query('SELECT 1 AS one'), [{ one: '1' }]);
      await server.query("ALTER USER 'rel'@'%' IDENTIFIED BY 'second-password'");
      current = 'second-password';
      await dropConnections('rel');
      const rows = await Promise.all([1, 2, 3].map((n) => d.query('SELECT ? AS n', [n])));
      assert.deepEqual(rows, [[{ n: '1' }], [{ n: '2' }], [{ n: '3' }]]);
      assert.equal(reloads, 1);
    });

    void it('returns the original error when the credentials did not change', async () => {
      await server.createUser('same', 'pw-one-1', []);
      let reloads = 0;
      const d = track(
        createDb(specFor(server, 'same', 'pw-wrong-2'), {
          reloadCredentials: async () => {
            reloads++;
            return specFor(server, 'same', 'pw-wrong-2');
          },
        }),
      );
      await assert.rejects(d.query('SELECT 1'), { errno: 1045 });
      assert.equal(reloads, 1);
    });

    void it('reports a failed reload with the redacted DSN and returns the original error', async () => {
      const messages: string[] = [];
      const spec = specFor(server, 'mon', 'not-the-password');
      const d = track(
        createDb(spec, {
          reloadCredentials: async () => {
            throw new Error('open /etc/sonde/pw: no such file');
          },
          onPasswordReloadError: (m) => messages.push(m),
        }),
      );
      await assert.rejects(d.query('SELECT 1'), { errno: 1045 });
      assert.deepEqual(messages, [`${spec.redactedDsn}: open /etc/sonde/pw: no such file`]);
    });
  });
});

describe('mysql2 row parser cache', () => {
  it('is cut to ROW_PARSER_SLOTS slots when the first pool is made: the default slots are freed', async () => {
    const { execFile } = await import('node:child_process');
    const { promisify } = await import('node:util');
    const url = (p: string) => JSON.stringify(new URL(p, import.meta.url).href);
    // A fresh process, so that no pool was made yet; nothing connects (no statement runs).
    const script = [
      "(await import('node:v8')).setFlagsFromString('--expose-gc');",
      "const gc = (await import('node:vm')).runInNewContext('gc');",
      `const { createDb, ROW_PARSER_SLOTS } = await import(${url('./pool.js')});`,
      `const { ConnectionSpec } = await import(${url('../core/db.js')});`,
      "const spec = () => new ConnectionSpec({ username: 'u', password: '', host: '127.0.0.1', port: 1, connectTimeoutMs: 100, redactedDsn: 'u:...@tcp(127.0.0.1:1)/' });",
      "gc({ type: 'major', execution: 'sync' });",
      'const before = process.memoryUsage().heapUsed;',
      'const db = createDb(spec());',
      "gc({ type: 'major', execution: 'sync' });",
      'const after = process.memoryUsage().heapUsed;',
      'const db2 = createDb(spec());',
      "gc({ type: 'major', execution: 'sync' });",
      'const second = process.memoryUsage().heapUsed;',
      'await Promise.all([db.close(), db2.close()]);',
      'console.log(JSON.stringify({ slots: ROW_PARSER_SLOTS, freedKiB: (before - after) / 1024, secondKiB: (second - after) / 1024 }));',
    ].join('\n');
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script]);
    const r = JSON.parse(stdout) as { slots: number; freedKiB: number; secondKiB: number };
    assert.equal(r.slots, 5000);
    // 15,000 → 5,000 slots in four arrays of 8-byte entries: 312 KiB, less the pool's own
    // objects (about 90 KiB: without the cut, the figure is about -20 KiB).
    assert.ok(r.freedKiB > 150, `freed ${r.freedKiB} KiB`);
    // A second pool frees nothing more: the cache was sized once.
    assert.ok(r.secondKiB > -20, `second pool: ${r.secondKiB} KiB`);
  });
});
