/**
 * Startup: how fast the built agent answers and collects, and how small it is once loaded,
 * with one monitor on a throwaway MariaDB (noop sink, the default plan), next to bare Node
 * and to Debian's prometheus-mysqld-exporter in the same run.
 *
 *   node dist/bench/startup.js [--runs 10] [--settle-ms 3000] [--poll-ms 5]
 *                              [--no-compile-cache-too] [--bin other/dist/src/bin/sonde.js]...
 *
 * Each run spawns a fresh agent (`node <the flags of the bin's #! line> dist/src/bin/sonde.js`,
 * as the README starts it) and measures, from the spawn:
 * - **api**: the first `200` on `GET /status`;
 * - **first collection**: the first `GET /status/monitors` whose `level-collect` for the
 *   monitor reads `last collected and sent metrics …`, which the level collector writes once
 *   the first collection's batch went through the sinks. Both are polled every `--poll-ms`,
 *   one request at a time, so a figure is late by at most one poll period plus one request
 *   (about 1 ms on loopback);
 * - **RSS**: VmRSS from /proc/<pid>/status `--settle-ms` after the first collection, and
 *   VmHWM (the peak so far) at the same moment.
 *
 * The floors: `node -e 1` and `sonde --version` (spawn to exit, peak RSS through
 * /usr/bin/time). The comparison: prometheus-mysqld-exporter with its default collectors,
 * spawn to the first `200` on `/metrics`, and its RSS after the same settle time.
 * Figures are medians with min–max over the runs.
 *
 * Comparisons, measured in the same rounds (one run of each per round, so that the machine's
 * load falls on all alike): `--no-compile-cache-too` adds the agent with
 * NODE_DISABLE_COMPILE_CACHE=1; each `--bin` adds another build of the agent (e.g. an older
 * commit's dist/). The floors also include `node` importing only the dependencies a plain
 * run cannot do without (commander, yaml, zod, mysql2, pino), held open for the same settle time.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, binNodeFlags } from '../test/helpers/agent.js';
import { freePort, startMariaDB } from '../test/helpers/mariadb.js';
import { MYSQLD_EXPORTER, rootSocketDsn } from '../test/e2e/exporter-peers.js';

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? def) : def;
}
const RUNS = Number(arg('runs', '10'));
const SETTLE_MS = Number(arg('settle-ms', '3000'));
const POLL_MS = Number(arg('poll-ms', '5'));
const GIVE_UP_MS = 20_000;
/** The Node flags of the bin's `#!` line: the agent runs as the README starts it. */
const NODE_FLAGS = binNodeFlags();
/** The agents to measure: this build, plus any `--bin`, plus this build without compile cache. */
const VARIANTS: { name: string; bin: string; env: Record<string, string> }[] = [
  { name: 'sonde, 1 monitor, noop sink', bin: BIN, env: {} },
  ...process.argv
    .flatMap((a, i) => (a === '--bin' ? [process.argv[i + 1] ?? ''] : []))
    .map((bin) => ({ name: `  --bin …${bin.slice(-24)}`, bin, env: {} })),
  ...(process.argv.includes('--no-compile-cache-too')
    ? [{ name: '  NODE_DISABLE_COMPILE_CACHE=1', bin: BIN, env: { NODE_DISABLE_COMPILE_CACHE: '1' } }]
    : []),
];
const TIME = '/usr/bin/time';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** One GET: status and body, or status 0 when nothing answers (yet). */
function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = request(url, { agent: false, timeout: 2000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', () => resolve({ status: 0, body: '' }));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve({ status: 0, body: '' }));
    req.end();
  });
}

/** Poll `check` every POLL_MS until it holds; ms since `t0` when it did. */
async function pollUntil(t0: number, proc: ChildProcess, what: string, check: () => Promise<boolean>) {
  for (;;) {
    if (await check()) return performance.now() - t0;
    if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`${what}: the process exited`);
    if (performance.now() - t0 > GIVE_UP_MS) throw new Error(`${what}: not after ${GIVE_UP_MS} ms`);
    await sleep(POLL_MS);
  }
}

/** VmRSS and VmHWM of a process, MiB. */
function memory(pid: number): { rss: number; hwm: number } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(text)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

function stop(proc: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    proc.once('exit', () => resolve());
    proc.kill('SIGTERM');
  });
}

interface Run {
  apiMs: number;
  firstMs: number;
  rss: number;
  hwm: number;
}

function agentConfig(socket: string, apiPort: number): string {
  return [
    `api:\n  bind: 127.0.0.1:${apiPort}`,
    'sinks:\n  noop: {}',
    `monitors:\n  - id: db1\n    socket: ${socket}\n    username: sonde\n    password: startup-pw\n`,
  ].join('\n');
}

/** One agent from spawn to its first collection, then its memory after the settle time. */
async function agentRun(socket: string, dir: string, variant: (typeof VARIANTS)[number]): Promise<Run> {
  const port = await freePort();
  const file = join(dir, 'sonde.yaml');
  writeFileSync(file, agentConfig(socket, port));
  const base = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  const proc = spawn(process.execPath, [...NODE_FLAGS, variant.bin, '--config', file], {
    cwd: dir,
    env: { ...process.env, ...variant.env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  try {
    const apiMs = await pollUntil(
      t0,
      proc,
      'GET /status',
      async () => (await get(`${base}/status`)).status === 200,
    );
    const firstMs = await pollUntil(t0, proc, 'first collection', async () => {
      const r = await get(`${base}/status/monitors`);
      if (r.status !== 200) return false;
      const status = JSON.parse(r.body) as Record<string, Record<string, string>>;
      return (status.db1?.['level-collect'] ?? '').startsWith('last collected and sent');
    });
    await sleep(SETTLE_MS);
    return { apiMs, firstMs, ...memory(proc.pid ?? 0) };
  } catch (err) {
    throw new Error(`${err instanceof Error ? err.message : String(err)}; stderr: ${stderr}`);
  } finally {
    await stop(proc);
  }
}

/** Spawn to exit of a short command, and its peak RSS (MiB) when /usr/bin/time is there. */
function shortRun(argv: string[]): { ms: number; hwm: number } {
  const timed = existsSync(TIME);
  const t0 = performance.now();
  const r = spawnSync(timed ? TIME : (argv[0] ?? ''), timed ? ['-f', '%M', ...argv] : argv.slice(1), {
    encoding: 'utf8',
  });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${argv.join(' ')}: exit ${r.status}: ${r.stderr}`);
  const kb = timed ? Number(r.stderr.trim().split('\n').pop()) : NaN;
  return { ms, hwm: kb / 1024 };
}

/** The dependencies a plain run needs, imported by a bare node and held for the settle time. */
const DEPS_ONLY = `for (const m of ['commander', 'yaml', 'zod', 'mysql2/promise', 'pino']) await import(m);
process.stdout.write('ready\\n'); setTimeout(() => undefined, ${SETTLE_MS});`;

/** Spawn to the dependencies imported, and the RSS after the settle time. */
async function depsRun(): Promise<Run> {
  const t0 = performance.now();
  const proc = spawn(process.execPath, [...NODE_FLAGS, '--input-type=module', '-e', DEPS_ONLY], {
    cwd: join(import.meta.dirname, '..', '..'),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const ms = await new Promise<number>((resolve, reject) => {
    proc.stdout?.once('data', () => resolve(performance.now() - t0));
    proc.once('exit', (code) => reject(new Error(`deps-only node exited ${code}`)));
  });
  await sleep(SETTLE_MS - 200);
  const mem = memory(proc.pid ?? 0);
  await stop(proc);
  return { apiMs: ms, firstMs: ms, ...mem };
}

/** mysqld_exporter with its default collectors: spawn to the first 200 on /metrics, then RSS. */
async function exporterRun(socket: string): Promise<Run> {
  const port = await freePort();
  const t0 = performance.now();
  const proc = spawn(
    MYSQLD_EXPORTER,
    [`--web.listen-address=127.0.0.1:${port}`, '--config.my-cnf=/nonexistent/.my.cnf'],
    { env: { ...process.env, DATA_SOURCE_NAME: rootSocketDsn(socket) }, stdio: 'ignore' },
  );
  try {
    const ms = await pollUntil(t0, proc, 'GET /metrics', async () => {
      const r = await get(`http://127.0.0.1:${port}/metrics`);
      return r.status === 200 && r.body.includes('mysql_up 1');
    });
    await sleep(SETTLE_MS);
    return { apiMs: ms, firstMs: ms, ...memory(proc.pid ?? 0) };
  } finally {
    await stop(proc);
  }
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? NaN : n % 2 === 1 ? (s[(n - 1) / 2] ?? NaN) : ((s[n / 2 - 1] ?? 0) + (s[n / 2] ?? 0)) / 2;
}

/** `median (min–max)` with `digits` decimals. */
function stat(xs: readonly number[], digits = 0): string {
  const f = (x: number) => x.toFixed(digits);
  return `${f(median(xs))} (${f(Math.min(...xs))}–${f(Math.max(...xs))})`;
}

function row(name: string, cells: string[]): void {
  console.log(`${name.padEnd(40)}${cells.map((c) => c.padEnd(20)).join('')}`);
}

async function main(): Promise<void> {
  const db = await startMariaDB();
  const dir = mkdtempSync(join(tmpdir(), 'sonde-startup-'));
  try {
    await db.createUser('sonde', 'startup-pw', [
      'PROCESS ON *.*',
      'SELECT ON *.*',
      'REPLICATION CLIENT ON *.*',
    ]);
    console.log(
      `startup: ${RUNS} runs, node ${process.version} ${NODE_FLAGS.join(' ')}, poll ${POLL_MS} ms, RSS ${SETTLE_MS} ms after the first collection`,
    );
    const bare: { ms: number; hwm: number }[] = [];
    const version: { ms: number; hwm: number }[] = [];
    const deps: Run[] = [];
    const agents: Run[][] = VARIANTS.map(() => []);
    const exporter: Run[] = [];
    for (let i = 0; i < RUNS; i++) {
      bare.push(shortRun([process.execPath, '-e', '1']));
      version.push(shortRun([process.execPath, ...NODE_FLAGS, BIN, '--version']));
      deps.push(await depsRun());
      for (const [j, v] of VARIANTS.entries()) agents[j]?.push(await agentRun(db.socket, dir, v));
      if (existsSync(MYSQLD_EXPORTER)) exporter.push(await exporterRun(db.socket));
    }
    row('', ['api ms', 'first collection ms', 'RSS MiB', 'peak RSS MiB']);
    row('node -e 1 (to exit)', [
      stat(bare.map((r) => r.ms)),
      '',
      '',
      stat(
        bare.map((r) => r.hwm),
        1,
      ),
    ]);
    row('sonde --version (to exit)', [
      stat(version.map((r) => r.ms)),
      '',
      '',
      stat(
        version.map((r) => r.hwm),
        1,
      ),
    ]);
    row('node + commander,yaml,zod,mysql2,pino', [
      stat(deps.map((r) => r.apiMs)),
      '',
      stat(
        deps.map((r) => r.rss),
        1,
      ),
      stat(
        deps.map((r) => r.hwm),
        1,
      ),
    ]);
    const table = (name: string, runs: Run[]) =>
      row(name, [
        stat(runs.map((r) => r.apiMs)),
        stat(runs.map((r) => r.firstMs)),
        stat(
          runs.map((r) => r.rss),
          1,
        ),
        stat(
          runs.map((r) => r.hwm),
          1,
        ),
      ]);
    for (const [j, v] of VARIANTS.entries()) table(v.name, agents[j] ?? []);
    if (exporter.length > 0) table('mysqld_exporter 0.14 (/metrics)', exporter);
    else console.log(`${MYSQLD_EXPORTER} not installed: no comparison`);
  } finally {
    await db.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
