/**
 * Exporter scrape cost: sonde's mysqld_exporter emulation next to the real Debian
 * prometheus-mysqld-exporter, on one throwaway MariaDB, in the same run.
 *
 *   node dist/bench/exporter.js [--collectors default|three] [--scrapes 300] [--concurrency 4]
 *                               [--warmup 10] [--gzip] [--settle 0] [--compare <exporter.js>]
 *                               [--load <n>] [--process-families]
 *
 * Both exporters collect the same thing. `--collectors default` (the default):
 * mysqld_exporter's default collectors (global_status, global_variables, slave_status,
 * info_schema.innodb_cmp, innodb_cmpmem, query_response_time; sonde with the same scrapers
 * switched on by flag). `--collectors three`: SHOW GLOBAL STATUS, SHOW GLOBAL VARIABLES and
 * the enabled INNODB_METRICS rows (sonde's default-exporter plan; mysqld_exporter with
 * global_status, global_variables and info_schema.innodb_metrics only). Each runs in its
 * own process, so both are measured the same way: CPU = utime+stime from /proc/<pid>/stat
 * over the measured scrapes, divided by their number. The baseline runs exactly the
 * statements sonde's collectors ran in one scrape (recorded), one after the other.
 *
 * Phases:
 * 1. sonde vs mysqld_exporter: `--scrapes` rounds of one scrape of each (same server, same
 *    machine load): median and p95 latency, CPU per scrape;
 * 2. sonde vs the baseline: `--scrapes` rounds of one sonde scrape and the same queries one
 *    after the other on one open mysql2 connection: the latency ratio;
 * 3. throughput: `--concurrency` clients scraping as fast as they can, `--scrapes` in all.
 *
 * `--compare <path>`: another build's `dist/bench/exporter.js` (e.g. main's, built in a
 * temporary directory) serves as a second sonde, scraped in the same rounds of phases 1 and
 * 2, so a change is measured before and after under the same load. `--load <n>`: n busy
 * processes spin for the whole run, a loaded machine on purpose. `--process-families`: sonde's
 * answers carry the process families its mysqld_exporter command line appends (`process_*`,
 * `nodejs_*`, `mysqld_exporter_build_info`, as mysqld_exporter's carry its `go_*` and
 * `process_*`); without it, the monitor's exporter endpoint as a config file runs it.
 *
 * A scrape's latency runs from the request to the answer's last byte, gunzipped when it came
 * gzipped, as Prometheus times a scrape (its scrape duration ends with the body read and
 * decompressed); the bench's own check of the text (decoding it to a string, looking for
 * `mysql_up 1`) comes after the clock stops.
 *
 * Targets: CPU per scrape ≤ 0.2 × mysqld_exporter's (with its default collectors and gzip;
 * 0.5 × with the three); median scrape latency ≤ 1.3 × the baseline.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { loadavg } from 'node:os';
import { gunzipSync } from 'node:zlib';
import { createConnection } from 'mysql2/promise';
import { builtinCollectors } from '../src/collectors/builtin.js';
import { NO_EVENTS } from '../src/core/events.js';
import type { Db } from '../src/core/db.js';
import type { Plan } from '../src/core/plan.js';
import { commandLineSelfMetrics } from '../src/exporter/process-metrics.js';
import { createScrapeReader } from '../src/exporter/scrape-reader.js';
import { startExporter } from '../src/exporter/server.js';
import { defaultPlan } from '../src/plan/defaults.js';
import { httpGet, rootSocketDsn, startMysqldExporter, type Peer } from '../test/e2e/exporter-peers.js';
import { binNodeFlags } from '../test/helpers/agent.js';
import { rootDb, startMariaDB } from '../test/helpers/mariadb.js';
import { defaultCollectorsPlan } from './default-collectors.js';

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? def) : def;
}

// ---- child: sonde's exporter in its own process -----------------------------------------

/** `--collectors`: `default` (mysqld_exporter's default set) or `three`. */
const SET = arg('collectors', 'default') === 'three' ? 'three' : 'default';

/** `--process-families`: the child appends the command line's process families. */
const PROCESS_FAMILIES = process.argv.includes('--process-families');

/** The exporter plan of the set: default-exporter, or mysqld_exporter's defaults that sonde serves. */
function benchPlan(): Plan {
  if (SET === 'three') {
    const plan = defaultPlan('default-exporter');
    if (plan === undefined) throw new Error('no default-exporter plan');
    return plan;
  }
  return defaultCollectorsPlan(builtinCollectors());
}

/** The statements one scrape of the plan runs, in order of first use, with their parameters. */
async function recordStatements(socket: string): Promise<[string, readonly unknown[]][]> {
  const db = rootDb(socket);
  const seen: [string, readonly unknown[]][] = [];
  const recording: Db = {
    query: (sql, params = [], opts) => {
      seen.push([sql, params]);
      return db.query(sql, params, opts);
    },
    serverInfo: (opts) => db.serverInfo(opts),
    ping: (opts) => db.ping(opts),
  };
  const reader = createScrapeReader({
    monitorId: 'rec',
    db: recording,
    plan: benchPlan(),
    collectors: builtinCollectors(),
  });
  await reader.scrape(new AbortController().signal); // prepares: trial queries and sources
  seen.length = 0;
  const r = await reader.scrape(new AbortController().signal);
  if (r.error !== '') throw new Error(`recording scrape failed: ${r.error}`);
  await reader.close();
  await db.close();
  return seen;
}

/** `--child <socket>`: serve sonde's exporter for root over the socket; print the address. */
async function child(socket: string): Promise<void> {
  const db = rootDb(socket);
  const plan = benchPlan();
  const source = createScrapeReader({ monitorId: 'bench', db, plan, collectors: builtinCollectors() });
  const self = PROCESS_FAMILIES ? commandLineSelfMetrics('bench') : undefined;
  const handle = await startExporter({
    monitorId: 'bench',
    listen: '127.0.0.1:0',
    path: '/metrics',
    source,
    status: { set: () => undefined, delete: () => undefined },
    events: NO_EVENTS,
    ...(self === undefined ? {} : { selfMetrics: () => self.samples() }),
  });
  process.stdout.write(`${handle.address}\n`);
  process.once('SIGTERM', () => {
    void handle
      .close()
      .then(() => source.close())
      .then(() => db.close())
      .finally(() => process.exit(0)); // exiting is the point; errors do not matter here
  });
}

// ---- measurement helpers ----------------------------------------------------------------

const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** utime+stime of a process, in ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // fields after the `(comm)`: state is field 3; utime and stime are fields 14 and 15
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
}

function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
}
const median = (xs: readonly number[]) => quantile(xs, 0.5);

interface Target {
  name: string;
  pid: number;
  url: string;
}

/** `--gzip`: ask for gzip as Prometheus does (Accept-Encoding: gzip). */
const GZIP = process.argv.includes('--gzip');

/** One GET: status, the body's bytes (gunzipped), and the ms from the request to those bytes. */
function timedGet(url: string): Promise<{ status: number; body: Buffer; ms: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request(
      url,
      { headers: GZIP ? { 'Accept-Encoding': 'gzip' } : {}, timeout: 10_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          let body = Buffer.concat(chunks);
          if (res.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
          resolve({ status: res.statusCode ?? 0, body, ms: performance.now() - t0 });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: timeout`)));
    req.on('error', reject);
    req.end();
  });
}

async function scrapeOnce(url: string): Promise<number> {
  const r = await timedGet(url);
  const text = r.body.toString();
  if (r.status !== 200 || !text.includes('mysql_up 1'))
    throw new Error(`${url}: ${r.status} ${text.slice(0, 200)}`);
  return r.ms;
}

async function throughput(
  t: Target,
  total: number,
  concurrency: number,
): Promise<{ perSec: number; cpuPerScrape: number }> {
  let left = total;
  const c0 = cpuMs(t.pid);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left > 0) {
        left--;
        await scrapeOnce(t.url);
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  return { perSec: total / secs, cpuPerScrape: (cpuMs(t.pid) - c0) / total };
}

function startChild(
  socket: string,
  script = process.argv[1] ?? '',
): Promise<{ proc: ChildProcess; address: string }> {
  // sonde's process runs with the Node flags the bin ships with (its `#!` line), as the
  // installed exporter does; BENCH_CHILD_NODE_ARGS adds flags for it alone (e.g. `--cpu-prof`).
  const extra = (process.env.BENCH_CHILD_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
  const nodeArgs = [...binNodeFlags(), ...extra];
  const childArgs = [
    script,
    '--child',
    socket,
    '--collectors',
    SET,
    ...(PROCESS_FAMILIES ? ['--process-families'] : []),
  ];
  const proc = spawn(process.execPath, [...nodeArgs, ...childArgs], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.on('exit', () => proc.kill('SIGKILL'));
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line !== undefined) resolve({ proc, address: line.trim() });
    });
    proc.once('exit', (code) => reject(new Error(`sonde exporter child exited (${String(code)})`)));
  });
}

// ---- main -------------------------------------------------------------------------------

async function main(): Promise<void> {
  const SCRAPES = Math.max(10, Number(arg('scrapes', '300')) || 300);
  const CONCURRENCY = Math.max(1, Number(arg('concurrency', '4')) || 4);
  const WARMUP = Math.max(1, Number(arg('warmup', '10')) || 10);
  // --settle: ms of quiet after each scrape in the alternating rounds, so one process's
  // leftover work (Go's garbage collector after a mysqld_exporter scrape) does not run on
  // the machine's other CPU during the next process's scrape. Each process's CPU is still
  // counted in full: /proc counts its work during the pauses too.
  const SETTLE = Math.max(0, Number(arg('settle', '0')) || 0);
  const settle = () => (SETTLE > 0 ? new Promise((r) => setTimeout(r, SETTLE)) : Promise.resolve());

  const COMPARE = arg('compare', '');
  const LOAD = Math.max(0, Number(arg('load', '0')) || 0);
  const spinners = Array.from({ length: LOAD }, () =>
    spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }),
  );
  process.on('exit', () => spinners.forEach((p) => p.kill('SIGKILL')));
  const server = await startMariaDB();
  let real: Peer | undefined;
  const sondeProcs: ChildProcess[] = [];
  try {
    real = await startMysqldExporter(rootSocketDsn(server.socket), SET === 'three' ? undefined : []);
    const c = await startChild(server.socket);
    sondeProcs.push(c.proc);
    const targets: Target[] = [{ name: 'sonde', pid: c.proc.pid ?? -1, url: `http://${c.address}/metrics` }];
    if (COMPARE !== '') {
      const other = await startChild(server.socket, COMPARE);
      sondeProcs.push(other.proc);
      targets.push({
        name: 'sonde (compare)',
        pid: other.proc.pid ?? -1,
        url: `http://${other.address}/metrics`,
      });
    }
    targets.push({ name: 'mysqld_exporter', pid: real.pid, url: `http://${real.address}/metrics` });
    const version = (await server.query('SELECT @@version AS v'))[0]?.v;
    const rows = (await httpGet(targets[0]?.url ?? '')).body
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('#')).length;
    console.log(
      `MariaDB ${String(version)}; collectors: ${SET}; ${SCRAPES} scrapes per exporter${GZIP ? ' (gzip)' : ''}; settle ${SETTLE} ms; sonde serves ${rows} samples`,
    );
    if (COMPARE !== '') console.log(`sonde (compare): ${COMPARE}`);
    const load0 = loadavg();

    // The same queries on one open connection, as a plain client runs them.
    const conn = await createConnection({ socketPath: server.socket, user: 'root' });
    const queries = await recordStatements(server.socket);
    console.log(
      `baseline: ${queries.length} statements: ${queries.map(([q]) => q.replace(/\s+/g, ' ').slice(0, 60)).join(' | ')}`,
    );
    const baseline = async (): Promise<number> => {
      const t0 = performance.now();
      for (const [q, params] of queries)
        await conn.query(q, [...params] as (string | number)[]).catch(() => undefined); // a failure costs its round trip too
      return performance.now() - t0;
    };

    for (let i = 0; i < WARMUP; i++) {
      for (const t of targets) await scrapeOnce(t.url);
      await baseline();
    }

    // 1. sonde against mysqld_exporter: one scrape of each in turn (same server, same load)
    const lat = new Map<string, number[]>(targets.map((t) => [t.name, []]));
    const cpu0 = new Map(targets.map((t) => [t.name, cpuMs(t.pid)]));
    for (let i = 0; i < SCRAPES; i++)
      for (const t of targets) {
        lat.get(t.name)?.push(await scrapeOnce(t.url));
        await settle();
      }
    const cpuPer = new Map(targets.map((t) => [t.name, (cpuMs(t.pid) - (cpu0.get(t.name) ?? 0)) / SCRAPES]));

    // 2. sonde against the plain queries, in turn; mysqld_exporter idle (its scrapes leave
    //    work behind — connection teardown, Go GC — that would slow whatever runs next)
    const sondes = targets.filter((t) => t.name.startsWith('sonde'));
    const round2 = new Map<string, number[]>(sondes.map((t) => [t.name, []]));
    const base: number[] = [];
    for (let i = 0; i < SCRAPES; i++) {
      for (const t of sondes) {
        round2.get(t.name)?.push(await scrapeOnce(t.url));
        await settle();
      }
      base.push(await baseline());
      await settle();
    }
    const sondeLat = round2.get('sonde') ?? [];
    await conn.end();

    // 3. throughput
    const tp = new Map<string, { perSec: number; cpuPerScrape: number }>();
    for (const t of targets) tp.set(t.name, await throughput(t, SCRAPES, CONCURRENCY));

    const f = (n: number, d = 2) => n.toFixed(d);
    console.log('');
    console.log(
      [
        'exporter',
        'median ms',
        'p95 ms',
        'CPU ms/scrape',
        `scrapes/s (x${CONCURRENCY})`,
        'CPU ms/scrape (conc.)',
      ]
        .map((s, i) => (i === 0 ? s.padEnd(18) : s.padStart(22)))
        .join(''),
    );
    for (const t of targets) {
      const l = lat.get(t.name) ?? [];
      const p = tp.get(t.name);
      console.log(
        [
          t.name,
          f(median(l)),
          f(quantile(l, 0.95)),
          f(cpuPer.get(t.name) ?? NaN),
          f(p?.perSec ?? NaN, 1),
          f(p?.cpuPerScrape ?? NaN),
        ]
          .map((s, i) => (i === 0 ? s.padEnd(18) : s.padStart(22)))
          .join(''),
      );
    }
    for (const [name, l] of round2)
      console.log(
        `${`${name} (round 2)`.padEnd(18)}${f(median(l)).padStart(22)}${f(quantile(l, 0.95)).padStart(22)}` +
          '   (alternating with the baseline below)',
      );
    console.log(
      `${'one connection'.padEnd(18)}${f(median(base)).padStart(22)}${f(quantile(base, 0.95)).padStart(22)}` +
        `   (the same ${queries.length} statements, sequential, one open mysql2 connection)`,
    );

    const cpuRatio = (cpuPer.get('sonde') ?? NaN) / (cpuPer.get('mysqld_exporter') ?? NaN);
    const latRatio = median(sondeLat) / median(base);
    const realLatRatio = median(lat.get('mysqld_exporter') ?? []) / median(lat.get('sonde') ?? []);
    console.log('');
    const cpuTarget = SET === 'three' ? 0.5 : 0.2;
    console.log(
      `CPU per scrape, sonde / mysqld_exporter: ${f(cpuRatio)} (target ≤ ${f(cpuTarget)}) ${cpuRatio <= cpuTarget ? 'PASS' : 'FAIL'}`,
    );
    console.log(
      `median latency, sonde / one connection:  ${f(latRatio)} (target ≤ 1.30) ${latRatio <= 1.3 ? 'PASS' : 'FAIL'}` +
        `   (mysqld_exporter's median is ${f(realLatRatio)}x sonde's)`,
    );
    if (COMPARE !== '') {
      const other = round2.get('sonde (compare)') ?? [];
      console.log(
        `sonde (compare): CPU ${f((cpuPer.get('sonde (compare)') ?? NaN) / (cpuPer.get('mysqld_exporter') ?? NaN))} of mysqld_exporter's, median ${f(median(other) / median(base))}x one connection`,
      );
    }
    console.log(
      `load average: ${load0.map((x) => x.toFixed(2)).join(' ')} at the start, ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')} at the end${LOAD > 0 ? ` (${LOAD} busy processes added)` : ''}`,
    );
    console.log(
      `throughput, sonde / mysqld_exporter:      ${f((tp.get('sonde')?.perSec ?? NaN) / (tp.get('mysqld_exporter')?.perSec ?? NaN))}` +
        ' (sonde serializes scrapes of one monitor; mysqld_exporter runs them in parallel)',
    );
  } finally {
    for (const proc of sondeProcs) {
      if (proc.exitCode !== null) continue;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    }
    for (const p of spinners) p.kill('SIGKILL');
    await real?.stop();
    await server.stop();
  }
}

const childAt = process.argv.indexOf('--child');
if (childAt >= 0) {
  await child(process.argv[childAt + 1] ?? '');
} else {
  await main();
}
