/**
 * Runs the built sonde binary with mysqld_exporter's command line, as a systemd unit would:
 * the real process, its exporter endpoint on the address the arguments name.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { ROOT, sondeArgv } from './agent.js';

export interface CliExporter {
  proc: ChildProcess;
  /** `127.0.0.1:<port>`, from the caller's `--web.listen-address`. */
  address: string;
  stdout(): string;
  stderr(): string;
  /** GET a path of the endpoint: status and body. */
  get(path: string, headers?: Record<string, string>): Promise<{ status: number; body: string }>;
  /** SIGTERM and wait for the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Start `sonde <args>`; `address` is the `host:port` the arguments make it listen on.
 * Resolves once `GET /` answers 200; rejects (with its output) when the process exits first.
 */
export async function startSondeCli(
  args: string[],
  address: string,
  opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<CliExporter> {
  const proc = spawn(process.execPath, sondeArgv(args), {
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  const base = `http://${address}`;
  const cli: CliExporter = {
    proc,
    address,
    stdout: () => out,
    stderr: () => err,
    async get(path, headers = {}) {
      const res = await fetch(base + path, { headers });
      return { status: res.status, body: await res.text() };
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      return exited;
    },
  };
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null)
      throw new Error(`sonde ${args.join(' ')} exited (${String(proc.exitCode)}): ${err}${out}`);
    try {
      if ((await cli.get('/')).status === 200) return cli;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await cli.stop();
      throw new Error(`sonde ${args.join(' ')} did not listen on ${address}: ${err}${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
