import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { createConnection } from 'mysql2/promise';
import { freePort, startMariaDB, type MariaDB } from './mariadb.js';

void describe('throwaway MariaDB helper', () => {
  let db: MariaDB;
  before(async () => {
    db = await startMariaDB();
  });
  after(async () => {
    await db.stop();
  });

  void it('finds a free port', async () => {
    const port = await freePort();
    assert.ok(port > 0 && port < 65536);
  });

  void it('answers SELECT 1 as root over the socket', async () => {
    const rows = await db.query('SELECT 1 AS one');
    assert.deepEqual(rows, [{ one: 1 }]);
    assert.equal(db.host, '127.0.0.1');
    assert.ok(db.pid > 0);
    const [v] = await db.query('SELECT @@version AS v, @@port AS p, @@socket AS s');
    assert.match(String(v?.v), /MariaDB/);
    assert.equal(Number(v?.p), db.port);
    assert.equal(v?.s, db.socket);
  });

  void it('returns [] for statements without a result set', async () => {
    assert.deepEqual(await db.query('DO 1'), []);
  });

  void it('creates a user that can log in over TCP with its grants', async () => {
    await db.createUser('sonde_t', 'pw-secret', ['PROCESS ON *.*']);
    const conn = await createConnection({
      host: db.host,
      port: db.port,
      user: 'sonde_t',
      password: 'pw-secret',
    });
    try {
      const [rows] = await conn.query('SELECT CURRENT_USER() AS u');
      assert.deepEqual(rows, [{ u: 'sonde_t@%' }]);
      const [grants] = await conn.query('SHOW GRANTS');
      assert.match(JSON.stringify(grants), /GRANT PROCESS ON \*\.\*/);
    } finally {
      await conn.end();
    }
    await assert.rejects(
      createConnection({ host: db.host, port: db.port, user: 'sonde_t', password: 'wrong' }),
      (err: { errno?: number }) => err.errno === 1045,
    );
  });

  void it('keeps committed data across kill and restart', async () => {
    await db.query('CREATE DATABASE t');
    await db.query('CREATE TABLE t.k (id INT PRIMARY KEY) ENGINE=InnoDB');
    await db.query('INSERT INTO t.k VALUES (1), (2)');
    const oldPid = db.pid;
    await db.kill();
    assert.throws(() => process.kill(oldPid, 0), /ESRCH/);
    await db.restart();
    assert.notEqual(db.pid, oldPid);
    const rows = await db.query('SELECT COUNT(*) AS n FROM t.k');
    assert.deepEqual(rows, [{ n: 2 }]);
    const [p] = await db.query('SELECT @@port AS p');
    assert.equal(Number(p?.p), db.port);
  });

  void it('stop() ends the process, removes the temp dir and is idempotent', async () => {
    const other = await startMariaDB({ args: ['--max-connections=33'] });
    const [m] = await other.query('SELECT @@max_connections AS m');
    assert.equal(Number(m?.m), 33);
    const pid = other.pid;
    assert.ok(existsSync(other.datadir));
    await other.stop();
    await other.stop();
    assert.equal(existsSync(other.datadir), false);
    assert.throws(() => process.kill(pid, 0), /ESRCH/);
  });

  void it('fails with the error log tail when mariadbd cannot start, leaving nothing behind', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const addr = blocker.address();
    const taken = typeof addr === 'object' && addr !== null ? addr.port : 0;
    const root = mkdtempSync(join(tmpdir(), 'sonde-helper-test-'));
    try {
      await assert.rejects(
        startMariaDB({ args: [`--port=${taken}`], tmpRoot: root }),
        /mariadbd exited during startup[\s\S]*error log tail:[\s\S]*(Address already in use|Bind on TCP\/IP port)/,
      );
    } finally {
      await new Promise((r) => blocker.close(r));
    }
    assert.deepEqual(readdirSync(root), []);
    rmdirSync(root);
  });
});
