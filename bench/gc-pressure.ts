/**
 * How often the exporter's answer path makes V8 run a full garbage collection, and what it
 * leaves for one: the scrape reader's collection of mysqld_exporter's default collectors,
 * translation, the text and its gzip, back to back in one process, the way a scrape ends
 * (no HTTP). Each gzip variant runs in its own fresh child process (the exporter's Node
 * flags, those of the bin's `#!` line), one after the other and then again, against one
 * throwaway MariaDB:
 *
 * - `payload`: the answer's gzip as the exporter makes it (`gzipBody`, small output chunks);
 * - `node-default`: Node's `gzipSync` at the same level with its default 16 KiB chunks.
 *
 * Printed per variant: full (major) and young-generation (minor) collections per 1,000
 * answers, the main thread's pause in each kind per answer, the growth of the memory held by
 * ArrayBuffers between full collections per answer, and CPU per answer (noisy on a shared
 * machine; the counts are the measure).
 *
 *   node dist/bench/gc-pressure.js [--answers 3000] [--warmup 3000] [--runs 2]
 */
import { spawnSync } from 'node:child_process';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { constants as zlibConstants, gzipSync } from 'node:zlib';
import { builtinCollectors } from '../src/collectors/builtin.js';
import { createScrapeReader } from '../src/exporter/scrape-reader.js';
import { gzipBody } from '../src/exporter/server.js';
import { ExpositionCache, type PromSample } from '../src/prom/exposition.js';
import { translateForExporter } from '../src/prom/translate.js';
import { binNodeFlags } from '../test/helpers/agent.js';
import { rootDb, startMariaDB } from '../test/helpers/mariadb.js';
import { defaultCollectorsPlan } from './default-collectors.js';

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : NaN;
  return Number.isFinite(v) && v > 0 ? v : def;
}

const VARIANTS = {
  payload: gzipBody,
  'node-default': (body: Buffer) => gzipSync(body, { level: zlibConstants.Z_BEST_SPEED }),
} as const;
type Variant = keyof typeof VARIANTS;

interface Counts {
  majors: number;
  minors: number;
  majorMs: number;
  minorMs: number;
}

function observeGc(): Counts {
  const c: Counts = { majors: 0, minors: 0, majorMs: 0, minorMs: 0 };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as { detail?: { kind?: number } }).detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        c.majors++;
        c.majorMs += e.duration;
      } else if (kind === constants.NODE_PERFORMANCE_GC_MINOR) {
        c.minors++;
        c.minorMs += e.duration;
      }
    }
  }).observe({ entryTypes: ['gc'] });
  return c;
}

/** The child: `answers` answers after `warmup`, with the given gzip; prints one JSON line. */
async function child(socket: string, variant: Variant, warmup: number, answers: number): Promise<void> {
  const counts = observeGc();
  const db = rootDb(socket);
  const registry = builtinCollectors();
  const reader = createScrapeReader({
    monitorId: 'g',
    db,
    plan: defaultCollectorsPlan(registry),
    collectors: registry,
  });
  const cache = new ExpositionCache();
  const compress = VARIANTS[variant];
  const answer = async (): Promise<void> => {
    const r = await reader.scrape(new AbortController().signal);
    const samples: PromSample[] = [];
    for (const [domain, values] of Object.entries(r.metrics?.values ?? {}))
      translateForExporter(domain, values, samples);
    compress(cache.renderShared(samples));
  };
  for (let i = 0; i < warmup; i++) await answer();
  const base = { ...counts };
  // ArrayBuffer memory between full collections: young collections free some of it on the
  // way, so the growth counted is the net one of each stretch without a full collection.
  let abGrowth = 0;
  let stretchStart = process.memoryUsage().arrayBuffers;
  let lastAb = stretchStart;
  let lastMajors = counts.majors;
  const c0 = process.cpuUsage();
  for (let i = 0; i < answers; i++) {
    await answer();
    const ab = process.memoryUsage().arrayBuffers;
    if (counts.majors !== lastMajors) {
      abGrowth += Math.max(0, lastAb - stretchStart);
      stretchStart = ab;
      lastMajors = counts.majors;
    }
    lastAb = ab;
  }
  abGrowth += Math.max(0, lastAb - stretchStart);
  const cpu = process.cpuUsage(c0);
  await new Promise((r) => setTimeout(r, 50)); // the observer's last entries
  await reader.close();
  await db.close();
  const per = (x: number) => x / answers;
  process.stdout.write(
    `${JSON.stringify({
      majorsPer1000: (1000 * (counts.majors - base.majors)) / answers,
      minorsPer1000: (1000 * (counts.minors - base.minors)) / answers,
      majorPauseMs: per(counts.majorMs - base.majorMs),
      minorPauseMs: per(counts.minorMs - base.minorMs),
      abKiB: per(abGrowth) / 1024,
      cpuMs: per(cpu.user + cpu.system) / 1000,
    })}\n`,
  );
}

async function main(): Promise<void> {
  const answers = arg('answers', 3000);
  const warmup = arg('warmup', 3000);
  const runs = arg('runs', 2);
  const server = await startMariaDB();
  try {
    console.log(
      `${answers} answers per run after ${warmup} of warm-up; ${runs} runs per variant, alternating`,
    );
    console.log(
      'variant        run  full GCs/1000  young GCs/1000  full pause ms/answer  young pause ms/answer  ArrayBuffer KiB kept/answer  CPU ms/answer',
    );
    for (let run = 1; run <= runs; run++)
      for (const variant of Object.keys(VARIANTS) as Variant[]) {
        const script = process.argv[1] ?? '';
        const args = [
          ...binNodeFlags(),
          script,
          '--child',
          server.socket,
          variant,
          String(warmup),
          String(answers),
        ];
        const out = spawnSync(process.execPath, args, {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        const line = out.stdout.trim().split('\n').pop() ?? '';
        const r = JSON.parse(line) as Record<string, number>;
        const f = (k: string, d: number, w: number) => (r[k] ?? NaN).toFixed(d).padStart(w);
        console.log(
          `${variant.padEnd(14)} ${String(run).padStart(3)}  ${f('majorsPer1000', 1, 13)}  ${f('minorsPer1000', 1, 14)}  ${f('majorPauseMs', 3, 20)}  ${f('minorPauseMs', 3, 21)}  ${f('abKiB', 1, 27)}  ${f('cpuMs', 2, 13)}`,
        );
      }
  } finally {
    await server.stop();
  }
}

const at = process.argv.indexOf('--child');
if (at >= 0) {
  const [socket, variant, warmup, answers] = process.argv.slice(at + 1);
  await child(socket ?? '', (variant ?? 'payload') as Variant, Number(warmup), Number(answers));
} else {
  await main();
}
