/**
 * Per-domain collection cost: how long sonde takes to collect each domain, how much CPU
 * sonde itself spends, next to the time the same SQL takes on one open connection.
 *
 *   node dist/bench/domains.js [--tables 10000] [--runs 15]
 *
 * It starts a throwaway MariaDB (performance_schema and binlog on), creates N tables,
 * then for each built-in domain: records the SQL the collector runs, times the collector
 * (wall and process CPU), and times the recorded SQL on a raw mysql2 connection.
 * Columns: SQL ms = the recorded SQL on the raw connection (wall); client CPU = the CPU a
 * plain mysql2 client spends on that SQL; sonde CPU = the CPU of the whole collection;
 * own CPU = sonde CPU − client CPU (collector logic, value parsing, sonde's pool); own/SQL
 * = own CPU as a share of the SQL time (target: under 10 %).
 */
import { performance } from 'node:perf_hooks';
import { createConnection } from 'mysql2/promise';
import { builtinCollectors } from '../src/collectors/builtin.js';
import { ConnectionSpec, type Db, type QueryOptions, type Row, type ServerInfo } from '../src/core/db.js';
import type { Plan } from '../src/core/plan.js';
import { createDb } from '../src/db/pool.js';
import { defaultPlan } from '../src/plan/defaults.js';
import { startMariaDB } from '../test/helpers/mariadb.js';

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : def;
  return Number.isFinite(v) && v > 0 ? v : def;
}
const TABLES = arg('tables', 10_000);
const RUNS = arg('runs', 15);

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
};

/** A Db that records the SQL it is asked to run (and passes it through). */
class Recording implements Db {
  readonly seen: { sql: string; params: readonly unknown[] }[] = [];
  constructor(readonly inner: Db) {}
  async query(sql: string, params: readonly unknown[] = [], opts?: QueryOptions): Promise<Row[]> {
    this.seen.push({ sql, params });
    return this.inner.query(sql, params, opts);
  }
  serverInfo(opts?: QueryOptions): Promise<ServerInfo> {
    return this.inner.serverInfo(opts);
  }
  ping(opts?: QueryOptions): Promise<void> {
    return this.inner.ping(opts);
  }
}

/**
 * The domain's settings from default-mysql when it has some; else every metric its help
 * declares; `all: yes` where the domain reads whole tables.
 */
function planFor(domain: string, declared: string[]): Plan {
  const dm = defaultPlan('default-mysql');
  let dp = Object.values(dm?.levels ?? {}).find((l) => l.collect[domain])?.collect[domain];
  dp ??= { metrics: declared, options: {}, errors: {} };
  if (domain === 'status.global' || domain === 'var.global')
    dp = { metrics: [], options: { all: 'yes' }, errors: {} };
  if (domain === 'innodb' || domain === 'innodb.buffer-pool')
    dp = { metrics: [], options: { all: 'yes' }, errors: {} };
  if (domain.endsWith('response-time')) dp = { metrics: ['p95', 'p99', 'p999'], options: {}, errors: {} };
  return {
    name: 'bench',
    source: 'bench',
    levels: { l: { name: 'l', freq: '60s', freqMs: 60_000, collect: { [domain]: dp } } },
  };
}

const server = await startMariaDB({
  args: [
    '--performance-schema=ON',
    '--log-bin=mysql-bin',
    '--innodb-file-per-table=ON',
    '--table-open-cache=20000',
  ],
});
try {
  process.stderr.write(`creating ${TABLES} tables…\n`);
  const t0 = performance.now();
  for (let d = 0; d < Math.ceil(TABLES / 1000); d++) {
    await server.query(`CREATE DATABASE IF NOT EXISTS bench${d}`);
    for (let t = 0; t < 1000 && d * 1000 + t < TABLES; t++) {
      await server.query(
        `CREATE TABLE bench${d}.t${t} (id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY, v VARCHAR(32)) ENGINE=InnoDB`,
      );
    }
  }
  process.stderr.write(`created in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);

  const spec = new ConnectionSpec({
    username: 'root',
    password: '',
    socket: server.socket,
    connectTimeoutMs: 5000,
    redactedDsn: `root:...@unix(${server.socket})/`,
  });
  const db = createDb(spec);
  const raw = await createConnection({ socketPath: server.socket, user: 'root' });
  const registry = builtinCollectors();
  const signal = new AbortController().signal;

  console.log(`sonde per-domain collection cost, MariaDB with ${TABLES} tables, median of ${RUNS} runs`);
  console.log(
    ['domain', 'values', 'queries', 'SQL ms', 'collect ms', 'client CPU', 'sonde CPU', 'own CPU', 'own/SQL']
      .map((h, i) => (i === 0 ? h.padEnd(22) : h.padStart(11)))
      .join(''),
  );
  for (const domain of registry.domains()) {
    const rec = new Recording(db);
    const collector = registry.make(domain, { monitorId: 'bench', db: rec });
    const plan = planFor(
      domain,
      registry.help(domain).metrics.map((m) => m.name),
    );
    try {
      await collector.prepare(plan, signal);
    } catch (err) {
      console.log(`${domain.padEnd(22)}prepare failed: ${err instanceof Error ? err.message : String(err)}`);
      continue;
    }
    const walls: number[] = [];
    const cpus: number[] = [];
    let values = 0;
    let error = '';
    let perRun = 0;
    for (let i = 0; i < RUNS; i++) {
      const before = rec.seen.length;
      const c0 = process.cpuUsage();
      const w0 = performance.now();
      const r = await collector.collect('l', signal);
      const wall = performance.now() - w0;
      const c = process.cpuUsage(c0);
      walls.push(wall);
      cpus.push((c.user + c.system) / 1000);
      values = r.values.length;
      error = r.error?.message ?? '';
      perRun = rec.seen.length - before;
    }
    const sqls = perRun === 0 ? [] : rec.seen.slice(-perRun);
    const rawTimes: number[] = [];
    const rawCpus: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const c0 = process.cpuUsage();
      const w0 = performance.now();
      for (const q of sqls) {
        try {
          await raw.query(q.sql, q.params as unknown[]);
        } catch {
          // the collector saw the same error
        }
      }
      rawTimes.push(performance.now() - w0);
      const c = process.cpuUsage(c0);
      rawCpus.push((c.user + c.system) / 1000);
    }
    await collector.close?.();
    const sql = median(rawTimes);
    const cpu = median(cpus);
    // sonde's own CPU: what the collection costs beyond a plain client running the same SQL.
    const own = Math.max(0, cpu - median(rawCpus));
    console.log(
      [
        domain,
        String(values),
        String(perRun),
        sql.toFixed(2),
        median(walls).toFixed(2),
        median(rawCpus).toFixed(2),
        cpu.toFixed(2),
        own.toFixed(2),
        sql > 0 ? `${((own / sql) * 100).toFixed(1)}%` : '-',
      ]
        .map((s, i) => (i === 0 ? s.padEnd(22) : s.padStart(11)))
        .join('') + (error ? `  (${error.slice(0, 60)})` : ''),
    );
  }
  await raw.end();
  await db.close();
} finally {
  await server.stop();
}
