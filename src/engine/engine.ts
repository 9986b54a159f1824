/**
 * The one collection engine. It runs a level's domains for a monitor and is read two ways:
 * the level collector pushes each run's values to sinks on a schedule, and the exporter's
 * scrape reader runs it on demand for Prometheus. Both get the same guarantees:
 *
 * - Time: a run starts at `start`. Each domain must finish by `start + CMR(domain)` (its
 *   collector max runtime, never beyond the level's interval, nor the scrape's deadline
 *   carried by the run's signal); the deadline aborts the collector's signal, which KILLs
 *   its query. A scheduled run returns by `start + waitMs`: domains not started by then are
 *   skipped this run, and a domain still running keeps going until its own deadline — what
 *   it returns then is handed to `onLate`. A scrape waits for all its domains.
 * - No overlap: when a domain is due while its previous run is still going, the previous
 *   run is cancelled and fenced (its values are dropped), so runs of one domain never
 *   overlap.
 * - Concurrency: every domain takes a slot of the monitor's Limiter while it runs, shared
 *   with the monitor's other engine, so a monitor never runs more collectors at once than
 *   the cap (2), whoever asks.
 * - Errors are data: a collector returns values plus a typed CollectError; the engine alone
 *   applies the error policy the collector declares in its help and the plan sets (report /
 *   report-once / ignore, drop / zero, retry / stop). A failing domain never fails the
 *   others.
 * - Records: each domain's last run (time, duration, success, error, metric count) is kept
 *   and, when the engine has a status writer, shown as `domain:<domain>` and
 *   `error:<domain>`; finished and failed runs are counted in the monitor's tally.
 */
import type { Collector, CollectorHelp, CollectResult } from '../core/collector.js';
import { CollectError } from '../core/collector.js';
import { errnoOf, errorMessage } from '../core/errors.js';
import type { Events } from '../core/events.js';
import type { MetricValue } from '../core/metrics.js';
import type { LogRecord } from '../core/records.js';
import type { CollectionTally } from '../core/probe.js';
import type { Plan } from '../core/plan.js';
import type { StatusWriter } from '../core/status.js';
import { MonitorKey, monitorKeyOf } from '../core/status-keys.js';
import { deadlineOn, sleepOn, systemClock, type Clock, type TimerHandle } from '../util/clock.js';
import { formatDuration } from '../util/duration.js';
import { formatTimestamp } from '../util/time.js';
import { Limiter } from './limiter.js';
import { isPanic, panicText } from './panic.js';
import { applyPolicy, PolicyMemory } from './policy.js';

/** How long a due domain waits for its cancelled previous run to settle before it is skipped. */
const FENCE_WAIT_MS = 1000;

/** A plan ready to run: merged levels and its time limits. */
export interface ActivePlan {
  /** The plan with merged (levelled-up) levels, as given to collectors' prepare. */
  plan: Plan;
  /** How long a scheduled run waits for its domains (engine max runtime), ms. */
  emrMs: number;
  /** Collector max runtime per domain, ms. */
  cmrMs: ReadonlyMap<string, number>;
  /** Domain frequency (smallest level freq that collects it), ms: frequent domains go first. */
  domainFreqMs: ReadonlyMap<string, number>;
}

/** One domain to collect in a run, with the level whose settings it uses. */
export interface DomainWork {
  domain: string;
  level: string;
}

/** Where the engine gets collectors and their help. */
export interface CollectorSource {
  make(domain: string): Collector;
  help(domain: string): CollectorHelp | undefined;
}

export interface EngineOptions {
  monitorId: string;
  active: ActivePlan;
  collectors: CollectorSource;
  events: Events;
  /** The monitor's collector cap, shared by its engines; default: a cap of its own. */
  limiter?: Limiter;
  clock?: Clock;
  /** Where `engine-collect`, `error:collect`, `error:<domain>` and `domain:<domain>` go; none when absent. */
  status?: StatusWriter;
  /** Prepare a domain again before its next run after it failed (the exporter's rule). */
  reprepareAfterError?: boolean;
  /** Counts every finished domain run and every failed one (the agent's own `/metrics`). */
  tally?: CollectionTally;
  /**
   * Start a run's domains one after another while they are quick: each waits for the one
   * before it to finish, or for this many ms after it started, whichever comes first. Quick
   * domains then share the monitor's one idle connection, and a slow one does not hold up
   * the rest (they start beside it, on a second connection). 0 or absent: all start at once
   * (up to the limiter's cap).
   */
  staggerMs?: number;
}

/**
 * Abort reasons of every run, made once: an abort without a reason builds a DOMException
 * with its stack, a cost paid per collection for nothing (these reasons are never shown).
 */
const NOT_STARTED = new Error('not started in time');

/** The stagger sonde's monitors use (see EngineOptions.staggerMs). */
export const STAGGER_MS = 100;

/** What one domain's run gave. */
export interface DomainOutcome {
  domain: string;
  level: string;
  values: MetricValue[];
  /** The error to report after the plan's policy ('' = nothing to report). */
  error: string;
  /** The run failed, whatever the policy makes of it. */
  failed: boolean;
  /** Run time, ms. */
  ms: number;
  /** Text values the collector kept (exporter reading). */
  text?: Record<string, string>;
  /** Records the collector returned (see core/records.ts); kept whatever the error policy. */
  records?: LogRecord[];
  /** The collector threw a programming error (reported as `collector-panic`, not `collector-error`). */
  panic?: true;
  /** What part of the domain this server cannot serve (a partial error), kept as its status line. */
  partial?: string;
}

/** A domain's last run. */
export interface DomainRecord {
  /** When it started, epoch ms. */
  at: number;
  ms: number;
  ok: boolean;
  /** The collector's error text ('' when ok). */
  error: string;
  metrics: number;
}

export interface RunRequest {
  /** Interval number, for texts (`<plan>/<level>/<interval>`). */
  interval: number;
  level: string;
  work: readonly DomainWork[];
  /** Epoch ms the run counts from (the tick, or the scrape's start). */
  start: number;
  /**
   * run() returns by `start + waitMs`, handing later outcomes to onLate; without it, run()
   * waits for every domain (each is bounded by its own deadline).
   */
  waitMs?: number;
  /** Aborts every domain of this run (a scrape whose client left). */
  signal?: AbortSignal;
  /** Receives what a domain returns after run() has returned. */
  onLate?(outcome: DomainOutcome): void;
}

export interface RunResult {
  /** Outcomes in the order the domains finished. */
  outcomes: DomainOutcome[];
  /** Domains that started. */
  started: number;
}

/** What #collectOnce gives: the result, and whether its error is a panic. */
interface Collected {
  result: CollectResult;
  panic: boolean;
}

/** A collector's answer has at least its values array (anything else is a bug). */
function isCollectResult(r: unknown): r is CollectResult {
  return typeof r === 'object' && r !== null && Array.isArray((r as { values?: unknown }).values);
}

interface DomainRun {
  promise: Promise<void>;
  /** Cancels the run (its deadline's signal aborts with `why`). */
  abort: (why: Error) => void;
  /** set when a newer run cancelled this one: its values are dropped */
  fenced: boolean;
}

/** State shared by the domains of one run. */
interface RunState {
  req: RunRequest;
  tag: string;
  outcomes: DomainOutcome[];
  started: number;
  open: boolean;
}

/**
 * One engine per prepared plan: it owns that plan's collectors. Replacing the plan means
 * making a new Engine and closing the old one.
 */
export class Engine {
  readonly #opts: EngineOptions;
  readonly #clock: Clock;
  readonly #limiter: Limiter;
  /** domain → prepared collector */
  readonly #ready = new Map<string, Collector>();
  readonly #running = new Map<string, DomainRun>();
  readonly #records = new Map<string, DomainRecord>();
  readonly #policy = new PolicyMemory();
  /** domain → the status line of its partial error, while the collector returns it */
  readonly #partial = new Map<string, string>();
  #closed = false;

  private constructor(opts: EngineOptions, ready: Map<string, Collector>) {
    this.#opts = opts;
    this.#clock = opts.clock ?? systemClock;
    this.#limiter = opts.limiter ?? new Limiter();
    for (const [d, c] of ready) this.#ready.set(d, c);
  }

  /**
   * Make and prepare every domain's collector (shared by all levels) with the whole plan.
   * Throws with `while making <domain> collector: …` or `while preparing
   * <plan>/<level>/<domain>: …`; collectors made so far are closed.
   */
  static async prepare(
    opts: EngineOptions,
    signal: AbortSignal,
    onStep?: (text: string) => void,
  ): Promise<Engine> {
    const plan = opts.active.plan;
    const ready = new Map<string, Collector>();
    try {
      for (const domain of planDomains(plan).keys()) ready.set(domain, makeCollector(opts, domain));
      for (const [domain, collector] of ready) {
        signal.throwIfAborted();
        onStep?.(`${plan.name}: prepare collector ${domain}`);
        await prepareCollector(plan, domain, collector, signal);
      }
    } catch (err) {
      await closeAll(ready.values());
      throw err;
    }
    return new Engine(opts, ready);
  }

  /** An engine that prepares each domain on its first run (and again after a failure if asked). */
  static lazy(opts: EngineOptions): Engine {
    return new Engine(opts, new Map());
  }

  get plan(): Plan {
    return this.#opts.active.plan;
  }

  get active(): ActivePlan {
    return this.#opts.active;
  }

  /** Each domain's last run. */
  records(): ReadonlyMap<string, DomainRecord> {
    return this.#records;
  }

  /** Cancel running domains and release the collectors. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const run of this.#running.values()) {
      run.fenced = true;
      run.abort(new Error('plan stopped'));
    }
    await Promise.allSettled([...this.#running.values()].map((r) => r.promise));
    await closeAll(this.#ready.values());
    this.#ready.clear();
  }

  /** Run the given domains; resolves by `start + waitMs` (see the file comment). */
  async run(req: RunRequest): Promise<RunResult> {
    const { status } = this.#opts;
    const state: RunState = {
      req,
      tag: `${this.plan.name}/${req.level}/${req.interval}`,
      outcomes: [],
      started: 0,
      open: true,
    };
    status?.set(MonitorKey.engineCollect, `${state.tag}: collecting`);
    const freq = (d: string): number => this.active.domainFreqMs.get(d) ?? Number.MAX_SAFE_INTEGER;
    const queue = req.work
      .filter((w) => !this.#policy.stopped(w.domain))
      .sort((a, b) => freq(a.domain) - freq(b.domain));
    this.#opts.events.debug(
      () => `${state.tag}: collecting ${queue.length} domains: ${queue.map((w) => w.domain).join(', ')}`,
      this.#opts.monitorId,
    );
    // Domains wait for a slot until the run stops waiting; without waitMs, until the run's signal.
    const waiting =
      req.waitMs === undefined
        ? {
            signal: req.signal ?? new AbortController().signal,
            done: () => undefined,
            abort: () => undefined,
          }
        : deadlineOn(this.#clock, req.start + req.waitMs, 'not started in time', req.signal);
    const tasks = this.#startAll(queue, state, waiting.signal);
    status?.set(
      MonitorKey.engineCollect,
      `${state.tag}: receiving metrics, ${Math.min(this.#limiter.used, queue.length)} collectors running`,
    );
    let settled = false;
    if (req.waitMs === undefined) {
      await tasks;
      settled = true;
    } else {
      // A plain timer, not sleepOn: no abort signal to make and fire for each run.
      let timer: TimerHandle | undefined;
      const over = new Promise<void>((resolve) => {
        timer = this.#clock.setTimeout(resolve, req.start + req.waitMs! - this.#clock.now());
      });
      await Promise.race([tasks.then(() => (settled = true)), over]);
      if (timer !== undefined) this.#clock.clearTimeout(timer);
    }
    state.open = false;
    // Whatever still waits for a slot now was not started in time: skipped this run. When
    // every domain has finished, nothing waits: the signal is let go without firing it.
    if (!settled) waiting.abort(NOT_STARTED);
    waiting.done();
    this.#summarize(state);
    return { outcomes: state.outcomes, started: state.started };
  }

  /** Run every domain of the queue, staggered when the engine is told to (EngineOptions.staggerMs). */
  async #startAll(queue: DomainWork[], state: RunState, waiting: AbortSignal): Promise<void> {
    const staggerMs = this.#opts.staggerMs ?? 0;
    if (staggerMs <= 0) {
      await Promise.all(queue.map((w) => this.#runDomain(w, state, waiting)));
      return;
    }
    let turn: Promise<unknown> = Promise.resolve();
    const tasks = queue.map((w) => {
      let started: () => void = () => undefined;
      const start = new Promise<void>((resolve) => (started = resolve));
      const task = turn.then(() => this.#runDomain(w, state, waiting, started));
      // The next domain's turn: this one finished, or ran for staggerMs.
      turn = nextTurn(this.#clock, task, start, staggerMs, waiting);
      return task;
    });
    await Promise.all(tasks);
  }

  /** Wait for a slot, fence the previous run, collect, apply the policy, record. */
  async #runDomain(
    w: DomainWork,
    state: RunState,
    waiting: AbortSignal,
    started: () => void = () => undefined,
  ): Promise<void> {
    let release: () => void;
    try {
      release = await this.#limiter.acquire(waiting);
    } catch {
      return; // not started in time, or the run was aborted: skipped this run
    }
    try {
      if (this.#closed || !(await this.#fence(w, state))) return;
      state.started++;
      started();
      await this.#collect(w, state);
    } finally {
      release();
    }
  }

  /** Cancel a still-running previous run of the domain; false when it did not stop in time. */
  async #fence(w: DomainWork, state: RunState): Promise<boolean> {
    const prev = this.#running.get(w.domain);
    if (prev === undefined) return true;
    this.#opts.events.error(
      'collector-fault',
      this.#opts.monitorId,
      `${state.tag}/${w.domain}: previous collection still running, cancelled`,
    );
    prev.fenced = true;
    prev.abort(new Error('cancelled: domain due again'));
    const gaveUp = new AbortController();
    const settled = await Promise.race([
      prev.promise.then(() => true),
      sleepOn(this.#clock, FENCE_WAIT_MS, gaveUp.signal).then(() => false),
    ]);
    gaveUp.abort();
    if (!settled) {
      const error = 'previous collection did not stop in time; skipped';
      state.outcomes.push({ ...w, values: [], error, failed: true, ms: 0 });
    }
    return settled;
  }

  /** One domain under its deadline; never rejects. */
  async #collect(w: DomainWork, state: RunState): Promise<void> {
    const { req } = state;
    const cmr = this.active.cmrMs.get(w.domain) ?? this.active.emrMs;
    const deadline = deadlineOn(
      this.#clock,
      req.start + cmr,
      `timeout after ${formatDuration(cmr)}`,
      req.signal,
    );
    const run: DomainRun = { abort: deadline.abort, fenced: false, promise: Promise.resolve() };
    const at = this.#clock.now();
    const t0 = this.#clock.precise();
    run.promise = (async () => {
      const { result, panic } = await this.#collectOnce(w, deadline.signal);
      deadline.done();
      if (this.#running.get(w.domain) === run) this.#running.delete(w.domain);
      this.#finish(w, state, run, result, this.#clock.precise() - t0, at, panic);
    })();
    this.#running.set(w.domain, run);
    await run.promise;
  }

  /**
   * Prepare if needed, then collect; errors become a CollectError. Never rejects. A panic
   * (a programming error, see panic.ts) is flagged so it is reported as `collector-panic`.
   */
  async #collectOnce(w: DomainWork, signal: AbortSignal): Promise<Collected> {
    let preparing = false;
    try {
      let collector = this.#ready.get(w.domain);
      if (collector === undefined) {
        preparing = true;
        collector = makeCollector(this.#opts, w.domain);
        try {
          await prepareCollector(this.plan, w.domain, collector, signal);
        } catch (err) {
          await closeAll([collector]);
          throw err;
        }
        this.#ready.set(w.domain, collector);
        preparing = false;
      }
      const result: unknown = await collector.collect(w.level, signal);
      if (!isCollectResult(result))
        throw new TypeError(`${w.domain}: collect() returned no { values } result`);
      return { result, panic: false };
    } catch (err) {
      // prepareCollector wraps what prepare threw: classify the original.
      const thrown = preparing && err instanceof Error && err.cause !== undefined ? err.cause : err;
      if (!isPanic(thrown))
        return { result: { values: [], error: toCollectError(err, signal) }, panic: false };
      const text = `${preparing ? 'while preparing the collector: ' : ''}${panicText(thrown)}`;
      const stack = thrown instanceof Error ? thrown.stack : undefined;
      if (stack !== undefined)
        this.#opts.events.debug(() => `${w.domain}: panic: ${stack}`, this.#opts.monitorId);
      return { result: { values: [], error: new CollectError(text, { cause: thrown }) }, panic: true };
    }
  }

  /** Policy, record, status; hand the outcome to the run or, when it has returned, to onLate. */
  #finish(
    w: DomainWork,
    state: RunState,
    run: DomainRun,
    result: CollectResult,
    ms: number,
    at: number,
    panic: boolean,
  ): void {
    const failed = result.error !== undefined && !result.error.quiet && !result.error.partial;
    if (failed && this.#opts.reprepareAfterError === true) this.#unprepare(w.domain);
    if (run.fenced) {
      if (!state.open)
        this.#opts.events.error(
          'drop-metrics-fence',
          this.#opts.monitorId,
          `${state.tag}/${w.domain}: late values dropped`,
        );
      return;
    }
    const tally = this.#opts.tally;
    if (tally !== undefined) {
      tally.collections++;
      if (failed) tally.errors++;
    }
    const help = this.#opts.collectors.help(w.domain);
    const applied = applyPolicy(this.#policy, this.plan, w, result, help, (text) =>
      this.#opts.events.debug(text, this.#opts.monitorId),
    );
    const { partial, ...kept } = applied;
    const outcome: DomainOutcome = { ...w, ...kept, failed, ms };
    if (partial !== undefined) outcome.partial = partial;
    if (result.text !== undefined) outcome.text = result.text;
    if (result.records !== undefined && result.records.length > 0) outcome.records = result.records;
    if (panic) outcome.panic = true;
    this.#records.set(w.domain, {
      at,
      ms,
      ok: !failed,
      error: result.error?.message ?? '',
      metrics: outcome.values.length,
    });
    if (state.open) {
      state.outcomes.push(outcome);
      return;
    }
    this.#report(outcome, state.tag);
    if (state.req.onLate !== undefined) state.req.onLate(outcome);
    else if (outcome.values.length > 0)
      // Nobody takes values after the run returned: they are dropped (the level collector
      // always takes them; it drops them itself, with the same event, when no batch follows).
      this.#opts.events.error(
        'drop-metrics-flush',
        this.#opts.monitorId,
        `${state.tag}/${w.domain}: dropping ${outcome.values.length} late values: the run takes no late values`,
      );
  }

  #unprepare(domain: string): void {
    const collector = this.#ready.get(domain);
    this.#ready.delete(domain);
    if (collector !== undefined) void closeAll([collector]); // best effort; it failed anyway
  }

  /** Status and events for one outcome: `domain:<d>`, `error:<d>`, `collector-error` or `collector-panic`. */
  #report(o: DomainOutcome, tag: string): void {
    const { status, events, monitorId } = this.#opts;
    const rec = this.#records.get(o.domain);
    if (rec !== undefined) status?.set(monitorKeyOf.domain(o.domain), recordText(rec));
    const key = monitorKeyOf.domainError(o.domain);
    if (o.error === '') {
      // A partial error reported before keeps its line while the collector returns it.
      const kept = o.partial === undefined ? undefined : this.#partial.get(o.domain);
      if (kept === undefined) {
        this.#partial.delete(o.domain);
        status?.delete(key);
      } else status?.set(key, kept);
      return;
    }
    const at = timestampText(this.#clock.now());
    const line = `at ${at}: ${tag}/${o.domain}: ${o.error}`;
    status?.set(key, line);
    if (o.partial === undefined) this.#partial.delete(o.domain);
    else this.#partial.set(o.domain, line);
    const text = `${tag}/${o.domain}: ${o.error}`;
    if (o.panic === true) events.error('collector-panic', monitorId, text);
    else events.error('collector-error', monitorId, text);
  }

  /** After a run: report each outcome, `error:collect` and the `engine-collect` summary. */
  #summarize(state: RunState): void {
    const { status, events, monitorId } = this.#opts;
    const { tag } = state;
    status?.set(MonitorKey.engineCollect, `${tag}: logging errors`);
    let values = 0;
    let errors = 0;
    const withValues = new Set<string>();
    for (const o of state.outcomes) {
      values += o.values.length;
      if (o.values.length > 0) withValues.add(o.domain);
      if (o.error !== '') errors++;
      this.#report(o, tag);
    }
    if (errors === 0) {
      status?.delete(MonitorKey.collectError);
    } else {
      const text =
        values > 0
          ? `${tag}: partial success: ${values} metrics collected, ${errors} errors`
          : `${tag}: failed: zero metrics collected, ${errors} errors`;
      status?.set(MonitorKey.collectError, text);
      events.error('engine-collect-error', monitorId, text);
    }
    const runtime = formatDuration(this.#clock.now() - state.req.start);
    const done = `${tag}: done: ${state.started} started, ${withValues.size} domains ${values} values collected, ${runtime} runtime, ${errors} error`;
    status?.set(MonitorKey.engineCollect, done);
    events.debug(done, monitorId);
  }
}

/**
 * Resolves when `task` settles, `ms` after `start` resolves, or when `signal` aborts,
 * whichever comes first, and leaves no timer or listener behind: a quick domain's stagger
 * timer is cleared as soon as it finishes, instead of firing after the run.
 */
function nextTurn(
  clock: Clock,
  task: Promise<unknown>,
  start: Promise<void>,
  ms: number,
  signal: AbortSignal,
): Promise<void> {
  return new Promise((resolve) => {
    let timer: TimerHandle | undefined;
    let over = false;
    const end = (): void => {
      if (over) return;
      over = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      signal.removeEventListener('abort', end);
      resolve();
    };
    if (signal.aborted) {
      end();
      return;
    }
    signal.addEventListener('abort', end, { once: true });
    task.then(end, end);
    void start.then(() => {
      if (!over) timer = clock.setTimeout(end, ms);
    });
  });
}

/** The second timestampText() last formatted, and its text. */
let stampSecond = NaN;
let stampText = '';

/**
 * formatTimestamp() of an instant (epoch ms), remembered for its second: the text is to the
 * second, and the status lines of every monitor's collections in one second (a few hundred
 * at scale) share it instead of each reading the date's local fields again.
 */
export function timestampText(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== stampSecond) {
    stampText = formatTimestamp(new Date(ms));
    stampSecond = second;
  }
  return stampText;
}

/** `domain:<d>` text: `ok at <ts> in 12ms: 37 metrics` or `failed at <ts> in 5s: <error>`. */
export function recordText(r: DomainRecord): string {
  const at = timestampText(r.at);
  return r.ok
    ? `ok at ${at} in ${formatDuration(r.ms)}: ${r.metrics} metrics`
    : `failed at ${at} in ${formatDuration(r.ms)}: ${r.error}`;
}

/** Each domain of the plan with the first level (ascending freq) that collects it. */
function planDomains(plan: Plan): Map<string, string> {
  const first = new Map<string, string>();
  const levels = Object.values(plan.levels).sort((a, b) => a.freqMs - b.freqMs);
  for (const lvl of levels)
    for (const d of Object.keys(lvl.collect)) if (!first.has(d)) first.set(d, lvl.name);
  return first;
}

function makeCollector(opts: EngineOptions, domain: string): Collector {
  try {
    return opts.collectors.make(domain);
  } catch (err) {
    throw new Error(`while making ${domain} collector: ${errorMessage(err)}`, { cause: err });
  }
}

async function prepareCollector(
  plan: Plan,
  domain: string,
  c: Collector,
  signal: AbortSignal,
): Promise<void> {
  try {
    await c.prepare(plan, signal);
  } catch (err) {
    const level = planDomains(plan).get(domain) ?? '';
    throw new Error(`while preparing ${plan.name}/${level}/${domain}: ${errorMessage(err)}`, { cause: err });
  }
}

async function closeAll(collectors: Iterable<Collector>): Promise<void> {
  await Promise.allSettled([...collectors].map(async (c) => c.close?.()));
}

/** Normalise anything a collector threw into a CollectError (keeping a MySQL errno). */
function toCollectError(err: unknown, signal: AbortSignal): CollectError {
  if (err instanceof CollectError) return err;
  if (signal.aborted) return new CollectError(errorMessage(signal.reason ?? err), { cause: err });
  const errno = errnoOf(err);
  return new CollectError(errorMessage(err), errno === undefined ? { cause: err } : { errno, cause: err });
}
