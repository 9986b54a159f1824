/**
 * The plan changer (PCH): watches the monitor's state (standby / offline / read-only /
 * active) and switches the level collector's plan when a new state has lasted its `after`
 * duration. Enabled when any `plans.change.<state>.plan` is set.
 *
 * Each check asks, in this order: the HA hook (not active → `standby`, and MySQL is not
 * queried); the server's `@@read_only` (the query fails → `offline`, 1 → `read-only`, else
 * `active`). One check per second while the server answers; while it is offline, checks back
 * off (0.5 s ×1.5, ±50 %, ≤ 60 s). The very first state found applies at once; later changes
 * wait for `after`.
 */
import type { PlanChangeConfig } from '../core/config.js';
import type { Db } from '../core/db.js';
import type { Events } from '../core/events.js';
import type { LevelState } from '../core/plan.js';
import type { StatusWriter } from '../core/status.js';
import { errorMessage } from '../core/errors.js';
import { MonitorKey } from '../core/status-keys.js';
import { Backoff } from '../util/backoff.js';
import { sleepOn, systemClock, type Clock } from '../util/clock.js';
import { parseDuration } from '../util/duration.js';
import { formatTimestamp } from '../util/time.js';

/** What the plan changer drives (the LevelCollector). */
export interface PlanTarget {
  /** `why` says what caused the change (for the debug line). */
  changePlan(state: LevelState, planName: string, why?: string): Promise<void>;
  /** Stop collecting; `state` (standby) is shown as the level state while paused. */
  pause(state?: LevelState): void;
}

export interface PlanChangerContext {
  monitorId: string;
  status: StatusWriter;
  events: Events;
  target: PlanTarget;
  change: PlanChangeConfig;
  /** the monitor's `plan` (used for states without a plan of their own) */
  monitorPlan: string;
  /** Observe the server's state; rejects when it cannot be read. */
  observe(signal: AbortSignal): Promise<LevelState>;
  /**
   * The HA hook's answer: false = this agent is on standby. Asked first at each check, once,
   * without a promise when it answers synchronously. Meant not to throw (the monitor passes
   * its HaWatch, which reports the hook's failures); a throw anyway keeps the last answer.
   * Default: always active.
   */
  isActive?(): boolean | Promise<boolean>;
  /** Check period while online; 1000 ms except in tests. */
  checkMs?: number;
  /** Backoff cap while offline; 60 s except in tests. */
  offlineCapMs?: number;
  clock?: Clock;
}

const STATE_QUERY_TIMEOUT_MS = 10_000;
const NEVER = '0001-01-01T00:00:00Z';

/**
 * Read-only detection that works on MySQL and MariaDB: `@@read_only` exists on both
 * (MariaDB has no `super_read_only`, which Blip's query needs and so always fails there).
 */
export async function observeState(db: Db, signal: AbortSignal): Promise<LevelState> {
  const rows = await db.query('SELECT @@GLOBAL.read_only AS ro', [], {
    signal,
    timeoutMs: STATE_QUERY_TIMEOUT_MS,
  });
  const ro = rows[0]?.ro ?? rows[0]?.RO ?? null;
  return ro === '1' || ro === 'ON' ? 'read-only' : 'active';
}

/** True when plan changing is on for this config. */
export function planChangingEnabled(change: PlanChangeConfig | undefined): boolean {
  if (!change) return false;
  return Object.values(change).some((c: { plan?: string } | undefined) => (c?.plan ?? '') !== '');
}

interface StateRecord {
  state: LevelState;
  plan: string;
  /** undefined = never (the initial offline record) */
  since: Date | undefined;
}

export class PlanChanger {
  readonly #ctx: PlanChangerContext;
  /** The HA hook's last answer (kept when it throws; standby until it first answers). */
  #haLast = false;

  constructor(ctx: PlanChangerContext) {
    this.#ctx = ctx;
  }

  #afterMs(state: LevelState): number {
    const text = this.#ctx.change[state]?.after ?? '';
    if (text === '') return 0;
    try {
      return Math.max(0, parseDuration(text));
    } catch {
      return 0; // validated at load; keep the loop alive regardless
    }
  }

  #planOf(state: LevelState): string {
    return this.#ctx.change[state]?.plan ?? '';
  }

  #text(r: StateRecord): string {
    return `${r.state} ${r.plan} ${r.since ? formatTimestamp(r.since) : NEVER}`;
  }

  /**
   * Apply a state: its plan, else pause (offline, standby) or the monitor's plan (read-only,
   * active).
   */
  #apply(state: LevelState, plan: string, why: string): void {
    const { status, target, monitorPlan, events, monitorId } = this.#ctx;
    if (plan === '' && (state === 'offline' || state === 'standby')) {
      events.debug(() => `plan changer: ${why}: pausing the level collector`, monitorId);
      // Blip's text: a pause is a change to the empty plan.
      status.set(MonitorKey.planChanger, `calling LevelCollector.ChangePlan: ${state} `);
      if (state === 'standby') target.pause(state);
      else target.pause();
      return;
    }
    const name = plan === '' ? monitorPlan : plan;
    status.set(MonitorKey.planChanger, `calling LevelCollector.ChangePlan: ${state} ${name}`);
    void target.changePlan(state, name, `plan changer: ${why}`); // runs in the background, retrying by itself
  }

  /** The HA hook's answer, synchronously when it gives one; the last answer when it throws. */
  #haActive(): boolean | Promise<boolean> {
    const ctx = this.#ctx;
    if (ctx.isActive === undefined) return true;
    const keep = (v: unknown): boolean => (typeof v === 'boolean' ? (this.#haLast = v) : this.#haLast);
    try {
      const r = ctx.isActive();
      return typeof r === 'boolean' ? keep(r) : Promise.resolve(r).then(keep, () => this.#haLast);
    } catch {
      return this.#haLast;
    }
  }

  /** One check: standby, else the server's state; undefined when `signal` aborted. */
  async #observe(signal: AbortSignal): Promise<LevelState | undefined> {
    const { status } = this.#ctx;
    status.set(MonitorKey.planChanger, 'checking HA standby');
    const ha = this.#haActive();
    const active = typeof ha === 'boolean' ? ha : await ha;
    if (signal.aborted) return undefined;
    if (!active) return 'standby';
    status.set(MonitorKey.planChanger, 'checking MySQL read-only');
    try {
      const observed = await this.#ctx.observe(signal);
      status.delete(MonitorKey.planChangerError);
      return observed;
    } catch (err) {
      if (signal.aborted) return undefined;
      status.set(MonitorKey.planChangerError, errorMessage(err));
      return 'offline';
    }
  }

  /** Run until `signal` aborts. Never throws. */
  async run(signal: AbortSignal): Promise<void> {
    const { status, events, monitorId } = this.#ctx;
    const checkMs = this.#ctx.checkMs ?? 1000;
    const clock = this.#ctx.clock ?? systemClock;
    const backoff = new Backoff(this.#ctx.offlineCapMs ?? 60_000);
    let current: StateRecord = { state: 'offline', plan: '', since: undefined };
    let pending: StateRecord | undefined;
    let first = true;
    status.set(MonitorKey.planChanger, 'running');
    try {
      while (!signal.aborted) {
        const observed = await this.#observe(signal);
        if (observed === undefined) break;
        const now = new Date(clock.now());

        if (observed === current.state) {
          if (pending) {
            pending = undefined;
            status.delete(MonitorKey.statePending);
            events.info('state-change-abort', monitorId, observed);
          }
        } else if (pending && observed === pending.state) {
          if (now.getTime() - (pending.since?.getTime() ?? 0) >= this.#afterMs(pending.state)) {
            const who = pending.state === 'standby' ? 'HA' : 'server';
            const why = `${who} ${pending.state} for ${this.#ctx.change[pending.state]?.after || '0s'}`;
            this.#apply(pending.state, pending.plan, why);
            current = pending;
            pending = undefined;
            status.delete(MonitorKey.statePending);
            events.info('state-change-end', monitorId, observed);
          }
        } else if (first && current.state === 'offline') {
          this.#apply(observed, this.#planOf(observed), `first state observed: ${observed}`);
          current = { state: observed, plan: '', since: now };
          first = false;
          events.info('state-change-end', monitorId, observed);
        } else {
          pending = { state: observed, plan: this.#planOf(observed), since: now };
          status.set(MonitorKey.statePending, this.#text(pending));
          events.info('state-change-begin', monitorId, observed);
          backoff.reset();
        }
        status.set(MonitorKey.state, this.#text(current));

        const wait = current.state === 'offline' ? backoff.next() : checkMs;
        if (current.state !== 'offline') backoff.reset();
        if (!(await sleepOn(clock, wait, signal))) break;
      }
    } finally {
      status.set(MonitorKey.planChanger, 'not running');
    }
  }
}
