/**
 * One monitor's view of the HA hook: asks `isActive()` at start and once per second after,
 * keeps the last answer, and tells the monitor when it changes.
 *
 * - A synchronous answer is taken at once (no promise is made); while an asynchronous one
 *   is outstanding, further asks are skipped.
 * - A throw, a rejection or an answer that is not a boolean keeps the last answer (standby
 *   before the first one): `error:ha` says why, and the error event `ha-error` is emitted
 *   once per run of failures.
 * - Status key `ha`: `active since <ts>` or `standby since <ts>`.
 */
import type { Events } from '../core/events.js';
import { errorMessage } from '../core/errors.js';
import type { HighAvailability } from '../core/ha.js';
import type { StatusWriter } from '../core/status.js';
import { MonitorKey } from '../core/status-keys.js';
import { systemClock, type Clock, type TimerHandle } from '../util/clock.js';
import { formatTimestamp } from '../util/time.js';

export interface HaWatchOptions {
  monitorId: string;
  ha: HighAvailability;
  status: StatusWriter;
  events: Events;
  /** Called with the first answer and then with each change. */
  onChange(active: boolean): void;
  /** Ask period; 1000 ms except in tests. */
  checkMs?: number;
  clock?: Clock;
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}

export class HaWatch {
  readonly #o: HaWatchOptions;
  readonly #clock: Clock;
  /** undefined until the first answer (or first failure) */
  #active: boolean | undefined;
  #waiters: ((active: boolean) => void)[] = [];
  #asking = false;
  #failing = false;
  #stopped = false;
  #timer: TimerHandle | undefined;

  constructor(o: HaWatchOptions) {
    this.#o = o;
    this.#clock = o.clock ?? systemClock;
  }

  /** Ask now, then once per period until stop(). */
  start(): void {
    this.#stopped = false;
    this.#tick();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    // Whoever still waits for a first answer gets standby: nothing may collect after a stop.
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w(false);
  }

  /** The last answer; before the first one, a promise of it. */
  answer(): boolean | Promise<boolean> {
    if (this.#active !== undefined) return this.#active;
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  #tick(): void {
    if (this.#stopped) return;
    this.#ask();
    this.#timer = this.#clock.setTimeout(() => this.#tick(), this.#o.checkMs ?? 1000);
  }

  #ask(): void {
    if (this.#asking) return;
    let r: unknown;
    try {
      r = this.#o.ha.isActive();
    } catch (err) {
      this.#fail(err);
      return;
    }
    if (!isThenable(r)) {
      this.#take(r);
      return;
    }
    this.#asking = true;
    Promise.resolve(r).then(
      (v) => {
        this.#asking = false;
        this.#take(v);
      },
      (err: unknown) => {
        this.#asking = false;
        this.#fail(err);
      },
    );
  }

  #take(v: unknown): void {
    if (this.#stopped) return;
    if (typeof v !== 'boolean') {
      this.#fail(new Error(`isActive() answered ${v === null ? 'null' : typeof v}, not a boolean`));
      return;
    }
    if (this.#failing) {
      this.#failing = false;
      this.#o.status.delete(MonitorKey.haError);
    }
    this.#set(v);
  }

  #fail(err: unknown): void {
    if (this.#stopped) return;
    const text = errorMessage(err);
    const keep = this.#active ?? false;
    this.#o.status.set(MonitorKey.haError, text);
    if (!this.#failing) {
      this.#failing = true;
      const what = keep ? 'active' : 'standby';
      this.#o.events.error('ha-error', this.#o.monitorId, `HA isActive failed, staying ${what}: ${text}`);
    }
    this.#set(keep);
  }

  #set(active: boolean): void {
    if (this.#active === active) return;
    this.#active = active;
    const since = formatTimestamp(new Date(this.#clock.now()));
    this.#o.status.set(MonitorKey.ha, `${active ? 'active' : 'standby'} since ${since}`);
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w(active);
    this.#o.onChange(active);
  }
}
