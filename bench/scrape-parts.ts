/**
 * Where a scrape's time goes, in one process: the plan's statements on the monitor pool
 * (sequential, and as the one batch the scrape reader sends), on one raw mysql2 connection,
 * the scrape reader's whole collection, and the HTTP side, whole and by part (translation,
 * exposition, gzip), on the values of 50 successive scrapes answered in turn, so each answer
 * meets what changed since the one before. The last line splits one scrape's CPU:
 * statements and row decoding (the pool), value building (the reader less the pool),
 * translation, exposition, gzip.
 *
 *   node dist/bench/scrape-parts.js [--rounds 300]
 */
import { createPool } from 'mysql2/promise';
import { builtinCollectors } from '../src/collectors/builtin.js';
import { Limiter } from '../src/engine/limiter.js';
import { createScrapeReader } from '../src/exporter/scrape-reader.js';
import { ANSWER_GZIP_LEVEL, gzipBody } from '../src/exporter/server.js';
import type { ScrapeResult } from '../src/core/exporter.js';
import { ExpositionCache, type PromSample } from '../src/prom/exposition.js';
import { translateForExporter } from '../src/prom/translate.js';
import { SegmentedGzip } from '../src/util/gzip.js';
import { rootDb, startMariaDB } from '../test/helpers/mariadb.js';
import { defaultCollectorsPlan } from './default-collectors.js';

const i = process.argv.indexOf('--rounds');
const ROUNDS = i >= 0 ? Number(process.argv[i + 1]) || 300 : 300;
/** Successive scrapes kept for the HTTP side to answer in turn. */
const KEPT = 50;
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
  const plan = defaultCollectorsPlan(registry);
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
  // mysql2 without sonde's pool: a connection of mysql2's own pool of one, not a plain
  // Connection, whose other shape would slow mysql2's packet handler for the whole process
  const rawPool = createPool({ socketPath: server.socket, user: 'root', connectionLimit: 1 });
  const conn = await rawPool.getConnection();
  const cpu: Record<string, number> = {};
  const raw = await time(async () => {
    for (const q of sqls) await conn.query(q).catch(() => undefined); // a failing statement costs its round trip too
  });
  cpu.raw = lastCpu;
  const pooled = await time(async () => {
    for (const q of sqls) await db.query(q).catch(() => undefined);
  });
  cpu.pooled = lastCpu;
  const batched = await time(() => db.queryBatch(sqls).catch(() => undefined));
  cpu.batched = lastCpu;
  // The scrapes timed here are kept: the HTTP side below answers them in turn, so each answer
  // meets the values that changed since the one before, as a served scrape does.
  const kept: ScrapeResult[] = [];
  const scrape = await time(async () => {
    const got = await reader.scrape(new AbortController().signal);
    if (kept.length < KEPT) kept.push(got);
  });
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
  const translate = (got: ScrapeResult): PromSample[] => {
    const samples: PromSample[] = [];
    for (const [d, vs] of Object.entries(got.metrics?.values ?? {}))
      for (const s of translateForExporter(d, vs)) samples.push(s);
    return samples;
  };
  let turn = 0;
  const nextScrape = (): ScrapeResult => kept[turn++ % kept.length] ?? last;
  // As the server answers a gzip request: rendered into the cache's shared buffer, then only
  // the segments that changed since the last answer compressed again.
  const cache = new ExpositionCache();
  const answerGzip = new SegmentedGzip(ANSWER_GZIP_LEVEL);
  const http = await time(async () =>
    answerGzip.gzip(cache.renderShared(translate(nextScrape())), cache.segments()),
  );
  cpu.http = lastCpu;
  const sampleSets = kept.map(translate);
  const nextSamples = (): PromSample[] => sampleSets[turn++ % sampleSets.length] ?? [];
  const tr = await time(async () => translate(nextScrape()));
  cpu.translate = lastCpu;
  const textCache = new ExpositionCache();
  const ex = await time(async () => textCache.renderShared(nextSamples()));
  cpu.exposition = lastCpu;
  // The answer's gzip alone: exposition and gzip, less the exposition's CPU above.
  const gzCache = new ExpositionCache();
  const gzOnly = new SegmentedGzip(ANSWER_GZIP_LEVEL);
  const gzSizes: number[] = [];
  const gz = await time(async () => {
    const text = gzCache.renderShared(nextSamples());
    gzSizes.push(gzOnly.gzip(text, gzCache.segments()).length);
  });
  cpu.gzip = lastCpu - (cpu.exposition ?? NaN);
  const bodies = sampleSets.map((set) => new ExpositionCache().renderBuffer(set));
  const wholeSizes: number[] = [];
  await time(async () => {
    wholeSizes.push(gzipBody(bodies[turn++ % bodies.length] ?? Buffer.alloc(0)).length);
  });
  cpu.gzipWhole = lastCpu;
  const samples = sampleSets[0] ?? [];
  const body = bodies[0] ?? Buffer.alloc(0);
  const c = (k: string) => (cpu[k] ?? NaN).toFixed(2);
  const f = (xs: number[], c?: number) =>
    `${median(xs).toFixed(2).padStart(8)} ms${c === undefined ? '' : `, CPU ${c.toFixed(2)} ms`}`;
  console.log(`statements: ${sqls.join(' | ')}`);
  console.log(`${samples.length} samples, ${body.length} bytes of exposition`);
  console.log(`raw mysql2 connection, sequential ${f(raw, cpu.raw)}`);
  console.log(`monitor pool, sequential          ${f(pooled, cpu.pooled)}`);
  console.log(`monitor pool, one batch           ${f(batched, cpu.batched)}`);
  console.log(`scrape reader (collection only)   ${f(scrape, cpu.scrape)}`);
  console.log(`scrape reader by collector cap    ${byCap.join(', ')}`);
  console.log(`translate + exposition + gzip     ${f(http, cpu.http)}`);
  console.log(`  translation                     ${f(tr, cpu.translate)}`);
  console.log(`  exposition (text)               ${f(ex, cpu.exposition)}`);
  console.log(
    `  gzip, the changed segments      ${f(gz)}, CPU ${c('gzip')} ms (with the exposition, less it), ${median(gzSizes)} bytes`,
  );
  console.log(
    `  gzip, the whole text at once    CPU ${c('gzipWhole')} ms, ${median(wholeSizes)} bytes (answers before segments)`,
  );
  // Where one scrape's CPU goes: the statements as the reader sends them (one batch:
  // sending it, mysql2 reading the packets and decoding the rows), the collectors and the
  // engine turning rows into values (the reader less the batch), then the HTTP side.
  console.log(
    `CPU per scrape: statements and row decoding ${c('batched')} ms, value building ` +
      `${((cpu.scrape ?? NaN) - (cpu.batched ?? NaN)).toFixed(2)} ms, translation ${c('translate')} ms, ` +
      `exposition ${c('exposition')} ms, gzip ${c('gzip')} ms`,
  );
  conn.release();
  await rawPool.end();
  await reader.close();
  await db.close();
} finally {
  await server.stop();
}
