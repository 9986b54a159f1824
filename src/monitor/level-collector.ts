/**
 * The level collector (LCO): the push reader of the engine. A 1-second ticker picks the due
 * level of the active plan, the engine runs its domains, and the batch goes to the
 * monitor's sinks.
 *
 * Ticks: the logical clock `s` starts at 0 on the first tick after a plan is activated and
 * advances by one per processed tick. A collection never overlaps the previous one: while
 * one runs, one pending tick is remembered and the rest are dropped, so a slow collection
 * shifts the schedule instead of piling up. Ticks at which no level is due only advance the
 * clock: while the collector is idle they are counted in advance and the timer wakes for the
 * next tick that collects (a 5 s level: one wake-up per collection instead of five); any
 * change (an activation, a pause) brings the timer back to the next tick.
 *
 * Batches: each run's values form one Metrics record for its interval; values a domain
 * returns after its run was handed over (late, but within its own deadline) go out with
 * the next batch as a record of their own interval, oldest first; when no such batch comes
 * (the plan changed, the collector stopped) they are dropped with `drop-metrics-flush`.
 *
 * Delivery: batches go on a queue of capacity 10 served by one sink worker; a full queue
 * drops the batch (event `lco-metrics-fault`). Each Metrics record goes to each sink in
 * turn; a failing sink never blocks the others. A sink that fails to send gives
 * `sink-send-error`; one that throws a programming error (see engine/panic.ts), or anything
 * else in the worker that throws, gives `lco-receiver-panic`, and the worker goes on.
 */
import type { Collector, CollectorHelp } from '../core/collector.js';
import type { Db } from '../core/db.js';
import type { Events } from '../core/events.js';
import { errorMessage } from '../core/errors.js';
import type { MetricValue, Metrics } from '../core/metrics.js';
import { recordCount, type LogRecord, type Records } from '../core/records.js';
import type { LevelState, Plan } from '../core/plan.js';
import type { Sink } from '../core/sink.js';
import type { StatusWriter } from '../core/status.js';
import { MonitorKey, monitorKeyOf } from '../core/status-keys.js';
import { LATE_TICK_MS, type CollectionTally, type LevelTiming } from '../core/probe.js';
import type { ActivePlan, DomainOutcome, DomainWork, EngineOptions } from '../engine/engine.js';
import { Engine, STAGGER_MS, timestampText } from '../engine/engine.js';
import type { Limiter } from '../engine/limiter.js';
import { isPanic, panicText } from '../engine/panic.js';
import { Backoff } from '../util/backoff.js';
import { deadlineOn, sleepOn, systemClock, type Clock, type TimerHandle } from '../util/clock.js';
import { formatDuration } from '../util/duration.js';
import { formatTimestamp } from '../util/time.js';

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
  /** The monitor's collector cap, shared with its exporter. */
  limiter?: Limiter;
  /** Counts this reader's finished and failed domain runs (kept across plan changes). */
  tally?: CollectionTally;
  /** Counts level collections started on time and late (kept across plan changes). */
  timing?: LevelTiming;
  /** Tick period; 1000 ms except in tests that want a faster clock. */
  tickMs?: number;
  clock?: Clock;
  /** Called after a collection without errors. */
  onClean?(): void;
  /** Called with each collection's values once its run returned, before the sinks get them. */
  onCollected?(m: Metrics): void;
  /** Called after onCollected with the records the same batch carries (undefined: none). */
  onRecords?(m: Metrics, records: Records | undefined): void;
  /**
   * The embedding program's `transformMetrics` hook, run by the sink worker on each batch
   * before the sinks: it may change the records in place or return the ones to send. A
   * throw drops the batch (event `lco-metrics-fault`; `lco-receiver-panic` for a
   * programming error, see engine/panic.ts).
   */
  transformMetrics?: TransformMetrics;
}

/** Change a batch of metrics before the sinks get it (in place, or return the records to send). */
export type TransformMetrics = (
  metrics: Metrics[],
  ctx: { monitorId: string },
) => void | Metrics[] | Promise<void | Metrics[]>;

const QUEUE_CAPACITY = 10;
/** The most ticks one timer skips (see #idleTicks): a plan's slowest level still wakes it hourly. */
const MAX_SKIPPED = 3600;

/**
 * A domain's values into a batch record: the engine's array itself when the domain has none
 * there yet (a domain runs once per run: the usual case), without copying; otherwise a new
 * array of both (neither array is changed: nothing downstream changes them either).
 */
function addValues(m: Metrics, domain: string, values: MetricValue[]): void {
  const have = m.values[domain];
  m.values[domain] = have === undefined ? values : have.concat(values);
}

/** A copy of a batch record whose values (and their group and meta) can be changed freely. */
function copyMetrics(m: Metrics): Metrics {
  const values: Record<string, MetricValue[]> = {};
  for (const [domain, list] of Object.entries(m.values))
    values[domain] = list.map((v) => {
      const c: MetricValue = { ...v };
      if (v.group !== undefined) c.group = { ...v.group };
      if (v.meta !== undefined) c.meta = { ...v.meta };
      return c;
    });
  return { ...m, values };
}

/** The debug line of one record sent to one sink. */
function sentLine(sink: string, m: Metrics): string {
  const values = Object.values(m.values).reduce((n, list) => n + list.length, 0);
  return `sink ${sink}: sent ${m.plan}/${m.level}/${m.interval}: ${values} values`;
}
const PLAN_RETRY_MS = 2000;
const PREPARE_TIMEOUT_MS = 10_000;
const PING_TIMEOUT_MS = 5000;
const PREPARE_BACKOFF_CAP_MS = 60_000;

interface Batch {
  metrics: Metrics[];
  /** The collection's records (and late ones of earlier runs), for the sinks that take records. */
  records?: Records;
  plan: string;
  level: string;
  tick: Date;
}

/** What a plan change names when no plan is asked for by name: the monitor's first plan. */
const FIRST_PLAN = '(first plan)';

/** One side of a plan change, `state:<s> plan:<p>`; `none` for what is not set yet (the first activation). */
function changeSide(state: string, plan: string): string {
  return `state:${state || 'none'} plan:${plan || 'none'}`;
}

export class LevelCollector {
  readonly #ctx: LevelCollectorContext;
  readonly #clock: Clock;
  #engine: Engine | undefined;
  #runtime: PlanRuntime | undefined;
  #state = '';
  #planName = '';
  #paused = true;
  #s = 0;
  #interval = 0;
  #busy = false;
  #pendingTick = false;
  /** When the tick being processed was due (clock ms). */
  #dueAt = 0;
  #timer: TimerHandle | undefined;
  /** When the ticks started (clock ms): ticks fall on whole periods after it. */
  #phase = 0;
  /** Ticks the armed timer skips (each would only have advanced `s`). */
  #armedSkip = 0;
  #activation: AbortController | undefined;
  #activationDone: Promise<void> = Promise.resolve();
  #collecting: Promise<void> = Promise.resolve();
  /** late values, by interval, waiting for the next batch */
  readonly #late = new Map<number, Metrics>();
  /** late records, by domain, waiting for the next batch */
  readonly #lateRecords = new Map<string, LogRecord[]>();
  readonly #queue: Batch[] = [];
  #wakeWorker: (() => void) | undefined;
  #worker: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(ctx: LevelCollectorContext) {
    this.#ctx = ctx;
    this.#clock = ctx.clock ?? systemClock;
  }

  #now(): Date {
    return new Date(this.#clock.now());
  }

  /** Start paused: nothing is collected until a plan is activated. */
  start(): void {
    this.#ctx.status.set(
      MonitorKey.levelCollector,
      `started at ${formatTimestamp(this.#now())} (paused until plan change)`,
    );
    this.#phase = this.#clock.now();
    this.#scheduleTick(0);
    this.#worker = this.#sinkWorker();
  }

  /**
   * The tick `skip` + 1 periods after the last whole period since #phase (ticks missed while
   * the process was busy are not made up). The `skip` ticks before it would only advance the
   * logical clock (see #idleTicks): it advances by as many when the timer fires.
   */
  #scheduleTick(skip: number): void {
    const period = this.#ctx.tickMs ?? 1000;
    const wait = period - ((this.#clock.now() - this.#phase) % period) + skip * period;
    const dueAt = this.#clock.now() + wait;
    this.#armedSkip = skip;
    this.#timer = this.#clock.setTimeout(() => {
      if (this.#stopped) return;
      this.#s += skip;
      this.#onTick(dueAt);
      this.#scheduleTick(this.#idleTicks());
    }, wait);
  }

  /**
   * How many of the next ticks would do nothing but advance `s`: while idle with a plan
   * running, the ticks before the next one at which a level is due (at most MAX_SKIPPED).
   * Otherwise (collecting, paused, no plan, a schedule that throws) none: each tick is
   * processed (and a schedule that throws is reported there).
   */
  #idleTicks(): number {
    const runtime = this.#runtime;
    if (this.#busy || this.#paused || this.#stopped || this.#engine === undefined || runtime === undefined)
      return 0;
    let skip = 0;
    try {
      while (skip < MAX_SKIPPED && runtime.due(this.#s + skip) === undefined) skip++;
    } catch {
      return 0;
    }
    return skip;
  }

  /** Arm the timer again for what comes next: after a collection, or a change that ends skipping. */
  #rearm(): void {
    if (this.#stopped || this.#timer === undefined) return;
    const skip = this.#idleTicks();
    if (skip === 0 && this.#armedSkip === 0) return; // armed for the next tick already
    this.#clock.clearTimeout(this.#timer);
    this.#scheduleTick(skip);
  }

  /** Current level state and plan name ('' before the first activation). */
  get state(): string {
    return this.#state;
  }

  get planName(): string {
    return this.#planName;
  }

  /** The engine of the active plan (its per-domain records), if any. */
  get engine(): Engine | undefined {
    return this.#engine;
  }

  /**
   * Activate a plan in the background; a newer call cancels an activation in progress.
   * Resolves when this activation has finished or was cancelled. `why` is for the debug line.
   */
  changePlan(state: LevelState, planName: string, why = ''): Promise<void> {
    this.#activation?.abort();
    const ac = new AbortController();
    this.#activation = ac;
    const previous = this.#activationDone;
    this.#activationDone = (async () => {
      await previous; // the cancelled one unwinds first
      if (ac.signal.aborted) return;
      try {
        await this.#activate(state, planName, why, ac.signal);
      } catch (err) {
        if (!ac.signal.aborted)
          this.#ctx.events.error('lco-change-plan-error', this.#ctx.monitorId, errorMessage(err));
      }
    })();
    return this.#activationDone;
  }

  /**
   * Stop collecting (ticks reset the clock) until the next activation; an activation still
   * in progress is cancelled, so nothing starts collecting behind the pause. With `state`
   * (`standby`: the HA hook says this agent is standby) that state becomes the level state.
   */
  pause(state?: LevelState): void {
    this.#activation?.abort();
    if (state !== undefined) {
      this.#state = state;
      this.#ctx.status.set(MonitorKey.levelState, state);
    }
    this.#pauseNow();
  }

  #pauseNow(): void {
    this.#paused = true;
    this.#rearm();
    this.#ctx.status.set(MonitorKey.levelCollector, `paused at ${formatTimestamp(this.#now())}`);
    this.#ctx.events.info('lco-paused', this.#ctx.monitorId);
  }

  /** Stop everything: ticker, activation, the running collection, the engine, the sink worker. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#activation?.abort();
    this.#paused = true;
    await this.#activationDone;
    const engine = this.#engine;
    this.#engine = undefined;
    await engine?.close();
    await this.#collecting;
    this.#dropLate('the level collector stopped');
    this.#wakeWorker?.();
    await this.#worker;
  }

  async #activate(state: LevelState, planName: string, why: string, signal: AbortSignal): Promise<void> {
    const { status, events, monitorId } = this.#ctx;
    const from = changeSide(this.#state, this.#planName);
    let change = `${from} -> ${changeSide(state, planName || FIRST_PLAN)}`;
    const started = this.#clock.now();
    events.info('change-plan', monitorId, change);
    events.debug(() => `plan change ${change}${why === '' ? '' : `: ${why}`}`, monitorId);
    status.set(MonitorKey.levelChangePlan, `loading new plan ${planName || FIRST_PLAN} (state ${state})`);
    const plan = await this.#lookup(planName, change, signal);
    if (plan === undefined) return;
    change = `${from} -> ${changeSide(state, plan.name)}`;
    const runtime = this.#ctx.buildRuntime(plan);
    status.set(MonitorKey.levelChangePlan, `preparing new plan ${plan.name} (state ${state})`);
    const engine = await this.#prepare(plan, state, runtime, change, signal);
    if (engine === undefined) return;
    if (signal.aborted) {
      await engine.close();
      return;
    }
    if (!(await this.#swap(engine, runtime, state, signal))) return;
    events.info('change-plan-success', monitorId, change);
    const levels = Object.keys(plan.levels).join(', ');
    events.debug(
      () =>
        `plan ${plan.name} active (levels ${levels}) after ${formatDuration(this.#clock.now() - started)}`,
      monitorId,
    );
    if (!this.#stopped) this.#onTick(this.#clock.now()); // first tick now, not a second later
  }

  /** Look the plan up, retrying every 2 s; undefined when cancelled. */
  async #lookup(planName: string, change: string, signal: AbortSignal): Promise<Plan | undefined> {
    for (;;) {
      try {
        return await this.#ctx.lookupPlan(planName);
      } catch (err) {
        const msg = `${change}: error loading new plan ${planName || FIRST_PLAN}: ${errorMessage(err)} (retrying)`;
        this.#ctx.status.set(MonitorKey.levelChangePlan, msg);
        this.#ctx.events.info('change-plan-error', this.#ctx.monitorId, msg);
        if (!(await sleepOn(this.#clock, PLAN_RETRY_MS, signal))) return undefined;
      }
    }
  }

  /** Prepare an engine for the plan, retrying with backoff; undefined when cancelled. */
  async #prepare(
    plan: Plan,
    state: LevelState,
    runtime: PlanRuntime,
    change: string,
    signal: AbortSignal,
  ): Promise<Engine | undefined> {
    const { status, events, monitorId } = this.#ctx;
    const backoff = new Backoff(PREPARE_BACKOFF_CAP_MS);
    for (;;) {
      if (signal.aborted) return undefined;
      events.info('engine-prepare', monitorId, plan.name);
      const attempt = deadlineOn(
        this.#clock,
        this.#clock.now() + PREPARE_TIMEOUT_MS,
        'prepare timed out',
        signal,
      );
      try {
        // An offline plan (or one with no levels) must activate while MySQL is down.
        if (state !== 'offline' && Object.keys(plan.levels).length > 0)
          await this.#ping(plan, attempt.signal);
        const engine = await Engine.prepare(this.#engineOptions(runtime), attempt.signal, (text) =>
          status.set(MonitorKey.enginePrepare, text),
        );
        status.delete(MonitorKey.enginePrepare);
        return engine;
      } catch (err) {
        status.delete(MonitorKey.enginePrepare);
        if (signal.aborted) return undefined;
        const text = errorMessage(err);
        status.set(
          MonitorKey.levelChangePlan,
          `${change}: error preparing new plan ${plan.name}: ${text} (retrying)`,
        );
        status.set(MonitorKey.enginePrepareError, text);
        events.error('engine-prepare-error', monitorId, text);
        if (!(await sleepOn(this.#clock, backoff.next(), signal))) return undefined;
      } finally {
        attempt.done();
      }
    }
  }

  async #ping(plan: Plan, signal: AbortSignal): Promise<void> {
    this.#ctx.status.set(MonitorKey.enginePrepare, `${plan.name}: connect to MySQL`);
    try {
      await this.#ctx.db.ping({ signal, timeoutMs: PING_TIMEOUT_MS });
    } catch (err) {
      throw new Error(`while connecting to MySQL: ${errorMessage(err)}`, { cause: err });
    }
  }

  #engineOptions(runtime: PlanRuntime): EngineOptions {
    const { monitorId, status, events } = this.#ctx;
    return {
      monitorId,
      active: runtime.active,
      collectors: { make: (d) => this.#ctx.makeCollector(d), help: (d) => this.#ctx.help(d) },
      events,
      status,
      clock: this.#clock,
      staggerMs: STAGGER_MS,
      ...(this.#ctx.limiter === undefined ? {} : { limiter: this.#ctx.limiter }),
      ...(this.#ctx.tally === undefined ? {} : { tally: this.#ctx.tally }),
    };
  }

  /**
   * Swap engines while paused; the clock restarts at s=0 (highest level first). False when
   * the activation was cancelled meanwhile (a newer one, or a pause): then it stays paused.
   */
  async #swap(
    engine: Engine,
    runtime: PlanRuntime,
    state: LevelState,
    signal: AbortSignal,
  ): Promise<boolean> {
    const { status, events, monitorId } = this.#ctx;
    this.#pauseNow();
    await this.#collecting;
    if (signal.aborted) {
      await engine.close();
      return false;
    }
    const old = this.#engine;
    this.#engine = engine;
    this.#runtime = runtime;
    this.#dropLate('the plan changed before the next batch');
    await old?.close();
    const name = engine.plan.name;
    status.set(MonitorKey.enginePlan, name);
    status.delete(MonitorKey.enginePrepareError);
    events.info('engine-prepare-success', monitorId, name);
    if (signal.aborted) return false;
    this.#state = state;
    this.#planName = name;
    status.set(MonitorKey.levelState, state);
    status.set(MonitorKey.levelPlan, name);
    status.set(MonitorKey.levelCollector, `running since ${formatTimestamp(this.#now())}`);
    status.delete(MonitorKey.levelChangePlan);
    this.#s = 0;
    this.#interval = 0;
    this.#paused = false;
    return true;
  }

  #onTick(dueAt: number): void {
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
    this.#dueAt = dueAt;
    this.#collecting = this.#process()
      .catch((err: unknown) => {
        // A bug anywhere in the loop (the schedule, a status write): reported, and the next tick runs.
        this.#ctx.events.error('lco-collect-panic', this.#ctx.monitorId, panicText(err));
      })
      .finally(() => {
        this.#busy = false;
        this.#rearm(); // skip the ticks until the next collection
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
      const late = this.#clock.now() - this.#dueAt > LATE_TICK_MS;
      // A tick remembered while busy is processed late by definition.
      this.#dueAt = -Infinity;
      if (!due) continue;
      const timing = this.#ctx.timing;
      if (timing !== undefined) {
        if (late) timing.late++;
        else timing.onTime++;
      }
      this.#interval += 1;
      await this.#collectOnce(engine, this.#interval, due.level, due.work, this.#now());
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
    status.set(
      MonitorKey.levelCollector,
      `idle; started collecting ${plan}/${level} at ${timestampText(tick.getTime())}`,
    );
    status.set(MonitorKey.levelCollect, `${plan}/${level}: collecting`);
    const current: Metrics = {
      begin: tick,
      end: tick,
      monitorId,
      plan,
      level,
      interval: n,
      state: this.#state,
      values: {},
    };
    try {
      const result = await engine.run({
        interval: n,
        level,
        work,
        start: tick.getTime(),
        waitMs: engine.active.emrMs,
        onLate: (o) => this.#addLate(current, o),
      });
      current.end = this.#now();
      for (const o of result.outcomes) {
        if (o.values.length > 0) addValues(current, o.domain, o.values);
        if (o.records !== undefined) this.#keepRecords(o.domain, o.records);
      }
      if (result.outcomes.every((o) => o.error === '')) this.#ctx.onClean?.();
    } catch (err) {
      // The engine contains collector failures; this is a bug guard so the loop survives.
      events.error('lco-collect-panic', monitorId, errorMessage(err));
      return;
    }
    try {
      this.#ctx.onCollected?.(current);
    } catch (err) {
      events.error('lco-collect-panic', monitorId, errorMessage(err));
    }
    status.set(MonitorKey.levelCollect, `${plan}/${level}: sending`);
    const batch: Batch = { metrics: [...this.#takeLate(), current], plan, level, tick };
    const records = this.#takeRecords(current);
    if (records !== undefined) batch.records = records;
    try {
      this.#ctx.onRecords?.(current, records);
    } catch (err) {
      events.error('lco-collect-panic', monitorId, errorMessage(err));
    }
    this.#enqueue(batch);
  }

  /** Keep a domain's records for the next batch (this run's, or a late run's). */
  #keepRecords(domain: string, records: readonly LogRecord[]): void {
    if (records.length === 0) return;
    const list = this.#lateRecords.get(domain);
    if (list === undefined) this.#lateRecords.set(domain, [...records]);
    else list.push(...records);
  }

  /** The records waiting for a batch, as one Records of `m`'s collection; undefined when none. */
  #takeRecords(m: Metrics): Records | undefined {
    if (this.#lateRecords.size === 0) return undefined;
    const records = Object.fromEntries(this.#lateRecords);
    this.#lateRecords.clear();
    const { monitorId, plan, level, interval, begin } = m;
    return { monitorId, plan, level, interval, begin, records };
  }

  /** Keep values that came after their batch left, under their own interval. */
  #addLate(batch: Metrics, o: DomainOutcome): void {
    if (o.records !== undefined) this.#keepRecords(o.domain, o.records);
    if (o.values.length === 0) return;
    let entry = this.#late.get(batch.interval);
    if (entry === undefined) {
      entry = { ...batch, values: {}, end: this.#now() };
      this.#late.set(batch.interval, entry);
    }
    addValues(entry, o.domain, o.values);
  }

  #takeLate(): Metrics[] {
    const out = [...this.#late.keys()].sort((a, b) => a - b).flatMap((k) => this.#late.get(k) ?? []);
    this.#late.clear();
    return out;
  }

  /**
   * Late values wait for the next batch of their plan; when that batch will never come (the
   * plan changed, the collector stopped), they are dropped here, where they would have been
   * flushed: one `drop-metrics-flush` per domain and interval. (A late value of a cancelled
   * run never gets here: the engine drops it with `drop-metrics-fence`.)
   */
  #dropLate(why: string): void {
    for (const m of this.#late.values())
      for (const [domain, values] of Object.entries(m.values))
        this.#ctx.events.error(
          'drop-metrics-flush',
          this.#ctx.monitorId,
          `${m.plan}/${m.level}/${m.interval}/${domain}: dropping ${values.length} late values: ${why}`,
        );
    this.#late.clear();
    for (const [domain, records] of this.#lateRecords)
      this.#ctx.events.error(
        'drop-metrics-flush',
        this.#ctx.monitorId,
        `${domain}: dropping ${records.length} late records: ${why}`,
      );
    this.#lateRecords.clear();
  }

  #enqueue(batch: Batch): void {
    if (this.#queue.length >= QUEUE_CAPACITY) {
      const last = batch.metrics[batch.metrics.length - 1];
      this.#ctx.events.error(
        'lco-metrics-fault',
        this.#ctx.monitorId,
        `metrics channel blocked (check for sink errors), dropping metrics: ${batch.plan}/${batch.level}/${last?.interval ?? 0}`,
      );
      return;
    }
    this.#queue.push(batch);
    this.#wakeWorker?.();
  }

  /** One worker per monitor: batches in order, each Metrics to each sink in turn. */
  async #sinkWorker(): Promise<void> {
    for (;;) {
      const batch = this.#queue.shift();
      if (batch) {
        try {
          await this.#send(batch);
        } catch (err) {
          // #send contains each sink's failure; this guard keeps the worker alive for the next batches.
          this.#ctx.events.error(
            'lco-receiver-panic',
            this.#ctx.monitorId,
            `${batch.plan}/${batch.level}: ${panicText(err)}`,
          );
        }
        continue;
      }
      if (this.#stopped) return;
      await new Promise<void>((resolve) => {
        this.#wakeWorker = resolve;
      });
      this.#wakeWorker = undefined;
    }
  }

  /** The batch's records after the `transformMetrics` hook; undefined when it threw (batch dropped). */
  async #transformed(batch: Batch): Promise<Metrics[] | undefined> {
    const { status, events, monitorId, transformMetrics } = this.#ctx;
    if (transformMetrics === undefined) return batch.metrics;
    status.set(MonitorKey.levelSinks, 'TransformMetrics');
    try {
      // The hook may change values in place: it gets copies (collectors hand out shared, frozen ones).
      const metrics = batch.metrics.map(copyMetrics);
      return (await transformMetrics(metrics, { monitorId })) ?? metrics;
    } catch (err) {
      const last = batch.metrics[batch.metrics.length - 1];
      const where = `${batch.plan}/${batch.level}/${last?.interval ?? 0}`;
      // The hook failing is a metrics fault; the hook hitting a programming error is a panic.
      if (isPanic(err))
        events.error(
          'lco-receiver-panic',
          monitorId,
          `TransformMetrics: ${panicText(err)}, dropping metrics: ${where}`,
        );
      else
        events.error(
          'lco-metrics-fault',
          monitorId,
          `TransformMetrics: ${errorMessage(err)}, dropping metrics: ${where}`,
        );
      status.set(MonitorKey.levelSinks, 'idle');
      return undefined;
    }
  }

  async #send(batch: Batch): Promise<void> {
    const { status, sinks } = this.#ctx;
    const metrics = await this.#transformed(batch);
    if (metrics === undefined) return;
    for (const m of metrics) {
      for (const sink of sinks) {
        const where = `${m.plan}/${m.level}/${m.interval}`;
        await this.#deliver(
          sink,
          where,
          () => sink.send(m),
          () => sentLine(sink.name, m),
        );
      }
    }
    const records = batch.records;
    if (records !== undefined) {
      const where = `${records.plan}/${records.level}/${records.interval}`;
      for (const sink of sinks) {
        // Only the sinks whose registration takes records are asked.
        if (sink.sendRecords === undefined) continue;
        const send = sink.sendRecords.bind(sink);
        await this.#deliver(
          sink,
          `${where} records`,
          () => send(records),
          () => `sink ${sink.name}: sent ${where}: ${recordCount(records)} records`,
        );
      }
    }
    status.set(MonitorKey.levelSinks, 'idle');
    const dur = this.#clock.now() - batch.tick.getTime();
    status.set(
      MonitorKey.levelCollect,
      `last collected and sent metrics for ${batch.plan}/${batch.level} at ${timestampText(batch.tick.getTime())} in ${formatDuration(dur)}`,
    );
  }

  /** One send to one sink: status while it runs, the error key and event when it fails. */
  async #deliver(sink: Sink, where: string, send: () => Promise<void>, line: () => string): Promise<void> {
    const { status, events, monitorId } = this.#ctx;
    status.set(MonitorKey.levelSinks, `${where}: sending to ${sink.name}`);
    const t0 = this.#clock.now();
    try {
      await send();
      status.delete(monitorKeyOf.sinkError(sink.name));
      events.debug(() => `${line()} in ${formatDuration(this.#clock.now() - t0)}`, monitorId);
    } catch (err) {
      // A programming error in a sink is a panic, not a failed send; either way the next sink goes on.
      const panic = isPanic(err);
      const text = panic ? panicText(err) : errorMessage(err);
      status.set(monitorKeyOf.sinkError(sink.name), text);
      if (panic) events.error('lco-receiver-panic', monitorId, `${sink.name}: ${text}`);
      else events.error('sink-send-error', monitorId, `${sink.name} :${text}`);
    }
  }
}
