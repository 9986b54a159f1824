/**
 * Files sonde reads at run time that are not what they claim: a FIFO (opening it waits for
 * a writer that never comes), a symlink to /dev/zero (endless), a file far over any sane
 * size. Each is refused with one clear line naming the key and the file; nothing blocks the
 * event loop and memory stays flat. Real FIFOs (mkfifo), a real /dev/zero, the built agent.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMariaDB, freePort, type MariaDB } from '../helpers/mariadb.js';
import { BIN, startAgent } from '../helpers/agent.js';

const PASSWORD = 'Fifo-17-pass';
const PLAN = 'kpi:\n  freq: 1s\n  collect:\n    status.global:\n      metrics: [uptime]\n';
/** The agent is killed (and the test fails) when its memory grows past this. */
const RSS_LIMIT_MIB = 400;

let db: MariaDB;
let dir: string;

interface Outcome {
  code: number | null;
  stderr: string;
  stdout: string;
  /** Why the test killed it: it hung, or its memory grew. */
  killed?: string;
}

function rssMiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Run sonde to its end, killing it when it hangs past `timeoutMs` or its memory grows. */
function runGuarded(args: string[], cwd: string, timeoutMs = 15_000): Promise<Outcome> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [BIN, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let killed: string | undefined;
    proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const kill = (why: string): void => {
      killed ??= why;
      proc.kill('SIGKILL');
    };
    const watch = setInterval(() => {
      const rss = rssMiB(proc.pid ?? -1);
      if (rss > RSS_LIMIT_MIB) kill(`RSS grew to ${rss.toFixed(0)} MiB`);
    }, 100);
    const hang = setTimeout(() => kill(`still running after ${timeoutMs} ms`), timeoutMs);
    proc.on('exit', (code) => {
      clearInterval(watch);
      clearTimeout(hang);
      resolve({ code, stdout, stderr, ...(killed ? { killed } : {}) });
    });
  });
}

function fifo(name: string): string {
  const path = join(dir, name);
  execFileSync('mkfifo', [path]);
  return path;
}

function zeroLink(name: string): string {
  const path = join(dir, name);
  symlinkSync('/dev/zero', path);
  return path;
}

/** A config with the API on a free port, one monitor, and `extra` lines under it. */
async function configFile(
  name: string,
  opts: { api?: string; monitor?: string; plans?: string },
): Promise<string> {
  const port = await freePort();
  const path = join(dir, name);
  writeFileSync(
    path,
    `api:\n  bind: 127.0.0.1:${port}\n${opts.api ?? ''}plans:\n  files: [${opts.plans ?? 'plan.yaml'}]\nmonitors:\n  - id: db\n    hostname: 127.0.0.1:${db.port}\n    username: sonde\n${opts.monitor ?? `    password: ${PASSWORD}\n`}`,
  );
  return path;
}

/** The run ended by itself with exit 1 and one stderr line matching `line`. */
function assertRefused(out: Outcome, line: RegExp): void {
  assert.equal(out.killed, undefined, `${out.killed ?? ''}; stderr: ${out.stderr.slice(-500)}`);
  assert.equal(out.code, 1, out.stderr);
  const lines = out.stderr.split('\n').filter((l) => l !== '');
  assert.equal(lines.length, 1, out.stderr);
  assert.match(lines[0] ?? '', line);
}

describe('faults: files that are not regular files', () => {
  before(async () => {
    db = await startMariaDB();
    await db.createUser('sonde', PASSWORD, ['PROCESS ON *.*']);
    dir = mkdtempSync(join(tmpdir(), 'sonde-files-'));
    writeFileSync(join(dir, 'plan.yaml'), PLAN);
  });

  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await db?.stop();
  });

  it('refuses api.token-file when it is a FIFO, at once and in one line', async () => {
    const token = fifo('token.fifo');
    const cfg = await configFile('token-fifo.yaml', { api: `  token-file: ${token}\n` });
    const out = await runGuarded(['--config', cfg], dir);
    assertRefused(out, /api\.token-file.*token\.fifo.*not a regular file \(a FIFO\)/);
  });

  it('refuses api.token-file when it is a symlink to /dev/zero, with flat memory', async () => {
    const token = zeroLink('token.zero');
    const cfg = await configFile('token-zero.yaml', { api: `  token-file: ${token}\n` });
    const out = await runGuarded(['--config', cfg], dir);
    assertRefused(out, /api\.token-file.*token\.zero.*not a regular file \(a character device\)/);
  });

  it('refuses a config file and a plan file that are FIFOs', async () => {
    const cfgFifo = fifo('sonde.fifo');
    assertRefused(
      await runGuarded(['--config', cfgFifo, '--run=false'], dir),
      /sonde\.fifo.*not a regular file \(a FIFO\)/,
    );
    fifo('plan.fifo');
    const cfg = await configFile('plan-fifo.yaml', { plans: 'plan.fifo' });
    assertRefused(
      await runGuarded(['--config', cfg, '--run=false'], dir),
      /plan\.fifo.*not a regular file \(a FIFO\)/,
    );
  });

  it('refuses an exporter web config that is a FIFO', async () => {
    const web = fifo('web.fifo');
    const port = await freePort();
    const cfg = await configFile('web-fifo.yaml', {
      monitor: `    password: ${PASSWORD}\n    exporter:\n      mode: dual\n      flags:\n        web.listen-address: 127.0.0.1:${port}\n        web.config.file: ${web}\n`,
    });
    assertRefused(
      await runGuarded(['--config', cfg, '--run=false'], dir),
      /web\.config\.file.*web\.fifo.*not a regular file \(a FIFO\)/,
    );
  });

  it("reports a monitor's FIFO or oversized password-file in its status; the agent keeps running", async () => {
    const pw = fifo('password.fifo');
    writeFileSync(join(dir, 'password.big'), 'x'.repeat(100 * 1024));
    const agent = await startAgent(
      `api:\n  bind: {{API}}\nplans:\n  files: [plan.yaml]\nmonitors:\n  - id: fifo\n    hostname: 127.0.0.1:${db.port}\n    username: sonde\n    password-file: ${pw}\n  - id: big\n    hostname: 127.0.0.1:${db.port}\n    username: sonde\n    password-file: ${join(dir, 'password.big')}\n`,
      { files: { 'plan.yaml': PLAN } },
    );
    try {
      const st = await agent.until('both monitors refused their password files', async () => {
        const s = await agent.monitorsStatus();
        const text = (id: string): string => JSON.stringify(s[id] ?? {});
        return /not a regular file \(a FIFO\)/.test(text('fifo')) && /larger than 64 KiB/.test(text('big'))
          ? s
          : undefined;
      });
      assert.doesNotMatch(JSON.stringify(st), /xxxxxxxx/, 'no content of the file is shown');
    } finally {
      // A stop that hangs (a thread still waiting on the FIFO) fails the test instead of holding it.
      const killer = setTimeout(() => agent.proc.kill('SIGKILL'), 10_000);
      const code = await agent.stop();
      clearTimeout(killer);
      assert.equal(code, 0, 'SIGTERM stopped the agent');
    }
  });
});
