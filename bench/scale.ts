/**
 * Scale: one agent with K monitors at the default plan (default-mysql: its first level
 * every 5 s) and the noop sink, against one throwaway MariaDB; K = 0 first (the agent's own
 * floor), then each K asked for. For each K it prints, over the measured window (from the
 * first full minute to the end):
 *
 * - RSS: the agent's resident memory at the end, and the highest sample;
 * - the per-monitor slope: (RSS(K) − RSS(0)) / K, from the last minute's mean RSS;
 * - CPU: utime + stime as a share of one core;
 * - CPU ms per level collection (CPU time over the collections made in the window);
 * - level collections started on time and late (the agent's `/status` `collections`);
 * - the server's connections held by the agent (Threads_connected less the bench's own).
 *
 *   node dist/bench/scale.js [--k 1,10,100,500,1000] [--minutes 10] [--sample-s 15] [--query-analytics [--vs-default] | --wide]
 *     [--compare /abs/other/bin/sonde.js] [--cpu-prof /abs/dir] [--driver-floor]
 *
 * With `--query-analytics`, the server runs with performance_schema and the statement
 * consumers on, and each monitor's plan is the default plan plus a 60 s level collecting
 * query.top, stmt.schema, query.sample, query.plan and lock.wait (the grants of
 * docs/grants.md for them added): the fleet budget with query analytics on. With
 * `--vs-default` too, each K first runs with the default plan alone against the same server,
 * and the CPU query analytics adds is printed per monitor (ms of CPU per monitor per minute).
 *
 * With `--wide`, each monitor's plan is one 5 s level reading every numeric status variable,
 * every numeric global variable and every InnoDB metric (`all: yes` on status.global,
 * var.global and innodb: about 1,100 values on MariaDB 10.11; the count is printed): the cost
 * per collection of a plan that reads everything.
 *
 * With `--driver-floor` (and `--wide`), each K also runs the driver's floor for the same
 * time (bench/driver-floor.ts: K bare mysql2 connections running the wide plan's three
 * statements every 5 s and nothing else), twice: the statements one after the other, then
 * as one multi-statement request per collection; the agent's CPU per collection is printed
 * against each.
 *
 * With `--minutes 30`, the RSS growth from minute 5 to the end is printed too (the soak
 * figure). The monitors all watch the same server under distinct ids: the agent does the
 * work of K monitors, the server answers K times the queries. The agent runs with the Node
 * flags of its own command line (the first line of the built bin).
 *
 * With `--compare <bin>` (an absolute path to another build's bin, such as a copy of main's
 * `dist/bundle/bin/sonde.js`), each K runs first with that bin and then with this build's,
 * against the same server in the same run: a before/after on a shared machine. Each bin runs
 * with the Node flags of its own `#!` line, so a build that changes them is measured as it
 * ships. With `--cpu-prof <dir>`, each agent runs under `node --cpu-prof` and writes its
 * profile there when it stops (the floor's run too).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDriverFloor } from './driver-floor.js';
import { WIDE_STATEMENTS } from './wide.js';
import { cpuSeconds, rssMiB } from './proc-stats.js';
import { BIN, binNodeFlags } from '../test/helpers/agent.js';
import { defaultPlan } from '../src/plan/defaults.js';
import { printPlans } from '../src/plan/store.js';
import { parsePlan } from '../src/plan/parse.js';
import { levelForTick, levelPhases, sortLevels } from '../src/plan/schedule.js';
import { documentedStatements, grantsDoc, MARIADB_DEFAULT_PLAN_BLOCK } from '../test/helpers/demo.js';
import { freePort, startMariaDB, type MariaDB } from '../test/helpers/mariadb.js';

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? def) : def;
}
const KS = arg('k', '1,10,100,500,1000')
  .split(',')
  .map((s) => Number(s.trim()))
  .filter((k) => Number.isInteger(k) && k > 0);
const MINUTES = Number(arg('minutes', '10'));
const SAMPLE_S = Number(arg('sample-s', '15'));
const QUERY_ANALYTICS = process.argv.includes('--query-analytics');
const WIDE = process.argv.includes('--wide');
/** Another build's bin to run before this build's at each K (`--compare`). */
const COMPARE = arg('compare', '');
/** Where each agent writes its CPU profile (`--cpu-prof`). */
const CPU_PROF = arg('cpu-prof', '');

/** One 5 s level reading everything status.global, var.global and innodb can read. */
const WIDE_PLAN = `wide:
  freq: 5s
  collect:
    status.global:
      options:
        all: "yes"
    var.global:
      options:
        all: "yes"
    innodb:
      options:
        all: "yes"
`;

/** `--driver-floor`: the driver's floor at each K beside the agent (wide plan only). */
const DRIVER_FLOOR = process.argv.includes('--driver-floor');

/** How many values the wide plan reads on this server: numeric status and variables, InnoDB metrics. */
async function wideValues(db: MariaDB): Promise<number> {
  const numeric = (rows: Record<string, unknown>[]): number =>
    rows.filter((r) => typeof r.Value === 'string' && /^-?\d+(\.\d+)?$/.test(r.Value.trim())).length;
  const status = numeric(await db.query('SHOW GLOBAL STATUS'));
  const vars = numeric(await db.query('SHOW GLOBAL VARIABLES'));
  const innodb = await db.query('SELECT COUNT(*) AS n FROM information_schema.INNODB_METRICS');
  return status + vars + Number(innodb[0]?.n ?? 0);
}
const VS_DEFAULT = QUERY_ANALYTICS && process.argv.includes('--vs-default');

/** The default plan's levels (default-mysql) plus a 60 s level of the query-analytics domains. */
function qaPlan(): string {
  const base = defaultPlan('default-mysql');
  if (base === undefined) throw new Error('no default-mysql plan');
  const levels = printPlans([base])
    .split('\n')
    .filter((l) => !l.startsWith('---') && !l.startsWith('#'))
    .join('\n')
    .trimEnd();
  const qa = ['query.top', 'stmt.schema', 'query.sample', 'query.plan', 'lock.wait'];
  return `${levels}\nqueries:\n  freq: 60s\n  collect:\n${qa.map((d) => `    ${d}:\n`).join('')}`;
}
/**
 * The busiest second of K monitors activated together, from the schedule alone (no agent):
 * the most level collections due in one second, and the most of them collecting query.top,
 * with every monitor on phase 0 (as before spreading) and on its own id's phase.
 */
function busiest(k: number): string {
  const plan = QUERY_ANALYTICS
    ? parsePlan('qa.yaml', 'qa.yaml', qaPlan())
    : (defaultPlan('default-mysql') ?? parsePlan('none', 'none', ''));
  const sorted = sortLevels(plan);
  const period = Math.max(...sorted.map((l) => l.periodS).filter((p) => Number.isFinite(p)));
  const phases = Array.from({ length: k }, (_v, i) => levelPhases(sorted, `scale-${i}`));
  const worst = (spread: boolean): [number, number] => {
    let most = 0;
    let mostQa = 0;
    for (let s = 1; s <= period; s++) {
      let n = 0;
      let qa = 0;
      for (const p of phases) {
        const sel = levelForTick(sorted, s, spread ? p : undefined);
        if (sel === undefined) continue;
        n++;
        if ('query.top' in sel.collect) qa++;
      }
      most = Math.max(most, n);
      mostQa = Math.max(mostQa, qa);
    }
    return [most, mostQa];
  };
  const [before, beforeQa] = worst(false);
  const [after, afterQa] = worst(true);
  const qa = (n: number): string => (QUERY_ANALYTICS ? ` (${n} with query analytics)` : '');
  return `busiest second after activation, ${k} monitors: ${before} collections${qa(beforeQa)} all on one phase, ${after}${qa(afterQa)} spread by id`;
}

/** The floor's run (no monitors) is short: nothing changes after boot. */
const FLOOR_S = 60;

const PASSWORD = 'scale-pw';

function config(socket: string, apiPort: number, k: number, qa: boolean): string {
  const monitors = Array.from(
    { length: k },
    (_, i) => `  - id: scale-${i}\n    socket: ${socket}\n    username: sonde\n    password: ${PASSWORD}\n`,
  ).join('');
  return [
    `api:\n  bind: 127.0.0.1:${apiPort}`,
    'sinks:\n  noop: {}',
    ...(qa ? ['plans:\n  files: [qa.yaml]'] : []),
    ...(WIDE ? ['plans:\n  files: [wide.yaml]'] : []),
    'monitor-loader:\n  local:\n    disable-auto: true',
    k === 0 ? 'monitors: []' : `monitors:\n${monitors}`,
  ].join('\n');
}

/** `<n> on time, <m> late` from the agent's /status. */
async function collections(apiPort: number): Promise<{ onTime: number; late: number }> {
  const res = await fetch(`http://127.0.0.1:${apiPort}/status`);
  const status = (await res.json()) as Record<string, string>;
  const m = /^(\d+) on time, (\d+) late$/.exec(status.collections ?? '');
  return { onTime: Number(m?.[1] ?? 0), late: Number(m?.[2] ?? 0) };
}

async function threadsConnected(db: MariaDB): Promise<number> {
  const rows = await db.query("SHOW GLOBAL STATUS LIKE 'Threads_connected'");
  return Number(rows[0]?.Value ?? 0) - 1; // less the bench's own connection
}

interface Sample {
  s: number;
  rss: number;
  cpu: number;
}

interface Result {
  k: number;
  rssEnd: number;
  rssMax: number;
  rssLastMinute: number;
  cpuPct: number;
  msPerCollection: number;
  onTime: number;
  late: number;
  connections: number;
  growthPct?: number;
}

/**
 * The agent's stderr lines counted by event, and for `collector-error` by domain
 * (`collector-error lock.wait`): which domain failed, and how often.
 */
const stderrTally = new Map<string, number>();

/** `collector-error lock.wait` from `… [collector-error ] [m] ERROR: plan/level/1/lock.wait: …`. */
function tallyKey(line: string): string {
  const event = /\[([a-z-]+)\s*\]/.exec(line)?.[1] ?? 'other';
  const domain = /ERROR: [^ ]*\/\d+\/([a-z0-9._-]+): /.exec(line)?.[1];
  return domain === undefined ? event : `${event} ${domain}`;
}

function startAgent(dir: string, bin: string): ChildProcess {
  const prof = CPU_PROF === '' ? [] : ['--cpu-prof', '--cpu-prof-dir', CPU_PROF];
  // each build with the flags of its own `#!` line
  const argv = [...binNodeFlags(bin), ...prof, bin, '--config', join(dir, 'sonde.yaml')];
  const agent = spawn(process.execPath, argv, {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let shown = 0;
  stderrTally.clear();
  let rest = '';
  agent.stderr?.on('data', (b: Buffer) => {
    const lines = (rest + b.toString()).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      if (line === '') continue;
      const key = tallyKey(line);
      stderrTally.set(key, (stderrTally.get(key) ?? 0) + 1);
      if (shown++ < 5) console.log(`  agent stderr: ${line}`);
    }
  });
  return agent;
}

/** `  stderr: collector-error lock.wait 12, …` (nothing when the agent wrote nothing). */
function tallyLine(): string | undefined {
  if (stderrTally.size === 0) return undefined;
  const parts = [...stderrTally].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`);
  return `  stderr lines by event: ${parts.join(', ')}`;
}

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/** Run one agent with k monitors for `seconds`, sampling every SAMPLE_S. */
async function runOne(
  db: MariaDB,
  k: number,
  seconds: number,
  qa = QUERY_ANALYTICS,
  bin = BIN,
): Promise<Result> {
  const dir = mkdtempSync(join(tmpdir(), 'sonde-scale-'));
  const apiPort = await freePort();
  writeFileSync(join(dir, 'sonde.yaml'), config(db.socket, apiPort, k, qa));
  if (qa) writeFileSync(join(dir, 'qa.yaml'), qaPlan());
  if (WIDE) writeFileSync(join(dir, 'wide.yaml'), WIDE_PLAN);
  const agent = startAgent(dir, bin);
  const pid = agent.pid ?? 0;
  const samples: Sample[] = [];
  const windowFrom = Math.min(60, seconds / 2);
  let first: { cpu: number; c: { onTime: number; late: number } } | undefined;
  try {
    for (let s = SAMPLE_S; s <= seconds; s += SAMPLE_S) {
      await new Promise((r) => setTimeout(r, SAMPLE_S * 1000));
      if (agent.exitCode !== null || agent.signalCode !== null)
        throw new Error(`the agent with ${k} monitors exited (${agent.exitCode ?? agent.signalCode})`);
      samples.push({ s, rss: rssMiB(pid), cpu: cpuSeconds(pid) });
      if (first === undefined && s >= windowFrom)
        first = { cpu: cpuSeconds(pid), c: await collections(apiPort) };
    }
    const end = { cpu: cpuSeconds(pid), c: await collections(apiPort) };
    const from = first ?? { cpu: 0, c: { onTime: 0, late: 0 } };
    const windowS = seconds - windowFrom;
    const made = end.c.onTime + end.c.late - (from.c.onTime + from.c.late);
    const cpuMs = (end.cpu - from.cpu) * 1000;
    const last = samples.filter((x) => x.s > seconds - 60).map((x) => x.rss);
    const result: Result = {
      k,
      rssEnd: samples[samples.length - 1]?.rss ?? 0,
      rssMax: Math.max(...samples.map((x) => x.rss)),
      rssLastMinute: mean(last),
      cpuPct: (cpuMs / 1000 / windowS) * 100,
      msPerCollection: made > 0 ? cpuMs / made : NaN,
      onTime: end.c.onTime - from.c.onTime,
      late: end.c.late - from.c.late,
      connections: await threadsConnected(db),
    };
    if (seconds >= 30 * 60) {
      const at5 = mean(samples.filter((x) => x.s > 4 * 60 && x.s <= 5 * 60).map((x) => x.rss));
      result.growthPct = ((result.rssLastMinute - at5) / at5) * 100;
    }
    return result;
  } finally {
    agent.kill('SIGTERM');
    await new Promise((r) => (agent.exitCode !== null ? r(null) : agent.once('exit', r)));
    rmSync(dir, { recursive: true, force: true });
  }
}

function row(r: Result, floor: number): string {
  const slope = r.k === 0 ? '' : ((r.rssLastMinute - floor) / r.k).toFixed(3);
  const cells = [
    String(r.k).padStart(5),
    r.rssEnd.toFixed(1).padStart(8),
    r.rssMax.toFixed(1).padStart(8),
    slope.padStart(10),
    r.cpuPct.toFixed(1).padStart(7),
    (Number.isNaN(r.msPerCollection) ? '-' : r.msPerCollection.toFixed(2)).padStart(9),
    String(r.onTime).padStart(8),
    String(r.late).padStart(6),
    String(r.connections).padStart(6),
    r.growthPct === undefined ? '' : `${r.growthPct.toFixed(1)} %`.padStart(8),
  ];
  return cells.join('  ');
}

/**
 * What query analytics adds, from the runs with and without it at the same K:
 * `  query analytics adds 8.1 % of one core: 4.86 ms of CPU per monitor per minute`.
 */
function addedLine(base: Result, qa: Result): string {
  const pct = qa.cpuPct - base.cpuPct;
  const msPerMonitorMinute = ((pct / 100) * 60_000) / qa.k;
  return `  query analytics adds ${pct.toFixed(1)} % of one core: ${msPerMonitorMinute.toFixed(2)} ms of CPU per monitor per minute`;
}

async function main(): Promise<void> {
  const most = Math.max(0, ...KS);
  const db = await startMariaDB({
    args: [
      `--max-connections=${most * 3 + 100}`,
      '--log-bin=mysql-bin',
      '--server-id=1',
      ...(QUERY_ANALYTICS
        ? [
            '--performance-schema=ON',
            '--performance-schema-consumer-events-statements-current=ON',
            '--performance-schema-consumer-events-statements-history-long=ON',
            '--performance-schema-instrument=wait/lock/metadata/sql/mdl=ON',
          ]
        : []),
    ],
  });
  try {
    // The account docs/grants.md gives the default plan on MariaDB (no heartbeat table).
    // Its connection limit is per server; here every monitor shares one server: lifted.
    for (const st of documentedStatements(grantsDoc(), MARIADB_DEFAULT_PLAN_BLOCK, PASSWORD))
      await db.query(st);
    await db.query("ALTER USER 'sonde'@'%' WITH MAX_USER_CONNECTIONS 0");
    // The query-analytics grants of docs/grants.md.
    if (QUERY_ANALYTICS) await db.query("GRANT SELECT ON performance_schema.* TO 'sonde'@'%'");
    const what = QUERY_ANALYTICS
      ? 'default plan + query analytics at 60 s'
      : WIDE
        ? `every status variable, global variable and InnoDB metric (${await wideValues(db)} values) at 5 s`
        : 'default plan';
    console.log(
      `scale: ${what}, noop sink, ${MINUTES} min per K, node ${process.version} ${binNodeFlags().join(' ')}`,
    );
    if (DRIVER_FLOOR && !WIDE) throw new Error("--driver-floor runs the wide plan's statements: add --wide");
    if (QUERY_ANALYTICS && WIDE)
      throw new Error('--query-analytics and --wide are two different plans: pick one');
    const floor = await runOne(db, 0, FLOOR_S);
    console.log('    K  RSS MiB  max MiB  MiB/monitor  CPU %  ms/coll  on time    late  conns  growth 5→end');
    console.log(row(floor, floor.rssLastMinute));
    for (const k of KS) {
      console.log(`  ${busiest(k)}`);
      const base = VS_DEFAULT ? await runOne(db, k, MINUTES * 60, false) : undefined;
      if (base !== undefined) console.log(`${row(base, floor.rssLastMinute)}  (default plan alone)`);
      const tally = base === undefined ? undefined : tallyLine();
      if (tally !== undefined) console.log(tally);
      if (COMPARE !== '') {
        const other = await runOne(db, k, MINUTES * 60, QUERY_ANALYTICS, COMPARE);
        console.log(`${row(other, floor.rssLastMinute)}  (${COMPARE})`);
        const otherTally = tallyLine();
        if (otherTally !== undefined) console.log(otherTally);
      }
      const r = await runOne(db, k, MINUTES * 60);
      console.log(`${row(r, floor.rssLastMinute)}${COMPARE === '' ? '' : '  (this build)'}`);
      const qaTally = tallyLine();
      if (qaTally !== undefined) console.log(qaTally);
      if (base !== undefined) console.log(addedLine(base, r));
      if (DRIVER_FLOOR) {
        const seconds = MINUTES * 60;
        for (const form of ['one', 'batch'] as const) {
          const f = await runDriverFloor(
            { socket: db.socket, user: 'sonde', password: PASSWORD },
            k,
            WIDE_STATEMENTS,
            5000,
            seconds,
            Math.min(60, seconds / 2),
            form,
          );
          const how = form === 'one' ? 'one after the other' : 'as one multi-statement request';
          console.log(
            `  driver floor (mysql2 alone, the plan's ${WIDE_STATEMENTS.length} statements ${how} per collection): ${f.cpuPct.toFixed(1)} % of one core, ${f.msPerCollection.toFixed(2)} ms per collection (${f.collections}); the agent: ${(r.msPerCollection / f.msPerCollection).toFixed(2)}x`,
          );
        }
      }
    }
  } finally {
    await db.stop();
  }
}

await main();
