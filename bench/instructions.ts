/**
 * Instructions per unit of work, counted by valgrind (callgrind), not timed: the same build,
 * inputs and server give nearly the same count whatever else the machine is doing, so a
 * change of a few per cent that the timed benches cannot tell from their noise shows here.
 *
 *   node dist/bench/instructions.js [--work scrape,collection,floor] [--compare /abs/other/root]
 *
 * Each work runs in a child under `valgrind --tool=callgrind` twice, a short and a long
 * run; the difference of the two totals over the difference of their units is what one
 * unit costs, without the start-up both runs share. Works:
 *
 * - `scrape`: one mysqld_exporter scrape of the default collectors in one process, without
 *   HTTP: the scrape reader's batch and collectors, translation, exposition and gzip, as
 *   the exporter's server answers a gzip request (bench/scrape-parts.ts times the same
 *   parts).
 * - `collection`: one level collection of the agent, in process through `createAgent()`
 *   with its API on (the page's series are fed): two monitors on a plan of one 1 s level
 *   reading every status variable, every global variable and every InnoDB metric (the plan
 *   of `scale.js --wide`), noop sink; the units are the collections the sink was handed.
 *   Its figure includes what the agent does between collections (timers, the status
 *   lines), which is small next to a collection.
 * - `floor`: the driver's floor of one such collection: mysql2 alone running the plan's
 *   three statements on one connection and keeping no row (bench/driver-floor.ts times the
 *   same at scale). Instructions do not depend on how warm the caches are, so the tight loop
 *   counts what 500 connections at 5 s would.
 *
 * `--compare <root>`: another checkout's root (built: its `dist/`), run first for each
 * work, against the same server: a before/after that the machine's load does not move.
 * The child is always this file, importing the modules of the build it measures.
 * The JIT compiles during both runs, so the figure carries some of V8's compiling; both
 * builds pay it alike. Needs `valgrind` (Debian's package).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join, resolve } from 'node:path';
import { binNodeFlags } from '../test/helpers/agent.js';
import { WIDE_STATEMENTS } from './wide.js';
import type * as Builtin from '../src/collectors/builtin.js';
import type * as Upstream from '../src/core/upstream.js';
import type * as ScrapeReader from '../src/exporter/scrape-reader.js';
import type * as ExporterServer from '../src/exporter/server.js';
import type * as ExporterPlan from '../src/plan/exporter-plan.js';
import type * as Exposition from '../src/prom/exposition.js';
import type * as Translate from '../src/prom/translate.js';
import type * as Gzip from '../src/util/gzip.js';
import type * as MariaDBHelpers from '../test/helpers/mariadb.js';
import type * as Sonde from '../src/index.js';

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? def) : def;
}

/** This build's root (the bench runs from `<root>/dist/bench/`). */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * A module of the build at `root` (its `dist/`), typed as this build's: the child is always
 * this file, so a build from before this bench existed can be measured too.
 */
async function load<T>(root: string, path: string): Promise<T> {
  return (await import(pathToFileURL(join(root, 'dist', path)).href)) as T;
}

/** Units of the short and the long run of each work. */
const RUNS: Record<string, readonly [number, number]> = {
  scrape: [20, 220],
  collection: [10, 110],
  floor: [20, 220],
};

/** The wide plan: every numeric status and global variable and every InnoDB metric, each second. */
const WIDE_PLAN = {
  name: 'wide',
  levels: {
    wide: {
      freq: '1s',
      collect: {
        'status.global': { options: { all: 'yes' } },
        'var.global': { options: { all: 'yes' } },
        innodb: { options: { all: 'yes' } },
      },
    },
  },
};

async function childScrape(root: string, socket: string, units: number): Promise<void> {
  const { builtinCollectors } = await load<typeof Builtin>(root, 'src/collectors/builtin.js');
  const { UPSTREAM_SCRAPERS } = await load<typeof Upstream>(root, 'src/core/upstream.js');
  const { createScrapeReader } = await load<typeof ScrapeReader>(root, 'src/exporter/scrape-reader.js');
  const { gzipBody, ANSWER_GZIP_LEVEL } = await load<Partial<typeof ExporterServer>>(
    root,
    'src/exporter/server.js',
  );
  // The answer's gzip as that build makes it: only the changed segments where it can (a build
  // from before SegmentedGzip, which came with the level's constant and the cache's segments,
  // gzips the whole text).
  const { SegmentedGzip } = await load<Partial<typeof Gzip>>(root, 'src/util/gzip.js');
  const { applyCollectFlags, upstreamPlan } = await load<typeof ExporterPlan>(
    root,
    'src/plan/exporter-plan.js',
  );
  const { ExpositionCache } = await load<typeof Exposition>(root, 'src/prom/exposition.js');
  const { translateForExporter } = await load<typeof Translate>(root, 'src/prom/translate.js');
  const { rootDb } = await load<typeof MariaDBHelpers>(root, 'test/helpers/mariadb.js');
  type Sample = ReturnType<typeof translateForExporter>[number];
  const db = rootDb(socket);
  const registry = builtinCollectors();
  const flags: Record<string, string> = {};
  for (const s of UPSTREAM_SCRAPERS)
    if (s.enabled) flags[`collect.${s.name}`] = String(registry.has(s.domain));
  const plan = applyCollectFlags(upstreamPlan(), flags);
  const reader = createScrapeReader({ monitorId: 'i', db, plan, collectors: registry });
  const cache = new ExpositionCache();
  const answerGzip =
    SegmentedGzip === undefined || ANSWER_GZIP_LEVEL === undefined
      ? undefined
      : new SegmentedGzip(ANSWER_GZIP_LEVEL);
  for (let k = 0; k < units; k++) {
    const got = await reader.scrape(new AbortController().signal);
    const samples: Sample[] = [];
    for (const [d, vs] of Object.entries(got.metrics?.values ?? {}))
      for (const s of translateForExporter(d, vs)) samples.push(s);
    const text = cache.renderShared(samples);
    if (answerGzip !== undefined) answerGzip.gzip(text, cache.segments());
    else gzipBody?.(text);
  }
  await reader.close();
  await db.close();
}

async function childCollection(root: string, socket: string, units: number): Promise<void> {
  const { createAgent } = await load<typeof Sonde>(root, 'src/index.js');
  let collections = 0;
  let reached: () => void = () => undefined;
  const done = new Promise<void>((r) => (reached = r));
  const agent = createAgent({
    config: { api: { bind: '127.0.0.1:0' }, sinks: { counting: {} } },
    hooks: {
      loadMonitors: () =>
        ['i1', 'i2'].map((id) => ({ id, socket, username: 'root', password: '', plan: 'wide' })),
      loadPlans: () => [WIDE_PLAN],
    },
    factories: {
      sinks: [
        {
          name: 'counting',
          description: 'counts the collections it is handed',
          create: () => ({
            name: 'counting',
            send: () => {
              if (++collections === units) reached();
              return Promise.resolve();
            },
          }),
        },
      ],
    },
  });
  await agent.boot();
  await agent.start();
  // A run that does not reach its units (a collection failing) ends with an error, not a hang.
  const stuck = setTimeout(() => {
    process.stderr.write(`only ${collections} of ${units} collections reached the sink in 600 s\n`);
    process.exit(1);
  }, 600_000);
  await done;
  clearTimeout(stuck);
  await agent.stop();
}

/**
 * The driver's floor of a collection: mysql2 alone (this build's copy, whatever `root`),
 * one connection running the wide plan's three statements one after the other, reading every
 * row and keeping none.
 */
async function childFloor(socket: string, units: number): Promise<void> {
  const { createConnection } = await import('mysql2/promise');
  const conn = await createConnection({ socketPath: socket, user: 'root', password: '' });
  for (let k = 0; k < units; k++) for (const sql of WIDE_STATEMENTS) await conn.query(sql);
  await conn.end();
}

/** callgrind's total of instructions for one child run, and the errors the agent logged in it. */
function countOf(
  root: string,
  work: string,
  socket: string,
  units: number,
): { total: number; errors: number } {
  const r = spawnSync(
    'valgrind',
    [
      '--tool=callgrind',
      '--callgrind-out-file=/dev/null',
      process.execPath,
      // the Node flags of the agent's bin (its `#!` line), as the installed agent runs
      ...binNodeFlags(),
      // V8 on one thread, without randomness: compiling and collecting on the main thread,
      // so a count no longer depends on what the background threads happened to do (two
      // runs of one build differed by up to 5 % without it, by 0.4 % with it)
      '--predictable',
      fileURLToPath(import.meta.url),
      '--child',
      root,
      work,
      socket,
      String(units),
    ],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  const m = /Collected : (\d+)/.exec(r.stderr);
  if (r.status !== 0 || m === null)
    throw new Error(
      `${work} under valgrind (${root}) failed (${String(r.status)}): ${r.stderr.slice(-2000)}`,
    );
  // A domain past its deadline under valgrind's slowness (the first, cold collections) is
  // KILLed and logged: counted, so a figure that carries them says so.
  return { total: Number(m[1]), errors: (r.stderr.match(/\] ERROR: /g) ?? []).length };
}

async function main(): Promise<void> {
  const works = arg('work', 'scrape,collection,floor')
    .split(',')
    .map((w) => w.trim())
    .filter((w) => w in RUNS);
  const compare = arg('compare', '');
  const roots = compare === '' ? [ROOT] : [resolve(compare), ROOT];
  const { startMariaDB } = await import('../test/helpers/mariadb.js');
  const server = await startMariaDB();
  try {
    console.log(`instructions per unit (callgrind; short and long run, difference over the units between)`);
    for (const work of works) {
      const [short, long] = RUNS[work] ?? [0, 0];
      const per: number[] = [];
      for (const root of roots) {
        const a = countOf(root, work, server.socket, short);
        const b = countOf(root, work, server.socket, long);
        const one = (b.total - a.total) / (long - short);
        per.push(one);
        const errors = a.errors + b.errors === 0 ? '' : `  errors logged: ${a.errors} and ${b.errors}`;
        console.log(
          `${work.padEnd(11)} ${(one / 1e6).toFixed(3).padStart(8)} M  (${short}: ${(a.total / 1e6).toFixed(0)} M, ${long}: ${(b.total / 1e6).toFixed(0)} M)  ${root === ROOT ? 'this build' : root}${errors}`,
        );
      }
      if (per.length === 2)
        console.log(
          `${work.padEnd(11)} this build / the other: ${((per[1] ?? NaN) / (per[0] ?? NaN)).toFixed(3)}`,
        );
    }
  } finally {
    await server.stop();
  }
}

if (process.argv[2] === '--child') {
  const [root, work, socket, units] = process.argv.slice(3);
  const n = Number(units);
  if (work === 'scrape') await childScrape(root ?? ROOT, socket ?? '', n);
  else if (work === 'collection') await childCollection(root ?? ROOT, socket ?? '', n);
  else if (work === 'floor') await childFloor(socket ?? '', n);
  else throw new Error(`unknown work ${String(work)}`);
} else {
  await main();
}
