/**
 * A throwaway Prometheus Pushgateway (Debian package `prometheus-pushgateway`, installed
 * by scripts/ensure-deps.sh): loopback, a free port, metrics kept in memory only. Stop it
 * with `stop()` in `after`; `setpriv --pdeathsig` kills it if the test process dies.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { freePort } from './mariadb.js';

export const PUSHGATEWAY_BIN = '/usr/bin/prometheus-pushgateway';
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));
const START_TIMEOUT_MS = 15_000;

export interface Pushgateway {
  /** `http://127.0.0.1:<port>` */
  readonly base: string;
  readonly pid: number;
  /** The gateway's log so far (stderr), for failure messages. */
  log(): string;
  stop(): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function ready(base: string): Promise<boolean> {
  try {
    const res = await fetch(`${base}/-/ready`, { signal: AbortSignal.timeout(1000) });
    return res.status === 200;
  } catch {
    return false;
  }
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve();
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Start a pushgateway and wait until `/-/ready` answers 200; a lost port race retries. */
export async function startPushgateway(): Promise<Pushgateway> {
  if (!existsSync(PUSHGATEWAY_BIN)) {
    throw new Error(
      `${PUSHGATEWAY_BIN} missing: run scripts/ensure-deps.sh (package prometheus-pushgateway)`,
    );
  }
  let lastLog = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const args = [`--web.listen-address=127.0.0.1:${port}`, '--persistence.file=', '--log.level=warn'];
    const [cmd, argv] =
      SETPRIV !== undefined
        ? [SETPRIV, ['--pdeathsig', 'KILL', PUSHGATEWAY_BIN, ...args]]
        : [PUSHGATEWAY_BIN, args];
    const child = spawn(cmd, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    child.stderr?.on('data', (c: Buffer) => {
      log += c.toString('utf8');
    });
    const pid = child.pid;
    if (pid === undefined) throw new Error(`could not start ${PUSHGATEWAY_BIN}`);
    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
      if (await ready(base)) {
        return { base, pid, log: () => log, stop: () => stopChild(child) };
      }
      await sleep(100);
    }
    await stopChild(child);
    lastLog = log;
  }
  throw new Error(`pushgateway did not start:\n${lastLog}`);
}
