/**
 * Runs the built sonde binary as a user would: a config file in a temp dir, the real
 * process, its API on a free port. Collects stdout/stderr lines for assertions.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';
import { freePort } from './mariadb.js';

/** Repo root (this file runs from dist/test/helpers). */
export const ROOT = resolve(import.meta.dirname, '../../..');
/**
 * The command as installed: package.json's `bin`, the bundle (scripts/build-bundle.mjs), so
 * that end-to-end tests run what ships, not the TypeScript compiler's output.
 */
export const BIN = join(
  ROOT,
  (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: { sonde: string } }).bin.sonde,
);

/**
 * The Node flags the built bin (or another build's, `bin`) asks for on its
 * `#!/usr/bin/env -S node …` line, for whoever starts it with `node` explicitly (the tests,
 * the demo, the benches).
 */
export function binNodeFlags(bin: string = BIN): string[] {
  const first = readFileSync(bin, 'utf8').split('\n', 1)[0] ?? '';
  const m = /^#!\/usr\/bin\/env -S node (.*)$/.exec(first);
  return m?.[1] === undefined ? [] : m[1].split(/\s+/).filter((f) => f !== '');
}

let flags: string[] | undefined;

/** `node <the bin's flags> <the bin>`: the command line the installed `sonde` runs. */
export function sondeArgv(args: readonly string[]): string[] {
  flags ??= binNodeFlags();
  return [...flags, BIN, ...args];
}

/** `GET /status/monitors`: monitor id → status key → text. */
export type MonitorsStatus = Record<string, Record<string, string>>;

export interface Agent {
  proc: ChildProcess;
  base: string;
  port: number;
  dir: string;
  stdout(): string;
  stderr(): string;
  /** GET/POST the API; returns status, content type and body text. */
  http(method: string, path: string): Promise<{ status: number; type: string; body: string }>;
  json<T = unknown>(path: string): Promise<T>;
  /** `GET /status/monitors`. */
  monitorsStatus(): Promise<MonitorsStatus>;
  /** Poll until `check` returns a truthy value (or throw after timeoutMs). */
  until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs?: number): Promise<T>;
  /** Send a signal and wait for exit; returns the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run sonde to completion (e.g. --version, --run=false, a bad config). */
export function runSonde(
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    const proc = spawn(process.execPath, sondeArgv(args), {
      cwd: opts.cwd ?? ROOT,
      env: { ...process.env, ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const t = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`sonde ${args.join(' ')} did not exit; stdout=${stdout} stderr=${stderr}`));
    }, opts.timeoutMs ?? 30_000);
    proc.on('exit', (code) => {
      clearTimeout(t);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

/** Write a config file into a fresh temp dir. Returns [dir, path]. */
export function writeConfig(yaml: string, name = 'sonde.yaml'): [string, string] {
  const dir = mkdtempSync(join(tmpdir(), 'sonde-test-'));
  const path = join(dir, name);
  writeFileSync(path, yaml);
  return [dir, path];
}

/**
 * The head of an agent config most end-to-end tests share: the API on the test's port, user
 * `sonde` with `password`, and the plan file `plan.yaml`. Monitors and sinks follow it.
 */
export function agentConfigHead(password: string): string {
  return `api:
  bind: {{API}}
mysql:
  username: sonde
  password: ${password}
plans:
  files: [plan.yaml]
`;
}

/**
 * Start sonde with `configYaml`; `{{API}}` in it is replaced by a free 127.0.0.1 port.
 * `files` are written next to the config (the agent's working directory) first.
 * Resolves once GET /status answers (and GET /readyz, with `ready`); an agent that does not
 * get there is killed before the error is thrown.
 */
export async function startAgent(
  configYaml: string,
  opts: {
    args?: string[];
    env?: NodeJS.ProcessEnv;
    files?: Record<string, string>;
    /** Sent with every request the helper makes (e.g. `authorization` when api.token-file is set). */
    headers?: Record<string, string>;
    /** Also wait until GET /readyz answers 200 (every monitor started). */
    ready?: boolean;
  } = {},
): Promise<Agent> {
  const headers = opts.headers ?? {};
  const port = await freePort();
  const [dir, path] = writeConfig(configYaml.replaceAll('{{API}}', `127.0.0.1:${port}`));
  for (const [name, text] of Object.entries(opts.files ?? {})) writeFileSync(join(dir, name), text);
  const proc = spawn(process.execPath, sondeArgv(['--config', path, ...(opts.args ?? [])]), {
    cwd: dir,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  const base = `http://127.0.0.1:${port}`;
  const agent: Agent = {
    proc,
    base,
    port,
    dir,
    stdout: () => out,
    stderr: () => err,
    async http(method, p) {
      const res = await fetch(base + p, { method, headers });
      return { status: res.status, type: res.headers.get('content-type') ?? '', body: await res.text() };
    },
    async json<T>(p: string): Promise<T> {
      const res = await fetch(base + p, { headers });
      if (res.status !== 200) throw new Error(`GET ${p}: ${res.status} ${await res.text()}`);
      return (await res.json()) as T;
    },
    async monitorsStatus() {
      return this.json<MonitorsStatus>('/status/monitors');
    },
    async until(what, check, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      let last: unknown;
      for (;;) {
        try {
          const v = await check();
          if (v) return v;
        } catch (e) {
          last = e;
        }
        if (Date.now() > deadline) {
          throw new Error(
            `timed out waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}\nstderr: ${err.slice(-2000)}`,
          );
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      const code = await exited;
      rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
  try {
    await agent.until('API up', async () => (await fetch(`${base}/status`, { headers })).ok, 20_000);
    if (opts.ready === true)
      await agent.until('ready', async () => (await agent.http('GET', '/readyz')).status === 200);
  } catch (err) {
    await agent.stop('SIGKILL'); // an agent that never came up must not outlive the test
    throw err;
  }
  return agent;
}

export interface RawExchange {
  /** Everything the server sent back. */
  answer: string;
  /** Time from connecting until the connection closed (or until `timeoutMs`). */
  elapsedMs: number;
  /** False when the exchange was given up after `timeoutMs` with the connection still open. */
  closed: boolean;
}

/**
 * Talk to a listener over a plain TCP socket: send `parts` one after the other, `gapMs`
 * apart (a slow client when the gap is long), and collect the answer until the server closes
 * the connection or `timeoutMs` passes.
 */
export function rawExchange(
  port: number,
  parts: readonly (string | Buffer)[],
  opts: { gapMs?: number; timeoutMs?: number; host?: string } = {},
): Promise<RawExchange> {
  return new Promise((resolvePromise) => {
    const started = Date.now();
    const sock = connect(port, opts.host ?? '127.0.0.1');
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    const finish = (closed: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(giveUp);
      sock.destroy();
      resolvePromise({
        answer: Buffer.concat(chunks).toString('latin1'),
        elapsedMs: Date.now() - started,
        closed,
      });
    };
    const giveUp = setTimeout(() => finish(false), opts.timeoutMs ?? 20_000);
    sock.on('data', (d: Buffer) => chunks.push(d));
    sock.on('close', () => finish(true));
    sock.on('error', () => finish(true));
    let i = 0;
    const next = (): void => {
      if (done || i >= parts.length) return;
      const part = parts[i++];
      if (part !== undefined && sock.writable) sock.write(part);
      timer = setTimeout(next, opts.gapMs ?? 0);
    };
    sock.on('connect', next);
  });
}
