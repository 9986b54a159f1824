/**
 * The monitor loader: reads every monitor source (config, monitor files, RDS discovery, local
 * auto-detection), finalizes the monitors, keeps this agent's shard of them (when sharded),
 * diffs them against what is loaded, applies stop-loss, then adds, removes and replaces
 * monitors. It is also the MonitorControl the
 * HTTP API drives.
 */
import type { Config, FinalMonitorConfig, MonitorConfig, MonitorLoaderConfig } from '../core/config.js';
import type { MonitorControl } from '../core/control.js';
import type { Events } from '../core/events.js';
import type { Sink } from '../core/sink.js';
import type { StatusWriter } from '../core/status.js';
import { SondeError, errorMessage } from '../core/errors.js';
import { MonitorKey, ServerKey } from '../core/status-keys.js';
import { listedDsn } from '../config/connection.js';
import type { StatusRegistry } from '../status/registry.js';
import { formatTimestamp } from '../util/time.js';
import { sleep } from '../util/backoff.js';
import type { MonitorDeps } from './monitor.js';
import { Monitor } from './monitor.js';
import { stopLossCheck } from './stop-loss.js';
import { detectionOf } from './local.js';
import { formatShard, inShard, type Shard } from './shard.js';

/** The `monitor-loader.aws` section: regions and the instance filters. */
export type MonitorLoaderAws = NonNullable<MonitorLoaderConfig['aws']> & { regions: string[] };

export interface LoaderDeps {
  /** The config of the first load; a reload may bring a newer one (see reload()). */
  config: Config;
  events: Events;
  status: StatusRegistry;
  /** Inheritance from `config`, interpolation, id derivation, duplicate check. */
  finalize(monitors: MonitorConfig[], config: Config): FinalMonitorConfig[];
  /** Per-monitor validation; throws `monitor <id>: …`. */
  validate(m: FinalMonitorConfig): void;
  equal(a: FinalMonitorConfig, b: FinalMonitorConfig): boolean;
  readMonitorFiles(files: string[]): Promise<MonitorConfig[]>;
  /**
   * RDS discovery (`monitor-loader.aws`): the DB instances of the listed regions as monitors;
   * rejects with a one-line error naming the region and the call. Without it, a config
   * listing regions fails to load.
   */
  readRdsMonitors?: (aws: MonitorLoaderAws) => Promise<MonitorConfig[]>;
  /** Local auto-detect under `config`: one monitor with id `localhost`, or none. */
  autoDetect(config: Config): Promise<MonitorConfig | undefined>;
  /**
   * Build the monitor's sinks (a sink's implementation may be imported first); throws or
   * rejects with `sink <name> not registered` etc.
   */
  makeSinks(m: FinalMonitorConfig, status: StatusWriter): Sink[] | Promise<Sink[]>;
  monitorDeps: MonitorDeps;
  /** Build a monitor (tests pass a fake); default `new Monitor`. */
  makeMonitor?: (
    config: FinalMonitorConfig,
    sinks: Sink[],
    status: StatusWriter,
    deps: MonitorDeps,
  ) => LoadedMonitor;
  /** The pause between starts and the shutdown bound (tests pass one that does not wait). */
  sleep?: (ms: number) => Promise<unknown>;
  /** The redacted DSN a monitor is listed with before it starts; default listedDsn. */
  listDsn?: (m: FinalMonitorConfig) => string;
  /** `--shard i/n`: keep only the monitors whose id hashes into shard i of n (shard.ts). */
  shard?: Shard;
  /**
   * The embedding program's `loadMonitors` hook: when set, the monitors come from it instead
   * of the config's monitors, files, RDS discovery and local auto-detection. What it returns
   * goes through the same finalize, validation, shard, diff and stop-loss; a throw fails the
   * load like an unreadable monitor file.
   */
  loadMonitors?: (config: Config) => MonitorConfig[] | Promise<MonitorConfig[]>;
  /**
   * The `startMonitor` hook: asked before the loader starts a monitor (boot and reloads;
   * not `POST /monitors/start`); false leaves it loaded and stopped. A throw counts as false
   * and is reported (event `monitor-error`).
   */
  startMonitor?: (config: FinalMonitorConfig) => boolean | Promise<boolean>;
}

/** What the loader uses of a monitor; a monitor without `probe` and `tally` cannot be probed. */
export type LoadedMonitor = Pick<Monitor, 'id' | 'config' | 'dsn' | 'running' | 'start' | 'stop'> &
  Partial<Pick<Monitor, 'probe' | 'tally' | 'timing' | 'reloadConnection'>>;

/** Pause between starting monitors: 1000/n ms clamped to [20, 100]; 0 for n ≤ 1. */
export function startPauseMs(n: number): number {
  if (n <= 1) return 0;
  return Math.min(100, Math.max(20, Math.floor(1000 / n)));
}

interface Loaded {
  monitor: LoadedMonitor;
  sinks: Sink[];
  /** the redacted DSN from the config, shown until the monitor has its own */
  dsn: string;
}

export class Loader implements MonitorControl {
  readonly #deps: LoaderDeps;
  readonly #loaded = new Map<string, Loaded>();
  /**
   * ids the loader has started. API start/stop does not change this set, so a monitor
   * stopped through the API stays stopped across reloads (as in Blip).
   */
  readonly #started = new Set<string>();
  /** one load at a time */
  #busy: Promise<unknown> = Promise.resolve();
  /** The config the monitors were last loaded from. */
  #config: Config;

  /** How many monitors the last load's shard kept, of how many read; undefined unsharded. */
  #shardKept: { kept: number; of: number } | undefined;

  constructor(deps: LoaderDeps) {
    this.#deps = deps;
    this.#config = deps.config;
    if (deps.shard) deps.status.serverWriter.set(ServerKey.shard, formatShard(deps.shard));
  }

  /** `shard 1/3 kept 10 of 30 monitors` after a sharded load; undefined when not sharded. */
  get shardSummary(): string | undefined {
    const { shard } = this.#deps;
    if (!shard || !this.#shardKept) return undefined;
    return `shard ${formatShard(shard)} kept ${this.#shardKept.kept} of ${this.#shardKept.of} monitors`;
  }

  #sleep(ms: number): Promise<unknown> {
    return (this.#deps.sleep ?? sleep)(ms);
  }

  /** The config the loaded monitors come from: the boot config, or the last good reload's. */
  get config(): Config {
    return this.#config;
  }

  get size(): number {
    return this.#loaded.size;
  }

  /** Finalized configs of the loaded monitors (for --print-monitors). */
  configs(): FinalMonitorConfig[] {
    return [...this.#loaded.values()].map((l) => l.monitor.config);
  }

  /** The loaded monitors, sorted by id. */
  loaded(): LoadedMonitor[] {
    return [...this.#loaded.keys()].sort().flatMap((id) => {
      const l = this.#loaded.get(id);
      return l === undefined ? [] : [l.monitor];
    });
  }

  monitors(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const id of [...this.#loaded.keys()].sort()) {
      const l = this.#loaded.get(id);
      out[id] = l?.monitor.dsn || l?.dsn || '';
    }
    return out;
  }

  /** Read all sources and finalize; any error fails the whole load. */
  async #read(config: Config): Promise<FinalMonitorConfig[]> {
    const raw = await this.#readRaw(config);
    const finals = this.#deps.finalize(raw, config);
    for (const m of finals) this.#deps.validate(m);
    return this.#keepShard(finals);
  }

  /** The monitors of every source, before finalize: the hook's, or the config's sources. */
  async #readRaw(config: Config): Promise<MonitorConfig[]> {
    const { status, loadMonitors } = this.#deps;
    const serverStatus = status.serverWriter;
    if (loadMonitors !== undefined) {
      serverStatus.set(ServerKey.monitorLoader, 'loading from plugin');
      return [...(await loadMonitors(config))];
    }
    const raw: MonitorConfig[] = [...(config.monitors ?? [])];
    const ml = config['monitor-loader'] ?? {};
    if ((ml.files ?? []).length > 0) {
      serverStatus.set(ServerKey.monitorLoader, 'loading from files');
      raw.push(...(await this.#deps.readMonitorFiles(ml.files ?? [])));
    }
    const regions = ml.aws?.regions ?? [];
    if (regions.length > 0) {
      const read = this.#deps.readRdsMonitors;
      if (read === undefined) throw new Error('monitor-loader.aws.regions: RDS discovery is not available');
      serverStatus.set(ServerKey.monitorLoader, `loading from AWS RDS (${regions.join(', ')})`);
      raw.push(...(await read({ ...ml.aws, regions })));
    }
    if (raw.length === 0 && ml.local?.['disable-auto'] !== true) {
      serverStatus.set(ServerKey.monitorLoader, 'auto-detect local');
      const local = await this.#deps.autoDetect(config);
      // Say what was chosen and why (several local servers may answer), or that none did.
      const why = local === undefined ? 'no server answered' : `chose ${detectionOf(local) ?? local.id}`;
      serverStatus.set(ServerKey.monitorLoader, `auto-detect local: ${why}`);
      this.#deps.events.info('monitors-autodetect', local?.id ?? '', why);
      if (local) raw.push(local);
    }
    return raw;
  }

  /**
   * This agent's shard of every monitor read, so that the diff, stop-loss and start see only
   * the agent's own monitors. All of them were validated first: a bad monitor fails every
   * agent alike, whichever shard it falls in.
   */
  #keepShard(finals: FinalMonitorConfig[]): FinalMonitorConfig[] {
    const { shard, events } = this.#deps;
    if (!shard) return finals;
    const kept = finals.filter((m) => inShard(m.id, shard));
    this.#shardKept = { kept: kept.length, of: finals.length };
    events.info('monitors-shard', '', this.shardSummary);
    return kept;
  }

  /**
   * Load (boot) or reload: read, diff, stop-loss, apply. Throws SondeError RELOAD_FAILED
   * or STOP_LOSS; on error nothing changes. Does not start monitors (see startAll).
   */
  async load(opts: { boot?: boolean; config?: Config } = {}): Promise<void> {
    const run = this.#busy.then(() => this.#load(opts.boot === true, opts.config ?? this.#config));
    this.#busy = run.catch(() => undefined);
    return run;
  }

  async #load(boot: boolean, config: Config): Promise<void> {
    const { status, events } = this.#deps;
    const serverStatus = status.serverWriter;
    events.info('monitors-loading', '');
    let added = 0;
    let removed = 0;
    let changed = 0;
    const summary = (): void =>
      serverStatus.set(
        ServerKey.monitorLoader,
        `added: ${added} removed: ${removed} changed: ${changed} on ${formatTimestamp(new Date())}`,
      );
    try {
      const finals = await this.#read(config);
      const next = new Map(finals.map((m) => [m.id, m]));
      const toAdd: FinalMonitorConfig[] = [];
      const toRemove: string[] = [];
      for (const m of finals) {
        const cur = this.#loaded.get(m.id);
        if (!cur) toAdd.push(m);
        else if (!this.#deps.equal(cur.monitor.config, m)) {
          toRemove.push(m.id);
          toAdd.push(m);
          changed++;
        }
      }
      for (const id of this.#loaded.keys()) if (!next.has(id)) toRemove.push(id);
      added = toAdd.length;
      removed = toRemove.length - changed;

      if (!boot) {
        const msg = stopLossCheck(
          config['monitor-loader']?.['stop-loss'] ?? '',
          this.#loaded.size,
          next.size,
        );
        if (msg) {
          events.error('monitors-stoploss', '', msg);
          throw new SondeError('STOP_LOSS', msg);
        }
      }

      // Build everything that can fail before touching what is loaded.
      const built: { config: FinalMonitorConfig; sinks: Sink[]; writer: StatusWriter; dsn: string }[] = [];
      for (const m of toAdd) {
        const writer = status.monitor(m.id);
        let sinks: Sink[];
        try {
          sinks = await this.#deps.makeSinks(m, writer);
        } catch (err) {
          throw new Error(`monitor ${m.id}: ${errorMessage(err)}`, { cause: err });
        }
        const dsn = (this.#deps.listDsn ?? listedDsn)(m);
        built.push({ config: m, sinks, writer, dsn });
      }

      for (const id of toRemove) await this.#unload(id);
      for (const b of built) {
        status.register(b.config.id);
        const make = this.#deps.makeMonitor ?? ((...args) => new Monitor(...args));
        b.writer.set(MonitorKey.dsn, b.dsn);
        const monitor = make(b.config, b.sinks, b.writer, this.#deps.monitorDeps);
        this.#loaded.set(b.config.id, { monitor, sinks: b.sinks, dsn: b.dsn });
      }
      this.#config = config;
      serverStatus.set(ServerKey.monitors, String(this.#loaded.size));
      summary();
      events.info('monitors-loaded', '', `${this.#loaded.size} monitors`);
    } catch (err) {
      summary();
      if (err instanceof SondeError) throw err;
      throw new SondeError('RELOAD_FAILED', errorMessage(err), { cause: err });
    }
  }

  async #unload(id: string): Promise<void> {
    const l = this.#loaded.get(id);
    if (!l) return;
    await l.monitor.stop();
    await Promise.allSettled(l.sinks.map(async (s) => s.close?.()));
    this.#loaded.delete(id);
    this.#started.delete(id);
    this.#deps.status.removeMonitor(id);
  }

  /**
   * Start every loaded monitor the loader has not started yet, paced by startPauseMs so that
   * many monitors do not all connect in the same instant.
   */
  async startAll(): Promise<void> {
    const serverStatus = this.#deps.status.serverWriter;
    const todo = [...this.#loaded.values()].filter((l) => !this.#started.has(l.monitor.id));
    const pause = startPauseMs(todo.length);
    this.#deps.events.info('monitors-starting', '', `${todo.length} monitors`);
    for (const [i, l] of todo.entries()) {
      serverStatus.set(ServerKey.monitorLoader, `starting ${l.monitor.id}`);
      this.#started.add(l.monitor.id);
      if (!l.monitor.running && (await this.#mayStart(l.monitor.config))) l.monitor.start();
      if (i < todo.length - 1 && pause > 0) await this.#sleep(pause);
    }
    serverStatus.set(
      ServerKey.monitorLoader,
      `${todo.length} monitors started at ${formatTimestamp(new Date())}`,
    );
    this.#deps.events.info('monitors-started', '', `${todo.length} monitors`);
  }

  /** The `startMonitor` hook's answer (true without a hook); a throw is reported and counts as false. */
  async #mayStart(m: FinalMonitorConfig): Promise<boolean> {
    const hook = this.#deps.startMonitor;
    if (hook === undefined) return true;
    try {
      return (await hook(m)) === true;
    } catch (err) {
      this.#deps.events.error('monitor-error', m.id, `startMonitor: ${errorMessage(err)}`);
      return false;
    }
  }

  /**
   * Load again and start what is new. With `config` (SIGHUP re-read the config file), the
   * monitors come from it, its stop-loss applies, and it becomes the loader's config once
   * the load succeeded; a failed load keeps the running config and monitors.
   */
  async reload(config?: Config): Promise<void> {
    await this.load(config === undefined ? {} : { config });
    await this.startAll();
  }

  #get(id: string): Loaded {
    const l = this.#loaded.get(id);
    if (!l) throw new SondeError('MONITOR_NOT_LOADED', `monitor ${id} not loaded`);
    return l;
  }

  async start(id: string): Promise<void> {
    const l = this.#get(id);
    try {
      l.monitor.start();
    } catch (err) {
      throw new SondeError('MONITOR_START_FAILED', `Error starting monitor ${id}: ${errorMessage(err)}`);
    }
  }

  async stop(id: string): Promise<void> {
    await this.#get(id).monitor.stop();
  }

  /** Stop every monitor (shutdown), bounded by `timeoutMs`. */
  async stopAll(timeoutMs = 5000): Promise<void> {
    const all = Promise.allSettled([...this.#loaded.values()].map((l) => l.monitor.stop()));
    await Promise.race([all, this.#sleep(timeoutMs)]);
    await Promise.allSettled(
      [...this.#loaded.values()].flatMap((l) => l.sinks.map(async (s) => s.close?.())),
    );
  }
}
