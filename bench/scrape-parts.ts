/**
 * Where a scrape's time goes, in one process: the plan's statements on the monitor pool
 * (sequential), on one raw mysql2 connection, the scrape reader's whole collection, and the
 * HTTP side (translation, exposition, gzip) on the collected values.
 *
 *   node dist/bench/scrape-parts.js [--rounds 300]
 */
import { gzipSync, constants as zlib } from 'node:zlib';
import { createConnection } from 'mysql2/promise';
import { builtinCollectors } from '../src/collectors/builtin.js';
import { UPSTREAM_SCRAPERS } from '../src/core/upstream.js';
import { Limiter } from '../src/engine/limiter.js';
import { createScrapeReader } from '../src/exporter/scrape-reader.js';
import { applyCollectFlags, upstreamPlan } from '../src/plan/exporter-plan.js';
import { ExpositionCache, type PromSample } from '../src/prom/exposition.js';
import { translateForExporter } from '../src/prom/translate.js';
import { rootDb, startMariaDB } from '../test/helpers/mariadb.js';

const i = process.argv.indexOf('--rounds');
const ROUNDS = i >= 0 ? Number(process.argv[i + 1]) || 300 : 300;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** CPU ms per call of the last time() (user + system of this process). */
let lastCpu = NaN;

async function time(fn: () => Promise<unknown>): Promise<number[]> {
  for (let k = 0; k < 20; k++) await fn();
  const out: number[] = [];
  const c0 = process.cpuUsage();
  for (let k = 0; k < ROUNDS; k++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  const c = process.cpuUsage(c0);
  lastCpu = (c.user + c.system) / 1000 / ROUNDS;
  return out;
}

const server = await startMariaDB();
try {
  const db = rootDb(server.socket);
  const registry = builtinCollectors();
  const flags: Record<string, string> = {};
  for (const s of UPSTREAM_SCRAPERS)
    if (s.enabled) flags[`collect.${s.name}`] = String(registry.has(s.domain));
  const plan = applyCollectFlags(upstreamPlan(), flags);
  const reader = createScrapeReader({ monitorId: 'p', db, plan, collectors: registry });
  const sqls: string[] = [];
  const rec = createScrapeReader({
    monitorId: 'r',
    db: {
      query: (q, p, o) => (sqls.push(q), db.query(q, p, o)),
      serverInfo: (o) => db.serverInfo(o),
      ping: (o) => db.ping(o),
    },
    plan,
    collectors: registry,
  });
  await rec.scrape(new AbortController().signal);
  sqls.length = 0;
  const last = await rec.scrape(new AbortController().signal);
  await rec.close();
  const conn = await createConnection({ socketPath: server.socket, user: 'root' });
  const cpu: Record<string, number> = {};
  const raw = await time(async () => {
    for (const q of sqls) await conn.query(q).catch(() => undefined); // a failing statement costs its round trip too
  });
  cpu.raw = lastCpu;
  const pooled = await time(async () => {
    for (const q of sqls) await db.query(q).catch(() => undefined);
  });
  cpu.pooled = lastCpu;
  const scrape = await time(() => reader.scrape(new AbortController().signal));
  cpu.scrape = lastCpu;
  const byCap: string[] = [];
  for (const cap of [1, 2, 3]) {
    const r = createScrapeReader({
      monitorId: `c${cap}`,
      db,
      plan,
      collectors: registry,
      limiter: new Limiter(cap),
    });
    byCap.push(
      `cap ${cap}: ${median(await time(() => r.scrape(new AbortController().signal))).toFixed(2)} ms`,
    );
    await r.close();
  }
  const cache = new ExpositionCache();
  const values = Object.entries(last.metrics?.values ?? {});
  const http = await time(async () => {
    const samples: PromSample[] = [];
    for (const [d, vs] of values) for (const s of translateForExporter(d, vs)) samples.push(s);
    gzipSync(cache.renderBuffer(samples), { level: zlib.Z_BEST_SPEED, memLevel: 9 });
  });
  cpu.http = lastCpu;
  const f = (xs: number[], c?: number) =>
    `${median(xs).toFixed(2).padStart(8)} ms${c === undefined ? '' : `, CPU ${c.toFixed(2)} ms`}`;
  console.log(`statements: ${sqls.join(' | ')}`);
  console.log(`raw mysql2 connection, sequential ${f(raw, cpu.raw)}`);
  console.log(`monitor pool, sequential          ${f(pooled, cpu.pooled)}`);
  console.log(`scrape reader (collection only)   ${f(scrape, cpu.scrape)}`);
  console.log(`scrape reader by collector cap    ${byCap.join(', ')}`);
  console.log(`translate + exposition + gzip     ${f(http, cpu.http)}`);
  await conn.end();
  await reader.close();
  await db.close();
} finally {
  await server.stop();
}
