/**
 * The agent's own output streams break under it: whoever read stdout and stderr went away
 * (`sonde … 2>&1 | head -c 100`, a dead `| logger`, a container log pipe). The pipes are
 * real: the test reads a little, then closes its read end, so the agent's next write fails
 * with EPIPE.
 *
 * A broken stream is detected once and reported once where something still listens; the
 * agent never spins on it; SIGTERM still ends it with code 0 within the stop deadline; and
 * the log sink's status says its output is gone.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startMariaDB, freePort, type MariaDB } from '../helpers/mariadb.js';
import { BIN, agentConfigHead, writeConfig, type MonitorsStatus } from '../helpers/agent.js';

const PASSWORD = 'Pipes-31-pass';
const PLAN = 'kpi:\n  freq: 1s\n  collect:\n    status.global:\n      metrics: [uptime, threads_connected]\n';
/** The stop deadline the docs promise, plus room for a loaded machine to deliver the exit. */
const STOP_LIMIT_MS = 5000 + 1500;

let db: MariaDB;

/** CPU seconds (user + system) the process has used so far, from /proc/<pid>/stat. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after "(comm) ".
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

interface Running {
  proc: ChildProcess;
  port: number;
  dir: string;
  exited: Promise<number | null>;
  /** stderr and stdout text read so far (while the test reads them). */
  stderr(): string;
  stdout(): string;
}

/**
 * Start sonde with one monitor collecting every second into the log sink (stdout), through a
 * shell so that `2>&1` can put both streams on one pipe, as an operator's pipeline does.
 */
async function startPiped(opts: { merge: boolean; deadPort?: number }): Promise<Running> {
  const port = await freePort();
  // A monitor whose server is not there prints an error event on each retry (stderr).
  const dead = opts.deadPort === undefined ? '' : `  - id: dead\n    hostname: 127.0.0.1:${opts.deadPort}\n`;
  const [dir, path] = writeConfig(
    `${agentConfigHead(PASSWORD).replace('{{API}}', `127.0.0.1:${port}`)}monitors:\n  - id: pipe\n    socket: ${db.socket}\n${dead}`,
  );
  writeFileSync(join(dir, 'plan.yaml'), PLAN);
  const script = `exec "$0" "$@"${opts.merge ? ' 2>&1' : ''}`;
  const proc = spawn('bash', ['-c', script, process.execPath, BIN, '--config', path], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  let out = '';
  proc.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  return { proc, port, dir, exited, stderr: () => err, stdout: () => out };
}

async function monitorsStatus(port: number): Promise<MonitorsStatus | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/status/monitors`);
    return res.ok ? ((await res.json()) as MonitorsStatus) : undefined;
  } catch {
    return undefined;
  }
}

/** Read `bytes` of stdout, then close the read end: the agent's next write to it fails. */
async function readThenClose(proc: ChildProcess, bytes: number): Promise<void> {
  const out = proc.stdout;
  if (!out) throw new Error('no stdout pipe');
  await new Promise<void>((resolve, reject) => {
    let got = 0;
    const onData = (d: Buffer): void => {
      got += d.length;
      if (got >= bytes) {
        out.off('data', onData);
        resolve();
      }
    };
    out.on('data', onData);
    // An agent that ends before printing fails the test instead of holding it.
    proc.once('exit', (code) =>
      reject(new Error(`sonde exited (${String(code)}) before printing ${bytes} bytes`)),
    );
  });
  out.destroy();
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** SIGTERM, then how long the exit took and its code (SIGKILL after 15 s so the test ends). */
async function terminate(run: Running): Promise<{ code: number | null; ms: number }> {
  const started = Date.now();
  run.proc.kill('SIGTERM');
  const killer = setTimeout(() => run.proc.kill('SIGKILL'), 15_000);
  const code = await run.exited;
  clearTimeout(killer);
  rmSync(run.dir, { recursive: true, force: true });
  return { code, ms: Date.now() - started };
}

describe('faults: broken output streams', () => {
  before(async () => {
    db = await startMariaDB();
    await db.createUser('sonde', PASSWORD, ['PROCESS ON *.*']);
  });

  after(async () => {
    await db?.stop();
  });

  it('does not spin once stdout and stderr (one pipe) are closed, and exits 0 on SIGTERM in time', async (t) => {
    const run = await startPiped({ merge: true });
    await readThenClose(run.proc, 100);
    // Let collections (log sink blocks, info events) hit the broken pipe for a while.
    await sleep(2000);
    assert.equal(run.proc.exitCode, null, `sonde exited (${String(run.proc.exitCode)}): ${run.stderr()}`);
    const pid = run.proc.pid ?? -1;
    const cpu0 = cpuSeconds(pid);
    await sleep(3000);
    const cpuShare = (cpuSeconds(pid) - cpu0) / 3;
    const st = await monitorsStatus(run.port);
    const { code, ms } = await terminate(run);
    t.diagnostic(`CPU ${(cpuShare * 100).toFixed(0)} % of a core; exit ${String(code)} after ${ms} ms`);
    t.diagnostic(
      `log sink status: ${JSON.stringify(st?.pipe?.log)} / ${JSON.stringify(st?.pipe?.['error:log'])}`,
    );
    assert.ok(cpuShare < 0.3, `the agent used ${(cpuShare * 100).toFixed(0)} % of a core`);
    assert.equal(code, 0);
    assert.ok(ms < STOP_LIMIT_MS, `exited after ${ms} ms`);
    assert.match(st?.pipe?.log ?? '', /stdout.*(closed|EPIPE)/i);
  });

  it('reports a closed stdout once on stderr, and the log sink status shows it', async (t) => {
    const run = await startPiped({ merge: false });
    await readThenClose(run.proc, 100);
    // Several collection cycles (1 s) after the break.
    await sleep(5000);
    const st = await monitorsStatus(run.port);
    const { code, ms } = await terminate(run);
    const lines = run
      .stderr()
      .split('\n')
      .filter((l) => l !== '');
    t.diagnostic(`stderr after the break: ${lines.length} lines; exit ${String(code)} after ${ms} ms`);
    for (const l of lines.slice(0, 8)) t.diagnostic(l);
    assert.doesNotMatch(run.stderr(), /uncaught exception/);
    // Once by the agent, once by the log sink's failed send; never once per cycle.
    const closed = lines.filter((l) => /\[server-output-closed\s*\] \[\] ERROR: stdout is closed/.test(l));
    assert.equal(closed.length, 1, `stdout's failure reported ${closed.length} times`);
    const sink = lines.filter((l) => /\[sink-send-error\s*\] \[pipe\] ERROR: log :stdout is closed/.test(l));
    assert.equal(sink.length, 1, `the log sink's failure reported ${sink.length} times`);
    assert.equal(lines.length, 2, `stderr got ${lines.length} lines:\n${lines.join('\n')}`);
    assert.match(st?.pipe?.log ?? '', /stdout.*(closed|EPIPE)/i);
    assert.equal(code, 0);
    assert.ok(ms < STOP_LIMIT_MS, `exited after ${ms} ms`);
  });

  it('reports a closed stderr once on stdout, as a notice', async (t) => {
    const run = await startPiped({ merge: false, deadPort: await freePort() });
    const err = run.proc.stderr;
    if (!err) throw new Error('no stderr pipe');
    // The dead monitor's first error event, then the read end of stderr is closed.
    await new Promise<void>((resolve) => err.once('data', () => resolve()));
    err.destroy();
    await sleep(4000);
    const { code, ms } = await terminate(run);
    const notices = run
      .stdout()
      .split('\n')
      .filter((l) => /\[server-output-closed\s*\] \[\] stderr is closed \(write EPIPE\)/.test(l));
    t.diagnostic(notices[0] ?? '(no notice)');
    assert.equal(notices.length, 1, run.stdout().slice(-1500));
    assert.equal(code, 0);
    assert.ok(ms < STOP_LIMIT_MS, `exited after ${ms} ms`);
  });
});
