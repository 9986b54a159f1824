/** Abort-signal helpers: one way to put a deadline on work that already has a signal. */

/** The longest delay a Node.js timer holds: 2^31-1 ms; a longer one fires after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** When a deadline signal aborts by itself: at `at` on the clock `now` reads. */
interface Deadline {
  at: number;
  now: () => number;
}

const DEADLINES = new WeakMap<AbortSignal, Deadline>();

/**
 * Note that `signal` aborts at `at` (on the clock `now` reads), or earlier when `parent`
 * has an earlier deadline; {@link timeLeftMs} reads it back. Deadline helpers call this for
 * the signals they make.
 */
export function noteDeadline(signal: AbortSignal, at: number, now: () => number, parent?: AbortSignal): void {
  const left = Math.min(at - now(), parent === undefined ? Infinity : (timeLeftMs(parent) ?? Infinity));
  const t = now();
  DEADLINES.set(signal, { at: t + left, now });
}

/**
 * How long until `signal` aborts by its deadline (ms, at least 0), when it was made by a
 * deadline helper; undefined for a signal without a known deadline. For a limit the
 * database server applies to a statement on top of sonde's own.
 */
export function timeLeftMs(signal: AbortSignal | undefined): number | undefined {
  const d = signal === undefined ? undefined : DEADLINES.get(signal);
  return d === undefined ? undefined : Math.max(0, d.at - d.now());
}

/**
 * A signal that aborts when `signal` does (with its reason) or after `ms`, with
 * `new Error(reason)`. Call `done()` when the work ends, to clear the timer and listener.
 */
export function withDeadline(
  signal: AbortSignal | undefined,
  ms: number,
  reason: string,
): { signal: AbortSignal; done: () => void } {
  const ctl = new AbortController();
  const onAbort = (): void => ctl.abort(signal?.reason);
  if (signal?.aborted === true) ctl.abort(signal.reason);
  else signal?.addEventListener('abort', onAbort, { once: true });
  // A timer holds at most 2^31-1 ms (about 24.8 days); a longer one would fire at once.
  const timer = setTimeout(() => ctl.abort(new Error(reason)), Math.min(Math.max(0, ms), MAX_TIMER_MS));
  noteDeadline(ctl.signal, Date.now() + Math.max(0, ms), Date.now, signal);
  return {
    signal: ctl.signal,
    done: () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    },
  };
}

/** Resolves when `signal` aborts (at once if it already has). */
export function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/** The abort reason of `signal` as an Error (a non-Error reason becomes its text). */
export function abortReason(signal: AbortSignal): Error {
  const r: unknown = signal.reason;
  if (r instanceof Error) return r;
  return new Error(typeof r === 'string' ? r : 'aborted');
}

/**
 * Settle as `work` does, or reject with the abort reason as soon as `signal` aborts (at once
 * if it already has). Work abandoned that way may still fail later: that failure is ignored.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(abortReason(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      work.catch(() => undefined);
      reject(abortReason(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
