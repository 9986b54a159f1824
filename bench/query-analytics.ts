/**
 * The CPU sonde adds per monitor with query analytics on: query.top, stmt.schema,
 * query.sample, query.plan and lock.wait collected once per interval.
 *
 *   node dist/bench/query-analytics.js [--monitors 20] [--intervals 5] [--digests 300]
 *
 * It starts a throwaway MariaDB (performance_schema and the statement history on), then
 * per interval runs a workload of `--digests` distinct statement shapes (so every interval
 * has that many digests with new counts, each with a literal) and a few slow statements,
 * and collects the five domains for `--monitors` monitors (one connection pool each, the
 * way the agent runs them). It prints sonde's process CPU per monitor per interval (the
 * server's CPU is its own process and is not counted), and what that means at a 60 s
 * interval: the share of one core per monitor and the cores 1,000 monitors need.
 */
import { performance } from 'node:perf_hooks';
import { createConnection } from 'mysql2/promise';
import { builtinCollectors } from '../src/collectors/builtin.js';
import type { Collector } from '../src/core/collector.js';
import type { Plan } from '../src/core/plan.js';
import type { PooledDb } from '../src/db/pool.js';
import { connectAs, startMariaDB } from '../test/helpers/mariadb.js';

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : def;
  return Number.isFinite(v) && v > 0 ? v : def;
}
const MONITORS = arg('monitors', 20);
const INTERVALS = arg('intervals', 5);
const DIGESTS = arg('digests', 300);
const DOMAINS = ['query.top', 'stmt.schema', 'query.sample', 'query.plan', 'lock.wait'];

const plan: Plan = {
  name: 'qa',
  source: 'bench',
  levels: {
    l: {
      name: 'l',
      freq: '60s',
      collect: Object.fromEntries(
        DOMAINS.map((d) => [
          d,
          { metrics: [], options: d === 'query.sample' ? { threshold: '100ms' } : {}, errors: {} },
        ]),
      ),
    },
  },
} as unknown as Plan;

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function main(): Promise<void> {
  const server = await startMariaDB({
    args: [
      '--performance-schema=ON',
      '--performance-schema-consumer-events-statements-current=ON',
      '--performance-schema-consumer-events-statements-history-long=ON',
      '--performance-schema-instrument=wait/lock/metadata/sql/mdl=ON',
    ],
  });
  const pools: PooledDb[] = [];
  try {
    await server.createUser('mon', 'mon-pass-1', ['SELECT ON performance_schema.*', 'PROCESS ON *.*']);
    await server.query('CREATE DATABASE app');
    const load = await createConnection({
      host: server.host,
      port: server.port,
      user: 'root',
      database: 'app',
    });
    for (let i = 0; i < DIGESTS; i++)
      await load.query(`CREATE TABLE t${i} (id INT PRIMARY KEY, v VARCHAR(20))`);
    const registry = builtinCollectors();
    const monitors: Collector[][] = [];
    for (let m = 0; m < MONITORS; m++) {
      const db = connectAs(server, 'mon', 'mon-pass-1');
      pools.push(db);
      const collectors = DOMAINS.map((d) => registry.make(d, { monitorId: `m${m}`, db }));
      for (const c of collectors) await c.prepare(plan, new AbortController().signal);
      monitors.push(collectors);
    }
    const signal = new AbortController().signal;
    const collectAll = async (): Promise<number> => {
      let records = 0;
      await Promise.all(
        monitors.map(async (cs) => {
          for (const c of cs) {
            const r = await c.collect('l', signal);
            records += r.records?.length ?? 0;
          }
        }),
      );
      return records;
    };
    await collectAll(); // first reads only remember
    let cpu = 0;
    let wall = 0;
    let records = 0;
    for (let n = 0; n < INTERVALS; n++) {
      for (let i = 0; i < DIGESTS; i++) await load.query(`SELECT v FROM t${i} WHERE id = ${n * 1000 + i}`);
      for (let i = 0; i < 3; i++) await load.query(`SELECT SLEEP(0.12), ${n * 10 + i}`);
      const c0 = cpuMs();
      const w0 = performance.now();
      records += await collectAll();
      cpu += cpuMs() - c0;
      wall += performance.now() - w0;
    }
    await load.end();
    const perMonitor = cpu / INTERVALS / MONITORS;
    const share = perMonitor / 60_000;
    console.log(
      `query analytics: ${MONITORS} monitors, ${INTERVALS} intervals, ${DIGESTS} active digests per interval`,
    );
    console.log(`  records per monitor per interval:   ${(records / INTERVALS / MONITORS).toFixed(1)}`);
    console.log(
      `  sonde CPU per monitor per interval: ${perMonitor.toFixed(2)} ms (wall for all monitors ${(wall / INTERVALS).toFixed(0)} ms)`,
    );
    console.log(`  at a 60 s interval: ${(share * 100).toFixed(4)} % of one core per monitor`);
    console.log(`  1,000 monitors: ${(share * 1000).toFixed(3)} cores`);
  } finally {
    for (const p of pools) await p.close();
    await server.stop();
  }
}

await main();
