#!/usr/bin/env node
/**
 * sonde CLI: parse flags, boot (load and validate everything), then run (start monitors
 * and the API) until a signal. The only place that wires concrete pieces together
 * (style.md); nothing imports bin/.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { Command, CommanderError, Option } from 'commander';
import type { Config, FinalMonitorConfig } from '../core/config.js';
import { errorMessage } from '../core/errors.js';
import type { Db } from '../core/db.js';
import { builtinCollectors } from '../collectors/builtin.js';
import { printDomains } from '../collectors/print.js';
import { loadConfig } from '../config/load.js';
import { finalizeMonitors, finalizePlansMonitor, monitorsEqual, validateMonitor } from '../config/monitor.js';
import { readMonitorFiles } from '../config/monitor-files.js';
import { buildConnection } from '../config/connection.js';
import { renderConfigJson, renderConfigYaml, renderMonitorsYaml } from '../config/render.js';
import { createDb } from '../db/pool.js';
import { Loader } from '../monitor/loader.js';
import { autoDetectLocal } from '../monitor/local.js';
import type { MonitorDeps } from '../monitor/monitor.js';
import { buildRuntime } from '../monitor/plan-runtime.js';
import { runHeartbeatWriter } from '../heartbeat/writer.js';
import { createScrapeReader } from '../monitor/scrape-reader.js';
import { startExporter } from '../exporter/server.js';
import { unsupportedFeature } from '../monitor/features.js';
import { PlanStore, printPlans } from '../plan/store.js';
import { freqWarnings, sortLevels } from '../plan/schedule.js';
import { buildApi, listenApi, parseBind } from '../server/api.js';
import { builtinSinks } from '../sinks/builtin.js';
import { StatusRegistry } from '../status/registry.js';
import { EventLog } from '../util/events.js';
import { formatDuration } from '../util/duration.js';
import { formatEventTime, formatTimestamp } from '../util/time.js';

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};
const VERSION = pkg.version;

/** Exit with one line on stderr (cli.md §3): no stack trace. */
class BootError extends Error {}

const BOOL_TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const BOOL_FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

function parseBool(text: string, what: string): boolean {
  if (BOOL_TRUE.has(text)) return true;
  if (BOOL_FALSE.has(text)) return false;
  throw new BootError(`Error parsing command line: invalid boolean value "${text}" for ${what}`);
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
  run: boolean;
  printConfig: boolean;
  printDomains: boolean;
  printMonitors: boolean;
  printPlans: boolean;
  version: boolean;
}

function parseArgs(argv: string[]): Options {
  const program = new Command('sonde')
    .usage('[options]')
    .helpOption('-h, --help', 'print this help and exit')
    .addOption(
      new Option(
        '--config <file>',
        'config file (default sonde.yaml, then blip.yaml; env SONDE_CONFIG, BLIP_CONFIG)',
      ),
    )
    .addOption(new Option('--debug', 'print debug lines to stderr (env SONDE_DEBUG, BLIP_DEBUG)'))
    .addOption(new Option('--no-debug').hideHelp())
    .addOption(new Option('--log', 'print info events to stdout (env SONDE_LOG, BLIP_LOG)'))
    .addOption(new Option('--no-log').hideHelp())
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
    .addOption(new Option('-v, --version', 'print the version and exit'))
    .allowExcessArguments(true)
    .exitOverride()
    .configureOutput({ writeErr: () => undefined, writeOut: (s) => process.stdout.write(s) })
    .addHelpText('after', `\nsonde v${VERSION}`);
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
  return {
    ...(config === undefined || config === '' ? {} : { config }),
    debug: flag('debug', 'DEBUG', false),
    log: flag('log', 'LOG', false),
    run: flag('run', 'RUN', true),
    printConfig: o.printConfig === true,
    printDomains: o.printDomains === true,
    printMonitors: o.printMonitors === true,
    printPlans: o.printPlans === true,
    version: o.version === true,
  };
}

/** Listen then close, so a busy api.bind fails the boot (config.md §4.1). */
async function testBind(bind: string): Promise<void> {
  const { host, port } = parseBind(bind);
  await new Promise<void>((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen({ host: host === '' ? undefined : host, port }, () => srv.close(() => resolve()));
  });
}

async function main(argv: string[]): Promise<number> {
  const opts = parseArgs(argv);
  if (opts.version) {
    process.stdout.write(`v${VERSION}\n`);
    return 0;
  }
  const collectors = builtinCollectors();
  if (opts.printDomains) {
    process.stdout.write(printDomains(collectors.domains().map((d) => collectors.help(d))));
    return 0;
  }

  const bootStart = Date.now();
  const events = new EventLog({ log: opts.log, debug: opts.debug });
  const status = new StatusRegistry();
  const server = status.serverWriter;
  const started = new Date();
  server.set('started', formatTimestamp(started));
  server.set('version', VERSION);
  server.set('server', 'booting');
  events.info('boot-start', '', `sonde ${VERSION}`);

  // --- boot: config
  server.set('server', 'boot: loading config');
  events.info('boot-config-loading', '');
  let config: Config;
  try {
    config = (await loadConfig(opts.config)).config;
    if (config.api?.disable !== true) {
      try {
        await testBind(config.api?.bind ?? '127.0.0.1:7522');
      } catch (err) {
        throw new Error(`api.bind: ${errorMessage(err)}`);
      }
    }
  } catch (err) {
    events.info('boot-config-invalid', '', errorMessage(err));
    throw new BootError(errorMessage(err));
  }
  events.info('boot-config-loaded', '');
  // Defensive scrubbing: every password sonde learns is masked in any line it prints.
  for (const pw of [config.mysql?.password, ...(config.monitors ?? []).map((m) => m.password)]) {
    if (pw) events.addSecret(pw);
  }
  const connect = async (cfg: FinalMonitorConfig, o?: { reload?: boolean }) => {
    const spec = await buildConnection(cfg, o);
    if (spec.password() !== '') events.addSecret(spec.password());
    return spec;
  };
  if (opts.printConfig) process.stdout.write(`${renderConfigYaml(config)}\n`);

  // --- boot: plans
  server.set('server', 'boot: loading plans');
  events.info('plans-load-shared', '');
  const help = (d: string) => (collectors.has(d) ? collectors.help(d) : undefined);
  const plans = new PlanStore();
  const sinks = builtinSinks();
  const dbOpts = (id: string) => ({
    reloadCredentials: undefined,
    onPasswordReloadError: (msg: string) => events.info('db-reload-password-error', id, msg),
  });
  try {
    let tableDb: (Db & { close(): Promise<void> }) | undefined;
    if (config.plans?.table) {
      const pm = finalizePlansMonitor(config);
      if (!pm) throw new Error('plans.table: Table set but Monitor is nil (set plans.monitor)');
      tableDb = createDb(await connect(pm), dbOpts('plans.monitor'));
    }
    try {
      await plans.loadShared(config, help, tableDb);
    } finally {
      await tableDb?.close();
    }
  } catch (err) {
    throw new BootError(errorMessage(err));
  }
  if (opts.printPlans) process.stdout.write(printPlans(plans.sharedPlans()));

  // --- boot: monitors
  server.set('server', 'boot: load monitors');
  const monitorDeps: MonitorDeps = {
    events,
    help,
    makeCollector: (domain, ctx) => collectors.make(domain, ctx),
    heartbeatWriter: (args) => runHeartbeatWriter(args),
    exporter: {
      createSource: ({ cfg: _cfg, ...args }) => createScrapeReader({ ...args, collectors }),
      start: (args) => startExporter(args),
    },
    buildConnection: (cfg, o) => connect(cfg, o),
    createDb: (spec, o) => createDb(spec, o),
    loadPlans: async (cfg: FinalMonitorConfig, db: Db) => {
      events.info('plans-load-monitor', cfg.id);
      const list = await plans.monitorPlans(cfg, db, help);
      return (name: string) => plans.lookup(cfg.id, list, name);
    },
    buildRuntime: (plan, cfg) => {
      for (const w of freqWarnings(sortLevels(plan)))
        events.info('plan-freq-warning', cfg.id, `${plan.name}: ${w}`);
      return buildRuntime(plan, cfg);
    },
  };
  const loader = new Loader({
    config,
    events,
    status,
    finalize: (ms) =>
      finalizeMonitors(ms, config, process.env, { warn: (msg) => events.error('monitors-warning', '', msg) }),
    validate: (m) => {
      validateMonitor(m);
      const unsupported = unsupportedFeature(m);
      if (unsupported) throw new Error(`monitor ${m.id}: ${unsupported}`);
    },
    equal: (a, b) => monitorsEqual(a, b),
    readMonitorFiles: (files) => readMonitorFiles(files),
    autoDetect: () =>
      autoDetectLocal(config, {
        finalize: (m) => {
          const [f] = finalizeMonitors([m], config);
          if (!f) throw new Error('auto-detect: no monitor');
          return f;
        },
        buildConnection: (cfg) => connect(cfg),
        createDb: (spec) => createDb(spec),
      }),
    makeSinks: (m, writer) => {
      const configured = Object.entries(m.sinks ?? {});
      const list = configured.length > 0 ? configured : [['log', {}] as [string, Record<string, string>]];
      return list.map(([name, options]) => {
        if (!sinks.has(name)) throw new Error(`sink ${name} not registered`);
        return sinks.create(name, {
          sinkName: name,
          monitorId: m.id,
          options,
          tags: m.tags ?? {},
          status: writer,
          events,
          ...(config.http?.proxy ? { httpProxy: config.http.proxy } : {}),
        });
      });
    },
    monitorDeps,
  });
  try {
    await loader.load({ boot: true });
  } catch (err) {
    throw new BootError(errorMessage(err));
  }
  if (opts.printMonitors) process.stdout.write(`${renderMonitorsYaml(loader.configs())}\n`);

  const api =
    config.api?.disable === true
      ? undefined
      : buildApi({
          control: loader,
          status,
          info: {
            version: VERSION,
            config,
            registered: () => ({ collectors: collectors.domains(), sinks: sinks.names() }),
            toggleDebug: () => {
              events.setDebug(!events.debugging);
              return events.debugging;
            },
          },
          renderConfig: { yaml: () => renderConfigYaml(config), json: () => renderConfigJson(config) },
          events,
        });
  events.info(
    'boot-success',
    '',
    `booted in ${formatDuration(Date.now() - bootStart)}, loaded ${loader.size} monitors`,
  );

  // --- run
  if (!opts.run) return 0;
  // Last line of defence: a bug in one monitor or sink must not take the agent (and every
  // other monitor) down. Each subsystem contains its own failures; this only reports.
  process.on('unhandledRejection', (reason) => {
    events.error('server-panic', '', `unhandled rejection: ${errorMessage(reason)}`);
  });
  process.on('uncaughtException', (err) => {
    events.error('server-panic', '', `uncaught exception: ${errorMessage(err)}`);
  });
  events.info('server-run', '');
  server.set('server', 'starting monitors');
  const runStart = Date.now();
  status.setComputed('uptime', () => String(Math.floor((Date.now() - runStart) / 1000)));

  let stopping = false;
  const apiLoop = (async () => {
    if (!api) return;
    const bind = config.api?.bind ?? '127.0.0.1:7522';
    while (!stopping) {
      try {
        await listenApi(api, bind);
        return;
      } catch (err) {
        events.error('server-api-error', '', errorMessage(err));
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  })();
  await loader.startAll();
  server.set('server', `running since ${formatTimestamp(new Date())}`);

  process.on('SIGUSR1', () => {
    events.setDebug(!events.debugging);
    process.stderr.write(`SIGUSR1 has set sonde.Debugging to ${String(events.debugging)}\n`);
  });
  await new Promise<void>((resolve) => {
    const onSignal = (): void => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      resolve();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  stopping = true;
  events.error('server-stopped', '', 'caught signal');
  await api?.close().catch(() => undefined);
  await apiLoop;
  await loader.stopAll(5000);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const text = errorMessage(err).replace(/[\r\n]+/g, ' ');
    process.stderr.write(`${formatEventTime(new Date()).slice(0, 19)} server.Boot failed: ${text}\n`);
    process.exit(1);
  },
);
