/**
 * Catalogue domains on a large schema: how long sonde's information_schema domains take on
 * a server with N tables in one schema (default 20,000) and M idle client connections
 * (default 500), cold and again, and what a short deadline does to them.
 *
 *   node dist/bench/large-schema.js [--tables 20000] [--idle 500] [--deadline-ms 1000]
 *
 * It starts a throwaway MariaDB, creates the tables with one stored procedure call (the
 * time is printed: about 4 s per 1,000 tables on a loaded 2-core machine), opens the idle
 * connections, then for each catalogue domain prints: values, the first run (cold: the
 * server opens every table), the second run (the collector reuses a result that cost a
 * second or more, see catalogueReuseMs), and a run on a fresh collector under a deadline of
 * --deadline-ms: its outcome and how long after the deadline its query was still in the
 * server's processlist.
 */
import { performance } from 'node:perf_hooks';
import { createConnection, type Connection } from 'mysql2/promise';
import { builtinCollectors } from '../src/collectors/builtin.js';
import type { Plan } from '../src/core/plan.js';
import { withDeadline } from '../src/util/abort.js';
import { rootDb, startMariaDB } from '../test/helpers/mariadb.js';

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : def;
  return Number.isFinite(v) && v >= 0 ? v : def;
}
const TABLES = arg('tables', 20_000);
const IDLE = arg('idle', 500);
const DEADLINE_MS = arg('deadline-ms', 1000);

const DOMAINS: Record<string, Record<string, string>> = {
  autoinc: { include: 'big.*' },
  'size.database': {},
  'size.table': { include: 'big.*', limit: '100000' },
  'exporter.auto_increment.columns': {},
  'exporter.info_schema.tables': { databases: 'big' },
};

function planFor(domain: string, options: Record<string, string>): Plan {
  return {
    name: 'bench',
    source: 'bench',
    levels: {
      l: {
        name: 'l',
        freq: '60s',
        freqMs: 60_000,
        collect: { [domain]: { metrics: [], options, errors: {} } },
      },
    },
  };
}

const server = await startMariaDB({ args: [`--max-connections=${IDLE + 50}`, '--table-open-cache=2000'] });
const idle: Connection[] = [];
try {
  await server.query('CREATE DATABASE big');
  await server.query(
    `CREATE PROCEDURE big.make_tables(n INT) BEGIN DECLARE i INT DEFAULT 0; WHILE i < n DO ` +
      `SET @s = CONCAT('CREATE TABLE big.t', i, ' (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB'); ` +
      `PREPARE st FROM @s; EXECUTE st; DEALLOCATE PREPARE st; SET i = i + 1; END WHILE; END`,
  );
  const t0 = performance.now();
  await server.query('CALL big.make_tables(?)', [TABLES]);
  console.log(`created ${TABLES} tables in one schema in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  for (let i = 0; i < IDLE; i++)
    idle.push(await createConnection({ socketPath: server.socket, user: 'root' }));
  console.log(`${IDLE} idle connections open`);

  const registry = builtinCollectors();
  const signal = new AbortController().signal;
  console.log(
    ['domain', 'values', 'first ms', 'again ms', `${DEADLINE_MS} ms deadline`, 'left server after'].join(
      ' | ',
    ),
  );
  for (const [domain, options] of Object.entries(DOMAINS)) {
    const db = rootDb(server.socket);
    const collector = registry.make(domain, { monitorId: 'bench', db });
    await collector.prepare(planFor(domain, options), signal);
    let w = performance.now();
    const first = await collector.collect('l', signal);
    const firstMs = performance.now() - w;
    w = performance.now();
    await collector.collect('l', signal);
    const againMs = performance.now() - w;

    // A fresh collector (nothing to reuse) under a short deadline.
    const bounded = registry.make(domain, { monitorId: 'bench', db });
    await bounded.prepare(planFor(domain, options), signal);
    const dl = withDeadline(undefined, DEADLINE_MS, `timeout after ${DEADLINE_MS} ms`);
    const started = performance.now();
    const r = await bounded.collect('l', dl.signal);
    dl.done();
    const outcome = r.error
      ? r.error.message.slice(0, 40)
      : `ok in ${(performance.now() - started).toFixed(0)} ms`;
    let gone = 0;
    for (;;) {
      const rows = await server.query(
        "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE COMMAND = 'Query' AND INFO LIKE '%information_schema.%' AND INFO NOT LIKE '%PROCESSLIST%'",
      );
      if (Number(rows[0]?.n ?? 0) === 0) break;
      await new Promise((res) => setTimeout(res, 50));
      gone = performance.now() - started - DEADLINE_MS;
    }
    console.log(
      [
        domain,
        String(first.values.length),
        firstMs.toFixed(0),
        againMs.toFixed(0),
        outcome,
        `${Math.max(0, gone).toFixed(0)} ms`,
      ].join(' | ') + (first.error ? ` (first: ${first.error.message.slice(0, 60)})` : ''),
    );
    await db.close();
  }
} finally {
  for (const c of idle) c.destroy();
  await server.stop();
}
