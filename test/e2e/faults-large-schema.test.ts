/**
 * A server with very many tables in one schema (5,000 here; SONDE_TEST_TABLES to change
 * it; bench/large-schema.ts measures 20,000) whose connections are all taken by idle
 * clients, as a busy production server's may be. The catalogue queries (information_schema)
 * take seconds there; when one runs past its deadline, no KILL can reach the server (no free
 * connection for it), so the server's own statement time limit must end it: the query is
 * gone from the processlist within 2 s of the deadline, and the domain's status says it is
 * too slow on this server, naming what bounds it. And the exporter's scrapes of that schema
 * keep their series: a scrape whose time limit is shorter than the catalogue read serves the
 * last complete read instead of dropping thousands of series.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection, type Connection } from 'mysql2/promise';
import { connectAs, freePort, startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { BIN, startAgent, type Agent } from '../helpers/agent.js';

const PASSWORD = 'Many-20k-pass';
const TABLES = Number(process.env.SONDE_TEST_TABLES ?? 5000);
/** freq 1s: each domain's deadline is 800 ms (freq − 20 %). */
const DEADLINE_MS = 800;
const PLAN = `slow:
  freq: 1s
  collect:
    size.database: {}
    autoinc:
      options:
        include: big.*
`;

let db: MariaDB;
let agent: Agent;
const idle: Connection[] = [];

/** Create `n` tables in schema `big` with one stored procedure call; returns the time taken. */
export async function createTables(server: Pick<MariaDB, 'query'>, n: number): Promise<number> {
  await server.query('CREATE DATABASE IF NOT EXISTS big');
  await server.query('DROP PROCEDURE IF EXISTS big.make_tables');
  await server.query(
    `CREATE PROCEDURE big.make_tables(n INT) BEGIN DECLARE i INT DEFAULT 0; WHILE i < n DO ` +
      `SET @s = CONCAT('CREATE TABLE big.t', i, ' (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB'); ` +
      `PREPARE st FROM @s; EXECUTE st; DEALLOCATE PREPARE st; SET i = i + 1; END WHILE; END`,
  );
  const t0 = Date.now();
  await server.query('CALL big.make_tables(?)', [n]);
  return Date.now() - t0;
}

/** Open idle connections until the server refuses one (max_connections reached). */
async function fillConnections(server: MariaDB): Promise<number> {
  for (;;) {
    try {
      idle.push(
        await createConnection({ host: server.host, port: server.port, user: 'idle', password: 'idle-pass' }),
      );
    } catch (err) {
      if ((err as { errno?: number }).errno === 1040) return idle.length;
      throw err;
    }
  }
}

interface Seen {
  /** Longest running time (ms) of a sonde catalogue query seen in the processlist. */
  maxMs: number;
  samples: number;
}

/** Watch the processlist for `ms`: sonde's information_schema queries and how long they ran. */
async function watchProcesslist(ms: number): Promise<Seen> {
  const seen: Seen = { maxMs: 0, samples: 0 };
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const rows = await db.query(
      "SELECT TIME_MS AS ms FROM information_schema.PROCESSLIST WHERE USER = 'sonde' AND COMMAND = 'Query' AND INFO LIKE '%information_schema%'",
    );
    for (const r of rows) seen.maxMs = Math.max(seen.maxMs, Number(r.ms));
    seen.samples += rows.length;
    await new Promise((r) => setTimeout(r, 200));
  }
  return seen;
}

/** Series (non-comment lines) of one exposition, all of them and those of `prefix`. */
function countSeries(text: string, prefix: string): { all: number; prefixed: number } {
  const lines = text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
  return { all: lines.length, prefixed: lines.filter((l) => l.startsWith(prefix)).length };
}

/** sonde as mysqld_exporter with `--collect.info_schema.tables` on schema `big`; stop() ends it. */
async function startTablesExporter(): Promise<{ base: string; stop(): Promise<void> }> {
  const port = await freePort();
  const home = mkdtempSync(join(tmpdir(), 'sonde-big-exporter-'));
  const proc = spawn(
    process.execPath,
    [
      BIN,
      `--mysqld.address=127.0.0.1:${db.port}`,
      '--mysqld.username=sonde',
      `--web.listen-address=127.0.0.1:${port}`,
      '--collect.info_schema.tables',
      '--collect.info_schema.tables.databases=big',
    ],
    { stdio: ['ignore', 'ignore', 'ignore'], env: { HOME: home, MYSQLD_EXPORTER_PASSWORD: PASSWORD } },
  );
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  while (
    !(await fetch(`${base}/`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (Date.now() > deadline || proc.exitCode !== null) throw new Error('the exporter did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    base,
    stop: async () => {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
      rmSync(home, { recursive: true, force: true });
    },
  };
}

describe('faults: a schema with thousands of tables and no free connection', () => {
  before(async () => {
    db = await startMariaDB({
      args: [
        '--max-connections=24',
        '--innodb-file-per-table=0',
        '--innodb-flush-log-at-trx-commit=0',
        '--table-definition-cache=400',
      ],
    });
    // Root's pool (over the socket) is opened now: root keeps its connection when the rest are full.
    await db.query('SELECT 1');
    await db.createUser('sonde', PASSWORD, ['PROCESS, SELECT ON *.*']);
    await db.createUser('idle', 'idle-pass', ['USAGE ON *.*']);
    const ms = await createTables(db, TABLES);
    process.stderr.write(`# created ${TABLES} tables in ${ms} ms\n`);
    agent = await startAgent(
      `api:
  bind: {{API}}
mysql:
  username: sonde
  password: ${PASSWORD}
plans:
  files: [plan.yaml]
sinks:
  noop:
monitors:
  - id: big
    hostname: 127.0.0.1:${db.port}
`,
      { files: { 'plan.yaml': PLAN } },
    );
  });

  after(async () => {
    for (const c of idle.splice(0)) c.destroy();
    await agent?.stop();
    await db?.stop();
  });

  it("answers a liveness ping while the monitor's own slow queries hold every statement slot", async (t) => {
    const pool = connectAs(db, 'sonde', PASSWORD);
    try {
      await pool.ping();
      // Three catalogue queries over every table, as a monitor's slow domains run them.
      const slow = Array.from({ length: 3 }, () =>
        pool.query(
          'SELECT COUNT(*), SUM(DATA_LENGTH), SLEEP(3) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?',
          ['big'],
        ),
      );
      await new Promise((r) => setTimeout(r, 300));
      const t0 = Date.now();
      await pool.ping({ timeoutMs: 2000 });
      const ms = Date.now() - t0;
      t.diagnostic(`ping answered in ${ms} ms behind 3 slow statements`);
      await Promise.all(slow);
    } finally {
      await pool.close();
    }
  });

  it("keeps a scrape's series when its time limit is shorter than the catalogue read", async (t) => {
    const exporter = await startTablesExporter();
    try {
      // The first scrape has no time limit: it reads the catalogue of every table (seconds).
      const t0 = Date.now();
      const first = countSeries(await (await fetch(`${exporter.base}/metrics`)).text(), 'mysql_info_schema_');
      const firstMs = Date.now() - t0;
      // Prometheus' scrape timeout of 1 s: shorter than that read on this schema.
      const counts = [first];
      for (let i = 0; i < 3; i++) {
        const r = await fetch(`${exporter.base}/metrics`, {
          headers: { 'X-Prometheus-Scrape-Timeout-Seconds': '1' },
        });
        counts.push(countSeries(await r.text(), 'mysql_info_schema_'));
      }
      t.diagnostic(
        `first scrape ${firstMs} ms; series (all/info_schema): ${counts.map((c) => `${c.all}/${c.prefixed}`).join(', ')}`,
      );
      assert.ok(first.prefixed >= TABLES, `the first scrape read ${first.prefixed} info_schema series`);
      for (const c of counts.slice(1)) {
        assert.equal(
          c.prefixed,
          first.prefixed,
          'info_schema series changed between scrapes of an unchanged server',
        );
        // The exporter's own series (errors, durations) may differ by a few; never by thousands.
        assert.ok(
          Math.abs(c.all - first.all) <= first.all * 0.01,
          `series ${c.all} against ${first.all} at first`,
        );
      }
    } finally {
      await exporter.stop();
    }
  });

  it('ends catalogue queries on the server within 2 s of their deadline and says they are too slow', async (t) => {
    await agent.until('the catalogue domains ran once', async () => {
      const s = (await agent.monitorsStatus()).big ?? {};
      return s['domain:size.database'] !== undefined ? s : undefined;
    });
    // The agent's catalogue queries run past their deadline, so its pool lets connections go
    // and opens new ones: filling the server at a moment it holds none leaves it nothing to
    // run them on (only `Too many connections`, which tests nothing here). Then free the
    // server, let the agent connect again, and fill once more.
    let filled = 0;
    let seen: Seen = { maxMs: 0, samples: 0 };
    for (let attempt = 1; attempt <= 3 && seen.samples === 0; attempt++) {
      if (attempt > 1) {
        t.diagnostic(`attempt ${attempt}: the agent held no connection when the server was filled`);
        for (const c of idle.splice(0)) c.destroy();
        await agent.until('the agent connected again', async () => {
          const rows = await db.query(
            "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE USER = 'sonde'",
          );
          return Number(rows[0]?.n ?? 0) >= 2 ? true : undefined;
        });
      }
      filled = await fillConnections(db);
      seen = await watchProcesslist(8000);
    }
    // The domain's error says so (a cycle that could not get a connection says `Too many
    // connections` instead, which is also true: look for the deadline's text).
    const err = await agent
      .until(
        'a too-slow error',
        async () => {
          const st = (await agent.monitorsStatus()).big ?? {};
          const e = `${st['error:size.database'] ?? ''} ${st['error:autoinc'] ?? ''}`;
          return /too slow on this server/.test(e) ? e : undefined;
        },
        15_000,
      )
      .catch(() => '');
    t.diagnostic(
      `${filled} idle connections; catalogue queries seen ${seen.samples} times, longest ${seen.maxMs} ms`,
    );
    t.diagnostic(`error: ${err}`);
    assert.ok(seen.maxMs < DEADLINE_MS + 2000, `a catalogue query ran ${seen.maxMs} ms on the server`);
    assert.match(err, /too slow on this server/);
    assert.match(err, /max_statement_time/);
  });
});
