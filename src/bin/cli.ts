/**
 * sonde CLI: parse flags, boot (load and validate everything), then run (start monitors
 * and the API) until a signal. This is the only file that wires concrete pieces together;
 * nothing outside bin/ imports bin/. The entry (bin/sonde.ts) answers a plain `--version`
 * and `sonde healthcheck` itself and imports this module for everything else, which then
 * loads as one piece with the agent: every start that gets here boots (the few answers
 * that do not, such as `--help`, are not worth splitting the start path into more files).
 */
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { Agent, STOP_DEADLINE_MS } from '../agent/agent.js';
import { builtinCollectors } from '../collectors/builtin.js';
import { printDomains } from '../collectors/kit/print.js';
import { DEFAULT_CONFIG_FILES, loadConfig } from '../config/load.js';
import { renderConfigYaml, renderMonitorsYaml } from '../config/render.js';
import type { Config } from '../core/config.js';
import { errorMessage } from '../core/errors.js';
import type { Events } from '../core/events.js';
import { parseShard, processOrdinalSource, type Shard } from '../monitor/shard.js';
import { loadPlugins } from '../plugins/load.js';
import { printPlans } from '../plan/store.js';
import { builtinSinks } from '../sinks/builtin.js';
import { sinkTranslators } from '../sinks/translators.js';
import { settleHeapAfterStart, tuneHeapGrowth } from './heap.js';
import { EventLog, loadJsonFormat, type LogFormat, type LogLevel } from '../log/event-log.js';
import { packageVersion } from '../util/shipped.js';
import { guardedStderr, onOutputClosed } from '../util/std-streams.js';
import { didYouMean } from '../util/suggest.js';
import { oneLine, parseGoBool } from '../util/text.js';
import type { Plan } from '../core/plan.js';
import {
  ExporterCliError,
  exporterHelp,
  exporterSetup,
  isExporterCommandLine,
  parseExporterCommandLine,
  type ExporterSetup,
} from './exporter-cli.js';
import { logEnv, readLogFormat, readLogLevel } from './log-flags.js';
import { formatEventTime } from '../util/time.js';

const VERSION = packageVersion();

/** A boot failure: sonde exits 1 after printing its message on one stderr line, no stack. */
class BootError extends Error {}

/** A failure once running (a listener that cannot listen): the same one line, `server.Run failed: …`. */
class RunError extends Error {}

/** A Go-style boolean flag or env value; anything else fails the boot. */
function parseBool(text: string, what: string): boolean {
  const value = parseGoBool(text);
  if (value === undefined)
    throw new BootError(`Error parsing command line: invalid boolean value "${text}" for ${what}`);
  return value;
}

/** SONDE_X wins over BLIP_X. */
function env(name: string): string | undefined {
  return process.env[`SONDE_${name}`] ?? process.env[`BLIP_${name}`];
}

const BOOL_FLAGS = ['debug', 'log', 'run', 'print-config', 'print-domains', 'print-monitors', 'print-plans'];

/** Go-style `--flag=true|false` for booleans becomes `--flag` / `--no-flag` for commander. */
function normaliseArgv(argv: string[]): string[] {
  return argv.map((a) => {
    const m = /^--([a-z-]+)=(.*)$/.exec(a);
    if (!m || !BOOL_FLAGS.includes(m[1] ?? '')) return a;
    return parseBool(m[2] ?? '', `--${m[1]}`) ? `--${m[1]}` : `--no-${m[1]}`;
  });
}

interface Options {
  config?: string;
  debug: boolean;
  log: boolean;
  /** `--log.level` (else SONDE_LOG_LEVEL); unset: `--log` / `--debug` decide, as in Blip. */
  logLevel?: LogLevel;
  /** `--log.format` (else SONDE_LOG_FORMAT, else text). */
  logFormat: LogFormat;
  run: boolean;
  printConfig: boolean;
  printDomains: boolean;
  printMonitors: boolean;
  printPlans: boolean;
  version: boolean;
  /** `--check` / `sonde check`: check every monitor once, bind nothing, exit. */
  check: boolean;
  /** mysqld_exporter's command line: the config and exporter plan built from it (no file). */
  preset?: ExporterSetup;
  /** `--shard` as given; resolved with SONDE_SHARD into `shard` once sonde is to boot. */
  shardFlag?: string;
  /** `--shard i/n` (or SONDE_SHARD): keep only this shard of the monitors. */
  shard?: Shard;
}

/** sonde's own command line: its options, help text and parsing behaviour. */
function cliProgram(): Command {
  return new Command('sonde')
    .usage('[options]')
    .helpOption('-h, --help', 'print this help and exit')
    .addOption(
      new Option(
        '--config <file>',
        'config file (default ./sonde.yaml, ./blip.yaml, then /etc/sonde/sonde.yaml; env SONDE_CONFIG, BLIP_CONFIG)',
      ),
    )
    .addOption(new Option('--debug', 'print debug lines to stderr (env SONDE_DEBUG, BLIP_DEBUG)'))
    .addOption(new Option('--no-debug').hideHelp())
    .addOption(new Option('--log', 'print info events to stdout (env SONDE_LOG, BLIP_LOG)'))
    .addOption(new Option('--no-log').hideHelp())
    .addOption(
      new Option(
        '--log.level <level>',
        'debug, info, warn or error: what is printed besides error events; info = --log, debug = --debug (env SONDE_LOG_LEVEL; default: error events and signal notices only)',
      ),
    )
    .addOption(
      new Option(
        '--log.format <format>',
        "text (Blip's event lines, the default) or json (JSON lines on stderr); logfmt = text (env SONDE_LOG_FORMAT)",
      ),
    )
    .addOption(new Option('--print-config', 'print the final config after validation'))
    .addOption(new Option('--no-print-config').hideHelp())
    .addOption(
      new Option(
        '--print-domains',
        "print every metric domain with its options and metrics (the config's plugins' included), then exit",
      ),
    )
    .addOption(new Option('--no-print-domains').hideHelp())
    .addOption(new Option('--print-monitors', 'print the loaded monitors after boot'))
    .addOption(new Option('--no-print-monitors').hideHelp())
    .addOption(new Option('--print-plans', 'print the shared plans after loading them'))
    .addOption(new Option('--no-print-plans').hideHelp())
    .addOption(
      new Option('--run', 'run after booting; --run=false boots, then exits 0 (env SONDE_RUN, BLIP_RUN)'),
    )
    .addOption(new Option('--no-run').hideHelp())
    .addOption(
      new Option(
        '--check',
        'load and validate everything, connect to each monitor once and prepare its plans, print one line per monitor, then exit (non-zero on any failure; binds no port); also `sonde check`',
      ),
    )
    .addOption(
      new Option(
        '--shard <i/n>',
        'keep only the monitors whose id hashes into shard i of n (Prometheus hashmod); ordinal/n takes i from the StatefulSet pod ordinal (env SONDE_SHARD)',
      ),
    )
    .addOption(new Option('-v, --version', 'print the version and exit'))
    .allowExcessArguments(true)
    .exitOverride()
    .configureOutput({ writeErr: () => undefined, writeOut: (s) => process.stdout.write(s) })
    .addHelpText(
      'after',
      `\nA command line with a mysqld_exporter flag (a dotted name such as --web.listen-address, or\n--timeout-offset; --log.level and --log.format are read by both) is read as mysqld_exporter's;\nsee docs/exporter-cli.md. Logs: docs/logging.md.\n\nsonde healthcheck [URL] asks a running sonde's /healthz (SONDE_HEALTHZ, else\nhttp://127.0.0.1:7522/healthz) and exits 0 when it answers 2xx: for container health checks.\n\nsonde v${VERSION}`,
    );
}

function parseArgs(argv: string[]): Options {
  const program = cliProgram();
  try {
    program.parse(normaliseArgv(argv), { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.help') process.exit(0);
      const arg = /'([^']+)'/.exec(err.message)?.[1];
      throw new BootError(
        err.code === 'commander.unknownOption' && arg
          ? `Error parsing command line: unknown argument ${arg}${didYouMean(arg.replace(/=.*$/, ''), optionNames(program))}`
          : `Error parsing command line: ${err.message.replace(/^error: /, '')}`,
      );
    }
    throw err;
  }
  const extra = program.args[0];
  if (extra !== undefined) throw new BootError(positionalError(extra));
  const o = program.opts<Record<string, unknown>>();
  const flag = (key: string, envName: string | undefined, def: boolean): boolean => {
    if (program.getOptionValueSource(key) === 'cli') return o[key] === true;
    const e = envName ? env(envName) : undefined;
    if (e !== undefined && e !== '') return parseBool(e, `${envName ? `SONDE_${envName}` : key}`);
    return def;
  };
  const config = typeof o.config === 'string' ? o.config : env('CONFIG');
  const logs = logOptions(o['log.level'], o['log.format']);
  return {
    ...(typeof o.shard === 'string' ? { shardFlag: o.shard } : {}),
    ...(config === undefined || config === '' ? {} : { config }),
    ...logs,
    debug: flag('debug', 'DEBUG', false),
    log: flag('log', 'LOG', false),
    run: flag('run', 'RUN', true),
    printConfig: o.printConfig === true,
    printDomains: o.printDomains === true,
    printMonitors: o.printMonitors === true,
    printPlans: o.printPlans === true,
    version: o.version === true,
    check: o.check === true,
  };
}

/** Every long option sonde's command line takes (for "did you mean"). */
function optionNames(program: Command): string[] {
  return program.options.flatMap((o) => (o.long !== undefined && !o.hidden ? [o.long] : []));
}

/**
 * sonde takes no positional argument: a word that is not an option is refused, and a file
 * name is told to go behind --config (it is never read as the config, nor ignored).
 */
function positionalError(arg: string): string {
  const file = /\.(ya?ml|json)$/i.test(arg) || arg.includes('/');
  const hint = file
    ? `; to use it as the config file: --config ${arg}`
    : arg === 'check'
      ? '; check comes first (sonde check [options]), or use --check'
      : '; sonde takes options only (sonde --help)';
  return `Error parsing command line: unexpected argument ${arg}${hint}`;
}

/** `--log.level` and `--log.format`, else SONDE_LOG_LEVEL and SONDE_LOG_FORMAT; a bad value fails the boot. */
function logOptions(level: unknown, format: unknown): Pick<Options, 'logLevel' | 'logFormat'> {
  try {
    const fromEnv = logEnv(process.env);
    const logLevel = typeof level === 'string' ? readLogLevel(level, '--log.level') : fromEnv.level;
    const logFormat = typeof format === 'string' ? readLogFormat(format, '--log.format') : fromEnv.format;
    return { ...(logLevel ? { logLevel } : {}), logFormat: logFormat ?? 'text' };
  } catch (err) {
    throw new BootError(`Error parsing command line: ${errorMessage(err)}`);
  }
}

/** `sonde check [options]` is `sonde --check [options]`. */
function sondeArgv(argv: string[]): string[] {
  return argv[0] === 'check' ? ['--check', ...argv.slice(1)] : argv;
}

/**
 * What `--version`, `--help` (sonde's and mysqld_exporter's) and `--print-domains` without
 * a config file print: answered before anything boots. Anything else, a bad command line
 * included, goes on to main(), which reports it.
 */
async function earlyAnswer(argv: string[]): Promise<string | undefined> {
  if (isExporterCommandLine(argv, process.argv[1])) {
    const cmd = parseExporterCommandLine(argv);
    if (cmd.kind === 'help') return exporterHelp(exporterProgram(), VERSION);
    if (cmd.kind === 'version') return `sonde, version ${VERSION} (mysqld_exporter command line)\n`;
    return undefined;
  }
  const opts = parseArgs(sondeArgv(argv));
  if (opts.version) return `v${VERSION}\n`;
  if (!opts.printDomains) return undefined;
  // A config file may add domains through its `plugins:`: main() reads it and loads them.
  if (opts.config !== undefined || DEFAULT_CONFIG_FILES.some((f) => existsSync(resolve(f)))) return undefined;
  const collectors = builtinCollectors();
  return printDomains(collectors.domains().map((d) => collectors.help(d)));
}

/** `--shard`, else `SONDE_SHARD` (empty = unset); a bad value fails the boot naming which. */
function shardOption(flag: string | undefined): Shard | undefined {
  const fromEnv = process.env.SONDE_SHARD;
  const [text, what] = flag !== undefined ? [flag, '--shard'] : [fromEnv ?? '', 'SONDE_SHARD'];
  if (flag === undefined && text === '') return undefined;
  try {
    return parseShard(text, what, () => processOrdinalSource());
  } catch (err) {
    throw new BootError(errorMessage(err));
  }
}

/**
 * Last line of defence: a bug in one monitor or sink must not take the agent (and every
 * other monitor) down. Each subsystem contains its own failures; this only reports.
 */
function reportStrayErrors(events: Events): void {
  process.on('unhandledRejection', (reason) => {
    events.error('server-panic', '', `unhandled rejection: ${errorMessage(reason)}`);
  });
  process.on('uncaughtException', (err) => {
    events.error('server-panic', '', `uncaught exception: ${errorMessage(err)}`);
  });
}

/**
 * A closed stdout or stderr (its reader went away) is reported once, on the other stream:
 * errors print on stderr, notices on stdout. The guard drops every later write to it.
 */
function reportClosedOutputs(events: EventLog): void {
  onOutputClosed((name, cause) => {
    const text = `${name} is closed (${cause}): what sonde prints there is dropped from now on`;
    if (name === 'stdout') events.error('server-output-closed', '', text);
    else events.notice('server-output-closed', '', text);
  });
}

/**
 * Resolves with the first SIGTERM or SIGINT; meanwhile SIGUSR1 toggles debugging and SIGHUP
 * calls `reload` (one at a time: a SIGHUP during a reload is noted and ignored).
 */
function untilSignal(events: EventLog, reload: () => Promise<void>): Promise<NodeJS.Signals> {
  process.on('SIGUSR1', () => {
    events.setDebug(!events.debugging);
    const line = `SIGUSR1 has set sonde.Debugging to ${String(events.debugging)}`;
    if (events.format === 'json') events.notice('server-debug', '', line);
    else guardedStderr().write(`${line}\n`);
  });
  let reloading = false;
  process.on('SIGHUP', () => {
    if (reloading) {
      events.notice('server-reload', '', 'SIGHUP: a reload is already running; ignored');
      return;
    }
    reloading = true;
    events.notice('server-reload', '', 'SIGHUP: reloading the monitors');
    void reload().finally(() => (reloading = false));
  });
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      resolve(signal);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

/**
 * After the first signal: exit 0 anyway when the graceful stop takes longer than the
 * deadline (a hung query or sink), and at once on a second SIGTERM or SIGINT. Returns the
 * disarming function for a stop that finished in time.
 */
function armHardStop(events: Events): () => void {
  const force = (why: string): void => {
    events.error('server-stopped', '', why);
    process.exit(0);
  };
  const timer = setTimeout(
    () => force(`graceful stop not done after ${STOP_DEADLINE_MS / 1000}s, exiting now`),
    STOP_DEADLINE_MS,
  );
  timer.unref();
  const again = (): void => force('second signal, exiting now');
  process.once('SIGTERM', again);
  process.once('SIGINT', again);
  return () => {
    clearTimeout(timer);
    process.off('SIGTERM', again);
    process.off('SIGINT', again);
  };
}

/** The agent the command line asks for: its config, log lines, shard and printing steps. */
function cliAgent(opts: Options, onListenFailure?: (message: string) => void): Agent {
  return new Agent({
    ...(onListenFailure ? { onListenFailure } : {}),
    ...(opts.config !== undefined ? { config: opts.config } : {}),
    ...(opts.preset ? { exporter: opts.preset } : {}),
    ...(opts.shard ? { shard: opts.shard } : {}),
    ...(opts.check ? { check: true } : {}),
    log: {
      log: opts.log,
      debug: opts.debug,
      format: opts.logFormat,
      // The boot failure line prints its message: one line for a bad config.
      hide: ['boot-config-invalid'],
      ...(opts.logLevel ? { level: opts.logLevel } : {}),
    },
    ...(opts.printConfig
      ? { onConfig: (c: Config) => process.stdout.write(`${renderConfigYaml(c)}\n`) }
      : {}),
    ...(opts.printPlans ? { onPlans: (p: Plan[]) => process.stdout.write(printPlans(p)) } : {}),
  });
}

/** Boot, print the monitors when asked, then run until a signal (unless --run=false). */
async function bootAndRun(opts: Options): Promise<number> {
  let listenFailed: (message: string) => void = () => undefined;
  const failure = new Promise<string>((resolve) => (listenFailed = resolve));
  const agent = cliAgent(opts, (message) => listenFailed(message));
  reportClosedOutputs(agent.events);
  await agent.boot();
  if (opts.printMonitors) {
    const shard = agent.shardSummary;
    process.stdout.write(`${shard ? `# ${shard}\n` : ''}${renderMonitorsYaml(agent.monitorConfigs())}\n`);
  }
  if (!opts.run) return 0;
  reportStrayErrors(agent.events);
  await agent.start();
  settleHeapAfterStart();
  const ended = await Promise.race([
    untilSignal(agent.events, () => agent.reload()),
    failure.then((message) => new RunError(message)),
  ]);
  if (ended instanceof RunError) {
    // A listener that cannot listen ends sonde, as it ends mysqld_exporter: stop, then one line.
    const disarm = armHardStop(agent.events);
    await agent.stop(STOP_DEADLINE_MS);
    disarm();
    throw ended;
  }
  const signal = ended;
  agent.events.notice('server-stopped', '', `caught ${signal}, stopping`);
  const disarm = armHardStop(agent.events);
  await agent.stop(STOP_DEADLINE_MS);
  disarm();
  return 0;
}

/**
 * `--check`: boot without binding, then check every monitor (connect, plans, prepare) a
 * few at a time; one line each on stdout, sorted by id, `OK <id>: plans …` or
 * `FAIL <id>: <step>: <cause>`. Exit 1 when any failed or none is configured.
 */
async function bootAndCheck(opts: Options): Promise<number> {
  const agent = cliAgent(opts);
  await agent.boot();
  const results = await agent.check();
  for (const r of results) {
    process.stdout.write(
      r.error === ''
        ? `OK   ${r.monitorId}: plans ${r.plans.join(', ')}\n`
        : `FAIL ${r.monitorId}: ${r.error}\n`,
    );
  }
  const failed = results.filter((r) => r.error !== '').length;
  if (agent.shardSummary) process.stdout.write(`${agent.shardSummary}\n`);
  if (results.length === 0) process.stdout.write('FAIL no monitors configured\n');
  process.stdout.write(`${results.length - failed} of ${results.length} monitors OK\n`);
  return failed > 0 || results.length === 0 ? 1 : 0;
}

/** The program name mysqld_exporter's command line prints: the name sonde was run as. */
function exporterProgram(): string {
  return (process.argv[1] ?? 'sonde').split('/').pop()?.replace(/\.js$/, '') ?? 'sonde';
}

async function mainExporter(argv: string[]): Promise<number> {
  const program = exporterProgram();
  let cmd: ReturnType<typeof parseExporterCommandLine>;
  try {
    cmd = parseExporterCommandLine(argv);
  } catch (err) {
    if (!(err instanceof ExporterCliError)) throw err;
    process.stderr.write(`${program}: error: ${err.message}, try --help\n`);
    return 1;
  }
  if (cmd.kind !== 'run') return 0; // --help and --version: answered before anything boots (earlyAnswer)
  let preset: ExporterSetup;
  try {
    preset = await exporterSetup(cmd.args);
  } catch (err) {
    throw new BootError(errorMessage(err));
  }
  await useLogFormat(preset.logFormat);
  const opts: Options = {
    debug: false,
    log: false,
    logLevel: preset.logLevel,
    logFormat: preset.logFormat,
    run: true,
    check: false,
    printConfig: false,
    printDomains: false,
    printMonitors: false,
    printPlans: false,
    version: false,
    preset,
  };
  return bootAndRun(opts);
}

/**
 * `--print-domains` with a config file: the built-in domains and those the file's
 * `plugins:` add (the plugins are loaded as at boot; nothing else of the config is used).
 * A config that cannot be loaded leaves the built-in domains, with a line on stderr saying
 * why; a plugin that fails to load fails the command (its domains were asked for).
 */
async function printDomainsOf(configFile: string | undefined): Promise<number> {
  const collectors = builtinCollectors();
  let loaded;
  try {
    loaded = await loadConfig(configFile);
  } catch (err) {
    process.stderr.write(`--print-domains: ${errorMessage(err)}; built-in domains only\n`);
  }
  try {
    const { config, path } = loaded ?? { config: {}, path: undefined };
    await loadPlugins(config.plugins ?? [], {
      baseDir: path === undefined ? process.cwd() : dirname(path),
      collectors,
      sinks: builtinSinks(),
      translators: new Map(sinkTranslators),
    });
  } catch (err) {
    throw new BootError(errorMessage(err));
  }
  process.stdout.write(printDomains(collectors.domains().map((d) => collectors.help(d))));
  return 0;
}

async function main(argv: string[]): Promise<number> {
  if (isExporterCommandLine(argv, process.argv[1])) return mainExporter(argv);
  // --version, and --print-domains without a config file: answered before anything boots (earlyAnswer).
  const opts = parseArgs(sondeArgv(argv));
  if (opts.printDomains) return printDomainsOf(opts.config);
  await useLogFormat(opts.logFormat);
  const shard = shardOption(opts.shardFlag);
  if (shard) opts.shard = shard;
  return opts.check ? bootAndCheck(opts) : bootAndRun(opts);
}

/** The log format once the command line is read: the boot failure line is printed in it. */
let logFormat: LogFormat = 'text';

/** Take the command line's log format; JSON lines need their writer (pino) imported first. */
async function useLogFormat(format: LogFormat): Promise<void> {
  if (format === 'json') await loadJsonFormat();
  logFormat = format;
}

/** Early answers, else boot and run (main()). */
async function start(argv: string[]): Promise<number> {
  const early = await earlyAnswer(argv).catch(() => undefined);
  if (early !== undefined) {
    process.stdout.write(early);
    process.exit(0);
  }
  // Less garbage held between full collections (see bin/heap.ts).
  tuneHeapGrowth();
  return main(argv);
}

/** Run sonde's command line (`argv` without node and the script); exits the process when done. */
export function runCli(argv: string[]): void {
  start(argv).then(
    (code) => process.exit(code),
    (err: unknown) => {
      const text = oneLine(errorMessage(err).replace(/\n+$/, ''));
      const what = err instanceof RunError ? 'server.Run failed' : 'server.Boot failed';
      if (logFormat === 'json') new EventLog({ format: 'json' }).error('boot-error', '', `${what}: ${text}`);
      else process.stderr.write(`${formatEventTime(new Date()).slice(0, 19)} ${what}: ${text}\n`);
      process.exit(1);
    },
  );
}
