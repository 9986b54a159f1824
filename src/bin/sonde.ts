#!/usr/bin/env -S node --max-semi-space-size=4
/**
 * sonde CLI: parse flags, boot (load and validate everything), then run (start monitors
 * and the API) until a signal. This is the only file that wires concrete pieces together;
 * nothing imports bin/.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { Command, CommanderError, Option } from 'commander';
import type { Config, FinalMonitorConfig, MonitorConfig } from '../core/config.js';
import { errorMessage } from '../core/errors.js';
import type { Db } from '../core/db.js';
import type { Events } from '../core/events.js';
import type { Sink } from '../core/sink.js';
import type { StatusWriter } from '../core/status.js';
import { ServerKey } from '../core/status-keys.js';
import type { CollectorRegistry } from '../collectors/registry.js';
import type { LoadedMonitor, LoaderDeps, MonitorLoaderAws } from '../monitor/loader.js';
import type { Shard } from '../monitor/shard.js';
import type { MonitorDeps } from '../monitor/monitor.js';
import type { ProbeHandle } from '../exporter/probe.js';
import type { HelpLookup } from '../plan/store.js';
import type { ApiDeps } from '../server/api.js';
import type { SinkRegistry } from '../sinks/registry.js';
import { enableCompileCache } from '../util/compile-cache.js';
import { tuneHeapGrowth } from '../util/heap.js';
import type { LogFormat, LogLevel } from '../util/events.js';
import { formatDuration } from '../util/duration.js';
import { parseGoBool } from '../util/text.js';
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
import { formatEventTime, formatTimestamp } from '../util/time.js';

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};
const VERSION = pkg.version;

/** A boot failure: sonde exits 1 after printing its message on one stderr line, no stack. */
class BootError extends Error {}

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
      new Option('--print-domains', 'print every metric domain with its options and metrics, then exit'),
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
      `\nA command line with a mysqld_exporter flag (a dotted name such as --web.listen-address, or\n--timeout-offset; --log.level and --log.format are read by both) is read as mysqld_exporter's;\nsee docs/exporter-cli.md. Logs: docs/logging.md.\n\nsonde v${VERSION}`,
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
          ? `Error parsing command line: unknown argument ${arg}`
          : `Error parsing command line: ${err.message.replace(/^error: /, '')}`,
      );
    }
    throw err;
  }
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
 * What `--version`, `--help` (sonde's and mysqld_exporter's) and `--print-domains` print.
 * They are answered here, before the rest of sonde is imported below: they load commander,
 * the collectors' static help and little else. Anything else, a bad command line included,
 * goes on to main(), which reports it.
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
  const collectors = (await import('../collectors/builtin.js')).builtinCollectors();
  const { printDomains } = await import('../collectors/print.js');
  return printDomains(collectors.domains().map((d) => collectors.help(d)));
}

const early = await earlyAnswer(process.argv.slice(2)).catch(() => undefined);
if (early !== undefined) {
  process.stdout.write(early);
  process.exit(0);
}
// Reused compiled code for the modules imported from here on (Node >= 22.1; off when unwritable).
enableCompileCache();
// Less garbage held between full collections (see util/heap.ts).
tuneHeapGrowth();

// The rest of sonde, imported once it is to boot. The optional parts (collectors' and sinks'
// implementations, the exporter and probe listeners, the heartbeat writer, --check and
// --print-domains) are imported where they are used.
const { loadConfig } = await import('../config/load.js');
const { finalizeMonitors, finalizePlansMonitor, monitorsEqual, validateMonitor } =
  await import('../config/monitor.js');
const { readMonitorFiles } = await import('../config/monitor-files.js');
const { buildConnection } = await import('../config/connection.js');
const { renderConfigJson, renderConfigYaml, renderMonitorsYaml } = await import('../config/render.js');
const { createDb } = await import('../db/pool.js');
const { Loader } = await import('../monitor/loader.js');
const { awsTargetOf } = await import('../monitor/monitor.js');
type Loader = InstanceType<typeof Loader>;
const { autoDetectLocal } = await import('../monitor/local.js');
const { parseShard, processOrdinalSource } = await import('../monitor/shard.js');
const { buildRuntime } = await import('../monitor/plan-runtime.js');
const { createScrapeReader } = await import('../monitor/scrape-reader.js');
const { probeTargets } = await import('../monitor/probe-targets.js');
const { unsupportedFeature } = await import('../monitor/features.js');
const { uiSource } = await import('../monitor/ui-view.js');
const { isPublicUiPath, uiRoutes } = await import('../web/ui.js');
const { PlanStore, printPlans } = await import('../plan/store.js');
type PlanStore = InstanceType<typeof PlanStore>;
const { freqWarnings, sortLevels } = await import('../plan/schedule.js');
const { validatePlans } = await import('../plan/parse.js');
const { buildApi, listenApi } = await import('../server/api.js');
const { TokenFile } = await import('../util/http-guard.js');
type TokenFile = InstanceType<typeof TokenFile>;
const { builtinSinks } = await import('../sinks/builtin.js');
const { StatusRegistry } = await import('../status/registry.js');
type StatusRegistry = InstanceType<typeof StatusRegistry>;
const { sleep } = await import('../util/backoff.js');
const { EventLog } = await import('../util/events.js');
type EventLog = InstanceType<typeof EventLog>;
const { parseHostPort } = await import('../util/net.js');
const { loadWebConfig } = await import('../util/web-config.js');

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

const DEFAULT_API_BIND = '127.0.0.1:7522';

/** Listen then close, so that an api.bind already in use fails the boot, not the run. */
async function testBind(bind: string): Promise<void> {
  const { host, port } = parseHostPort(bind, 'bind address');
  await new Promise<void>((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen({ host: host === '' ? undefined : host, port }, () => srv.close(() => resolve()));
  });
}

/** The connection builder every part of sonde uses: each password it reads is scrubbed. */
type Connect = (
  cfg: FinalMonitorConfig,
  o?: { reload?: boolean; authModule?: string },
) => ReturnType<typeof buildConnection>;

/** What the boot steps share once the config is loaded. */
interface Boot {
  events: EventLog;
  status: StatusRegistry;
  serverStatus: StatusWriter;
  config: Config;
  /** The config file the boot read (SIGHUP reads it again); undefined: built-in defaults or the exporter command line. */
  configPath?: string;
  connect: Connect;
  collectors: CollectorRegistry;
  sinks: SinkRegistry;
  plans: PlanStore;
  help: HelpLookup;
  /** The exporter plan from mysqld_exporter's command line: the only plan its monitor looks up. */
  exporterPlan?: Plan;
}

/** Options of a database handle made by the CLI: password reload failures become events. */
function dbOptions(events: Events, id: string) {
  return {
    reloadCredentials: undefined,
    onPasswordReloadError: (msg: string) => events.info('db-reload-password-error', id, msg),
  };
}

/** Load the config file and check api.bind is free; any failure ends the boot. */
async function bootConfig(opts: Options, events: EventLog): Promise<{ config: Config; path?: string }> {
  events.info('boot-config-loading', '');
  let config: Config;
  let path: string | undefined;
  try {
    if (opts.preset) config = opts.preset.config;
    else ({ config, path } = await loadConfig(opts.config));
    // --check binds nothing, so it also runs next to an agent that holds these ports.
    if (config.api?.disable !== true && !opts.check) {
      try {
        await testBind(config.api?.bind ?? DEFAULT_API_BIND);
      } catch (err) {
        throw new Error(`api.bind: ${errorMessage(err)}`);
      }
    }
    if (!opts.check) await checkProbeConfig(config);
  } catch (err) {
    events.info('boot-config-invalid', '', errorMessage(err));
    throw new BootError(errorMessage(err));
  }
  events.info('boot-config-loaded', '');
  learnSecrets(config, opts.preset?.secrets ?? [], events);
  return path === undefined ? { config } : { config, path };
}

/** Defensive scrubbing: every password sonde learns is masked in any line it prints. */
function learnSecrets(config: Config, learnt: readonly string[], events: EventLog): void {
  for (const pw of [config.mysql?.password, ...(config.monitors ?? []).map((m) => m.password), ...learnt]) {
    if (pw) events.addSecret(pw);
  }
}

/**
 * `probe` at boot: its address free and not the API's, and no `web-config-file` while TLS and
 * basic auth for it are not available.
 */
async function checkProbeConfig(config: Config): Promise<void> {
  const bind = config.probe?.bind ?? '';
  if (bind === '') return;
  if (config.api?.disable !== true && bind === (config.api?.bind ?? DEFAULT_API_BIND))
    throw new Error(`probe.bind: ${bind} is also api.bind; the two listeners need distinct addresses`);
  try {
    await testBind(bind);
  } catch (err) {
    throw new Error(`probe.bind: ${errorMessage(err)}`);
  }
  (await import('../exporter/probe.js')).checkWebConfigFile(config.probe?.['web-config-file']);
}

/** A connection builder that adds each password it reads to the secrets scrubbed from output. */
function scrubbingConnect(events: EventLog): Connect {
  return async (cfg, o) => {
    const spec = await buildConnection(cfg, o);
    if (spec.password() !== '') events.addSecret(spec.password());
    return spec;
  };
}

/** Load the shared plans (files, and the plans table through plans.monitor when set). */
async function bootPlans(b: Boot): Promise<void> {
  b.events.info('plans-load-shared', '');
  try {
    let tableDb: (Db & { close(): Promise<void> }) | undefined;
    if (b.config.plans?.table) {
      const pm = finalizePlansMonitor(b.config);
      if (!pm) throw new Error('plans.table: Table set but Monitor is nil (set plans.monitor)');
      tableDb = createDb(await b.connect(pm), dbOptions(b.events, 'plans.monitor'));
    }
    try {
      await b.plans.loadShared(b.config, b.help, tableDb);
    } finally {
      await tableDb?.close();
    }
  } catch (err) {
    throw new BootError(errorMessage(err));
  }
}

/** Everything a monitor needs, wired to the concrete pieces. */
function monitorDeps(b: Boot): MonitorDeps {
  const { events, plans, help, collectors } = b;
  return {
    events,
    help,
    makeCollector: (domain, ctx) => collectors.make(domain, ctx),
    heartbeatWriter: async (args) => (await import('../heartbeat/writer.js')).runHeartbeatWriter(args),
    exporter: {
      createSource: ({ cfg, settings, ...args }) =>
        createScrapeReader({
          ...args,
          aws: awsTargetOf(cfg),
          collectors,
          session: settings.session,
          maxCollectors: settings.maxCollectors,
          ...(settings.queryTimeoutMs === undefined ? {} : { queryTimeoutMs: settings.queryTimeoutMs }),
        }),
      start: async (args) => (await import('../exporter/server.js')).startExporter(args),
    },
    buildConnection: (cfg, o) => b.connect(cfg, o),
    createDb: (spec, o) => createDb(spec, o),
    loadPlans: async (cfg: FinalMonitorConfig, db: Db) => {
      events.info('plans-load-monitor', cfg.id);
      const fixed = b.exporterPlan;
      if (fixed !== undefined) return () => structuredClone(fixed);
      const list = await plans.monitorPlans(cfg, db, help);
      return (name: string) => plans.lookup(cfg.id, list, name);
    },
    buildRuntime: (plan, cfg) => {
      for (const w of freqWarnings(sortLevels(plan)))
        events.warn('plan-freq-warning', cfg.id, `${plan.name}: ${w}`);
      return buildRuntime(plan, cfg);
    },
    uiHistory: b.config.api?.['ui-history'] !== false,
  };
}

/** A monitor's sinks: those configured, or the log sink when none is. */
async function makeSinks(b: Boot, m: FinalMonitorConfig, writer: StatusWriter): Promise<Sink[]> {
  const configured = Object.entries(m.sinks ?? {});
  const list = configured.length > 0 ? configured : [['log', {}] as [string, Record<string, string>]];
  const sinks: Sink[] = [];
  for (const [name, options] of list) {
    if (!b.sinks.has(name)) throw new Error(`sink ${name} not registered`);
    sinks.push(
      await b.sinks.create(name, {
        sinkName: name,
        monitorId: m.id,
        options,
        tags: m.tags ?? {},
        status: writer,
        events: b.events,
        ...(b.config.http?.proxy ? { httpProxy: b.config.http.proxy } : {}),
      }),
    );
  }
  return sinks;
}

/** The local auto-detection the loader falls back on when no monitor is configured. */
function autoDetect(b: Boot): LoaderDeps['autoDetect'] {
  return (config) =>
    autoDetectLocal(config, {
      finalize: (m) => {
        const [f] = finalizeMonitors([m], config);
        if (!f) throw new Error('auto-detect: no monitor');
        return f;
      },
      buildConnection: (cfg) => b.connect(cfg),
      createDb: (spec) => createDb(spec),
    });
}

/** RDS discovery (imports the AWS SDK only when regions are listed). */
async function readRdsMonitors(events: EventLog, aws: MonitorLoaderAws): Promise<MonitorConfig[]> {
  const [{ discoverRdsMonitors }, { imdsRegion }] = await Promise.all([
    import('../aws/rds-discovery.js'),
    import('../aws/region.js'),
  ]);
  return discoverRdsMonitors(aws, {
    autoRegion: imdsRegion,
    onSkip: (_region, message) =>
      events.error('monitors-aws-error', '', `${message} (skipped: auto is listed)`),
    onRegion: (region, instances, monitors) =>
      events.info('monitors-aws', '', `${region}: ${instances} DB instances, ${monitors} monitors`),
  });
}

/** The monitor loader, wired to config, sinks and monitors. */
function makeLoader(b: Boot, shard: Shard | undefined): Loader {
  const { config, events } = b;
  return new Loader({
    ...(shard ? { shard } : {}),
    config,
    events,
    status: b.status,
    finalize: (ms, cfg) =>
      finalizeMonitors(ms, cfg, process.env, { warn: (msg) => events.error('monitors-warning', '', msg) }),
    validate: (m) => {
      validateMonitor(m);
      const unsupported = unsupportedFeature(m);
      if (unsupported) throw new Error(`monitor ${m.id}: ${unsupported}`);
    },
    equal: (a, b) => monitorsEqual(a, b),
    readMonitorFiles: (files) => readMonitorFiles(files),
    readRdsMonitors: async (aws) => readRdsMonitors(events, aws),
    autoDetect: autoDetect(b),
    makeSinks: (m, writer) => makeSinks(b, m, writer),
    monitorDeps: monitorDeps(b),
  });
}

/** A file named by a config key, read at boot; an error names the key and the file. */
function readKeyFile(key: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    const code = err instanceof Error && 'code' in err ? String(err.code) : errorMessage(err);
    throw new BootError(`${key}: cannot read ${path}: ${code}`);
  }
}

/** `api.tls`: certificate and key (both or neither), and the optional client CA. */
function apiTls(config: Config): ApiDeps['tls'] {
  const tls = config.api?.tls;
  if (tls === undefined) return undefined;
  const { cert, key } = tls;
  const clientCa = tls['client-ca'];
  if (!cert && !key && !clientCa) return undefined;
  if (!cert || !key) throw new BootError('api.tls: cert and key must both be set');
  return {
    cert: readKeyFile('api.tls.cert', cert),
    key: readKeyFile('api.tls.key', key),
    ...(clientCa ? { clientCa: readKeyFile('api.tls.client-ca', clientCa) } : {}),
  };
}

/** The API's access settings: bind, allowed hosts, token and TLS. Unreadable files fail the boot. */
function apiAccess(b: Boot): Pick<ApiDeps, 'bind' | 'allowedHosts' | 'token' | 'tls'> {
  const api = b.config.api;
  const tokenFile = api?.['token-file'];
  let token: TokenFile | undefined;
  if (tokenFile) {
    try {
      token = new TokenFile(tokenFile, 'api.token-file', {
        onError: (msg) => b.events.error('server-api-error', '', msg),
      });
    } catch (err) {
      throw new BootError(errorMessage(err));
    }
  }
  const tls = apiTls(b.config);
  return {
    bind: api?.bind ?? DEFAULT_API_BIND,
    allowedHosts: api?.['allowed-hosts'] ?? [],
    ...(token ? { token } : {}),
    ...(tls ? { tls } : {}),
  };
}

/**
 * Check every loaded monitor's exporter token file and web configuration file now, so that
 * a bad one fails the boot.
 */
function checkExporterFiles(loader: Loader): void {
  for (const m of loader.configs()) {
    if (!m.exporter?.mode) continue;
    const file = m.exporter['token-file'];
    const web = m.exporter.flags?.['web.config.file'];
    try {
      if (file) new TokenFile(file, 'exporter.token-file');
      if (web) loadWebConfig(web, 'exporter.flags.web.config.file');
    } catch (err) {
      throw new BootError(`monitor ${m.id}: ${errorMessage(err)}`);
    }
  }
}

/** What `GET /readyz` reports: why the agent is not ready yet, or undefined once it is. */
interface Readiness {
  why: string | undefined;
}

/** The HTTP API (not listening yet), or undefined when api.disable is set. */
function makeApi(b: Boot, loader: Loader, readiness: Readiness): ReturnType<typeof buildApi> | undefined {
  const { config, events } = b;
  if (config.api?.disable === true) return undefined;
  const access = apiAccess(b);
  const readOnly = config.api?.['read-only'] === true;
  return buildApi({
    ...access,
    ready: () => readiness.why,
    control: loader,
    status: b.status,
    info: {
      version: VERSION,
      config,
      registered: () => ({ collectors: b.collectors.domains(), sinks: b.sinks.names() }),
      toggleDebug: () => {
        events.setDebug(!events.debugging);
        return events.debugging;
      },
    },
    // The config the monitors run on: the boot's, or the one a SIGHUP loaded since.
    renderConfig: {
      yaml: () => renderConfigYaml(loader.config),
      json: () => renderConfigJson(loader.config),
    },
    events,
    // The web page (docs/ui.md): the page and its files are open, its JSON needs the token.
    extraRoutes: uiRoutes(
      uiSource({
        version: VERSION,
        monitors: () => loader.loaded(),
        statusOf: (id) => b.status.monitorStatus(id),
        uptimeS: () => Number(b.status.server()[ServerKey.uptime] ?? 0),
        readOnly,
      }),
      { tokenRequired: access.token !== undefined, readOnly },
    ),
    public: isPublicUiPath,
    readOnly,
  });
}

/** Boot: config, plans, monitors and the API, in that order. Nothing runs yet. */
async function boot(opts: Options, collectors: CollectorRegistry): Promise<{ b: Boot; loader: Loader }> {
  const events = new EventLog({
    log: opts.log,
    debug: opts.debug,
    format: opts.logFormat,
    ...(opts.logLevel ? { level: opts.logLevel } : {}),
  });
  const status = new StatusRegistry();
  const serverStatus = status.serverWriter;
  serverStatus.set(ServerKey.started, formatTimestamp(new Date()));
  serverStatus.set(ServerKey.version, VERSION);
  serverStatus.set(ServerKey.server, 'booting');
  events.info('boot-start', '', `sonde ${VERSION}`);

  serverStatus.set(ServerKey.server, 'boot: loading config');
  const { config, path: configPath } = await bootConfig(opts, events);
  if (opts.printConfig) process.stdout.write(`${renderConfigYaml(config)}\n`);
  const b: Boot = {
    events,
    status,
    serverStatus,
    config,
    ...(configPath === undefined ? {} : { configPath }),
    connect: scrubbingConnect(events),
    collectors,
    sinks: builtinSinks(),
    plans: new PlanStore(),
    help: (d) => (collectors.has(d) ? collectors.help(d) : undefined),
    ...(opts.preset ? { exporterPlan: cliPlan(opts.preset.plan, collectors) } : {}),
  };

  serverStatus.set(ServerKey.server, 'boot: loading plans');
  await bootPlans(b);
  if (opts.printPlans) process.stdout.write(printPlans(b.plans.sharedPlans()));

  serverStatus.set(ServerKey.server, 'boot: load monitors');
  const loader = makeLoader(b, opts.shard);
  try {
    await loader.load({ boot: true });
  } catch (err) {
    throw new BootError(errorMessage(err));
  }
  checkExporterFiles(loader);
  if (opts.printMonitors) {
    const shard = loader.shardSummary;
    process.stdout.write(`${shard ? `# ${shard}\n` : ''}${renderMonitorsYaml(loader.configs())}\n`);
  }
  return { b, loader };
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

/** Keep trying to listen (every second) until it works or `stopping()` says to give up. */
async function listenUntilStopped(
  listen: () => Promise<unknown>,
  onError: (message: string) => void,
  stopping: () => boolean,
): Promise<void> {
  while (!stopping()) {
    try {
      await listen();
      return;
    } catch (err) {
      onError(errorMessage(err));
      await sleep(1000);
    }
  }
}

/** The probe listener, when `probe.bind` is set: listening (retried every second) until the stop. */
function runProbe(
  b: Boot,
  loader: Loader,
  stopping: () => boolean,
): { done: Promise<void>; close(): Promise<void> } {
  const bind = b.config.probe?.bind ?? '';
  let handle: ProbeHandle | undefined;
  if (bind === '') return { done: Promise.resolve(), close: async () => undefined };
  const webConfigFile = b.config.probe?.['web-config-file'];
  const targets = probeTargets({ monitors: () => loader.loaded() });
  const done = listenUntilStopped(
    async () => {
      const { startProbe } = await import('../exporter/probe.js');
      handle = await startProbe({
        bind,
        targets,
        events: b.events,
        ...(webConfigFile ? { webConfigFile } : {}),
      });
      b.events.info('server-probe', '', `probe listener on ${handle.address}`);
    },
    (msg) => b.events.error('server-probe-error', '', msg),
    stopping,
  );
  return {
    done,
    async close() {
      await done;
      await handle?.close();
    },
  };
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
    else process.stderr.write(`${line}\n`);
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
 * SIGHUP's reload: the monitors again from their sources, with the diff and stop-loss of
 * `POST /monitors/reload`. A failure keeps the running monitors and says why.
 */
/**
 * Keys of the config file that only a restart applies (compared with the boot config): listeners, the shared plans read at
 * boot, the HTTP proxy of sinks. Everything else (monitors, their defaults, the monitor
 * loader) is what a reload is for.
 */
const RESTART_KEYS = ['api', 'probe', 'plans', 'http'] as const;

/** The restart-only keys whose value differs between two configs. */
function restartOnlyChanges(before: Config, after: Config): string[] {
  return RESTART_KEYS.filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));
}

/**
 * SIGHUP: read the config file again and reload the monitors from it (the same diff and
 * stop-loss as POST /monitors/reload). A config file that no longer loads, or a reload
 * that fails, keeps the running config and monitors, and says why.
 */
async function reloadOnHup(b: Boot, loader: Loader): Promise<void> {
  const { events } = b;
  let next: Config | undefined;
  if (b.configPath !== undefined) {
    try {
      next = (await loadConfig(b.configPath)).config;
    } catch (err) {
      const why = `SIGHUP: ${errorMessage(err)}; the running config and monitors are kept`;
      events.error('server-reload-error', '', why);
      return;
    }
    learnSecrets(next, [], events);
    const fixed = restartOnlyChanges(b.config, next);
    if (fixed.length > 0)
      events.notice('server-reload', '', `SIGHUP: ${fixed.join(', ')} changed: only a restart applies them`);
  }
  try {
    await loader.reload(next);
    const from = b.configPath === undefined ? '' : ` from ${b.configPath}`;
    events.notice('server-reload', '', `SIGHUP: monitors reloaded${from} (${loader.loaded().length} loaded)`);
  } catch (err) {
    const why = `SIGHUP: reload failed, the running config and monitors are kept: ${errorMessage(err)}`;
    events.error('server-reload-error', '', why);
  }
}

/** The most a graceful stop may take after the first signal. */
const STOP_DEADLINE_MS = 5_000;

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

/** `<n> on time, <m> late`: the level collections of the loaded monitors by timing. */
function collectionTiming(monitors: readonly LoadedMonitor[]): string {
  let onTime = 0;
  let late = 0;
  for (const m of monitors) {
    onTime += m.timing?.onTime ?? 0;
    late += m.timing?.late ?? 0;
  }
  return `${onTime} on time, ${late} late`;
}
/** Run: start the monitors and the API, then stop everything on a signal. */
async function run(
  b: Boot,
  loader: Loader,
  api: ReturnType<typeof buildApi> | undefined,
  readiness: Readiness,
): Promise<void> {
  const { events, serverStatus, status } = b;
  reportStrayErrors(events);
  events.info('server-run', '');
  serverStatus.set(ServerKey.server, 'starting monitors');
  const runStart = Date.now();
  status.setComputed(ServerKey.uptime, () => String(Math.floor((Date.now() - runStart) / 1000)));
  status.setComputed(ServerKey.collections, () => collectionTiming(loader.loaded()));

  let stopping = false;
  const bind = b.config.api?.bind ?? DEFAULT_API_BIND;
  const apiLoop = api
    ? listenUntilStopped(
        () => listenApi(api, bind),
        (msg) => events.error('server-api-error', '', msg),
        () => stopping,
      )
    : Promise.resolve();
  const probe = runProbe(b, loader, () => stopping);
  await loader.startAll();
  readiness.why = undefined;
  serverStatus.set(ServerKey.server, `running since ${formatTimestamp(new Date())}`);

  const signal = await untilSignal(events, () => reloadOnHup(b, loader));
  stopping = true;
  readiness.why = 'shutting down';
  events.notice('server-stopped', '', `caught ${signal}, stopping`);
  const disarm = armHardStop(events);
  await api?.close().catch(() => undefined);
  await apiLoop;
  await probe.close().catch(() => undefined);
  await loader.stopAll(STOP_DEADLINE_MS);
  disarm();
}

/** The exporter plan of mysqld_exporter's command line, checked against the collectors like any plan. */
function cliPlan(plan: Plan, collectors: CollectorRegistry): Plan {
  try {
    validatePlans([plan], (d) => (collectors.has(d) ? collectors.help(d) : undefined));
  } catch (err) {
    throw new BootError(errorMessage(err));
  }
  return plan;
}

/** mysqld_exporter's command line (exporter-cli.ts): help, version, or boot and run. */
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
  if (cmd.kind !== 'run') return 0; // --help and --version: answered before the imports (earlyAnswer)
  let preset: ExporterSetup;
  try {
    preset = await exporterSetup(cmd.args);
  } catch (err) {
    throw new BootError(errorMessage(err));
  }
  logFormat = preset.logFormat;
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
  return bootAndRun(opts, (await import('../collectors/builtin.js')).builtinCollectors());
}

async function main(argv: string[]): Promise<number> {
  if (isExporterCommandLine(argv, process.argv[1])) return mainExporter(argv);
  // --version and --print-domains: answered before the imports (earlyAnswer).
  const opts = parseArgs(sondeArgv(argv));
  logFormat = opts.logFormat;
  const collectors = (await import('../collectors/builtin.js')).builtinCollectors();
  const shard = shardOption(opts.shardFlag);
  if (shard) opts.shard = shard;
  return opts.check ? bootAndCheck(opts, collectors) : bootAndRun(opts, collectors);
}

/**
 * `--check`: boot without binding, then check every monitor (checkMonitor: connect, plans,
 * prepare) a few at a time; one line each on stdout, sorted by id, `OK <id>: plans …` or
 * `FAIL <id>: <step>: <cause>`. Exit 1 when any failed or none is configured.
 */
async function bootAndCheck(opts: Options, collectors: CollectorRegistry): Promise<number> {
  const { b, loader } = await boot(opts, collectors);
  const deps = monitorDeps(b);
  const monitors = loader.configs().sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
  const { checkMonitor } = await import('../monitor/check.js');
  const results = await mapLimit(monitors, CHECK_CONCURRENCY, (m) => checkMonitor(m, deps));
  for (const r of results) {
    process.stdout.write(
      r.error === ''
        ? `OK   ${r.monitorId}: plans ${r.plans.join(', ')}\n`
        : `FAIL ${r.monitorId}: ${r.error}\n`,
    );
  }
  const failed = results.filter((r) => r.error !== '').length;
  if (loader.shardSummary) process.stdout.write(`${loader.shardSummary}\n`);
  if (monitors.length === 0) process.stdout.write('FAIL no monitors configured\n');
  process.stdout.write(`${monitors.length - failed} of ${monitors.length} monitors OK\n`);
  return failed > 0 || monitors.length === 0 ? 1 : 0;
}

/** Monitors checked at once. */
const CHECK_CONCURRENCY = 4;

/** `fn` over `items`, at most `limit` at a time, results in input order. */
async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** Boot, then run until a signal (unless --run=false). */
async function bootAndRun(opts: Options, collectors: CollectorRegistry): Promise<number> {
  const bootStart = Date.now();
  const { b, loader } = await boot(opts, collectors);
  const readiness: Readiness = { why: 'starting monitors' };
  const api = makeApi(b, loader, readiness);
  b.events.info(
    'boot-success',
    '',
    `booted in ${formatDuration(Date.now() - bootStart)}, loaded ${loader.size} monitors`,
  );
  if (opts.run) await run(b, loader, api, readiness);
  return 0;
}

/** The log format once the command line is read: the boot failure line is printed in it. */
let logFormat: LogFormat = 'text';

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const text = errorMessage(err).replace(/[\r\n]+/g, ' ');
    if (logFormat === 'json')
      new EventLog({ format: 'json' }).error('boot-error', '', `server.Boot failed: ${text}`);
    else process.stderr.write(`${formatEventTime(new Date()).slice(0, 19)} server.Boot failed: ${text}\n`);
    process.exit(1);
  },
);
