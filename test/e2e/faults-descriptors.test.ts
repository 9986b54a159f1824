/**
 * Scarce file descriptors: the built agent started under `ulimit -n 64` (soft and hard) with
 * 40 monitors of a real MariaDB. It warns at boot that the limit is below what the monitors
 * need, its page still answers (its files are read at start), and once descriptors are free
 * again (the limit raised on the running process with `prlimit`, as an operator would) every
 * monitor that hit EMFILE recovers by itself. A soft limit below the hard one is raised at
 * start.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { BIN, writeConfig, type MonitorsStatus } from '../helpers/agent.js';

const PASSWORD = 'Fds-40-pass';
const MONITORS = 40;
/** Two domains: each monitor runs two statements at once, on two connections. */
const PLAN =
  'kpi:\n  freq: 1s\n  collect:\n    status.global:\n      metrics: [uptime]\n    var.global:\n      metrics: [max_connections]\n';

let db: MariaDB;

interface Limited {
  proc: ChildProcess;
  base: string;
  dir: string;
  stderr(): string;
  stop(): Promise<number | null>;
}

/** sonde with 40 monitors under `ulimitArgs` (e.g. `-n 64`), its API on a free port. */
async function startLimited(ulimitArgs: string): Promise<Limited> {
  const port = await freePort();
  const monitors = Array.from(
    { length: MONITORS },
    (_, i) => `  - id: m${String(i).padStart(2, '0')}\n    hostname: 127.0.0.1:${db.port}\n`,
  ).join('');
  const [dir, path] = writeConfig(
    `api:\n  bind: 127.0.0.1:${port}\nmysql:\n  username: sonde\n  password: ${PASSWORD}\nplans:\n  files: [plan.yaml]\nsinks:\n  noop:\nmonitors:\n${monitors}`,
  );
  writeFileSync(join(dir, 'plan.yaml'), PLAN);
  const proc = spawn(
    'bash',
    ['-c', `ulimit ${ulimitArgs}; exec "$0" "$@"`, process.execPath, BIN, '--config', path],
    {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let err = '';
  proc.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ok = await fetch(`${base}/status`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`API not up: ${err}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    proc,
    base,
    dir,
    stderr: () => err,
    stop: async () => {
      proc.kill('SIGTERM');
      const killer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(killer);
      rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
}

/** GET with a few retries: under EMFILE the listener itself may refuse a connection now and then. */
async function get(base: string, path: string): Promise<{ status: number; body: string }> {
  let last: unknown;
  for (let i = 0; i < 20; i++) {
    try {
      const r = await fetch(base + path);
      return { status: r.status, body: await r.text() };
    } catch (e) {
      last = e;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw last instanceof Error ? last : new Error(String(last));
}

/** Monitors whose last collection ended after `since` (ms). */
async function collectedSince(base: string, since: number): Promise<string[]> {
  const st = JSON.parse((await get(base, '/status/monitors')).body) as MonitorsStatus;
  return Object.entries(st)
    .filter(([, keys]) => {
      const m = /^last collected and sent metrics for \S+ at (\S+)/.exec(keys['level-collect'] ?? '');
      return m?.[1] !== undefined && Date.parse(m[1]) >= since;
    })
    .map(([id]) => id);
}

function openFilesLimit(pid: number): { soft: number; hard: number } {
  const line = readFileSync(`/proc/${pid}/limits`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Max open files'));
  const [soft, hard] = (line ?? '').replace('Max open files', '').trim().split(/\s+/);
  return { soft: Number(soft), hard: Number(hard) };
}

describe('faults: scarce file descriptors', () => {
  before(async () => {
    db = await startMariaDB({ args: ['--max-connections=400'] });
    await db.createUser('sonde', PASSWORD, ['PROCESS ON *.*']);
  });

  after(async () => {
    await db?.stop();
  });

  it('warns at boot under ulimit -n 64 and keeps its page up while descriptors run out', async (t) => {
    const agent = await startLimited('-n 64');
    try {
      // Let the monitors take the descriptors.
      await new Promise((r) => setTimeout(r, 6000));
      const collected = await collectedSince(agent.base, 0);
      const page = await get(agent.base, '/');
      const script = await get(agent.base, '/ui/app.js');
      t.diagnostic(
        `${collected.length} of ${MONITORS} monitors collected; page: ${page.status}, app.js: ${script.status}`,
      );
      assert.equal(page.status, 200, page.body.slice(0, 200));
      assert.equal(script.status, 200, script.body.slice(0, 200));
      assert.match(
        agent.stderr(),
        /\[boot-fd-limit *\] \[\] ERROR: the limit on open files is 64 \(hard 64\); 40 monitors need about \d+/,
      );
    } finally {
      await agent.stop();
    }
  });

  it('recovers every monitor that hit EMFILE once descriptors are free again', async (t) => {
    const agent = await startLimited('-n 4096');
    try {
      await new Promise((r) => setTimeout(r, 4000));
      const pid = agent.proc.pid ?? -1;
      // Fewer descriptors than the monitors need, then every connection is lost at once.
      execFileSync('prlimit', [`--pid=${pid}`, '--nofile=40:4096']);
      await db.restart();
      await new Promise((r) => setTimeout(r, 6000));
      const during = agent
        .stderr()
        .split('\n')
        .filter((l) => /EMFILE|too many open files/i.test(l));
      t.diagnostic(`${during.length} EMFILE lines while the limit was 40`);
      assert.ok(during.length > 0, 'no monitor hit EMFILE: the test did not starve them');
      execFileSync('prlimit', [`--pid=${pid}`, '--nofile=4096:4096']);
      const raised = Date.now();
      let after: string[] = [];
      while (Date.now() < raised + 30_000) {
        after = await collectedSince(agent.base, raised);
        if (after.length === MONITORS) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      t.diagnostic(`${after.length} of ${MONITORS} collected within ${Date.now() - raised} ms of the raise`);
      assert.equal(after.length, MONITORS, agent.stderr().slice(-1500));
    } finally {
      await agent.stop();
    }
  });

  it('raises a soft limit below the hard one at start', async () => {
    const agent = await startLimited('-S -n 64');
    try {
      const { soft, hard } = openFilesLimit(agent.proc.pid ?? -1);
      assert.equal(soft, hard);
      assert.doesNotMatch(agent.stderr(), /open files/i);
    } finally {
      await agent.stop();
    }
  });
});
