/**
 * The level collector (LCO): a 1-second ticker that picks the due level of the active plan,
 * has the engine collect it, and hands the batch to the monitor's sinks (monitors.md §6-7,
 * plans.md §6).
 *
 * Ticks: the logical clock `s` starts at 0 on the first tick after a plan is activated and
 * advances by one per processed tick. A collection never overlaps the previous one: while
 * one runs, one pending tick is remembered and the rest are dropped, so a slow collection
 * shifts the schedule instead of piling up.
 *
 * Delivery: batches go on a queue of capacity 10 served by one sink worker; a full queue
 * drops the batch (event `lco-metrics-fault`). A failing sink never blocks the others.
 */
import type { Collector, CollectorHelp } from '../core/collector.js';
import type { Db } from '../core/db.js';
import type { Events } from '../core/events.js';
import type { Metrics } from '../core/metrics.js';
import type { LevelState, Plan } from '../core/plan.js';
import type { Sink } from '../core/sink.js';
import type { StatusWriter } from '../core/status.js';
import { errorMessage } from '../core/errors.js';
import { Backoff, sleep } from '../util/backoff.js';
import { formatDuration } from '../util/duration.js';
import { formatTimestamp } from '../util/time.js';
import type { ActivePlan, DomainWork } from './engine.js';
import { Engine } from './engine.js';

/** A plan made ready for one monitor: merged levels, limits, and what is due when. */
export interface PlanRuntime {
  active: ActivePlan;
  /** What to collect at logical second `s`, if anything. */
  due(s: number): { level: string; work: DomainWork[] } | undefined;
}

export interface LevelCollectorContext {
  monitorId: string;
  status: StatusWriter;
  events: Events;
  db: Db;
  sinks: readonly Sink[];
  help(domain: string): CollectorHelp | undefined;
  makeCollector(domain: string): Collector;
  /** Find a plan by name ('' = the monitor's first plan); throws with the lookup error. */
  lookupPlan(name: string): Promise<Plan>;
  /** Interpolate, level up and time a plan for this monitor. */
  buildRuntime(plan: Plan): PlanRuntime;
  /** Tick period; 1000 ms except in tests that want a faster clock. */
  tickMs?: number;
}

const QUEUE_CAPACITY = 10;
const PLAN_RETRY_MS = 2000;
const PREPARE_TIMEOUT_MS = 10_000;
const PING_TIMEOUT_MS = 5000;

interface Batch {
  metrics: Metrics[];
  plan: string;
  level: string;
  tick: Date;
}

export class LevelCollector {
  readonly #ctx: LevelCollectorContext;
  #engine: Engine | undefined;
  #runtime: PlanRuntime | undefined;
  #state = '';
  #planName = '';
  #paused = true;
  #s = 0;
  #interval = 0;
  #busy = false;
  #pendingTick = false;
  #timer: NodeJS.Timeout | undefined;
  #activation: AbortController | undefined;
  #activationDone: Promise<void> = Promise.resolve();
  #collecting: Promise<void> = Promise.resolve();
  readonly #queue: Batch[] = [];
  #wakeWorker: (() => void) | undefined;
  #worker: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(ctx: LevelCollectorContext) {
    this.#ctx = ctx;
  }

  /** Start paused: nothing is collected until a plan is activated. */
  start(): void {
    this.#ctx.status.set(
      'level-collector',
      `started at ${formatTimestamp(new Date())} (paused until plan change)`,
    );
    this.#timer = setInterval(() => this.#onTick(), this.#ctx.tickMs ?? 1000);
    this.#worker = this.#sinkWorker();
  }

  /** Current level state and plan name ('' before the first activation). */
  get state(): string {
    return this.#state;
  }

  get planName(): string {
    return this.#planName;
  }

  /**
   * Activate a plan in the background; a newer call cancels an activation in progress.
   * Resolves when this activation has finished or was cancelled.
   */
  changePlan(state: LevelState, planName: string): Promise<void> {
    this.#activation?.abort();
    const ac = new AbortController();
    this.#activation = ac;
    const previous = this.#activationDone;
    this.#activationDone = (async () => {
      await previous; // the cancelled one unwinds first
      if (ac.signal.aborted) return;
      try {
        await this.#activate(state, planName, ac.signal);
      } catch (err) {
        if (!ac.signal.aborted)
          this.#ctx.events.error('lco-change-plan-error', this.#ctx.monitorId, errorMessage(err));
      }
    })();
    return this.#activationDone;
  }

  /** Stop collecting (ticks reset the clock) until the next activation. */
  pause(): void {
    this.#paused = true;
    this.#ctx.status.set('level-collector', `paused at ${formatTimestamp(new Date())}`);
    this.#ctx.events.info('lco-paused', this.#ctx.monitorId);
  }

  /** Stop everything: ticker, activation, the running collection, the engine, the sink worker. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#activation?.abort();
    this.#paused = true;
    await this.#activationDone;
    const engine = this.#engine;
    this.#engine = undefined;
    await engine?.close();
    await this.#collecting;
    this.#wakeWorker?.();
    await this.#worker;
  }

  async #activate(state: LevelState, planName: string, signal: AbortSignal): Promise<void> {
    const { status, events, monitorId } = this.#ctx;
    const change = `state:${this.#state} plan:${this.#planName} -> state:${state} plan:${planName}`;
    events.info('change-plan', monitorId, change);
    status.set('level-change-plan', `loading new plan ${planName} (state ${state})`);

    let plan: Plan | undefined;
    while (!plan) {
      try {
        plan = await this.#ctx.lookupPlan(planName);
      } catch (err) {
        const msg = `${change}: error loading new plan ${planName}: ${errorMessage(err)} (retrying)`;
        status.set('level-change-plan', msg);
        events.info('change-plan-error', monitorId, msg);
        if (!(await sleep(PLAN_RETRY_MS, signal))) return;
      }
    }
    const runtime = this.#ctx.buildRuntime(plan);
    const name = plan.name;
    status.set('level-change-plan', `preparing new plan ${name} (state ${state})`);

    const backoff = new Backoff(60_000);
    let engine: Engine | undefined;
    while (!engine) {
      if (signal.aborted) return;
      events.info('engine-prepare', monitorId, name);
      const attempt = AbortSignal.any([signal, AbortSignal.timeout(PREPARE_TIMEOUT_MS)]);
      try {
        // An offline plan (or one with no levels) must activate while MySQL is down.
        if (state !== 'offline' && Object.keys(plan.levels).length > 0) {
          status.set('engine-prepare', `${name}: connect to MySQL`);
          try {
            await this.#ctx.db.ping({ signal: attempt, timeoutMs: PING_TIMEOUT_MS });
          } catch (err) {
            throw new Error(`while connecting to MySQL: ${errorMessage(err)}`, { cause: err });
          }
        }
        engine = await Engine.prepare(
          { monitorId, status, events, help: (d) => this.#ctx.help(d) },
          runtime.active,
          (d) => this.#ctx.makeCollector(d),
          attempt,
          (text) => status.set('engine-prepare', text),
        );
      } catch (err) {
        status.delete('engine-prepare');
        if (signal.aborted) return;
        const text = errorMessage(err);
        status.set('level-change-plan', `${change}: error preparing new plan ${name}: ${text} (retrying)`);
        status.set('error:engine-prepare', text);
        events.error('engine-prepare-error', monitorId, text);
        if (!(await sleep(backoff.next(), signal))) return;
        continue;
      }
      status.delete('engine-prepare');
    }
    if (signal.aborted) {
      await engine.close();
      return;
    }

    // Swap engines while paused; the clock restarts at s=0 (highest level first).
    this.pause();
    await this.#collecting;
    const old = this.#engine;
    this.#engine = engine;
    this.#runtime = runtime;
    await old?.close();
    status.set('engine-plan', name);
    status.delete('error:engine-prepare');
    events.info('engine-prepare-success', monitorId, name);
    this.#state = state;
    this.#planName = name;
    status.set('level-state', state);
    status.set('level-plan', name);
    status.set('level-collector', `running since ${formatTimestamp(new Date())}`);
    status.delete('level-change-plan');
    this.#s = 0;
    this.#interval = 0;
    this.#paused = false;
    events.info('change-plan-success', monitorId, change);
    if (!this.#stopped) this.#onTick(); // first tick now, not a second later
  }

  #onTick(): void {
    if (this.#stopped) return;
    if (this.#paused || !this.#engine || !this.#runtime) {
      this.#s = 0;
      this.#interval = 0;
      return;
    }
    if (this.#busy) {
      this.#pendingTick = true; // remember one; the rest are dropped
      return;
    }
    this.#busy = true;
    this.#collecting = this.#process().finally(() => {
      this.#busy = false;
    });
  }

  async #process(): Promise<void> {
    do {
      this.#pendingTick = false;
      const engine = this.#engine;
      const runtime = this.#runtime;
      if (this.#paused || !engine || !runtime) return;
      const s = this.#s;
      this.#s += 1;
      const due = runtime.due(s);
      if (!due) continue;
      this.#interval += 1;
      const tick = new Date();
      await this.#collectOnce(engine, this.#interval, due.level, due.work, tick);
    } while (this.#pendingTick && !this.#paused && !this.#stopped);
  }

  async #collectOnce(
    engine: Engine,
    n: number,
    level: string,
    work: DomainWork[],
    tick: Date,
  ): Promise<void> {
    const { status, events, monitorId } = this.#ctx;
    const plan = engine.plan.name;
    status.set('level-collector', `idle; started collecting ${plan}/${level} at ${formatTimestamp(tick)}`);
    status.set('level-collect', `${plan}/${level}: collecting`);
    let metrics: Metrics[];
    try {
      metrics = await engine.collect(n, level, work, tick, this.#state);
    } catch (err) {
      // The engine contains collector failures; this is a bug guard so the loop survives.
      events.error('lco-collect-panic', monitorId, errorMessage(err));
      return;
    }
    status.set('level-collect', `${plan}/${level}: sending`);
    if (this.#queue.length >= QUEUE_CAPACITY) {
      events.error(
        'lco-metrics-fault',
        monitorId,
        `metrics channel blocked (check for sink errors), dropping metrics: ${plan}/${level}/${n}`,
      );
      return;
    }
    this.#queue.push({ metrics, plan, level, tick });
    this.#wakeWorker?.();
  }

  /** One worker per monitor: batches in order, each Metrics to each sink in turn. */
  async #sinkWorker(): Promise<void> {
    const { status, events, monitorId, sinks } = this.#ctx;
    for (;;) {
      const batch = this.#queue.shift();
      if (!batch) {
        if (this.#stopped) return;
        await new Promise<void>((resolve) => {
          this.#wakeWorker = resolve;
        });
        this.#wakeWorker = undefined;
        continue;
      }
      for (const m of batch.metrics) {
        for (const sink of sinks) {
          status.set('level-sinks', `${m.plan}/${m.level}/${m.interval}: sending to ${sink.name}`);
          try {
            await sink.send(m);
            status.delete(`error:${sink.name}`);
          } catch (err) {
            const text = errorMessage(err);
            status.set(`error:${sink.name}`, text);
            events.error('sink-send-error', monitorId, `${sink.name} :${text}`);
          }
        }
      }
      status.set('level-sinks', 'idle');
      const dur = Date.now() - batch.tick.getTime();
      status.set(
        'level-collect',
        `last collected and sent metrics for ${batch.plan}/${batch.level} at ${formatTimestamp(batch.tick)} in ${formatDuration(dur)}`,
      );
    }
  }
}
