/**
 * What each runtime dependency costs to load: import time and memory, each in a fresh Node
 * process (the bin's Node flags but source maps, which would add the packages' own maps),
 * medians over `--runs`, with the compile cache warm and
 * off, next to an empty module (the ESM loader's own first-import cost).
 *
 *   node dist/bench/deps.js [--runs 5]
 *
 * Per dependency, as sonde imports it: the import's wall time, the growth of RSS and of the
 * V8 heap in use (after a full garbage collection) from just before to just after it, and
 * whether a plain run (one monitor, the default plan, the noop sink) loads it at start.
 * uplot is not imported (the web page serves its files), so it is not in the table.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, binNodeFlags } from '../test/helpers/agent.js';

/** The bin's flags, never `--enable-source-maps`: the packages' own maps are not their cost in sonde. */
const FLAGS = binNodeFlags().filter((f) => f !== '--enable-source-maps');

const i = process.argv.indexOf('--runs');
const RUNS = i >= 0 ? Number(process.argv[i + 1]) || 5 : 5;

/** Each dependency as sonde imports it, and whether a plain run loads it at start. */
const DEPS: { spec: string; start: boolean }[] = [
  { spec: 'commander', start: true },
  { spec: 'yaml', start: true },
  { spec: 'mysql2/promise', start: true },
  { spec: '@noble/hashes/legacy.js', start: true },
  { spec: 'pino', start: false },
  { spec: 'protobufjs', start: false },
  { spec: 'snappyjs', start: false },
  { spec: 'bcryptjs', start: false },
  { spec: '@aws-sdk/credential-providers', start: false },
  { spec: '@aws-sdk/client-rds', start: false },
  { spec: '@aws-sdk/client-cloudwatch', start: false },
  { spec: '@aws-sdk/client-secrets-manager', start: false },
  { spec: '@aws-sdk/rds-signer', start: false },
  { spec: '@aws-sdk/ec2-metadata-service', start: false },
];

/** The child: import one specifier, print ms, RSS and heap growth as JSON. */
const CHILD = `
const spec = process.argv[1];
globalThis.gc(); const m0 = process.memoryUsage();
const t0 = performance.now();
await import(spec);
const ms = performance.now() - t0;
globalThis.gc(); const m1 = process.memoryUsage();
process.stdout.write(JSON.stringify({ ms, rss: (m1.rss - m0.rss) / 1048576, heap: (m1.heapUsed - m0.heapUsed) / 1048576 }));
`;

interface Cost {
  ms: number;
  rss: number;
  heap: number;
}

function once(spec: string, env: Record<string, string>): Cost {
  const r = spawnSync(process.execPath, [...FLAGS, '--expose-gc', '--input-type=module', '-e', CHILD, spec], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`${spec}: exit ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Cost;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

function measure(spec: string, env: Record<string, string>): Cost {
  const runs = Array.from({ length: RUNS }, () => once(spec, env));
  return {
    ms: median(runs.map((r) => r.ms)),
    rss: median(runs.map((r) => r.rss)),
    heap: median(runs.map((r) => r.heap)),
  };
}

const dir = mkdtempSync(join(tmpdir(), 'sonde-deps-'));
try {
  const empty = join(dir, 'empty.mjs');
  writeFileSync(empty, 'export {};\n');
  console.log(
    `deps: median of ${RUNS} fresh processes each, node ${process.version} ${FLAGS.join(' ')}; ` +
      `load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
  );
  console.log(
    '| dependency | plain run loads it | import ms (cache warm) | import ms (no compile cache) | RSS MiB | heap MiB |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const d of [{ spec: empty, start: true }, ...DEPS]) {
    once(d.spec, {}); // fill the compile cache
    const warm = measure(d.spec, {});
    const cold = measure(d.spec, { NODE_DISABLE_COMPILE_CACHE: '1' });
    const name = d.spec === empty ? '(an empty module)' : d.spec;
    console.log(
      `| ${name} | ${d.start ? 'yes' : 'no'} | ${warm.ms.toFixed(1)} | ${cold.ms.toFixed(1)} | ${warm.rss.toFixed(1)} | ${warm.heap.toFixed(1)} |`,
    );
  }
  console.log(
    `load average at the end: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
