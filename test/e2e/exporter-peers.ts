/**
 * The real Prometheus-side peers of sonde's exporter, for tests and the bench: Debian's
 * prometheus-mysqld-exporter, prometheus and promtool, plus a small exposition parser.
 *
 * Every process is started on 127.0.0.1 and a free port, with a parent-death signal where
 * util-linux `setpriv` exists, and stopped by PID. The binaries come from Debian packages
 * (scripts/ensure-deps.sh installs them).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { freePort } from '../helpers/mariadb.js';

export const MYSQLD_EXPORTER = '/usr/bin/prometheus-mysqld-exporter';
export const PROMETHEUS = '/usr/bin/prometheus';
export const PROMTOOL = '/usr/bin/promtool';

/** Throw a clear error when a peer binary is missing. */
export function requireBinary(path: string, pkg: string): void {
  if (!existsSync(path))
    throw new Error(`${path} is missing: apt-get install ${pkg} (scripts/ensure-deps.sh does it)`);
}

const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));
const live = new Set<ChildProcess>();
let hooked = false;

/** Spawn a peer: killed with the test process (pdeathsig and an exit hook). */
function spawnPeer(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
  if (!hooked) {
    hooked = true;
    process.on('exit', () => {
      for (const p of live) p.kill('SIGKILL');
    });
  }
  const [bin, argv] = SETPRIV !== undefined ? [SETPRIV, ['--pdeathsig', 'KILL', cmd, ...args]] : [cmd, args];
  const proc = spawn(bin, argv, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(proc);
  proc.once('exit', () => live.delete(proc));
  return proc;
}

async function stopProc(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

export interface HttpReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP GET (gunzipping a gzip body), bounded by `timeoutMs`. */
export function httpGet(
  url: string,
  headers: Record<string, string> = {},
  timeoutMs = 10_000,
): Promise<HttpReply> {
  return httpRequest('GET', url, undefined, headers, timeoutMs);
}

/** One HTTP request with an optional body (gunzipping a gzip answer), bounded by `timeoutMs`. */
export function httpRequest(
  method: string,
  url: string,
  body: string | undefined,
  headers: Record<string, string> = {},
  timeoutMs = 10_000,
): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        let data = Buffer.concat(chunks);
        if (res.headers['content-encoding'] === 'gzip') data = gunzipSync(data);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: data.toString() });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: timeout after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

async function until<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs: number,
  proc?: ChildProcess,
  log?: () => string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (proc !== undefined && (proc.exitCode !== null || proc.signalCode !== null))
      throw new Error(
        `${what}: process exited (${String(proc.exitCode ?? proc.signalCode)}): ${log?.() ?? ''}`,
      );
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what}: not ready after ${timeoutMs} ms (${last}) ${log?.() ?? ''}`);
}

/** A running peer process. */
export interface Peer {
  pid: number;
  /** `127.0.0.1:<port>` */
  address: string;
  /** stdout+stderr so far (for failure messages) */
  log(): string;
  stop(): Promise<void>;
}

function capture(proc: ChildProcess): () => string {
  let out = '';
  const add = (d: Buffer) => {
    out = (out + d.toString()).slice(-8000);
  };
  proc.stdout?.on('data', add);
  proc.stderr?.on('data', add);
  return () => out;
}

/** mysqld_exporter's collectors matching sonde's default-exporter plan. */
export const EXPORTER_PLAN_COLLECTORS = [
  '--collect.global_status',
  '--collect.global_variables',
  '--collect.info_schema.innodb_metrics',
  '--no-collect.slave_status',
  '--no-collect.info_schema.innodb_cmp',
  '--no-collect.info_schema.innodb_cmpmem',
  '--no-collect.info_schema.query_response_time',
];

/** mysqld_exporter's DSN for root over a unix socket. */
export function rootSocketDsn(socket: string): string {
  return `root@unix(${socket})/`;
}

/**
 * Start the real mysqld_exporter for a Go MySQL DSN (`user:pass@tcp(host:port)/`,
 * `root@unix(/path)/`), by default with the collectors of sonde's default-exporter plan;
 * resolves once it answers.
 */
export async function startMysqldExporter(
  dsn: string,
  flags = EXPORTER_PLAN_COLLECTORS,
  opts: { webConfigFile?: string } = {},
): Promise<Peer> {
  requireBinary(MYSQLD_EXPORTER, 'prometheus-mysqld-exporter');
  const web = opts.webConfigFile;
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const address = `127.0.0.1:${port}`;
    const proc = spawnPeer(
      MYSQLD_EXPORTER,
      [
        `--web.listen-address=${address}`,
        '--config.my-cnf=/nonexistent/.my.cnf',
        ...(web !== undefined ? [`--web.config.file=${web}`] : []),
        ...flags,
      ],
      { DATA_SOURCE_NAME: dsn },
    );
    const log = capture(proc);
    // With a web config file, any answer over HTTPS (401 included) means it is up.
    const ready = async (): Promise<true | undefined> =>
      web !== undefined
        ? (await httpsStatus(`https://${address}/`)) > 0 || undefined
        : (await httpGet(`http://${address}/`)).status === 200 || undefined;
    try {
      await until('mysqld_exporter', ready, 15_000, proc, log);
    } catch (err) {
      await stopProc(proc);
      if (attempt < 3 && /address already in use/i.test(log())) continue;
      throw err;
    }
    return { pid: proc.pid ?? -1, address, log, stop: () => stopProc(proc) };
  }
}

/** The status of one HTTPS GET, the server's certificate not checked (readiness only). */
function httpsStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { rejectUnauthorized: false, timeout: 5000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: timeout`)));
    req.on('error', reject);
    req.end();
  });
}

export interface PrometheusPeer extends Peer {
  /** GET /api/v1/query; resolves with `data.result`. */
  query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
}

/** Start a real Prometheus scraping `target` every second (temp config and data dir). */
export function startPrometheus(target: string, metricsPath = '/metrics'): Promise<PrometheusPeer> {
  return startPrometheusJobs([
    [
      '  - job_name: sonde',
      `    metrics_path: ${metricsPath}`,
      '    static_configs:',
      `      - targets: ['${target}']`,
    ].join('\n'),
  ]);
}

/**
 * Start a real Prometheus with these `scrape_configs` entries (YAML list items indented by
 * two spaces), scraping and evaluating rules every second, with these rule files loaded.
 */
export async function startPrometheusJobs(
  jobs: readonly string[],
  ruleFiles: readonly string[] = [],
): Promise<PrometheusPeer> {
  requireBinary(PROMETHEUS, 'prometheus');
  const dir = mkdtempSync(join(tmpdir(), 'sonde-prometheus-'));
  const config = join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    [
      'global:',
      '  scrape_interval: 1s',
      '  scrape_timeout: 1s',
      '  evaluation_interval: 1s',
      ...(ruleFiles.length > 0 ? ['rule_files:', ...ruleFiles.map((f) => `  - ${JSON.stringify(f)}`)] : []),
      'scrape_configs:',
      ...jobs,
      '',
    ].join('\n'),
  );
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const address = `127.0.0.1:${port}`;
    const proc = spawnPeer(PROMETHEUS, [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=${address}`,
      '--log.level=warn',
    ]);
    const log = capture(proc);
    try {
      await until(
        'prometheus',
        async () => ((await httpGet(`http://${address}/-/ready`)).status === 200 ? true : undefined),
        30_000,
        proc,
        log,
      );
    } catch (err) {
      await stopProc(proc);
      if (attempt < 3 && /address already in use/i.test(log())) continue;
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
    return {
      pid: proc.pid ?? -1,
      address,
      log,
      async stop() {
        await stopProc(proc);
        rmSync(dir, { recursive: true, force: true });
      },
      async query(expr) {
        const r = await httpGet(`http://${address}/api/v1/query?query=${encodeURIComponent(expr)}`);
        const json = JSON.parse(r.body) as { status: string; data?: { result?: unknown }; error?: string };
        if (json.status !== 'success') throw new Error(`query ${expr}: ${json.error ?? r.body}`);
        return (json.data?.result ?? []) as { metric: Record<string, string>; value: [number, string] }[];
      },
    };
  }
}

/** Poll `fn` every 100 ms until it gives a value (exported for tests). */
export function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  return until(what, fn, timeoutMs);
}

/** `promtool check metrics` on a text: parse errors and lint findings (`<metric> <problem>`). */
export function promtoolCheck(text: string): { code: number | null; errors: string[]; lint: string[] } {
  requireBinary(PROMTOOL, 'prometheus');
  const r = spawnSync(PROMTOOL, ['check', 'metrics'], { input: text, encoding: 'utf8', timeout: 30_000 });
  const lines = `${r.stdout}\n${r.stderr}`.split('\n').filter((l) => l.trim() !== '');
  // Lint findings read `<metric name> <problem>`; anything else (`error while linting: …`) is an error.
  const isLint = (l: string) => /^[a-zA-Z_:][a-zA-Z0-9_:]* /.test(l) && !/^error\b/.test(l);
  const errors = lines.filter((l) => !isLint(l));
  const lint = lines.filter(isLint);
  return { code: r.status, errors, lint };
}

// ---- exposition parsing -----------------------------------------------------------------

export interface ParsedFamily {
  type: string;
  help: string;
  /** series key (`{a="x",b="y"}` as written, '' without labels) → value text */
  series: Map<string, string>;
}

/**
 * Parse text format 0.0.4 into families keyed by name. Strict about what sonde and
 * mysqld_exporter write (HELP before TYPE before samples, no timestamps); throws otherwise.
 */
export function parseExposition(text: string): Map<string, ParsedFamily> {
  const out = new Map<string, ParsedFamily>();
  const fam = (name: string) => {
    let f = out.get(name);
    if (f === undefined) {
      f = { type: '', help: '', series: new Map() };
      out.set(name, f);
    }
    return f;
  };
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let m = /^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) ?(.*)$/.exec(line);
    if (m !== null) {
      fam(m[1] ?? '').help = (m[2] ?? '').replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
      continue;
    }
    m = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (\w+)$/.exec(line);
    if (m !== null) {
      fam(m[1] ?? '').type = m[2] ?? '';
      continue;
    }
    m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (\S+)$/.exec(line);
    if (m === null) throw new Error(`cannot parse line: ${line}`);
    let name = m[1] ?? '';
    // summary/histogram children belong to their family
    if (!out.has(name)) name = name.replace(/_(sum|count|bucket)$/, '');
    fam(name).series.set(m[2] ?? '', m[3] ?? '');
  }
  return out;
}

/** Families of a parse, without the Go runtime/process/promhttp ones sonde does not emulate. */
export function withoutGoRuntime(fams: Map<string, ParsedFamily>): Map<string, ParsedFamily> {
  return new Map([...fams].filter(([n]) => !/^(go|process|promhttp)_/.test(n)));
}
