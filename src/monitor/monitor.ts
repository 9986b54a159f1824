/**
 * One monitor = one MySQL server (monitors.md §1-2): a run loop that builds the connection,
 * loads the monitor's plans and starts the level collector, retrying with backoff; Stop
 * tears it all down and leaves the monitor loaded with its last status.
 */
import type { Collector, CollectorContext, CollectorHelp } from '../core/collector.js';
import type { FinalMonitorConfig } from '../core/config.js';
import type { ConnectionSpec, Db } from '../core/db.js';
import type { Events } from '../core/events.js';
import type { ExporterHandle, ExporterSource } from '../core/exporter.js';
import type { Plan } from '../core/plan.js';
import type { Sink } from '../core/sink.js';
import type { StatusWriter } from '../core/status.js';
import { errorMessage } from '../core/errors.js';
import { Backoff, sleep } from '../util/backoff.js';
import { formatTimestamp } from '../util/time.js';
import type { PlanRuntime } from './level-collector.js';
import { LevelCollector } from './level-collector.js';
import { PlanChanger, observeState, planChangingEnabled } from './plan-changer.js';

/** A database handle the monitor owns and closes. */
export type OwnedDb = Db & { close(): Promise<void> };

/** What a monitor needs from the rest of sonde, wired by the CLI (or a test). */
export interface MonitorDeps {
  events: Events;
  help(domain: string): CollectorHelp | undefined;
  makeCollector(domain: string, ctx: CollectorContext): Collector;
  buildConnection(cfg: FinalMonitorConfig, opts?: { reload?: boolean }): Promise<ConnectionSpec>;
  createDb(
    spec: ConnectionSpec,
    opts: { reloadCredentials: () => Promise<ConnectionSpec>; onPasswordReloadError: (msg: string) => void },
  ): OwnedDb;
  /** Load this monitor's plans; returns the lookup used by plan activation. */
  loadPlans(cfg: FinalMonitorConfig, db: Db): Promise<(name: string) => Plan>;
  buildRuntime(plan: Plan, cfg: FinalMonitorConfig): PlanRuntime;
  /**
   * The heartbeat writer (heartbeat.md §3), run while the monitor runs when
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
  /** The mysqld_exporter emulation (exporter.md), when `exporter.mode` is set. */
  exporter?: {
    createSource(args: {
      monitorId: string;
      db: Db;
      plan: Plan;
      cfg: FinalMonitorConfig;
      status: StatusWriter;
      events: Events;
    }): ExporterSource & { close?(): Promise<void> };
    start(args: {
      monitorId: string;
      listen: string;
      path: string;
      source: ExporterSource;
      status: StatusWriter;
      events: Events;
    }): Promise<ExporterHandle>;
  };
  /** Tick period override for tests. */
  tickMs?: number;
  /** Plan changer check period override for tests. */
  planCheckMs?: number;
}

/** Cap of the startup backoff (monitors.md §2.1). */
const STARTUP_BACKOFF_CAP_MS = 20_000;

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
  /** background subsystems (heartbeat writer, plan changer), stopped before the LCO */
  #subsystems: AbortController | undefined;
  #subsystemDone: Promise<unknown>[] = [];
  #exporter: ExporterHandle | undefined;
  #exporterSource: (ExporterSource & { close?(): Promise<void> }) | undefined;

  constructor(config: FinalMonitorConfig, sinks: readonly Sink[], status: StatusWriter, deps: MonitorDeps) {
    this.id = config.id;
    this.config = config;
    this.#sinks = sinks;
    this.#status = status;
    this.#deps = deps;
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
    this.#status.set('monitor', `stopped at ${formatTimestamp(new Date())}`);
    this.#deps.events.info('monitor-stopped', '', this.id);
  }

  async #run(signal: AbortSignal): Promise<void> {
    const backoff = new Backoff(STARTUP_BACKOFF_CAP_MS);
    try {
      while (!signal.aborted) {
        const started = await this.#startup(signal);
        if (started === false) {
          await this.#teardown();
          if (!(await sleep(backoff.next(), signal))) break;
          continue;
        }
        backoff.reset();
        this.#status.delete('error:monitor');
        this.#status.set(
          'monitor',
          started === 'legacy'
            ? 'running in exporter legacy mode'
            : `running since ${formatTimestamp(new Date())}`,
        );
        // Subsystems run in the background and contain their own failures; wait for Stop.
        await new Promise<void>((resolve) =>
          signal.addEventListener('abort', () => resolve(), { once: true }),
        );
      }
    } finally {
      this.#status.set('monitor', 'stopping goroutines');
      await this.#teardown();
    }
  }

  async #teardown(): Promise<void> {
    const exporter = this.#exporter;
    this.#exporter = undefined;
    if (exporter) {
      await exporter.close().catch(() => undefined);
      this.#status.set('exporter', 'stopped');
    }
    const source = this.#exporterSource;
    this.#exporterSource = undefined;
    await source?.close?.().catch(() => undefined);
    this.#subsystems?.abort();
    this.#subsystems = undefined;
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
    this.#status.set('error:monitor', `error: ${text}`);
    this.#status.set('monitor', `${step}, sleep and retry: ${text}`);
    this.#deps.events.error('monitor-error', this.id, text);
    return false;
  }

  /**
   * Startup steps of monitors.md §2.2; false when a step failed (retry after backoff),
   * 'legacy' when only the exporter runs.
   */
  async #startup(signal: AbortSignal): Promise<boolean | 'legacy'> {
    const { events } = this.#deps;
    const cfg = this.config;
    this.#status.set('monitor', 'making DB/DSN (not connecting)');
    try {
      const spec = await this.#deps.buildConnection(cfg);
      this.#db = this.#deps.createDb(spec, {
        reloadCredentials: () => this.#deps.buildConnection(cfg, { reload: true }),
        onPasswordReloadError: (msg) => events.info('db-reload-password-error', this.id, msg),
      });
      this.#dsn = spec.redactedDsn;
      this.#status.set('dsn', spec.redactedDsn);
    } catch (err) {
      return this.#fail('error making DB/DSN', err);
    }
    if (signal.aborted) return false;

    this.#status.set('monitor', 'loading plans');
    const db = this.#db;
    let lookup: (name: string) => Plan;
    try {
      lookup = await this.#deps.loadPlans(cfg, db);
    } catch (err) {
      return this.#fail('error loading plans', err);
    }
    if (signal.aborted) return false;

    const subsystems = new AbortController();
    this.#subsystems = subsystems;
    const hb = cfg.heartbeat;
    if (hb?.freq && this.#deps.heartbeatWriter) {
      this.#status.set('monitor', 'starting heartbeat');
      this.#subsystemDone.push(
        this.#deps.heartbeatWriter({
          monitorId: this.id,
          db,
          status: this.#status,
          events,
          freq: hb.freq,
          ...(hb.table ? { table: hb.table } : {}),
          ...(hb['source-id'] ? { sourceId: hb['source-id'] } : {}),
          ...(hb.role ? { role: hb.role } : {}),
          signal: subsystems.signal,
        }),
      );
    }

    const ex = cfg.exporter;
    if (ex?.mode && this.#deps.exporter) {
      this.#status.set('monitor', 'starting exporter');
      let source: ExporterSource & { close?(): Promise<void> };
      try {
        const plan = lookup(ex.plan || 'default-exporter');
        const n = Object.keys(plan.levels).length;
        if (n !== 1) {
          this.#status.set(
            'exporter',
            `not running: invalid plan: exporter plan has ${n} levels, expected 1`,
          );
          return this.#fail(
            'error starting exporter',
            new Error(`exporter plan has ${n} levels, expected 1`),
          );
        }
        source = this.#deps.exporter.createSource({
          monitorId: this.id,
          db,
          plan: this.#deps.buildRuntime(plan, cfg).active.plan,
          cfg,
          status: this.#status,
          events,
        });
        this.#exporterSource = source;
      } catch (err) {
        this.#status.set('exporter', `not running: error loading plans: ${errorMessage(err)}`);
        return this.#fail('error starting exporter', err);
      }
      try {
        this.#exporter = await this.#deps.exporter.start({
          monitorId: this.id,
          listen: ex.flags?.['web.listen-address'] || '127.0.0.1:9104',
          path: ex.flags?.['web.telemetry-path'] || '/metrics',
          source,
          status: this.#status,
          events,
        });
      } catch (err) {
        this.#status.set('exporter', `API error (restart in 1s): ${errorMessage(err)}`);
        return this.#fail('error starting exporter', err);
      }
      if (ex.mode === 'legacy') {
        events.info('monitor-started', this.id, this.#dsn);
        return 'legacy';
      }
    }

    this.#status.set('monitor', 'starting level collector');
    const lco = new LevelCollector({
      monitorId: this.id,
      status: this.#status,
      events,
      db,
      sinks: this.#sinks,
      help: (d) => this.#deps.help(d),
      makeCollector: (d) =>
        this.#deps.makeCollector(d, { monitorId: this.id, db, status: this.#status, events }),
      lookupPlan: async (name) => lookup(name),
      buildRuntime: (plan) => this.#deps.buildRuntime(plan, cfg),
      ...(this.#deps.tickMs === undefined ? {} : { tickMs: this.#deps.tickMs }),
    });
    this.#lco = lco;
    lco.start();
    const planName = cfg.plan ?? '';
    const change = cfg.plans?.change;
    if (change && planChangingEnabled(change)) {
      this.#status.set('monitor', 'starting plan changer');
      const pch = new PlanChanger({
        monitorId: this.id,
        status: this.#status,
        events,
        target: lco,
        change,
        monitorPlan: planName,
        observe: (signal) => observeState(db, signal),
        ...(this.#deps.planCheckMs === undefined ? {} : { checkMs: this.#deps.planCheckMs }),
      });
      this.#subsystemDone.push(pch.run(subsystems.signal));
    } else {
      this.#status.set('monitor', `starting plan ${planName}`);
      void lco.changePlan('active', planName); // runs in the background, retrying until it succeeds or Stop
    }
    events.info('monitor-started', this.id, this.#dsn);
    return true;
  }
}
