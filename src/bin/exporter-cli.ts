/**
 * mysqld_exporter's own command line, so that a systemd unit switches by changing the
 * program's name only. Which command line sonde reads:
 *
 * - mysqld_exporter's when any argument is one of its long flags: a flag whose name has a dot
 *   (`--web.listen-address`, `--collect.…`, `--no-collect.…`, `--exporter.…`,
 *   `--config.my-cnf`, `--mysqld.…`, `--tls.…`) or `--timeout-offset`; also when sonde is
 *   started under the name `mysqld_exporter` or `prometheus-mysqld-exporter` (a symlink),
 *   which covers a unit whose ARGS are empty. sonde's own flags have no dot, except
 *   `--log.level` and `--log.format`, which both command lines read the same way: alone they
 *   do not mean mysqld_exporter's.
 * - sonde's own otherwise.
 *
 * Parsing follows kingpin, mysqld_exporter's flag library: `--flag=value` and `--flag value`,
 * bare `--flag` / `--no-flag` for booleans (`--flag=true|false` is accepted too), repeatable
 * list flags, `-h`; an unknown flag, a repeated single flag, a missing or malformed value or a
 * stray argument is an error naming it (exit code 1).
 *
 * The result is a config built in memory: one monitor from my.cnf `[client]` plus
 * `--mysqld.address`, `--mysqld.username` and MYSQLD_EXPORTER_PASSWORD (my.cnf wins, as
 * mysqld_exporter fills only what my.cnf leaves empty), `exporter.mode: legacy`, the exporter
 * plan = mysqld_exporter's default collectors with the `--collect.*` flags applied, every
 * other flag as `exporter.flags`, no HTTP API (unless SONDE_API_BIND names an address), no
 * local auto-detection.
 */
import { parseGoDsn, type GoDsn } from '../config/go-dsn.js';
import { homedir } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import type { Config, MonitorConfig } from '../core/config.js';
import { errorMessage } from '../core/errors.js';
import type { Plan } from '../core/plan.js';
import { UPSTREAM_EXPORTER_FLAGS, UPSTREAM_SCRAPERS, type UpstreamSubflag } from '../core/upstream.js';
import { readMyCnf, type MyCnf } from '../config/mycnf.js';
import { defaultConfig, mergeConfig, validateConfig } from '../config/load.js';
import { exporterFlagProblem } from '../config/validate.js';
import { applyCollectFlags, flagBool, upstreamPlan } from '../plan/exporter-plan.js';
import type { LogFormat, LogLevel } from '../log/event-log.js';
import { parseHostPort } from '../util/net.js';
import { allowedTargets } from '../exporter/targets.js';
import { isExporterProgram } from './early.js';
import { logEnv, readLogFormat, readLogLevel, SHARED_LOG_FLAGS } from './log-flags.js';

/** The plan name of the exporter plan built from the command line. */
export const CLI_PLAN = 'mysqld-exporter';
/** The monitor id of the one monitor the command line describes. */
export const CLI_MONITOR_ID = 'mysqld_exporter';

/** A command-line error: printed as `<program>: error: <message>, try --help`, exit 1. */
export class ExporterCliError extends Error {}

type Kind = 'bool' | 'int' | 'float' | 'string' | 'strings';

/** One flag of mysqld_exporter's command line. */
export interface CliFlag {
  name: string;
  kind: Kind;
  /** Default as text ('' = none). */
  default: string;
  help: string;
  /** Where the value goes: the monitor's connection, sonde's logging, or `exporter.flags`. */
  role: 'connection' | 'log' | 'exporter' | 'collect' | 'help' | 'version' | 'refused' | 'probe';
}

const f = (name: string, kind: Kind, dflt: string, help: string, role: CliFlag['role']): CliFlag => ({
  name,
  kind,
  default: dflt,
  help,
  role,
});

const KINDS: Readonly<Record<string, Kind>> = {
  'web.listen-address': 'strings',
  'timeout-offset': 'float',
  'tls.insecure-skip-verify': 'bool',
  'exporter.lock_wait_timeout': 'int',
  'exporter.enable_lock_wait_timeout': 'bool',
  'exporter.log_slow_filter': 'bool',
  'exporter.query_timeout': 'int',
  'exporter.max_open_connections': 'int',
};

const EXPORTER_HELP: Readonly<Record<string, string>> = {
  'web.listen-address': 'Addresses on which to expose metrics and web interface.',
  'web.telemetry-path': 'Path under which to expose metrics.',
  'web.config.file': 'Path to configuration file that can enable TLS or authentication.',
  'timeout-offset': 'Offset to subtract from timeout in seconds.',
  'tls.insecure-skip-verify': 'Ignore certificate and server verification when using a tls connection.',
  'exporter.lock_wait_timeout':
    'Set a lock_wait_timeout (in seconds) on the connection to avoid long metadata locking.',
  'exporter.enable_lock_wait_timeout': 'Enable the lock_wait_timeout MySQL connection parameter.',
  'exporter.log_slow_filter':
    'Add a log_slow_filter to avoid slow query logging of scrapes. NOTE: Not supported by Oracle MySQL.',
  'exporter.query_timeout': 'Per-scraper query timeout (in seconds). 0 disables the timeout.',
  'exporter.max_open_connections':
    'Maximum number of open connections to the database per scrape. Must be >= 1.',
};

function subflag(s: UpstreamSubflag): CliFlag {
  return f(s.flag, s.kind, s.default, s.help, 'collect');
}

/** Every flag, in the order `--help` lists them. */
export const CLI_FLAGS: readonly CliFlag[] = [
  f('help', 'bool', '', 'Show context-sensitive help.', 'help'),
  f('version', 'bool', '', 'Show application version.', 'version'),
  f(
    'config.my-cnf',
    'string',
    '.my.cnf',
    'Path to .my.cnf file to read MySQL credentials from.',
    'connection',
  ),
  f('mysqld.address', 'string', 'localhost:3306', 'Address to use for connecting to MySQL', 'connection'),
  f('mysqld.username', 'string', '', 'User name to use for connecting to MySQL', 'connection'),
  ...Object.entries(UPSTREAM_EXPORTER_FLAGS).map(([name, dflt]) =>
    f(name, KINDS[name] ?? 'string', dflt, EXPORTER_HELP[name] ?? '', 'exporter'),
  ),
  f(
    'probe.allowed-targets',
    'strings',
    '',
    'sonde: the only targets /probe and /metrics?target= may connect to: hosts, host:port, networks (10.0.0.0/8), unix:///path; repeatable or comma-separated. Default: any, as mysqld_exporter.',
    'probe',
  ),
  f(
    'web.systemd-socket',
    'bool',
    '',
    'Use systemd socket activation listeners (not supported by sonde).',
    'refused',
  ),
  f(
    'log.level',
    'string',
    'info',
    'Only log messages with the given severity or above. One of: [debug, info, warn, error] (env SONDE_LOG_LEVEL)',
    'log',
  ),
  f(
    'log.format',
    'string',
    'logfmt',
    "Output format of log messages. One of: [logfmt, json]; logfmt prints sonde's text event lines (env SONDE_LOG_FORMAT)",
    'log',
  ),
  ...UPSTREAM_SCRAPERS.flatMap((s) => [
    f(`collect.${s.name}`, 'bool', String(s.enabled), s.help, 'collect'),
    ...s.subflags.map(subflag),
  ]),
];

const BY_NAME: ReadonlyMap<string, CliFlag> = new Map(CLI_FLAGS.map((x) => [x.name, x]));

/** Whether sonde should read `argv` as mysqld_exporter's command line (see the file comment). */
export function isExporterCommandLine(argv: readonly string[], program = ''): boolean {
  if (isExporterProgram(program)) return true;
  return argv.some((a) => {
    const m = /^--([^=\s]*\.[^=\s]*|timeout-offset)(?:=|$)/.exec(a);
    return m !== null && !SHARED_LOG_FLAGS.has(m[1] ?? '');
  });
}

/** What the command line asks for. */
export type ExporterCommand = { kind: 'help' } | { kind: 'version' } | { kind: 'run'; args: ExporterArgs };

/** The parsed command line: each flag given, by mysqld_exporter name (lists for list flags). */
export interface ExporterArgs {
  given: ReadonlyMap<string, readonly string[]>;
}

/** One flag and its value as written. */
interface Token {
  spec: CliFlag;
  value: string;
}

/** Parse one argument (and maybe the next one as its value); returns how many were used. */
function token(argv: readonly string[], i: number): [Token, number] {
  const a = argv[i] ?? '';
  if (a === '-h') return [{ spec: BY_NAME.get('help') as CliFlag, value: 'true' }, 1];
  if (!a.startsWith('--') || a === '--') {
    if (a.startsWith('-') && a.length > 1)
      throw new ExporterCliError(`unknown short flag '${a.slice(0, 2)}'`);
    throw new ExporterCliError(`unexpected ${a}`);
  }
  const eq = a.indexOf('=');
  const name = eq === -1 ? a.slice(2) : a.slice(2, eq);
  const inline = eq === -1 ? undefined : a.slice(eq + 1);
  let spec = BY_NAME.get(name);
  let negated = false;
  if (spec === undefined && name.startsWith('no-') && BY_NAME.get(name.slice(3))?.kind === 'bool') {
    spec = BY_NAME.get(name.slice(3));
    negated = true;
  }
  if (spec === undefined) throw new ExporterCliError(`unknown long flag '--${name}'`);
  if (spec.kind === 'bool') {
    if (inline === undefined) return [{ spec, value: negated ? 'false' : 'true' }, 1];
    if (negated || flagBool(inline) === undefined) throw new ExporterCliError(`unexpected ${inline}`);
    return [{ spec, value: String(flagBool(inline)) }, 1];
  }
  if (inline !== undefined) return [{ spec, value: inline }, 1];
  const next = argv[i + 1];
  if (next === undefined) throw new ExporterCliError(`expected argument for flag '--${name}'`);
  return [{ spec, value: next }, 2];
}

/**
 * The value as kingpin reads the flag's kind, else the error it gives: numbers (integer
 * flags too) parse as floats, integers are truncated (`1.5` → `1`).
 */
function checkKind(spec: CliFlag, value: string): string {
  if (spec.kind === 'int' || spec.kind === 'float') {
    const n = Number(value.trim());
    if (value.trim() === '' || !Number.isFinite(n))
      throw new ExporterCliError(`strconv.ParseFloat: parsing ${JSON.stringify(value)}: invalid syntax`);
    return spec.kind === 'int' ? String(Math.trunc(n)) : value.trim();
  }
  if (spec.name === 'log.level' && !['debug', 'info', 'warn', 'error'].includes(value))
    throw new ExporterCliError(`unrecognized log level "${value}"`);
  if (spec.name === 'log.format' && !['logfmt', 'json'].includes(value))
    throw new ExporterCliError(`unrecognized log format "${value}"`);
  return value;
}

/** Parse mysqld_exporter's command line. Throws ExporterCliError. */
export function parseExporterCommandLine(argv: readonly string[]): ExporterCommand {
  const given = new Map<string, string[]>();
  for (let i = 0; i < argv.length;) {
    const [{ spec, value }, used] = token(argv, i);
    i += used;
    if (spec.role === 'help') return { kind: 'help' };
    if (spec.role === 'version') return { kind: 'version' };
    if (spec.role === 'refused' && value === 'true')
      throw new ExporterCliError(`--${spec.name} is not supported by sonde`);
    const list = given.get(spec.name) ?? [];
    if (list.length > 0 && spec.kind !== 'strings')
      throw new ExporterCliError(`flag '${spec.name}' cannot be repeated`);
    list.push(checkKind(spec, value));
    given.set(spec.name, list);
  }
  try {
    allowedTargets(given.get('probe.allowed-targets') ?? []);
  } catch (err) {
    throw new ExporterCliError(`invalid value for --probe.allowed-targets: ${errorMessage(err)}`);
  }
  for (const [name, values] of given) {
    const spec = BY_NAME.get(name);
    if (spec?.role !== 'exporter' && spec?.role !== 'collect') continue;
    for (const v of values) {
      const why = exporterFlagProblem(name, v);
      if (why !== undefined) throw new ExporterCliError(`invalid value for --${name}: ${why}`);
    }
  }
  return { kind: 'run', args: { given } };
}

/** The `--help` text. */
export function exporterHelp(program: string, version: string): string {
  const lines = [
    `usage: ${program} [<flags>]`,
    '',
    `sonde ${version}, reading mysqld_exporter's command line (docs/exporter-cli.md).`,
    '',
    'Flags:',
  ];
  for (const x of CLI_FLAGS) {
    const value = x.kind === 'bool' ? '' : `=${x.kind === 'string' ? JSON.stringify(x.default) : x.default}`;
    lines.push(`  ${x.name === 'help' ? '-h, ' : '    '}--${x.name}${value}`, `        ${x.help}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The value of a single flag as given, or its default. */
function one(args: ExporterArgs, name: string): string {
  return args.given.get(name)?.[0] ?? BY_NAME.get(name)?.default ?? '';
}

/** What sonde runs for a parsed command line. */
export interface ExporterSetup {
  config: Config;
  /** The exporter plan: mysqld_exporter's defaults with the `--collect.*` flags applied. */
  plan: Plan;
  /** `--log.level` (else SONDE_LOG_LEVEL, else info, mysqld_exporter's default). */
  logLevel: LogLevel;
  /** `--log.format`: json is JSON lines, logfmt sonde's text lines (else SONDE_LOG_FORMAT). */
  logFormat: LogFormat;
  /** Passwords learnt here (scrubbed from every line sonde prints). */
  secrets: string[];
  /** `--probe.allowed-targets`: the targets `/probe` may reach; undefined: any. */
  allowedTargets: ((target: string) => boolean) | undefined;
}

/** `~/x` against HOME, relative paths against `cwd`. */
function expandPath(path: string, env: NodeJS.ProcessEnv, cwd: string): string {
  if (path === '~' || path.startsWith('~/')) return resolve(env.HOME ?? homedir(), path.slice(2));
  return isAbsolute(path) ? path : resolve(cwd, path);
}

/**
 * my.cnf: the file given by `--config.my-cnf` must be readable; the default one (`.my.cnf`
 * in the working directory, as mysqld_exporter's) may be missing, then only the flags and
 * the environment give the connection. A bad value in it fails the start either way.
 */
async function myCnf(args: ExporterArgs, env: NodeJS.ProcessEnv, cwd: string) {
  const path = expandPath(one(args, 'config.my-cnf'), env, cwd);
  try {
    return { path, cnf: await readMyCnf(path) };
  } catch (err) {
    const missing = (err as { cause?: { code?: unknown } }).cause?.code === 'ENOENT';
    if (args.given.has('config.my-cnf') || !missing) throw new Error(`--config.my-cnf: ${errorMessage(err)}`);
    return { path: undefined, cnf: undefined };
  }
}

/**
 * The monitor's connection fields: my.cnf's user, host, port and socket win; the address
 * (`host:port` or `unix:///path`) and the username fill what it leaves empty; the password
 * is my.cnf's, else MYSQLD_EXPORTER_PASSWORD.
 */
function connection(args: ExporterArgs, cnf: MyCnf | undefined, env: NodeJS.ProcessEnv): MonitorConfig {
  const address = one(args, 'mysqld.address');
  let socket = cnf?.socket ?? '';
  let host = cnf?.host ?? '';
  let port = cnf?.port ?? '';
  if (address.startsWith('unix://')) {
    if (socket === '') socket = address.slice('unix://'.length);
  } else {
    let hp: { host: string; port: number };
    try {
      hp = parseHostPort(address, 'address');
    } catch (err) {
      throw new Error(`--mysqld.address: ${errorMessage(err)}`);
    }
    if (host === '') host = hp.host;
    if (port === '') port = String(hp.port);
  }
  const username = cnf?.user || one(args, 'mysqld.username');
  if (username === '')
    throw new Error(
      'no MySQL user: set user in the [client] section of --config.my-cnf, or --mysqld.username',
    );
  const m: MonitorConfig = { id: CLI_MONITOR_ID, username };
  if (socket !== '') m.socket = socket;
  else
    m.hostname = `${(host || '127.0.0.1').includes(':') ? `[${host}]` : host || '127.0.0.1'}:${port || '3306'}`;
  const password = env.MYSQLD_EXPORTER_PASSWORD ?? '';
  if ((cnf?.password ?? '') === '' && password !== '') m.password = password;
  return m;
}

/**
 * mysqld_exporter 0.14's DATA_SOURCE_NAME: when set, the connection comes from it alone
 * (my.cnf and `--mysqld.*` are not read), as 0.14 does.
 */
function dsnConnection(dsn: string): MonitorConfig {
  let d: GoDsn;
  try {
    d = parseGoDsn(dsn);
  } catch (err) {
    throw new Error(`DATA_SOURCE_NAME: ${errorMessage(err)}`);
  }
  if (d.user === '') throw new Error('DATA_SOURCE_NAME: no user before the "@"');
  const m: MonitorConfig = { id: CLI_MONITOR_ID, username: d.user };
  if (d.socket !== undefined) m.socket = d.socket;
  else m.hostname = d.address ?? '127.0.0.1:3306';
  if (d.password !== '') m.password = d.password;
  return m;
}

/** `exporter.flags` (every exporter-wide flag given, listen address defaulting to `:9104`) and the collect flags. */
function splitFlags(args: ExporterArgs): {
  exporter: Record<string, string>;
  collect: Record<string, string>;
} {
  // query_timeout: mysqld_exporter's 0 (no per-query limit) unless given.
  const exporter: Record<string, string> = { 'web.listen-address': ':9104', 'exporter.query_timeout': '0' };
  const collect: Record<string, string> = {};
  for (const [name, values] of args.given) {
    const role = BY_NAME.get(name)?.role;
    if (role === 'exporter') exporter[name] = values.join(',');
    if (role === 'collect') collect[name] = values.join(',');
  }
  return { exporter, collect };
}

/**
 * The config and plan for a parsed command line. Reads my.cnf; throws with a message naming
 * the flag or the file. `env` gives HOME, MYSQLD_EXPORTER_PASSWORD and SONDE_API_BIND.
 */
export async function exporterSetup(
  args: ExporterArgs,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): Promise<ExporterSetup> {
  const dsn = env.DATA_SOURCE_NAME ?? '';
  const { path, cnf } = dsn === '' ? await myCnf(args, env, cwd) : { path: undefined, cnf: undefined };
  const monitor = dsn === '' ? connection(args, cnf, env) : dsnConnection(dsn);
  if (path !== undefined) monitor.mycnf = path;
  const { exporter, collect } = splitFlags(args);
  if (dsn !== '' && parseGoDsn(dsn).insecureTls) exporter['tls.insecure-skip-verify'] = 'true';
  monitor.exporter = { mode: 'legacy', plan: CLI_PLAN, flags: exporter };
  const apiBind = env.SONDE_API_BIND ?? '';
  const config = mergeConfig<Config>(defaultConfig(), {
    api: apiBind === '' ? { disable: true } : { bind: apiBind },
    'monitor-loader': { local: { 'disable-auto': true } },
    monitors: [monitor],
  });
  validateConfig(config, { cwd });
  const secrets = [cnf?.password ?? '', monitor.password ?? '', dsn].filter((s) => s !== '');
  return {
    config,
    plan: applyCollectFlags(upstreamPlan(CLI_PLAN), collect),
    ...exporterLog(args, env),
    secrets,
    allowedTargets: allowedTargets(args.given.get('probe.allowed-targets') ?? []),
  };
}

/** The log level and format: the flags, else SONDE_LOG_LEVEL / SONDE_LOG_FORMAT, else info and text. */
function exporterLog(
  args: ExporterArgs,
  env: NodeJS.ProcessEnv,
): { logLevel: LogLevel; logFormat: LogFormat } {
  const fromEnv = logEnv(env);
  const level = args.given.get('log.level')?.[0];
  const format = args.given.get('log.format')?.[0];
  return {
    logLevel: level === undefined ? (fromEnv.level ?? 'info') : readLogLevel(level, '--log.level'),
    logFormat: format === undefined ? (fromEnv.format ?? 'text') : readLogFormat(format, '--log.format'),
  };
}
