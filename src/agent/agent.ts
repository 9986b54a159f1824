/**
 * sonde as a library: `createAgent(options)` returns an agent that the caller boots, starts
 * and stops. The command line (bin/sonde.ts) is one user of it: it parses flags, prints what
 * they ask for and turns signals into `reload()` and `stop()`.
 *
 *     const agent = createAgent({ config: 'sonde.yaml', hooks: { … } });
 *     await agent.boot();   // config, plans, monitors loaded; nothing runs yet
 *     await agent.start();  // monitors collect, the API listens
 *     …
 *     await agent.stop();
 */
import type { Config, FinalMonitorConfig } from '../core/config.js';
import type { HighAvailability } from '../core/ha.js';
import { errorMessage } from '../core/errors.js';
import type { Plan } from '../core/plan.js';
import { healthSummary, healthText } from '../core/health.js';
import { MonitorKey, ServerKey } from '../core/status-keys.js';
import { builtinCollectors } from '../collectors/builtin.js';
import type { CollectorRegistry } from '../collectors/registry.js';
import { checkMonitor, type CheckResult } from '../monitor/check.js';
import type { Loader, LoadedMonitor } from '../monitor/loader.js';
import type { Shard } from '../monitor/shard.js';
import { listenApi } from '../server/api.js';
import { builtinSinks } from '../sinks/builtin.js';
import type { SinkRegistry } from '../sinks/registry.js';
import { sinkTranslators, type SinkTranslator } from '../sinks/translators.js';
import type { StatusRegistry } from '../status/registry.js';
import { EventLog, type EventLogOptions } from '../log/event-log.js';
import { formatDuration } from '../util/duration.js';
import { formatTimestamp } from '../util/time.js';
import { descriptorsNeeded, openFilesLimit } from '../util/fd-limit.js';
import { POOL_SIZE } from '../db/pool.js';
import {
  boot,
  BootError,
  collectionTiming,
  DEFAULT_API_BIND,
  listenUntilStopped,
  makeApi,
  monitorDeps,
  reloadConfig,
  runProbe,
  type Boot,
  type Readiness,
} from './boot.js';
import type { AgentFactories, AgentHooks } from './options.js';

export interface AgentOptions {
  /**
   * The config: a file path, or a config object (the YAML file's content as an object),
   * checked like a file. Default: the first of `./sonde.yaml`, `./blip.yaml`,
   * `/etc/sonde/sonde.yaml`, else built-in defaults. The `loadConfig` hook wins over both.
   */
  config?: string | Config;
  hooks?: AgentHooks;
  factories?: AgentFactories;
  /** Whether this agent is the active one of a group (docs/ha.md); default always active. */
  ha?: HighAvailability;
  /** Output and levels of the agent's event lines (default: error events on stderr, as the CLI). */
  log?: EventLogOptions;
  /** Keep only this shard of the monitors (`--shard i/n`). */
  shard?: Shard;
  /** Check every monitor instead of running: bind nothing (`--check`). */
  check?: boolean;
  /** mysqld_exporter's command line, as the CLI builds it: config, exporter plan, secrets. */
  exporter?: {
    config: Config;
    plan: Plan;
    secrets: readonly string[];
    /** `--probe.allowed-targets`: which targets the endpoint's `/probe` may reach; undefined: any. */
    allowedTargets?: ((target: string) => boolean) | undefined;
  };
  /** Called once the config is loaded and once the shared plans are (`--print-config`, `--print-plans`). */
  onConfig?: (config: Config) => void;
  onPlans?: (plans: Plan[]) => void;
  /**
   * A listener could not listen once running (a monitor's exporter address is taken or not
   * allowed): the message names the flag or key, e.g.
   * `exporter.flags.web.listen-address: listen EADDRINUSE: address already in use 127.0.0.1:9104 (monitor db1)`.
   * The CLI stops and exits 1 with that line, as mysqld_exporter does; without this option the
   * monitor reports it in its status and retries.
   */
  onListenFailure?: (message: string) => void;
}

/** The most a graceful stop waits for the monitors. */
export const STOP_DEADLINE_MS = 5_000;

/** A booted agent's loaded pieces. */
interface Booted {
  b: Boot;
  loader: Loader;
  api: ReturnType<typeof makeApi>;
  readiness: Readiness;
}

/** A running agent's listeners. */
interface Running {
  state: { stopping: boolean };
  apiLoop: Promise<void>;
  probe: ReturnType<typeof runProbe>;
}

export class Agent {
  /** The agent's events: printed as configured by `log`, and given to `events.subscribe()` listeners. */
  readonly events: EventLog;
  readonly #opts: AgentOptions;
  #booted: Booted | undefined;
  #running: Running | undefined;
  #stopped = false;

  constructor(opts: AgentOptions = {}) {
    this.#opts = opts;
    this.events = new EventLog(opts.log ?? {});
  }

  /** The config the monitors run on (after boot). */
  get config(): Config {
    return this.#get().loader.config;
  }

  /** The loaded monitors, sorted by id (after boot). */
  monitors(): LoadedMonitor[] {
    return this.#get().loader.loaded();
  }

  /** The finalized configs of the loaded monitors (after boot). */
  monitorConfigs(): FinalMonitorConfig[] {
    return this.#get().loader.configs();
  }

  /** `shard i/n kept k of m monitors`, when sharded. */
  get shardSummary(): string | undefined {
    return this.#get().loader.shardSummary;
  }

  /** The status the API shows (`GET /status`, `GET /status/monitors`). */
  get status(): StatusRegistry {
    return this.#get().b.status;
  }

  #get(): Booted {
    if (this.#booted === undefined) throw new Error('the agent is not booted: call boot() first');
    return this.#booted;
  }

  /**
   * Load the config, register the factories' collectors and sinks, load the shared plans
   * and the monitors, and build the API. Nothing connects or listens yet. A failure emits
   * `boot-error` and rejects with one line naming the step's file or key.
   */
  async boot(): Promise<void> {
    if (this.#booted !== undefined) throw new Error('the agent is already booted');
    const start = Date.now();
    try {
      const regs = await registries(this.#opts.factories);
      const { b, loader } = await boot(this.#bootOptions(regs), this.events);
      const readiness: Readiness = { why: 'starting monitors' };
      const api = this.#opts.check === true ? undefined : makeApi(b, loader, readiness);
      this.#booted = { b, loader, api, readiness };
      const took = formatDuration(Date.now() - start);
      this.events.info('boot-success', '', `booted in ${took}, loaded ${loader.size} monitors`);
      this.#checkOpenFilesLimit(loader.size);
    } catch (err) {
      this.events.info('boot-error', '', errorMessage(err));
      throw err instanceof BootError ? err : new BootError(errorMessage(err), { cause: err });
    }
  }

  /**
   * An error event at boot when the limit on open files is below what the monitors need:
   * some would fail with EMFILE (they retry, and recover once descriptors are free).
   */
  #checkOpenFilesLimit(monitors: number): void {
    const limit = openFilesLimit();
    const need = descriptorsNeeded(monitors, POOL_SIZE);
    if (limit === undefined || limit.soft >= need) return;
    this.events.error(
      'boot-fd-limit',
      '',
      `the limit on open files is ${limit.soft} (hard ${limit.hard}); ${monitors} monitors need about ${need}: raise it (LimitNOFILE= in the systemd unit, ulimit -n, or the container's nofile ulimit)`,
    );
  }

  #bootOptions(regs: Awaited<ReturnType<typeof registries>>): Parameters<typeof boot>[0] {
    const o = this.#opts;
    return {
      ...(typeof o.config === 'string' ? { config: o.config } : {}),
      ...(typeof o.config === 'object' ? { configObject: o.config } : {}),
      ...(o.exporter ? { exporter: o.exporter } : {}),
      ...(o.check === true ? { check: true } : {}),
      ...(o.shard ? { shard: o.shard } : {}),
      ...(o.hooks ? { hooks: o.hooks } : {}),
      ...(o.factories ? { factories: o.factories } : {}),
      ...(o.ha ? { ha: o.ha } : {}),
      ...(o.onConfig ? { onConfig: o.onConfig } : {}),
      ...(o.onPlans ? { onPlans: o.onPlans } : {}),
      ...(o.onListenFailure ? { onListenFailure: o.onListenFailure } : {}),
      ...regs,
    };
  }

  /**
   * Start the monitors (paced) and the API and probe listeners (retried every second
   * while their address is taken). Resolves once every monitor was started.
   */
  async start(): Promise<void> {
    const { b, loader, api, readiness } = this.#get();
    if (this.#running !== undefined || this.#stopped)
      throw new Error('the agent is already started or stopped');
    const { events, serverStatus, status } = b;
    events.info('server-run', '');
    serverStatus.set(ServerKey.server, 'starting monitors');
    const runStart = Date.now();
    status.setComputed(ServerKey.uptime, () => String(Math.floor((Date.now() - runStart) / 1000)));
    status.setComputed(ServerKey.collections, () => collectionTiming(loader.loaded()));
    status.setMonitorComputed(MonitorKey.health, healthText);
    status.setComputed(ServerKey.monitorsHealth, () => healthSummary(status.monitors()));
    const state = { stopping: false };
    const bind = b.config.api?.bind ?? DEFAULT_API_BIND;
    const apiLoop = api
      ? listenUntilStopped(
          () => listenApi(api, bind),
          (msg) => events.error('server-api-error', '', msg),
          () => state.stopping,
          b.onListenFailure ? { key: 'api.bind', report: b.onListenFailure } : undefined,
        )
      : Promise.resolve();
    this.#running = { state, apiLoop, probe: runProbe(b, loader, () => state.stopping) };
    await loader.startAll();
    readiness.why = undefined;
    serverStatus.set(ServerKey.server, `running since ${formatTimestamp(new Date())}`);
  }

  /**
   * Read the config file again (when the agent booted from one) and reload the monitors
   * with the diff and stop-loss of `POST /monitors/reload`; what SIGHUP does. A failure
   * keeps the running config and monitors and is reported as an event, never thrown.
   */
  async reload(): Promise<void> {
    const { b, loader } = this.#get();
    await reloadConfig(b, loader);
  }

  /**
   * Stop: the API and probe listeners close, then every monitor stops (bounded by
   * `deadlineMs`, default 5 s) and the sinks close. Safe to call twice.
   */
  async stop(deadlineMs = STOP_DEADLINE_MS): Promise<void> {
    const booted = this.#booted;
    if (booted === undefined || this.#stopped) return;
    this.#stopped = true;
    booted.readiness.why = 'shutting down';
    const running = this.#running;
    if (running !== undefined) {
      running.state.stopping = true;
      await booted.api?.close().catch(() => undefined);
      await running.apiLoop;
      await running.probe.close().catch(() => undefined);
    }
    // Booted but never started: no monitor runs, but the loaded monitors' sinks are open.
    await booted.loader.stopAll(deadlineMs);
  }

  /** What `--check` runs: each monitor once (connect, plans, prepare), a few at a time. */
  async check(concurrency = 4): Promise<CheckResult[]> {
    const { b, loader } = this.#get();
    const deps = monitorDeps(b);
    const monitors = loader.configs().sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
    return mapLimit(monitors, concurrency, (m) => checkMonitor(m, deps));
  }
}

/** A new agent; nothing happens until `boot()`. */
export function createAgent(options: AgentOptions = {}): Agent {
  return new Agent(options);
}

/** The built-in collectors and sinks, plus the factories' own; a name taken twice is a boot error. */
async function registries(
  factories: AgentFactories | undefined,
): Promise<{ collectors: CollectorRegistry; sinks: SinkRegistry; translators: Map<string, SinkTranslator> }> {
  const collectors = builtinCollectors();
  const sinks = builtinSinks();
  // This agent's own translators: two agents in one process may register the same name.
  const translators = new Map(sinkTranslators);
  try {
    for (const c of factories?.collectors ?? []) collectors.register(c);
    for (const s of factories?.sinks ?? []) sinks.register(s);
    for (const [name, t] of Object.entries(factories?.translators ?? {})) {
      if (translators.has(name)) throw new Error(`sink translator ${name} already registered`);
      translators.set(name, t);
    }
  } catch (err) {
    throw new BootError(`factories: ${errorMessage(err)}`);
  }
  return { collectors, sinks, translators };
}

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
