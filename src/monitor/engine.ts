/**
 * The engine collects one level of the active plan: every due domain concurrently (at
 * most 2 at once), each under its own deadline, and never two runs of one domain at once
 * (monitors.md §7, style.md habit 3).
 *
 * Timing in a few lines:
 * - A collection starts at tick time T. Each domain must finish by T + CMR(domain); the
 *   engine stops waiting at T + EMR (shorter than the plan's smallest freq).
 * - Domains not started by T + EMR are skipped this interval.
 * - A domain still running at T + EMR keeps going until its own deadline; what it returns
 *   later is handed over with the next batch as its own Metrics record (original interval).
 * - If a domain is due again while its previous run is still going, the previous run is
 *   cancelled and fenced (its late values are dropped): runs of one domain never overlap.
 *
 * Errors are data: a collector returns values plus an error; the engine applies the plan's
 * error policy (report / report-once / ignore, drop / zero, retry / stop). A failing domain
 * never fails the others, and the batch always reaches the sinks.
 */
import type { Collector, CollectorHelp, CollectResult } from '../core/collector.js';
import { CollectError } from '../core/collector.js';
import type { Events } from '../core/events.js';
import type { Metrics, MetricValue } from '../core/metrics.js';
import { MetricType } from '../core/metrics.js';
import type { DomainPlan, Plan } from '../core/plan.js';
import type { StatusWriter } from '../core/status.js';
import { errorMessage } from '../core/errors.js';
import { formatDuration } from '../util/duration.js';
import { formatTimestamp } from '../util/time.js';
import { parsePolicy } from '../plan/policy.js';
import { sleep } from '../util/backoff.js';

/** Max collectors running at once per monitor (monitors.md §7.2). */
export const MAX_CONCURRENT_COLLECTORS = 2;

/** How long a due domain waits for its cancelled previous run to settle before it is skipped. */
const FENCE_WAIT_MS = 1000;

/** A plan ready to run: merged levels and its time limits. */
export interface ActivePlan {
  /** The plan with merged (levelled-up) levels, as given to collectors' prepare. */
  plan: Plan;
  /** Engine max runtime per collection, ms. */
  emrMs: number;
  /** Collector max runtime per domain, ms. */
  cmrMs: ReadonlyMap<string, number>;
  /** Domain frequency (smallest level freq that collects it), ms. */
  domainFreqMs: ReadonlyMap<string, number>;
}

/** One domain to collect this tick, with the level whose settings it uses. */
export interface DomainWork {
  domain: string;
  level: string;
}

export interface EngineContext {
  monitorId: string;
  status: StatusWriter;
  events: Events;
  help(domain: string): CollectorHelp | undefined;
}

interface DomainRun {
  promise: Promise<void>;
  controller: AbortController;
  /** set when a newer run cancelled this one: its values are dropped */
  fenced: boolean;
}

interface Outcome {
  domain: string;
  level: string;
  values: MetricValue[];
  /** error text to report ('' = none) */
  error: string;
}

function levelDomain(plan: Plan, level: string, domain: string): DomainPlan | undefined {
  return plan.levels[level]?.collect[domain];
}

/**
 * One engine per activated plan: it owns that plan's collectors. Replacing the plan means
 * preparing a new Engine and closing the old one.
 */
export class Engine {
  readonly #ctx: EngineContext;
  readonly #active: ActivePlan;
  readonly #collectors: ReadonlyMap<string, Collector>;
  readonly #running = new Map<string, DomainRun>();
  /** domains stopped by a `stop` policy, for the rest of this activation */
  readonly #stopped = new Set<string>();
  /** `<domain>\0<policy>` already reported once */
  readonly #reportedOnce = new Set<string>();
  /** values that arrived after their batch was sent, keyed by interval */
  readonly #late = new Map<number, { metrics: Metrics }>();
  #closed = false;

  private constructor(ctx: EngineContext, active: ActivePlan, collectors: Map<string, Collector>) {
    this.#ctx = ctx;
    this.#active = active;
    this.#collectors = collectors;
  }

  get plan(): Plan {
    return this.#active.plan;
  }

  get active(): ActivePlan {
    return this.#active;
  }

  /**
   * Create every domain's collector once (shared by all levels) and prepare each with the
   * whole plan. Throws with the spec's texts (`while making <domain> collector: …`,
   * `while preparing <plan>/<level>/<domain>: …`); collectors made so far are closed.
   */
  static async prepare(
    ctx: EngineContext,
    active: ActivePlan,
    make: (domain: string) => Collector,
    signal: AbortSignal,
    onStep?: (text: string) => void,
  ): Promise<Engine> {
    const plan = active.plan;
    const collectors = new Map<string, Collector>();
    // first level (ascending freq) that collects each domain, for error texts
    const firstLevel = new Map<string, string>();
    const levels = Object.values(plan.levels).sort((a, b) => a.freqMs - b.freqMs);
    for (const lvl of levels)
      for (const d of Object.keys(lvl.collect)) if (!firstLevel.has(d)) firstLevel.set(d, lvl.name);
    try {
      for (const domain of firstLevel.keys()) {
        try {
          collectors.set(domain, make(domain));
        } catch (err) {
          throw new Error(`while making ${domain} collector: ${errorMessage(err)}`, { cause: err });
        }
      }
      for (const [domain, collector] of collectors) {
        signal.throwIfAborted();
        onStep?.(`${plan.name}: prepare collector ${domain}`);
        try {
          await collector.prepare(plan, signal);
        } catch (err) {
          throw new Error(
            `while preparing ${plan.name}/${firstLevel.get(domain) ?? ''}/${domain}: ${errorMessage(err)}`,
            { cause: err },
          );
        }
      }
    } catch (err) {
      await Promise.allSettled([...collectors.values()].map(async (c) => c.close?.()));
      throw err;
    }
    return new Engine(ctx, active, collectors);
  }

  /** Cancel running collections and release the collectors. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const run of this.#running.values()) {
      run.fenced = true;
      run.controller.abort(new Error('plan stopped'));
    }
    await Promise.allSettled([...this.#running.values()].map((r) => r.promise));
    await Promise.allSettled([...this.#collectors.values()].map(async (c) => c.close?.()));
  }

  /**
   * Collect the given domains for interval `n` of `level`, ticked at `tick`. Returns the
   * Metrics records to send, oldest interval first: late results of earlier intervals, then
   * this one (always present, even when empty).
   */
  async collect(n: number, level: string, work: DomainWork[], tick: Date, state: string): Promise<Metrics[]> {
    const { status, events, monitorId } = this.#ctx;
    const plan = this.#active.plan;
    const tag = `${plan.name}/${level}/${n}`;
    status.set('engine-collect', `${tag}: collecting`);
    const t0 = tick.getTime();
    const emrAt = t0 + this.#active.emrMs;

    const freq = (d: string): number => this.#active.domainFreqMs.get(d) ?? Number.MAX_SAFE_INTEGER;
    const queue = work
      .filter((w) => !this.#stopped.has(w.domain))
      .sort((a, b) => freq(a.domain) - freq(b.domain));
    const outcomes: Outcome[] = [];
    let started = 0;
    let batchOpen = true;

    const current: Metrics = {
      begin: tick,
      end: tick,
      monitorId,
      plan: plan.name,
      level,
      interval: n,
      state,
      values: {},
    };

    const runOne = async (w: DomainWork): Promise<void> => {
      const collector = this.#collectors.get(w.domain);
      if (!collector) return;
      const prev = this.#running.get(w.domain);
      if (prev) {
        events.error(
          'collector-fault',
          monitorId,
          `${tag}/${w.domain}: previous collection still running, cancelled`,
        );
        prev.fenced = true;
        prev.controller.abort(new Error('cancelled: domain due again'));
        const settled = await Promise.race([
          prev.promise.then(() => true),
          sleep(FENCE_WAIT_MS).then(() => false),
        ]);
        if (!settled) {
          outcomes.push({ ...w, values: [], error: 'previous collection did not stop in time; skipped' });
          return;
        }
      }
      const cmr = this.#active.cmrMs.get(w.domain) ?? this.#active.emrMs;
      const controller = new AbortController();
      const timer = setTimeout(
        () => controller.abort(new Error(`timeout after ${formatDuration(cmr)}`)),
        Math.max(0, t0 + cmr - Date.now()),
      );
      started++;
      const run: DomainRun = { controller, fenced: false, promise: Promise.resolve() };
      run.promise = (async () => {
        let result: CollectResult;
        try {
          result = await collector.collect(w.level, controller.signal);
        } catch (err) {
          result = { values: [], error: toCollectError(err, controller.signal) };
        } finally {
          clearTimeout(timer);
          if (this.#running.get(w.domain) === run) this.#running.delete(w.domain);
        }
        if (run.fenced) {
          if (!batchOpen)
            events.error('drop-metrics-fence', monitorId, `${tag}/${w.domain}: late values dropped`);
          return;
        }
        const outcome = this.#applyPolicy(w, result);
        if (batchOpen) {
          outcomes.push(outcome);
        } else {
          this.#deliverLate(current, outcome, tag);
        }
      })();
      this.#running.set(w.domain, run);
      await run.promise;
    };

    const worker = async (): Promise<void> => {
      for (;;) {
        if (Date.now() >= emrAt || this.#closed) return;
        const w = queue.shift();
        if (!w) return;
        await runOne(w);
      }
    };
    const workers = Array.from({ length: Math.min(MAX_CONCURRENT_COLLECTORS, queue.length) }, () => worker());
    status.set(
      'engine-collect',
      `${tag}: receiving metrics, ${Math.min(MAX_CONCURRENT_COLLECTORS, queue.length)} collectors running`,
    );
    const emrTimer = new AbortController();
    await Promise.race([Promise.all(workers), sleep(Math.max(0, emrAt - Date.now()), emrTimer.signal)]);
    emrTimer.abort();
    batchOpen = false;
    current.end = new Date();

    // Build the batch and report errors.
    status.set('engine-collect', `${tag}: logging errors`);
    let nValues = 0;
    let nErrors = 0;
    const domainsWithValues = new Set<string>();
    for (const o of outcomes) {
      if (o.values.length > 0) {
        (current.values[o.domain] ??= []).push(...o.values);
        nValues += o.values.length;
        domainsWithValues.add(o.domain);
      }
      this.#reportOutcome(o, tick, tag);
      if (o.error !== '') nErrors++;
    }
    if (nErrors === 0) {
      status.delete('error:collect');
    } else {
      const text =
        nValues > 0
          ? `${tag}: partial success: ${nValues} metrics collected, ${nErrors} errors`
          : `${tag}: failed: zero metrics collected, ${nErrors} errors`;
      status.set('error:collect', text);
      events.error('engine-collect-error', monitorId, text);
    }
    const runtime = current.end.getTime() - t0;
    status.set(
      'engine-collect',
      `${tag}: done: ${started} started, ${domainsWithValues.size} domains ${nValues} values collected, ${formatDuration(runtime)} runtime, ${nErrors} error`,
    );

    const out: Metrics[] = [...this.#late.keys()]
      .sort((a, b) => a - b)
      .map((k) => this.#late.get(k)?.metrics)
      .filter((m): m is Metrics => m !== undefined);
    this.#late.clear();
    out.push(current);
    return out;
  }

  /** Set or clear `error:<domain>` and emit `collector-error`. */
  #reportOutcome(o: Outcome, begin: Date, tag: string): void {
    const { status, events, monitorId } = this.#ctx;
    if (o.error === '') {
      status.delete(`error:${o.domain}`);
      return;
    }
    status.set(`error:${o.domain}`, `at ${formatTimestamp(begin)}: ${tag}/${o.domain}: ${o.error}`);
    events.error('collector-error', monitorId, `${tag}/${o.domain}: ${o.error}`);
  }

  #deliverLate(batch: Metrics, o: Outcome, tag: string): void {
    this.#reportOutcome(o, batch.begin, tag);
    if (o.values.length === 0) return;
    let entry = this.#late.get(batch.interval);
    if (!entry) {
      entry = { metrics: { ...batch, values: {}, end: new Date() } };
      this.#late.set(batch.interval, entry);
    }
    (entry.metrics.values[o.domain] ??= []).push(...o.values);
  }

  /** Apply the plan's error policy to one domain's result. */
  #applyPolicy(w: DomainWork, result: CollectResult): Outcome {
    const err = result.error;
    if (!err) return { ...w, values: result.values, error: '' };
    if (err.unsupported) {
      // Said once, clearly; the status key stays because the domain no longer runs.
      this.#stopped.add(w.domain);
      return { ...w, values: result.values, error: err.message };
    }
    const help = this.#ctx.help(w.domain);
    const policyName =
      err.policy ??
      (err.errno !== undefined
        ? help?.errors.find((e) => e.errnos?.includes(err.errno ?? -1))?.name
        : undefined);
    if (policyName === undefined) {
      // Not governed by a policy: reported every time, with whatever the collector kept.
      return { ...w, values: result.values, error: err.message };
    }
    const dp = levelDomain(this.#active.plan, w.level, w.domain);
    const policy = parsePolicy(dp?.errors[policyName] ?? '');
    if (policy.retry === 'stop') this.#stopped.add(w.domain);
    let values = result.values;
    if (policy.metric === 'zero') {
      const zero =
        err.zero ??
        (dp?.metrics ?? []).map((name): MetricValue => ({
          name: name.toLowerCase(),
          value: 0,
          type: MetricType.Gauge,
        }));
      values = [...values, ...zero];
    }
    let report = policy.report === 'report';
    if (policy.report === 'report-once') {
      const key = `${w.domain}\0${policyName}`;
      report = !this.#reportedOnce.has(key);
      this.#reportedOnce.add(key);
    }
    if (!report) this.#ctx.events.debug(`${w.domain}: ${policyName} error ignored by policy: ${err.message}`);
    return { ...w, values, error: report ? err.message : '' };
  }
}

/** Normalise anything a collector threw into a CollectError (keeping a MySQL errno). */
function toCollectError(err: unknown, signal: AbortSignal): CollectError {
  if (err instanceof CollectError) return err;
  if (signal.aborted) {
    const reason: unknown = signal.reason;
    return new CollectError(errorMessage(reason ?? err), { cause: err });
  }
  const errno = (err as { errno?: unknown } | null)?.errno;
  return new CollectError(
    errorMessage(err),
    typeof errno === 'number' ? { errno, cause: err } : { cause: err },
  );
}
