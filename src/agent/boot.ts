/**
 * The agent's boot steps and the pieces its run uses, wired to the concrete parts of sonde:
 * config, plans, monitors (through the loader), sinks, the API and the probe listener. The
 * embedding program's hooks and factories (options.ts) are applied here, each in the step
 * it replaces or extends, so that a hook's failure is reported as that step's failure.
 */
import { createServer } from 'node:net';
import { dirname } from 'node:path';
import { stringify as yamlStringify } from 'yaml';
import type { Config, FinalMonitorConfig, MonitorConfig } from '../core/config.js';
import { errorMessage } from '../core/errors.js';
import type { Db } from '../core/db.js';
import type { Events } from '../core/events.js';
import type { HighAvailability } from '../core/ha.js';
import type { Plan } from '../core/plan.js';
import type { Sink } from '../core/sink.js';
import type { StatusWriter } from '../core/status.js';
import { ServerKey } from '../core/status-keys.js';
import type { CollectorRegistry } from '../collectors/registry.js';
import { defaultConfig, loadConfig, parseConfig } from '../config/load.js';
import { finalizeMonitors, finalizePlansMonitor, monitorsEqual, validateMonitor } from '../config/monitor.js';
import { readMonitorFiles } from '../config/monitor-files.js';
import { monitorAddress } from '../config/connection.js';
import { buildConnection } from '../db/credentials.js';
import { renderConfigJson, renderConfigYaml } from '../config/render.js';
import { ConfigError } from '../config/errors.js';
import { createDb, type CreateDbOptions } from '../db/pool.js';
import type { ProbeHandle } from '../exporter/probe.js';
import type { CommandLineSelfMetrics } from '../exporter/process-metrics.js';
import { Loader, type LoadedMonitor, type LoaderDeps, type MonitorLoaderAws } from '../monitor/loader.js';
import { awsTargetOf, type MonitorDeps } from '../monitor/monitor.js';
import { autoDetectLocal } from '../monitor/local.js';
import type { Shard } from '../monitor/shard.js';
import { buildRuntime } from '../monitor/plan-runtime.js';
import { createScrapeReader } from '../exporter/scrape-reader.js';
import { probeTargets } from '../exporter/probe-targets.js';
import { unsupportedFeature } from '../monitor/features.js';
import { uiSource } from '../web/view.js';
import { parsePlan, validatePlans } from '../plan/parse.js';
import { loadPlugins } from '../plugins/load.js';
import { PlanStore, type HelpLookup } from '../plan/store.js';
import { didYouMean } from '../util/suggest.js';
import { freqWarnings, sortLevels } from '../plan/schedule.js';
import { buildApi, type ApiDeps } from '../server/api.js';
import type { SinkRegistry } from '../sinks/registry.js';
import type { SinkTranslator } from '../sinks/translators.js';
import { StatusRegistry } from '../status/registry.js';
import { sleep } from '../util/backoff.js';
import type { EventLog } from '../log/event-log.js';
import { TokenFile } from '../http/guard.js';
import { listenFailure, parseHostPort } from '../util/net.js';
import { packageVersion } from '../util/shipped.js';
import { formatTimestamp } from '../util/time.js';
import { loadWebConfig } from '../http/web-config.js';
import { isPublicUiPath, uiRoutes } from '../web/ui.js';
import type { AgentFactories, AgentHooks, PlanDocument } from './options.js';
import { fileErrorText, readRegularFileSync } from '../util/read-file.js';

/** sonde's version (package.json). */
export const VERSION = packageVersion();

/** A boot failure: the CLI exits 1 after printing its message on one line, no stack. */
export class BootError extends Error {}

/** What boot() is given: where the config comes from, the registries, hooks and printing steps. */
export interface BootOptions {
  /** The config file (`--config`); undefined: the default search. */
  config?: string;
  /** A config given as an object (library): checked like a file's content. */
  configObject?: Config;
  /** mysqld_exporter's command line: its config (already checked), exporter plan, secrets and allowed probe targets. */
  exporter?: {
    config: Config;
    plan: Plan;
    secrets: readonly string[];
    allowedTargets?: ((target: string) => boolean) | undefined;
  };
  /** `--check`: bind nothing, so do not test the listeners' addresses. */
  check?: boolean;
  shard?: Shard;
  collectors: CollectorRegistry;
  sinks: SinkRegistry;
  /** This agent's sink translators (built-in, factories'; plugins add theirs at boot). */
  translators: Map<string, SinkTranslator>;
  hooks?: AgentHooks;
  factories?: AgentFactories;
  ha?: HighAvailability;
  /** Told the config once loaded, and the shared plans once loaded (`--print-config`, `--print-plans`). */
  onConfig?: (config: Config) => void;
  onPlans?: (plans: Plan[]) => void;
  /** A running listener could not listen: one line naming the flag or key (see AgentOptions). */
  onListenFailure?: (message: string) => void;
}

/**
 * The config: the `loadConfig` hook's (given the built-in defaults), the object given, the
 * mysqld_exporter command line's, or the file. A hook's or object's config is checked by
 * the same strict decoding and validation as a file, so a bad key is named the same way.
 */
async function readConfig(opts: BootOptions): Promise<{ config: Config; path: string | undefined }> {
  const hook = opts.hooks?.loadConfig;
  if (hook) {
    return { config: checkedConfig(await hook(defaultConfig()), '<loadConfig hook>'), path: undefined };
  }
  if (opts.configObject)
    return { config: checkedConfig(opts.configObject, '<createAgent config>'), path: undefined };
  if (opts.exporter) return { config: opts.exporter.config, path: undefined };
  return loadConfig(opts.config);
}

/** A config object through the config file's decoding and validation; errors name `where` and the key. */
function checkedConfig(config: Config, where: string): Config {
  return parseConfig(yamlStringify(config), { path: where });
}

/** The `loadPlans` hook's plans, parsed like plan files (source `plugin`). */
function pluginPlans(docs: readonly PlanDocument[]): Plan[] {
  return docs.map((d) => {
    const text = typeof d.levels === 'string' ? d.levels : yamlStringify(d.levels);
    try {
      return parsePlan(d.name, 'plugin', text);
    } catch (err) {
      throw new Error(`invalid plan: ${d.name}: ${errorMessage(err)}`, { cause: err });
    }
  });
}

/** A pool's options with the `modifyDb` hook, told which monitor the pool is for. */
function withModifyDb<O extends CreateDbOptions & { monitorId?: string }>(
  hooks: AgentHooks,
  o: O,
): CreateDbOptions {
  const hook = hooks.modifyDb;
  const { monitorId, ...rest } = o;
  if (!hook) return rest;
  const ctx = { monitorId: monitorId ?? '' };
  return { ...rest, modifyOptions: (options) => hook(options, ctx) ?? options };
}

export const DEFAULT_API_BIND = '127.0.0.1:7522';

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
  o?: { reload?: boolean; authModule?: string; target?: { address: string; section: string } },
) => ReturnType<typeof buildConnection>;

/** What the boot steps share once the config is loaded. */
export interface Boot {
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
  /** The command line's process families, made once (the endpoint restarts with its monitor). */
  selfMetrics?: CommandLineSelfMetrics;
  /** The command line's `--probe.allowed-targets`: which targets `/probe` may reach; undefined: any. */
  allowedTargets?: (target: string) => boolean;
  hooks: AgentHooks;
  factories: AgentFactories;
  /** The HA hook; undefined: always active. */
  ha?: HighAvailability;
  translators: ReadonlyMap<string, SinkTranslator>;
  /** A running listener could not listen (BootOptions.onListenFailure). */
  onListenFailure?: (message: string) => void;
}

/** Options of a database handle made by the CLI: password reload failures become events. */
function dbOptions(events: Events, id: string) {
  return {
    reloadCredentials: undefined,
    onPasswordReloadError: (msg: string) => events.info('db-reload-password-error', id, msg),
  };
}

/** Load the config file and check api.bind is free; any failure ends the boot. */
async function bootConfig(opts: BootOptions, events: EventLog): Promise<{ config: Config; path?: string }> {
  events.info('boot-config-loading', '');
  let config: Config;
  let path: string | undefined;
  try {
    ({ config, path } = await readConfig(opts));
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
    // As Blip: a file that cannot be found, read or decoded is the boot's `boot-error`
    // (sent by the agent); a wrong value is the error event `boot-config-invalid`.
    if (!(err instanceof ConfigError && err.kind === 'load'))
      events.error('boot-config-invalid', '', errorMessage(err));
    throw new BootError(errorMessage(err));
  }
  events.info('boot-config-loaded', '');
  learnSecrets(config, opts.exporter?.secrets ?? [], events);
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
function scrubbingConnect(events: EventLog, aws: AgentFactories['awsConfig']): Connect {
  // Each unknown my.cnf key is told once per file and key (connections are built again and again).
  const warned = new Set<string>();
  const warn = (id: string) => (msg: string) => {
    if (warned.has(msg)) return;
    warned.add(msg);
    events.warn('mycnf-warning', id, msg);
  };
  return async (cfg, o) => {
    const spec = await buildConnection(cfg, { ...o, aws, monitorId: cfg.id, warn: warn(cfg.id) });
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
      tableDb = b.factories.db
        ? (await factoryDb(b.factories.db)(pm)).db
        : createDb(await b.connect(pm), dbOptions(b.events, 'plans.monitor'));
    }
    try {
      const hook = b.hooks.loadPlans;
      if (hook) b.plans.useShared(pluginPlans(await hook(b.config)), b.help);
      else await b.plans.loadShared(b.config, b.help, tableDb);
    } finally {
      await tableDb?.close();
    }
  } catch (err) {
    throw new BootError(errorMessage(err));
  }
}

/** `fn` called once per distinct message (a plan file re-read at each monitor start warns once). */
function onceEach(fn: (message: string) => void): (message: string) => void {
  const seen = new Set<string>();
  return (message) => {
    if (seen.has(message)) return;
    seen.add(message);
    fn(message);
  };
}

/** The `db` factory's connection, checked: a handle without the methods sonde calls is refused. */
function factoryDb(
  make: NonNullable<AgentFactories['db']>,
): (cfg: FinalMonitorConfig) => Promise<{ db: Db & { close(): Promise<void> }; dsn: string }> {
  return async (cfg) => {
    let made;
    try {
      made = await make(cfg);
    } catch (err) {
      throw new Error(`db factory: ${errorMessage(err)}`, { cause: err });
    }
    const db = made?.db as Partial<Db & { close(): Promise<void> }> | undefined;
    for (const m of ['query', 'serverInfo', 'ping', 'close'] as const)
      if (typeof db?.[m] !== 'function') throw new Error(`db factory: the handle has no ${m}() method`);
    return { db: made.db, dsn: typeof made.dsn === 'string' ? made.dsn : '' };
  };
}

/** Everything a monitor needs, wired to the concrete pieces. */
export function monitorDeps(b: Boot): MonitorDeps {
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
          aws: awsTargetOf(cfg, b.factories.awsConfig),
          collectors,
          session: settings.session,
          maxCollectors: settings.maxCollectors,
          ...(settings.queryTimeoutMs === undefined ? {} : { queryTimeoutMs: settings.queryTimeoutMs }),
        }),
      start: async ({ probeTarget, reload, ...args }) => {
        const { startExporter } = await import('../exporter/server.js');
        // mysqld_exporter's command line: its endpoint serves the process families and
        // mysqld_exporter's multi-target mode too (config files have the probe listener).
        if (b.exporterPlan === undefined) return startExporter({ ...args, ...(reload ? { reload } : {}) });
        const { commandLineSelfMetrics } = await import('../exporter/process-metrics.js');
        const self = (b.selfMetrics ??= commandLineSelfMetrics(VERSION));
        return startExporter({
          ...args,
          selfMetrics: () => self.samples(),
          ...(reload === undefined
            ? {}
            : {
                reload: async () => {
                  const r = await reload();
                  self.reloaded(r.error === undefined);
                  return r;
                },
              }),
          ...(probeTarget === undefined ? {} : { probeTarget }),
          ...(b.allowedTargets === undefined ? {} : { allowedTargets: b.allowedTargets }),
        });
      },
    },
    buildConnection: (cfg, o) => b.connect(cfg, o),
    createDb: (spec, o) => createDb(spec, withModifyDb(b.hooks, o)),
    ...(b.factories.db ? { makeDb: factoryDb(b.factories.db) } : {}),
    ...(b.factories.awsConfig ? { awsConfig: b.factories.awsConfig } : {}),
    ...(b.hooks.transformMetrics ? { transformMetrics: b.hooks.transformMetrics } : {}),
    ...(b.ha ? { ha: b.ha } : {}),
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
    ...(b.onListenFailure ? { exporterListenFailed: exporterListenFailed(b, b.onListenFailure) } : {}),
  };
}

/**
 * The line for an exporter listener that cannot listen, naming what sets its address:
 * `--web.listen-address` on mysqld_exporter's command line, else the config key.
 */
function exporterListenFailed(
  b: Boot,
  report: (message: string) => void,
): (id: string, err: unknown) => void {
  const key = b.exporterPlan !== undefined ? '--web.listen-address' : 'exporter.flags.web.listen-address';
  return (id, err) => report(`${key}: ${errorMessage(err)} (monitor ${id})`);
}

/** A monitor's sinks: those configured, or the log sink when none is. */
async function makeSinks(b: Boot, m: FinalMonitorConfig, writer: StatusWriter): Promise<Sink[]> {
  const configured = Object.entries(m.sinks ?? {});
  const list = configured.length > 0 ? configured : [['log', {}] as [string, Record<string, string>]];
  const sinks: Sink[] = [];
  for (const [name, options] of list) {
    if (!b.sinks.has(name))
      throw new Error(`sink ${name} not registered${didYouMean(name, b.sinks.names())}`);
    const tags = m.tags ?? {};
    const httpClient = b.factories.httpClient?.({ sinkName: name, monitorId: m.id, options, tags });
    sinks.push(
      await b.sinks.create(name, {
        sinkName: name,
        monitorId: m.id,
        options,
        tags,
        status: writer,
        events: b.events,
        ...(b.config.http?.proxy ? { httpProxy: b.config.http.proxy } : {}),
        ...(httpClient ? { httpClient } : {}),
        monitorAddress: monitorAddress(m),
        translators: b.translators,
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
async function readRdsMonitors(
  events: EventLog,
  aws: MonitorLoaderAws,
  factory: AgentFactories['awsConfig'],
): Promise<MonitorConfig[]> {
  const [{ discoverRdsMonitors, listDbInstances }, { imdsRegion }] = await Promise.all([
    import('../aws/rds-discovery.js'),
    import('../aws/region.js'),
  ]);
  return discoverRdsMonitors(aws, {
    autoRegion: imdsRegion,
    list: (region) => listDbInstances(region, factory),
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
    readRdsMonitors: async (aws) => readRdsMonitors(events, aws, b.factories.awsConfig),
    autoDetect: autoDetect(b),
    makeSinks: (m, writer) => makeSinks(b, m, writer),
    monitorDeps: monitorDeps(b),
    ...(b.hooks.loadMonitors ? { loadMonitors: b.hooks.loadMonitors } : {}),
    ...(b.hooks.startMonitor ? { startMonitor: b.hooks.startMonitor } : {}),
  });
}

/** A file named by a config key, read at boot; an error names the key and the file. */
function readKeyFile(key: string, path: string): Buffer {
  try {
    return readRegularFileSync(path);
  } catch (err) {
    throw new BootError(`${key}: cannot read ${path}: ${fileErrorText(err)}`);
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
export interface Readiness {
  why: string | undefined;
}

/** The HTTP API (not listening yet), or undefined when api.disable is set. */
export function makeApi(
  b: Boot,
  loader: Loader,
  readiness: Readiness,
): ReturnType<typeof buildApi> | undefined {
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

/** The config's `plugins`, into the registries; relative entries start from the config file's directory. */
async function bootPlugins(
  config: Config,
  configPath: string | undefined,
  opts: BootOptions,
  events: EventLog,
) {
  const baseDir = configPath === undefined ? process.cwd() : dirname(configPath);
  try {
    const loaded = await loadPlugins(config.plugins ?? [], {
      baseDir,
      collectors: opts.collectors,
      sinks: opts.sinks,
      translators: opts.translators,
    });
    for (const p of loaded)
      events.info(
        'boot-plugin-loaded',
        '',
        `${p.name}: ${[...p.collectors, ...p.sinks, ...p.translators].join(', ')}`,
      );
  } catch (err) {
    throw new BootError(errorMessage(err));
  }
}

/** Boot: config, plans, monitors, in that order. Nothing runs yet. */
export async function boot(opts: BootOptions, events: EventLog): Promise<{ b: Boot; loader: Loader }> {
  const status = new StatusRegistry();
  const serverStatus = status.serverWriter;
  serverStatus.set(ServerKey.started, formatTimestamp(new Date()));
  serverStatus.set(ServerKey.version, VERSION);
  serverStatus.set(ServerKey.server, 'booting');
  events.info('boot-start', '', `sonde ${VERSION}`);

  serverStatus.set(ServerKey.server, 'boot: loading config');
  const { config, path: configPath } = await bootConfig(opts, events);
  opts.onConfig?.(config);
  const collectors = opts.collectors;
  await bootPlugins(config, configPath, opts, events);
  const b: Boot = {
    events,
    status,
    serverStatus,
    config,
    ...(configPath === undefined ? {} : { configPath }),
    connect: scrubbingConnect(events, opts.factories?.awsConfig),
    collectors,
    sinks: opts.sinks,
    plans: new PlanStore({
      warn: onceEach((m) => events.notice('plan-warning', '', m)),
      domains: () => collectors.domains(),
    }),
    help: (d) => (collectors.has(d) ? collectors.help(d) : undefined),
    ...(opts.exporter ? { exporterPlan: cliPlan(opts.exporter.plan, collectors) } : {}),
    ...(opts.exporter?.allowedTargets ? { allowedTargets: opts.exporter.allowedTargets } : {}),
    hooks: opts.hooks ?? {},
    factories: opts.factories ?? {},
    ...(opts.ha ? { ha: opts.ha } : {}),
    translators: opts.translators,
    ...(opts.onListenFailure ? { onListenFailure: opts.onListenFailure } : {}),
  };

  serverStatus.set(ServerKey.server, 'boot: loading plans');
  await bootPlans(b);
  opts.onPlans?.(b.plans.sharedPlans());

  serverStatus.set(ServerKey.server, 'boot: load monitors');
  const loader = makeLoader(b, opts.shard);
  try {
    await loader.load({ boot: true });
  } catch (err) {
    throw new BootError(errorMessage(err));
  }
  checkExporterFiles(loader);
  return { b, loader };
}

/** Keep trying to listen (every second) until it works or `stopping()` says to give up. */
export async function listenUntilStopped(
  listen: () => Promise<unknown>,
  onError: (message: string) => void,
  stopping: () => boolean,
  fatal?: { key: string; report: (message: string) => void },
): Promise<void> {
  while (!stopping()) {
    try {
      await listen();
      return;
    } catch (err) {
      // An address that cannot be listened on ends the agent when its owner asks for that.
      const cannot = fatal === undefined ? undefined : listenFailure(err);
      if (fatal !== undefined && cannot !== undefined) {
        fatal.report(`${fatal.key}: ${errorMessage(cannot)}`);
        return;
      }
      onError(errorMessage(err));
      await sleep(1000);
    }
  }
}

/** The probe listener, when `probe.bind` is set: listening (retried every second) until the stop. */
export function runProbe(
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
    b.onListenFailure ? { key: 'probe.bind', report: b.onListenFailure } : undefined,
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
export async function reloadConfig(b: Boot, loader: Loader): Promise<void> {
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
    const before = new Set(loader.loaded());
    await loader.reload(next);
    // Monitors kept as they were read their connection settings (my.cnf, password and TLS
    // files) again, as POST /-/reload does; one that cannot keeps its running settings.
    const errors = await Promise.all(
      loader.loaded().map(async (m) => (before.has(m) ? m.reloadConnection?.('SIGHUP') : undefined)),
    );
    b.selfMetrics?.reloaded(errors.every((e) => e === undefined));
    const from = b.configPath === undefined ? '' : ` from ${b.configPath}`;
    events.notice('server-reload', '', `SIGHUP: monitors reloaded${from} (${loader.loaded().length} loaded)`);
  } catch (err) {
    const why = `SIGHUP: reload failed, the running config and monitors are kept: ${errorMessage(err)}`;
    events.error('server-reload-error', '', why);
  }
}

/** `<n> on time, <m> late`: the level collections of the loaded monitors by timing. */
export function collectionTiming(monitors: readonly LoadedMonitor[]): string {
  let onTime = 0;
  let late = 0;
  for (const m of monitors) {
    onTime += m.timing?.onTime ?? 0;
    late += m.timing?.late ?? 0;
  }
  return `${onTime} on time, ${late} late`;
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
