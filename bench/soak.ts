/**
 * Soak: the built agent running N monitors at 1 s for T minutes against one throwaway
 * MariaDB, with the noop sink. Every minute it prints the agent's resident memory (RSS,
 * from /proc/<pid>/status) and its CPU (utime+stime from /proc/<pid>/stat) as a share of
 * one core; at the end, the RSS growth from minute `--settle` to the end, as a percentage
 * and as a least-squares slope in MiB per hour.
 *
 *   node dist/bench/soak.js [--monitors 50] [--minutes 30] [--settle 5]
 *
 * The monitors all watch the same server under distinct ids (the agent does the work of
 * N monitors; the server does N times the queries). The plan has levels at 1 s, 5 s and
 * 10 s with the domains a typical plan collects.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuSeconds, rssMiB } from './proc-stats.js';
import { BIN } from '../test/helpers/agent.js';
import { freePort, startMariaDB } from '../test/helpers/mariadb.js';

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? def) : def;
}
const MONITORS = Number(arg('monitors', '50'));
const MINUTES = Number(arg('minutes', '30'));
const SETTLE = Number(arg('settle', '5'));

/** One sampling period (shorter only to try the script out: --minute-ms). */
const MINUTE_MS = Number(arg('minute-ms', '60000'));

/** Least-squares slope of y over x. */
function slope(xs: number[], ys: number[]): number {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += ((xs[i] ?? 0) - mx) * ((ys[i] ?? 0) - my);
    den += ((xs[i] ?? 0) - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

function config(socket: string, apiPort: number): string {
  const monitors = Array.from(
    { length: MONITORS },
    (_, i) => `  - id: soak-${i}\n    socket: ${socket}\n    username: sonde\n    password: soak-pw\n`,
  ).join('');
  return [
    `api:\n  bind: 127.0.0.1:${apiPort}`,
    'sinks:\n  noop: {}',
    'plans:\n  files: [plan.yaml]',
    `monitors:\n${monitors}`,
  ].join('\n');
}

/** Levels at 1 s, 5 s and 10 s with the domains a typical plan collects. */
function plan(): string {
  return `kpi:
  freq: 1s
  collect:
    status.global:
      metrics: [queries, threads_running, threads_connected]
mid:
  freq: 5s
  collect:
    status.global:
      options: { all: "yes" }
    innodb:
      options: { all: "enabled" }
    trx:
      metrics: [oldest]
slow:
  freq: 10s
  collect:
    var.global:
      metrics: [max_connections, innodb_buffer_pool_size]
    size.database: {}
    innodb.buffer-pool:
      options: { all: "yes" }
`;
}

async function main(): Promise<void> {
  // Every monitor may hold its pool's 3 connections: room for all of them.
  const db = await startMariaDB({ args: [`--max-connections=${MONITORS * 4 + 50}`] });
  const dir = mkdtempSync(join(tmpdir(), 'sonde-soak-'));
  try {
    await db.createUser('sonde', 'soak-pw', ['PROCESS ON *.*', 'SELECT ON *.*']);
    const apiPort = await freePort();
    writeFileSync(join(dir, 'sonde.yaml'), config(db.socket, apiPort));
    writeFileSync(join(dir, 'plan.yaml'), plan());
    const agent = spawn(process.execPath, [BIN, '--config', join(dir, 'sonde.yaml')], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let errors = 0;
    const firstErrors: string[] = [];
    agent.stderr.on('data', (b: Buffer) => {
      const lines = b
        .toString()
        .split('\n')
        .filter((l) => l !== '');
      errors += lines.length;
      for (const l of lines) if (firstErrors.length < 5) firstErrors.push(l);
    });
    const pid = agent.pid ?? 0;
    console.log(
      `soak: ${MONITORS} monitors at 1 s, ${MINUTES} min, agent pid ${pid}, node ${process.version}`,
    );
    console.log('minute  RSS MiB  CPU % of one core  stderr lines');
    const minutes: number[] = [];
    const rss: number[] = [];
    let lastCpu = cpuSeconds(pid);
    for (let m = 1; m <= MINUTES; m++) {
      await new Promise((r) => setTimeout(r, MINUTE_MS));
      if (agent.exitCode !== null || agent.signalCode !== null) {
        console.log(`the agent exited (${agent.exitCode ?? agent.signalCode}) during minute ${m}`);
        break;
      }
      const cpu = cpuSeconds(pid);
      const r = rssMiB(pid);
      minutes.push(m);
      rss.push(r);
      console.log(
        `${String(m).padStart(6)}  ${r.toFixed(1).padStart(7)}  ${(((cpu - lastCpu) / (MINUTE_MS / 1000)) * 100).toFixed(1).padStart(17)}  ${String(errors).padStart(12)}`,
      );
      lastCpu = cpu;
    }
    agent.kill('SIGTERM');
    if (firstErrors.length > 0) console.log(`first stderr lines:\n  ${firstErrors.join('\n  ')}`);
    const from = minutes.findIndex((m) => m >= SETTLE);
    if (from >= 0 && rss.length - from >= 2) {
      const base = rss[from] ?? 0;
      const end = rss[rss.length - 1] ?? 0;
      const s = slope(minutes.slice(from), rss.slice(from)) * 60;
      console.log(
        `RSS from minute ${minutes[from]} to ${minutes[minutes.length - 1]}: ${base.toFixed(1)} → ${end.toFixed(1)} MiB (${(((end - base) / base) * 100).toFixed(1)} %), slope ${s.toFixed(2)} MiB/h`,
      );
    }
  } finally {
    await db.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
