/**
 * The clock that timing code reads and sets timers on. Production code uses
 * {@link systemClock}; tests inject a fake one and move time by hand, so no test waits for
 * a real timer.
 */

import { noteDeadline } from './abort.js';

/** An opaque timer handle. */
export type TimerHandle = { readonly __timer: unique symbol } | object;

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** A high-resolution reading in milliseconds, for measuring durations (not a date). */
  precise(): number;
  /** Run `fn` once after `ms` milliseconds. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/**
 * Milliseconds from a fixed, arbitrary point (Node's high-resolution clock), for durations.
 * Read through `process.hrtime`, as fast as `performance.now()`: the global `performance`
 * loads Node's perf_hooks and the modules behind it at its first use, about 0.4 MiB of memory
 * that nothing else in sonde needs (docs/performance.md).
 */
export function monotonicMs(): number {
  const [s, ns] = process.hrtime();
  return s * 1e3 + ns / 1e6;
}

/** The real clock: Date.now and Node's timers (unref'd timers keep nothing alive alone). */
export const systemClock: Clock = {
  now: () => Date.now(),
  precise: monotonicMs,
  setTimeout: (fn, ms) => setTimeout(fn, Math.max(0, ms)),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * Wait `ms` on `clock`; resolves true when the time passed, false at once when `signal`
 * aborts first.
 */
export function sleepOn(clock: Clock, ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) {
      resolve(false);
      return;
    }
    const onAbort = (): void => {
      clock.clearTimeout(timer);
      resolve(false);
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * A signal aborted with `new Error(reason)` at `at` (epoch ms) on `clock`, when `parent`
 * aborts (with its reason), or by `abort(why)`. `done()` clears the timer and the listener.
 */
export function deadlineOn(
  clock: Clock,
  at: number,
  reason: string,
  parent?: AbortSignal,
): { signal: AbortSignal; done: () => void; abort: (why: Error) => void } {
  const ctl = new AbortController();
  const onAbort = (): void => ctl.abort(parent?.reason);
  if (parent?.aborted === true) ctl.abort(parent.reason);
  else parent?.addEventListener('abort', onAbort, { once: true });
  const timer = clock.setTimeout(() => ctl.abort(new Error(reason)), at - clock.now());
  noteDeadline(ctl.signal, at, () => clock.now(), parent);
  return {
    signal: ctl.signal,
    done: () => {
      clock.clearTimeout(timer);
      parent?.removeEventListener('abort', onAbort);
    },
    abort: (why) => ctl.abort(why),
  };
}
