/**
 * Startup: how fast the built agent answers and collects, and how small it is once loaded,
 * with one monitor on a throwaway MariaDB (noop sink, the default plan), next to bare Node
 * and to Debian's prometheus-mysqld-exporter in the same run.
 *
 *   node dist/bench/startup.js [--runs 10] [--rss-runs 3] [--rss-at-ms 15000] [--poll-ms 5]
 *                              [--binary dist/binary/sonde-linux-<arch>] [--no-compile-cache-too]
 *                              [--bin other/dist/src/bin/sonde.js]...
 *                              [--exe other/sonde-linux-x64]...
 *
 * The agents: the bundle (`node <the flags of the bin's #! line> dist/bundle/bin/sonde.js`,
 * as the installed `sonde` command starts), the single executable when it is built
 * (`npm run build:binary`), and each `--bin` (another build's bin under the same flags, e.g.
 * an older commit's dist/src/bin/sonde.js, with the flags of its own `#!` line) and `--exe`
 * (another single executable). Each run spawns a fresh agent and measures, from
 * the spawn:
 * - **api**: the first `200` on `GET /status`;
 * - **first collection**: the first `GET /status/monitors` whose `level-collect` for the
 *   monitor reads `last collected and sent metrics …`, which the level collector writes once
 *   the first collection's batch went through the sinks. Both are polled every `--poll-ms`,
 *   one request at a time, so a figure is late by at most one poll period plus one request
 *   (about 1 ms on loopback);
 * - **CPU**: the agent's main thread's time on a CPU from the spawn to that first collection
 *   (/proc/<pid>/schedstat, read when the poll sees it): the work of the start, which the
 *   machine's load does not stretch as it stretches the wall-clock figures (the polls' own
 *   answers are in it, one per poll period once the API is up);
 * - **RSS**: VmRSS from /proc/<pid>/status `--rss-at-ms` after the spawn, and VmHWM (the
 *   peak so far) at the same moment, in the first `--rss-runs` rounds only (the others stop
 *   the agent after its first collection, to keep the run short), and RssAnon (see Mem).
 *
 * The floors: `node -e 0` and each agent's `--version` (spawn to exit, peak RSS through
 * /usr/bin/time). The comparison: prometheus-mysqld-exporter with its default collectors,
 * spawn to the first `200` on `/metrics`, and its RSS at the same time after the spawn.
 * Figures are medians with min–max over the runs.
 *
 * Comparisons, measured in the same rounds (one run of each per round, so that the machine's
 * load falls on all alike): `--no-compile-cache-too` adds the bundle with
 * NODE_DISABLE_COMPILE_CACHE=1. `--deps-too` adds `node` importing only the dependencies a plain
 * run cannot do without (commander, yaml, mysql2), held open as long. `--parts-too` adds the
 * parts of an agent and nothing of sonde: `node` with an HTTP listener and one mysql2
 * connection (the agent's account, over the socket) that runs SHOW GLOBAL STATUS at once and
 * then every second; its "first collection" is the first answer.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { arch, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BIN, ROOT, binNodeFlags } from '../test/helpers/agent.js';
import { freePort, startMariaDB } from '../test/helpers/mariadb.js';
import { MYSQLD_EXPORTER, rootSocketDsn } from '../test/e2e/exporter-peers.js';

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? def) : def;
}
const RUNS = Number(arg('runs', '10'));
const RSS_RUNS = Number(arg('rss-runs', '3'));
const RSS_AT_MS = Number(arg('rss-at-ms', '15000'));
const POLL_MS = Number(arg('poll-ms', '5'));
const GIVE_UP_MS = 20_000;
/** The Node flags of the bin's `#!` line: the agent runs as the README starts it. */
const NODE_FLAGS = binNodeFlags();

/** The single executable, when built. */
const BINARY = resolve(arg('binary', join(ROOT, `dist/binary/sonde-linux-${arch()}`)));

interface Variant {
  name: string;
  /** The command line that starts it, without sonde's own arguments. */
  argv: string[];
  env: Record<string, string>;
}

/** The agents to measure: the bundle, the binary, any `--bin`, the bundle without compile cache or source maps. */
const VARIANTS: Variant[] = [
  { name: 'bundle (node dist/bundle/bin/sonde.js)', argv: [process.execPath, ...NODE_FLAGS, BIN], env: {} },
  ...(existsSync(BINARY) ? [{ name: `binary (${BINARY.split('/').pop()})`, argv: [BINARY], env: {} }] : []),
  ...process.argv
    .flatMap((a, i) => (a === '--bin' ? [resolve(process.argv[i + 1] ?? '')] : []))
    .map((bin) => ({
      name: `--bin …${bin.slice(-30)}`,
      argv: [process.execPath, ...binNodeFlags(bin), bin],
      env: {},
    })),
  ...process.argv
    .flatMap((a, i) => (a === '--exe' ? [resolve(process.argv[i + 1] ?? '')] : []))
    .map((exe) => ({ name: `--exe …${exe.slice(-30)}`, argv: [exe], env: {} })),
  ...(process.argv.includes('--no-compile-cache-too')
    ? [
        {
          name: 'bundle, NODE_DISABLE_COMPILE_CACHE=1',
          argv: [process.execPath, ...NODE_FLAGS, BIN],
          env: { NODE_DISABLE_COMPILE_CACHE: '1' },
        },
      ]
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

/** The main thread's time on a CPU so far, ms (NaN when it cannot be read). */
function mainThreadCpuMs(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return NaN;
  }
}

/** VmRSS and VmHWM of a process, MiB. */
function memory(pid: number): Mem {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(text)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024, anon: kb('RssAnon') / 1024 };
}

/**
 * VmRSS, VmHWM (the peak) and RssAnon, MiB. RssAnon is the process's own memory (heap,
 * stacks, buffers); the rest of RSS is pages of files it maps (the executable's code above
 * all), which the kernel may drop and reload, and which processes of the same file share.
 */
interface Mem {
  rss: number;
  hwm: number;
  anon: number;
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
  /** Main-thread CPU ms from the spawn to the first collection (NaN where not measured). */
  cpuMs: number;
  /** VmRSS and VmHWM at RSS_AT_MS after the spawn; NaN in the rounds that do not wait for it. */
  rss: number;
  hwm: number;
  anon: number;
}

/** The password of the `sonde` account every run here uses. */
const PASSWORD = 'startup-pw';

function agentConfig(socket: string, apiPort: number): string {
  return [
    `api:\n  bind: 127.0.0.1:${apiPort}`,
    'sinks:\n  noop: {}',
    `monitors:\n  - id: db1\n    socket: ${socket}\n    username: sonde\n    password: ${PASSWORD}\n`,
  ].join('\n');
}

/** Memory at RSS_AT_MS after `t0` (when `wait`), else NaN. */
async function memoryAt(t0: number, pid: number, wait: boolean): Promise<Mem> {
  if (!wait) return { rss: NaN, hwm: NaN, anon: NaN };
  await sleep(Math.max(0, RSS_AT_MS - (performance.now() - t0)));
  return memory(pid);
}

/** One agent from spawn to its first collection, then (when `wait`) its memory at RSS_AT_MS. */
async function agentRun(socket: string, dir: string, variant: Variant, wait: boolean): Promise<Run> {
  const port = await freePort();
  const file = join(dir, 'sonde.yaml');
  writeFileSync(file, agentConfig(socket, port));
  const base = `http://127.0.0.1:${port}`;
  const [cmd = '', ...args] = variant.argv;
  const t0 = performance.now();
  const proc = spawn(cmd, [...args, '--config', file], {
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
    const cpuMs = mainThreadCpuMs(proc.pid ?? 0);
    return { apiMs, firstMs, cpuMs, ...(await memoryAt(t0, proc.pid ?? 0, wait)) };
  } catch (err) {
    throw new Error(
      `${variant.name}: ${err instanceof Error ? err.message : String(err)}; stderr: ${stderr}`,
    );
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

/** The dependencies a plain run needs, imported by a bare node and held until the RSS reading. */
const DEPS_ONLY = `for (const m of ['commander', 'yaml', 'mysql2/promise']) await import(m);
process.stdout.write('ready\\n'); setTimeout(() => undefined, ${RSS_AT_MS + 1000});`;

/** An agent's parts alone: an HTTP listener and one mysql2 connection reading SHOW GLOBAL STATUS each second. */
const PARTS_ONLY = `import { createServer } from 'node:http';
import { createConnection } from 'mysql2/promise';
createServer((_q, s) => s.end('ok')).listen(0, '127.0.0.1');
const c = await createConnection({ socketPath: process.env.PARTS_SOCKET, user: 'sonde', password: '${PASSWORD}' });
await c.query('SHOW GLOBAL STATUS');
process.stdout.write('ready\\n');
setInterval(() => void c.query('SHOW GLOBAL STATUS'), 1000);
setTimeout(() => process.exit(0), ${RSS_AT_MS + 1000});`;

/** Spawn to `script` ready (imported, or its first answer), and the RSS at RSS_AT_MS. */
async function scriptRun(wait: boolean, script = DEPS_ONLY, socket = ''): Promise<Run> {
  const t0 = performance.now();
  const proc = spawn(process.execPath, [...NODE_FLAGS, '--input-type=module', '-e', script], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, PARTS_SOCKET: socket },
  });
  const ms = await new Promise<number>((resolve, reject) => {
    proc.stdout?.once('data', () => resolve(performance.now() - t0));
    proc.once('exit', (code) => reject(new Error(`deps-only node exited ${code}`)));
  });
  const mem = await memoryAt(t0, proc.pid ?? 0, wait);
  await stop(proc);
  return { apiMs: ms, firstMs: ms, cpuMs: NaN, ...mem };
}

/** mysqld_exporter with its default collectors: spawn to the first 200 on /metrics, then RSS. */
async function exporterRun(socket: string, wait: boolean): Promise<Run> {
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
    return { apiMs: ms, firstMs: ms, cpuMs: NaN, ...(await memoryAt(t0, proc.pid ?? 0, wait)) };
  } finally {
    await stop(proc);
  }
}

function median(xs: readonly number[]): number {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? NaN : n % 2 === 1 ? (s[(n - 1) / 2] ?? NaN) : ((s[n / 2 - 1] ?? 0) + (s[n / 2] ?? 0)) / 2;
}

/** `median (min–max)` with `digits` decimals. */
function stat(xs: readonly number[], digits = 0): string {
  const ys = xs.filter((x) => !Number.isNaN(x));
  if (ys.length === 0) return '';
  const f = (x: number) => x.toFixed(digits);
  return `${f(median(ys))} (${f(Math.min(...ys))}–${f(Math.max(...ys))})`;
}

function row(name: string, cells: string[]): void {
  console.log(`${name.padEnd(52)}${cells.map((c) => c.padEnd(20)).join('')}`);
}

/** One row of a table of runs. */
function runRow(name: string, runs: Run[]): void {
  row(name, [
    stat(runs.map((r) => r.apiMs)),
    stat(runs.map((r) => r.firstMs)),
    stat(runs.map((r) => r.cpuMs)),
    stat(
      runs.map((r) => r.rss),
      1,
    ),
    stat(
      runs.map((r) => r.hwm),
      1,
    ),
    stat(
      runs.map((r) => r.anon),
      1,
    ),
  ]);
}

/** `--version` of every variant (and `node -e 0`): spawn to exit and peak RSS. */
function versionRow(name: string, runs: { ms: number; hwm: number }[]): void {
  row(name, [
    stat(runs.map((r) => r.ms)),
    '',
    '',
    '',
    stat(
      runs.map((r) => r.hwm),
      1,
    ),
  ]);
}

interface Results {
  bare: { ms: number; hwm: number }[];
  versions: { ms: number; hwm: number }[][];
  deps: Run[];
  parts: Run[];
  agents: Run[][];
  exporter: Run[];
}

/** One round: every variant once, so that the machine's load falls on all alike. */
async function round(socket: string, dir: string, i: number, res: Results): Promise<void> {
  const wait = i < RSS_RUNS;
  res.bare.push(shortRun([process.execPath, '-e', '0']));
  for (const [j, v] of VARIANTS.entries()) res.versions[j]?.push(shortRun([...v.argv, '--version']));
  if (process.argv.includes('--deps-too')) res.deps.push(await scriptRun(wait));
  if (process.argv.includes('--parts-too')) res.parts.push(await scriptRun(wait, PARTS_ONLY, socket));
  for (const [j, v] of VARIANTS.entries()) res.agents[j]?.push(await agentRun(socket, dir, v, wait));
  if (existsSync(MYSQLD_EXPORTER)) res.exporter.push(await exporterRun(socket, wait));
}

async function main(): Promise<void> {
  const db = await startMariaDB();
  const dir = mkdtempSync(join(tmpdir(), 'sonde-startup-'));
  try {
    await db.createUser('sonde', PASSWORD, ['PROCESS ON *.*', 'SELECT ON *.*', 'REPLICATION CLIENT ON *.*']);
    console.log(
      `startup: ${RUNS} runs, node ${process.version} ${NODE_FLAGS.join(' ')}, poll ${POLL_MS} ms, ` +
        `RSS ${RSS_AT_MS} ms after the spawn (first ${RSS_RUNS} runs); load average ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}`,
    );
    const res: Results = {
      bare: [],
      versions: VARIANTS.map(() => []),
      deps: [],
      parts: [],
      agents: VARIANTS.map(() => []),
      exporter: [],
    };
    for (let i = 0; i < RUNS; i++) await round(db.socket, dir, i, res);
    row('', ['api ms', 'first collection ms', 'CPU ms to first', 'RSS MiB', 'peak RSS MiB', 'RssAnon MiB']);
    versionRow('node -e 0 (to exit)', res.bare);
    for (const [j, v] of VARIANTS.entries()) versionRow(`${v.name} --version`, res.versions[j] ?? []);
    if (res.deps.length > 0) runRow('node + commander,yaml,mysql2', res.deps);
    if (res.parts.length > 0) runRow('node + http listener + mysql2 query', res.parts);
    for (const [j, v] of VARIANTS.entries()) runRow(v.name, res.agents[j] ?? []);
    if (res.exporter.length > 0) runRow('mysqld_exporter 0.14 (/metrics)', res.exporter);
    else console.log(`${MYSQLD_EXPORTER} not installed: no comparison`);
    console.log(
      `load average at the end: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    await db.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
