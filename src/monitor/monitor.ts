/**
 * One monitor = one MySQL server: a run loop that builds the connection,
 * loads the monitor's plans and starts the level collector, retrying with backoff; Stop
 * tears it all down and leaves the monitor loaded with its last status.
 */
import type { AwsConfigFactory } from '../core/aws.js';
import type { AwsTarget, Collector, CollectorContext, CollectorHelp } from '../core/collector.js';
import type { FinalMonitorConfig } from '../core/config.js';
import type { ConnectionSpec, Db, ServerInfo } from '../core/db.js';
import type { Events } from '../core/events.js';
import { ALWAYS_ACTIVE, type HighAvailability } from '../core/ha.js';
import type { ExporterHandle, ExporterSource } from '../core/exporter.js';
import { applyCollectFlags, exporterBasePlan } from '../plan/exporter-plan.js';
import { exporterSettings, type ExporterSettings } from '../exporter/flags.js';
import type { Plan } from '../core/plan.js';
import { MonitorNotRunning } from '../core/probe.js';
import type { CollectionTally, LevelTiming, ProbeLease } from '../core/probe.js';
import type { Sink } from '../core/sink.js';
import type { StatusWriter } from '../core/status.js';
import { errorMessage } from '../core/errors.js';
import { Backoff } from '../util/backoff.js';
import { aborted } from '../util/abort.js';
import { listenFailure } from '../util/net.js';
import { sleepOn, systemClock, type Clock } from '../util/clock.js';
import { MonitorKey } from '../core/status-keys.js';
import { Limiter } from '../engine/limiter.js';
import { ErrorGate } from './error-gate.js';
import { formatDuration } from '../util/duration.js';
import { formatTimestamp } from '../util/time.js';
import type { PlanRuntime, TransformMetrics } from './level-collector.js';
import { LevelCollector } from './level-collector.js';
import { HOUR_SLOTS, SeriesBuffer } from '../web/series.js';
import { QueryBuffer } from '../web/queries.js';
import type { DomainRecord } from '../engine/engine.js';
import { PlanChanger, observeState, planChangingEnabled } from './plan-changer.js';
import { HaWatch } from './ha-watch.js';

/** Where a spec connects: its socket, or host and port. */
function addressOf(spec: ConnectionSpec): string {
  return spec.socket !== undefined && spec.socket !== ''
    ? `unix:${spec.socket}`
    : `${spec.host}:${spec.port}`;
}

/** A database handle the monitor owns and closes. */
export type OwnedDb = Db & {
  close(): Promise<void>;
  /** Connect with another spec from now on (absent: a reload restarts the monitor). */
  useSpec?(spec: ConnectionSpec): void;
};

/** What a monitor needs from the rest of sonde, wired by the CLI (or a test). */
export interface MonitorDeps {
  events: Events;
  help(domain: string): CollectorHelp | undefined;
  makeCollector(domain: string, ctx: CollectorContext): Collector;
  /** `authModule`: the credentials of my.cnf's `[client.<name>]` (see config/connection.ts). */
  buildConnection(
    cfg: FinalMonitorConfig,
    opts?: { reload?: boolean; authModule?: string; target?: { address: string; section: string } },
  ): Promise<ConnectionSpec>;
  createDb(
    spec: ConnectionSpec,
    opts: {
      /** The monitor the pool is for (the agent's `modifyDb` hook is told). */
      monitorId: string;
      reloadCredentials: () => Promise<ConnectionSpec>;
      onPasswordReloadError: (msg: string) => void;
      /** After each attempt to open a new connection: its duration, and its error when it failed. */
      onConnect?: (ms: number, error?: string) => void;
    },
  ): OwnedDb;
  /**
   * The embedding program's own connection for a monitor, instead of buildConnection and
   * createDb: the handle and its redacted DSN.
   */
  makeDb?(cfg: FinalMonitorConfig): Promise<{ db: OwnedDb; dsn: string }>;
  /** The embedding program's AWS SDK settings for the collectors that call AWS (`aws.rds`). */
  awsConfig?: AwsConfigFactory;
  /** The embedding program's hook on each batch before the sinks (level-collector.ts). */
  transformMetrics?: TransformMetrics;
  /** Load this monitor's plans; returns the lookup used by plan activation. */
  loadPlans(cfg: FinalMonitorConfig, db: Db): Promise<(name: string) => Plan>;
  buildRuntime(plan: Plan, cfg: FinalMonitorConfig): PlanRuntime;
  /**
   * The heartbeat writer, run while the monitor runs when
   * `heartbeat.freq` is set. Resolves when `signal` aborts; never throws.
   */
  heartbeatWriter?(args: {
    monitorId: string;
    db: Db;
    status: StatusWriter;
    events: Events;
    freq: string;
    table?: string;
    sourceId?: string;
    role?: string;
    signal: AbortSignal;
  }): Promise<void>;
  /**
   * The exporter's listener cannot listen (address taken, not local, not allowed): a
   * configuration problem retrying cannot fix. Unset: the monitor retries like any start error.
   */
  exporterListenFailed?(monitorId: string, err: unknown): void;
  /** The mysqld_exporter emulation (docs/exporter.md), when `exporter.mode` is set. */
  exporter?: {
    createSource(args: {
      monitorId: string;
      db: Db;
      plan: Plan;
      cfg: FinalMonitorConfig;
      /** The monitor's collector cap, shared with the level collector. */
      limiter: Limiter;
      /** Given in legacy mode only: then the exporter's engine writes the per-domain keys. */
      status?: StatusWriter;
      events: Events;
      /** The monitor's scrape tally: counts the reader's finished and failed domain runs. */
      tally?: CollectionTally;
      /** Called after a scrape without errors. */
      onClean?(): void;
      /** What the exporter-wide flags set (session, query timeout, collectors at once). */
      settings: ExporterSettings;
    }): ExporterSource & { close?(): Promise<void> };
    start(args: {
      monitorId: string;
      listen: string;
      path: string;
      /** Bearer token file protecting the endpoint (exporter.token-file). */
      tokenFile?: string;
      /** Web configuration file (exporter.flags.web.config.file): TLS, basic auth, headers. */
      webConfigFile?: string;
      /** `timeout-offset`: seconds taken off the scrape-timeout header. */
      timeoutOffsetS?: number;
      /** A source for one scrape of another server (mysqld_exporter's `/probe`); see server.ts. */
      probeTarget?: (target: string, section: string) => Promise<ProbeLease>;
      /**
       * `POST /-/reload`: read the connection settings again: the error text when that
       * failed, the restart to run once the answer is out when the monitor must restart.
       */
      reload?: () => Promise<{ error?: string; restart?: () => Promise<void> }>;
      source: ExporterSource;
      status: StatusWriter;
      events: Events;
    }): Promise<ExporterHandle>;
  };
  /** Tick period override for tests. */
  tickMs?: number;
  /** The clock of every timer of the monitor (tests inject a fake one). */
  clock?: Clock;
  /** Plan changer check period override for tests. */
  planCheckMs?: number;
  /** Keep the web page's chart history (`api.ui-history`); default true. */
  uiHistory?: boolean;
  /**
   * The agent's HA hook (docs/ha.md); default (or ALWAYS_ACTIVE) always active, and then
   * nothing asks. While it says standby the monitor stays loaded but does not collect: the
   * plan changer runs the standby plan or pauses, or (plan changing off) the level collector
   * pauses; the heartbeat writer does not write. Scrapes and probes are answered as usual.
   */
  ha?: HighAvailability;
  /** HA ask period override for tests (1 s). */
  haCheckMs?: number;
}

/** Cap of the startup backoff */
const STARTUP_BACKOFF_CAP_MS = 20_000;

/** The debug line of one attempt to open a connection. */
/** What a collector calling AWS needs of the monitor's config to pick its region. */
export function awsTargetOf(cfg: FinalMonitorConfig, config?: AwsConfigFactory): AwsTarget {
  return {
    region: cfg.aws?.region ?? '',
    disableAutoRegion: cfg.aws?.['disable-auto-region'] === true,
    hostname: cfg.hostname ?? '',
    ...(config === undefined ? {} : { config }),
  };
}

function connectLine(dsn: string, ms: number, error: string | undefined): string {
  return error === undefined
    ? `connected to ${dsn} in ${formatDuration(ms)}`
    : `connecting to ${dsn} failed after ${formatDuration(ms)}: ${error}`;
}

/** What a running monitor lends to probes: its pool, its collector cap and its plans. */
interface Running {
  db: Db;
  limiter: Limiter;
  lookup: (name: string) => Plan;
}

export class Monitor {
  readonly id: string;
  readonly config: FinalMonitorConfig;
  readonly #deps: MonitorDeps;
  readonly #status: StatusWriter;
  readonly #sinks: readonly Sink[];
  #dsn = '';
  #stop: AbortController | undefined;
  #loop: Promise<void> | undefined;
  #lco: LevelCollector | undefined;
  #db: OwnedDb | undefined;
  /** Where #db connects (socket or host:port): a reload to another address restarts. */
  #address = '';
  /** background subsystems (heartbeat writer, plan changer), stopped before the LCO */
  #subsystems: AbortController | undefined;
  #subsystemDone: Promise<unknown>[] = [];
  #exporter: ExporterHandle | undefined;
  /** a `/-/reload` restart is under way */
  #reloading = false;
  #exporterSource: (ExporterSource & { close?(): Promise<void> }) | undefined;
  /** Reader used by probes when the monitor has no exporter of its own; made on first probe. */
  #probeSource: (ExporterSource & { close?(): Promise<void> }) | undefined;
  /** Set once the plans are loaded, cleared by the teardown. */
  #running: Running | undefined;
  readonly #clock: Clock;
  /** The monitor's events with its error lines under a backoff. */
  readonly #events: ErrorGate;
  /** Finished and failed domain runs of each reader, kept across restarts (`/metrics`). */
  readonly tally: { level: CollectionTally; scrape: CollectionTally } = {
    level: { collections: 0, errors: 0 },
    scrape: { collections: 0, errors: 0 },
  };
  /** Level collections started on time and late, kept across restarts. */
  readonly timing: LevelTiming = { onTime: 0, late: 0 };
  /**
   * The web page's chart series and latest values, kept across restarts: one hour of slots,
   * none with `ui-history: false` on the monitor or `api.ui-history: false`.
   */
  readonly series: SeriesBuffer;
  /** The web page's Queries tab: the query analytics records of the last hour. */
  readonly queries = new QueryBuffer();
  /** The server's flavor and version, learnt after the first collection of each run. */
  #serverInfo: ServerInfo | undefined;
  /** This run's view of the HA hook; none when always active. */
  #ha: HaWatch | undefined;
  /** The HA hook's last answer this run (true without a hook). */
  #haActive = true;
  /** No HA answer yet this run. */
  #haFirst = true;
  /** The level collector follows the HA answers itself (plan changing off). */
  #haDrivesLco = false;
  /** The heartbeat writer while it runs, with what restarts it after a standby. */
  #heartbeat: { stop: AbortController; done: Promise<void> } | undefined;
  #heartbeatArgs: { db: Db; signal: AbortSignal } | undefined;

  constructor(config: FinalMonitorConfig, sinks: readonly Sink[], status: StatusWriter, deps: MonitorDeps) {
    this.id = config.id;
    this.config = config;
    this.#sinks = sinks;
    this.#status = status;
    this.#deps = deps;
    this.#clock = deps.clock ?? systemClock;
    this.#events = new ErrorGate(deps.events, this.#clock);
    const history = deps.uiHistory !== false && config['ui-history'] !== false;
    this.series = new SeriesBuffer(history ? HOUR_SLOTS : 0);
  }

  /** The server's flavor and version once a collection ran, else undefined. */
  get serverInfo(): ServerInfo | undefined {
    return this.#serverInfo;
  }

  /** The plan being collected, while the level collector runs one. */
  get activePlan(): Plan | undefined {
    return this.#lco?.engine?.plan;
  }

  /** The last run of each domain of the active plan. */
  domainRecords(): ReadonlyMap<string, DomainRecord> {
    return this.#lco?.engine?.records() ?? new Map<string, DomainRecord>();
  }

  #now(): Date {
    return new Date(this.#clock.now());
  }

  /** Redacted DSN, '' until the monitor has built it once. */
  get dsn(): string {
    return this.#dsn;
  }

  get running(): boolean {
    return this.#loop !== undefined;
  }

  /** Start the run loop. Throws `already running` when it is. */
  start(): void {
    if (this.#loop) throw new Error('already running');
    const ac = new AbortController();
    this.#stop = ac;
    this.#loop = this.#run(ac.signal);
  }

  /** Stop everything and wait for it; a no-op when not running. */
  async stop(): Promise<void> {
    const loop = this.#loop;
    if (!loop) return;
    this.#stop?.abort();
    await loop;
    this.#loop = undefined;
    this.#stop = undefined;
    this.#status.set(MonitorKey.monitor, `stopped at ${formatTimestamp(this.#now())}`);
    this.#deps.events.info('monitor-stopped', '', this.id);
  }

  /**
   * Read the connection settings again (config, my.cnf, password file, TLS files), as
   * mysqld_exporter's `/-/reload` reads its my.cnf: `POST /-/reload` on the exporter, and
   * SIGHUP. When they cannot be read (a broken my.cnf, a missing TLS file) the running
   * connection is kept and the error returned (event `monitor-reload-error`); otherwise new
   * connections use them, without a restart (the endpoint keeps serving). A monitor not
   * running yet reads them at its next start attempt anyway. `why` starts the event text.
   */
  async reloadConnection(why: string): Promise<string | undefined> {
    const r = await this.#reloadSettings(why);
    await r.restart?.();
    return r.error;
  }

  /** reloadConnection's work; a restart it needs is left to the caller (after its answer). */
  async #reloadSettings(why: string): Promise<{ error?: string; restart?: () => Promise<void> }> {
    const db = this.#db;
    if (!this.running || db === undefined) return {};
    let spec: ConnectionSpec;
    try {
      spec = await this.#deps.buildConnection(this.config, { reload: true });
    } catch (err) {
      const text = `${why}: the connection settings cannot be read, the running ones are kept: ${errorMessage(err)}`;
      this.#deps.events.error('monitor-reload-error', this.id, text);
      return { error: text };
    }
    // Another server (address changed), or a Db that cannot take a spec: restart, so that
    // everything prepared against the old server is prepared again.
    if (db.useSpec === undefined || this.#db !== db || addressOf(spec) !== this.#address)
      return { restart: () => this.#restartForReload(why) };
    db.useSpec(spec);
    this.#dsn = spec.redactedDsn;
    this.#status.set(MonitorKey.dsn, spec.redactedDsn);
    this.#deps.events.info('monitor-reload', this.id, `${why}: connection settings read again`);
    return {};
  }

  /** A reload to another server, or of a Db that cannot take a spec: restart (one at a time). */
  async #restartForReload(why: string): Promise<void> {
    if (this.#reloading || !this.running) return;
    this.#reloading = true;
    this.#deps.events.info('monitor-reload', this.id, `${why}: restarting to read the credentials again`);
    try {
      await this.stop();
      this.start();
    } finally {
      this.#reloading = false;
    }
  }

  async #run(signal: AbortSignal): Promise<void> {
    const backoff = new Backoff(STARTUP_BACKOFF_CAP_MS);
    try {
      while (!signal.aborted) {
        const started = await this.#startup(signal);
        if (started === false) {
          await this.#teardown();
          if (!(await sleepOn(this.#clock, backoff.next(), signal))) break;
          continue;
        }
        backoff.reset();
        this.#events.reset();
        this.#status.delete(MonitorKey.monitorError);
        this.#status.set(
          MonitorKey.monitor,
          started === 'legacy'
            ? 'running in exporter legacy mode'
            : `running since ${formatTimestamp(this.#now())}`,
        );
        // Subsystems run in the background and contain their own failures; wait for Stop.
        await aborted(signal);
      }
    } finally {
      this.#status.set(MonitorKey.monitor, 'stopping goroutines');
      await this.#teardown();
    }
  }

  async #teardown(): Promise<void> {
    const exporter = this.#exporter;
    this.#exporter = undefined;
    if (exporter) {
      await exporter.close().catch(() => undefined);
      this.#status.set(MonitorKey.exporter, 'stopped');
    }
    const sources = [this.#exporterSource, this.#probeSource];
    this.#exporterSource = undefined;
    this.#probeSource = undefined;
    this.#running = undefined;
    await Promise.all(sources.map(async (s) => s?.close?.().catch(() => undefined)));
    this.#ha?.stop();
    this.#ha = undefined;
    this.#haDrivesLco = false;
    this.#subsystems?.abort();
    this.#subsystems = undefined;
    await this.#stopHeartbeat(false);
    this.#heartbeatArgs = undefined;
    await Promise.allSettled(this.#subsystemDone);
    this.#subsystemDone = [];
    const lco = this.#lco;
    const db = this.#db;
    this.#lco = undefined;
    this.#db = undefined;
    await lco?.stop();
    await db?.close().catch(() => undefined);
  }

  #fail(step: string, err: unknown): false {
    const text = errorMessage(err);
    this.#status.set(MonitorKey.monitorError, `error: ${text}`);
    this.#status.set(MonitorKey.monitor, `${step}, sleep and retry: ${text}`);
    this.#events.error('monitor-error', this.id, text);
    return false;
  }

  /**
   * Start the monitor's parts in order: connection (not connecting yet), plans, heartbeat
   * writer, exporter, level collector and plan changer. False when a step failed (the run
   * loop retries after a backoff), 'legacy' when only the exporter runs.
   */
  async #startup(signal: AbortSignal): Promise<boolean | 'legacy'> {
    const db = await this.#makeDbSpec();
    if (db instanceof Error) return this.#fail('error making DB/DSN', db);
    if (signal.aborted) return false;

    this.#status.set(MonitorKey.monitor, 'loading plans');
    let lookup: (name: string) => Plan;
    try {
      lookup = await this.#deps.loadPlans(this.config, db);
    } catch (err) {
      return this.#fail('error loading plans', err);
    }
    if (signal.aborted) return false;

    const subsystems = new AbortController();
    this.#subsystems = subsystems;
    const limiter = new Limiter();
    this.#ha = this.#makeHaWatch();
    this.#haActive = this.#ha === undefined;
    this.#haFirst = true;
    this.#heartbeatArgs = { db, signal: subsystems.signal };
    // With an HA hook, the heartbeat writer starts at its first `active` answer.
    if (this.#ha === undefined) this.#startHeartbeat(true);
    const ex = this.config.exporter;
    if (ex?.mode && this.#deps.exporter) {
      const failed = await this.#startExporter(db, lookup, limiter, ex.mode === 'legacy');
      const cannotListen = listenFailure(failed);
      if (cannotListen !== undefined && this.#deps.exporterListenFailed) {
        // Reported once, by whoever ends the process (no retry can fix it).
        this.#status.set(MonitorKey.monitor, `error starting exporter: ${errorMessage(cannotListen)}`);
        this.#deps.exporterListenFailed(this.id, cannotListen);
        return false;
      }
      if (failed !== undefined) return this.#fail('error starting exporter', failed);
      this.#running = { db, limiter, lookup };
      if (ex.mode === 'legacy') {
        this.#ha?.start();
        this.#deps.events.info('monitor-started', this.id, this.#dsn);
        return 'legacy';
      }
    }
    this.#running = { db, limiter, lookup };
    this.#startLevelCollector(db, lookup, limiter, subsystems.signal);
    this.#ha?.start();
    this.#deps.events.info('monitor-started', this.id, this.#dsn);
    return true;
  }

  /** Build the connection spec and the pool (no connection yet); the error when it cannot. */
  async #makeDbSpec(): Promise<OwnedDb | Error> {
    const cfg = this.config;
    const events = this.#events;
    this.#status.set(MonitorKey.monitor, 'making DB/DSN (not connecting)');
    try {
      if (this.#deps.makeDb !== undefined) {
        const made = await this.#deps.makeDb(cfg);
        this.#db = made.db;
        this.#dsn = made.dsn;
        this.#status.set(MonitorKey.dsn, made.dsn);
        return made.db;
      }
      const spec = await this.#deps.buildConnection(cfg);
      const dsn = spec.redactedDsn;
      const db = this.#deps.createDb(spec, {
        monitorId: this.id,
        reloadCredentials: () => this.#deps.buildConnection(cfg, { reload: true }),
        onPasswordReloadError: (msg) => events.info('db-reload-password-error', this.id, msg),
        onConnect: (ms, error) => events.debug(() => connectLine(dsn, ms, error), this.id),
      });
      this.#db = db;
      this.#address = addressOf(spec);
      this.#dsn = spec.redactedDsn;
      this.#status.set(MonitorKey.dsn, spec.redactedDsn);
      return db;
    } catch (err) {
      return err instanceof Error ? err : new Error(errorMessage(err));
    }
  }

  /**
   * Start the heartbeat writer (when configured and not running); `startup`: as a step of
   * the monitor's start-up (shown in `monitor`), else because the HA hook said active.
   */
  #startHeartbeat(startup: boolean): void {
    const hb = this.config.heartbeat;
    const args = this.#heartbeatArgs;
    if (!hb?.freq || !this.#deps.heartbeatWriter || args === undefined || this.#heartbeat) return;
    if (args.signal.aborted) return;
    if (startup) this.#status.set(MonitorKey.monitor, 'starting heartbeat');
    const stop = new AbortController();
    const onAbort = (): void => stop.abort();
    args.signal.addEventListener('abort', onAbort, { once: true });
    const done = this.#deps
      .heartbeatWriter({
        monitorId: this.id,
        db: args.db,
        status: this.#status,
        events: this.#events,
        freq: hb.freq,
        ...(hb.table ? { table: hb.table } : {}),
        ...(hb['source-id'] ? { sourceId: hb['source-id'] } : {}),
        ...(hb.role ? { role: hb.role } : {}),
        signal: stop.signal,
      })
      .finally(() => args.signal.removeEventListener('abort', onAbort));
    this.#heartbeat = { stop, done };
  }

  /**
   * Stop the heartbeat writer and wait for it; `standby`: because the HA hook says standby
   * (then `heartbeat-writer` says so, unless it was started again meanwhile).
   */
  async #stopHeartbeat(standby: boolean): Promise<void> {
    const hb = this.#heartbeat;
    this.#heartbeat = undefined;
    if (hb !== undefined) {
      hb.stop.abort();
      await hb.done.catch(() => undefined);
    }
    const configured = Boolean(this.config.heartbeat?.freq) && this.#deps.heartbeatWriter !== undefined;
    if (standby && configured && this.#heartbeat === undefined && !this.#haActive)
      this.#status.set(MonitorKey.heartbeatWriter, 'standby: not writing');
  }

  /** A watch on the HA hook, unless the agent is always active. */
  #makeHaWatch(): HaWatch | undefined {
    const ha = this.#deps.ha;
    if (ha === undefined || ha === ALWAYS_ACTIVE) return undefined;
    return new HaWatch({
      monitorId: this.id,
      ha,
      status: this.#status,
      events: this.#events,
      onChange: (active) => this.#onHa(active),
      ...(this.#deps.haCheckMs === undefined ? {} : { checkMs: this.#deps.haCheckMs }),
      clock: this.#clock,
    });
  }

  /**
   * The HA hook's answer changed (or came first): heartbeats only while active; with plan
   * changing off, the level collector runs the monitor's plan while active and pauses (level
   * state `standby`) while standby. With plan changing on, the plan changer does that part.
   */
  #onHa(active: boolean): void {
    const first = this.#haFirst;
    this.#haFirst = false;
    this.#haActive = active;
    if (active) this.#startHeartbeat(false);
    else void this.#stopHeartbeat(true);
    const lco = this.#lco;
    if (!this.#haDrivesLco || lco === undefined) return;
    const state = active ? 'active' : 'standby';
    const announce = !(first && active);
    if (announce) this.#events.info('state-change-begin', this.id, state);
    if (active) void lco.changePlan('active', this.config.plan ?? '', 'HA: active, plan changing off');
    else lco.pause('standby');
    if (announce) this.#events.info('state-change-end', this.id, state);
  }

  /**
   * Make the scrape reader and start the exporter listener; the error when either fails.
   * In legacy mode the reader's engine writes the per-domain status keys (no level
   * collector does).
   */
  async #startExporter(
    db: Db,
    lookup: (name: string) => Plan,
    limiter: Limiter,
    legacy: boolean,
  ): Promise<Error | undefined> {
    const exporter = this.#deps.exporter;
    const ex = this.config.exporter;
    if (exporter === undefined || ex === undefined) return undefined;
    const events = this.#events;
    this.#status.set(MonitorKey.monitor, 'starting exporter');
    let source: ExporterSource & { close?(): Promise<void> };
    let settings: ExporterSettings;
    try {
      const base = exporterBasePlan(ex, lookup);
      const n = Object.keys(base.levels).length;
      if (n !== 1) {
        this.#status.set(
          MonitorKey.exporter,
          `not running: invalid plan: exporter plan has ${n} levels, expected 1`,
        );
        return new Error(`exporter plan has ${n} levels, expected 1`);
      }
      const plan = applyCollectFlags(base, ex.flags ?? {});
      settings = exporterSettings(ex.flags);
      source = exporter.createSource({
        monitorId: this.id,
        db,
        plan: this.#deps.buildRuntime(plan, this.config).active.plan,
        cfg: this.config,
        limiter,
        events,
        settings,
        tally: this.tally.scrape,
        // Legacy mode: only scrapes tell the monitor is healthy again (the level collector does otherwise).
        ...(legacy ? { status: this.#status, onClean: () => this.#events.reset() } : {}),
      });
      this.#exporterSource = source;
    } catch (err) {
      this.#status.set(MonitorKey.exporter, `not running: error loading plans: ${errorMessage(err)}`);
      return err instanceof Error ? err : new Error(errorMessage(err));
    }
    try {
      this.#exporter = await exporter.start({
        monitorId: this.id,
        listen: ex.flags?.['web.listen-address'] || '127.0.0.1:9104',
        path: ex.flags?.['web.telemetry-path'] || '/metrics',
        ...(ex['token-file'] ? { tokenFile: ex['token-file'] } : {}),
        ...(ex.flags?.['web.config.file'] ? { webConfigFile: ex.flags['web.config.file'] } : {}),
        timeoutOffsetS: settings.timeoutOffsetS,
        source,
        status: this.#status,
        events,
        reload: () => this.#reloadSettings('POST /-/reload'),
        probeTarget: (target, section) => this.probe('', { address: target, section }),
      });
    } catch (err) {
      this.#status.set(MonitorKey.exporter, `API error (restart in 1s): ${errorMessage(err)}`);
      return err instanceof Error ? err : new Error(errorMessage(err));
    }
    return undefined;
  }

  /**
   * A source for one probe. Without an auth module: the monitor's own scrape reader (its
   * exporter's when it serves one, else one made on the first probe with the probe plan),
   * on the monitor's pool. With `authModule`: a reader of its own on a new pool with the
   * `[client.<name>]` credentials, closed by release(); the credentials are read (and a
   * missing section refused with a ConfigError keyed `auth_module`) before anything connects.
   * With `target` (mysqld_exporter's multi-target mode): the same, to another server, with
   * the credentials and TLS settings of the my.cnf section it names.
   * Throws MonitorNotRunning when the monitor is not running.
   */
  async probe(authModule: string, target?: { address: string; section: string }): Promise<ProbeLease> {
    const how = target !== undefined ? { target } : authModule === '' ? undefined : { authModule };
    const spec = how === undefined ? undefined : await this.#deps.buildConnection(this.config, how);
    const running = this.#running;
    const exporter = this.#deps.exporter;
    if (running === undefined || exporter === undefined)
      throw new MonitorNotRunning(`monitor ${this.id} is not running`);
    const { timeoutOffsetS } = exporterSettings(this.config.exporter?.flags);
    if (spec === undefined) {
      const source = this.#exporterSource ?? (this.#probeSource ??= this.#probeReader(running, running.db));
      return { source, timeoutOffsetS, release: async () => undefined };
    }
    const db = this.#deps.createDb(spec, {
      monitorId: this.id,
      reloadCredentials: () => this.#deps.buildConnection(this.config, { reload: true, ...how }),
      onPasswordReloadError: (msg) => this.#events.info('db-reload-password-error', this.id, msg),
    });
    let source: ExporterSource & { close?(): Promise<void> };
    try {
      source = this.#probeReader(running, db);
    } catch (err) {
      await db.close().catch(() => undefined);
      throw err;
    }
    return {
      source,
      timeoutOffsetS,
      release: async () => {
        await source.close?.().catch(() => undefined);
        await db.close().catch(() => undefined);
      },
    };
  }

  /**
   * A scrape reader on `db` with the probe plan: the monitor's exporter plan as its exporter
   * would build it (exporterBasePlan, shaped by the flags); and the settings of its
   * exporter flags.
   */
  #probeReader(running: Running, db: Db): ExporterSource & { close?(): Promise<void> } {
    const exporter = this.#deps.exporter;
    if (exporter === undefined) throw new MonitorNotRunning(`monitor ${this.id} is not running`);
    const ex = this.config.exporter ?? {};
    const base = exporterBasePlan(ex, (name) => running.lookup(name));
    const n = Object.keys(base.levels).length;
    if (n !== 1) throw new Error(`exporter plan has ${n} levels, expected 1`);
    const plan = applyCollectFlags(base, ex.flags ?? {});
    return exporter.createSource({
      monitorId: this.id,
      db,
      plan: this.#deps.buildRuntime(plan, this.config).active.plan,
      cfg: this.config,
      limiter: running.limiter,
      events: this.#events,
      settings: exporterSettings(ex.flags),
      tally: this.tally.scrape,
    });
  }

  /** What the plan changer asks: the watch's last answer. */
  #haAnswer(watch: HaWatch): () => boolean | Promise<boolean> {
    return () => watch.answer();
  }

  /** Start the level collector, then the plan changer or the monitor's plan. */
  #startLevelCollector(db: Db, lookup: (name: string) => Plan, limiter: Limiter, signal: AbortSignal): void {
    const cfg = this.config;
    const events = this.#events;
    this.#status.set(MonitorKey.monitor, 'starting level collector');
    const lco = new LevelCollector({
      monitorId: this.id,
      status: this.#status,
      events,
      db,
      sinks: this.#sinks,
      help: (d) => this.#deps.help(d),
      makeCollector: (d) =>
        this.#deps.makeCollector(d, {
          monitorId: this.id,
          db,
          status: this.#status,
          events,
          aws: awsTargetOf(cfg, this.#deps.awsConfig),
        }),
      lookupPlan: async (name) => lookup(name),
      buildRuntime: (plan) => this.#deps.buildRuntime(plan, cfg),
      limiter,
      tally: this.tally.level,
      timing: this.timing,
      onClean: () => this.#events.reset(),
      ...(this.#deps.transformMetrics ? { transformMetrics: this.#deps.transformMetrics } : {}),
      onRecords: (m, records) => this.queries.add(m, records),
      onCollected: (m) => {
        this.series.add(m);
        // Detected once per pool (no query once known); the page shows it.
        if (this.#serverInfo === undefined)
          db.serverInfo().then(
            (info) => void (this.#serverInfo = info),
            () => undefined,
          );
      },
      ...(this.#deps.tickMs === undefined ? {} : { tickMs: this.#deps.tickMs }),
      clock: this.#clock,
    });
    this.#lco = lco;
    lco.start();
    const planName = cfg.plan ?? '';
    const change = cfg.plans?.change;
    if (change && planChangingEnabled(change)) {
      this.#status.set(MonitorKey.monitor, 'starting plan changer');
      const pch = new PlanChanger({
        monitorId: this.id,
        status: this.#status,
        events,
        target: lco,
        change,
        monitorPlan: planName,
        observe: (s) => observeState(db, s),
        ...(this.#ha === undefined ? {} : { isActive: this.#haAnswer(this.#ha) }),
        ...(this.#deps.planCheckMs === undefined ? {} : { checkMs: this.#deps.planCheckMs }),
        clock: this.#clock,
      });
      this.#subsystemDone.push(pch.run(signal));
    } else if (this.#ha !== undefined) {
      // The HA hook's first answer starts the plan or pauses (standby).
      this.#status.set(MonitorKey.monitor, `starting plan ${planName}`);
      this.#haDrivesLco = true;
    } else {
      this.#status.set(MonitorKey.monitor, `starting plan ${planName}`);
      // Runs in the background, retrying until it succeeds or Stop.
      void lco.changePlan('active', planName, 'monitor started, plan changing off');
    }
  }
}
