/** Abort-signal helpers: one way to put a deadline on work that already has a signal. */

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
  const timer = setTimeout(() => ctl.abort(new Error(reason)), Math.max(0, ms));
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
