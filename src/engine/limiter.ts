/**
 * The per-monitor cap on domains collecting at once. One Limiter is shared by every engine
 * of a monitor (the level collector's and the exporter's), so the monitor never runs more
 * collectors than the cap however the two overlap; with the monitor's pool of 3
 * connections that leaves one for the heartbeat.
 */

/** Domains collecting at once per monitor. */
export const MAX_CONCURRENT_COLLECTORS = 2;

export class Limiter {
  readonly #cap: number;
  #used = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(cap = MAX_CONCURRENT_COLLECTORS) {
    this.#cap = cap;
  }

  /** Slots in use now. */
  get used(): number {
    return this.#used;
  }

  /**
   * Wait for a free slot; resolves with the function that gives it back (call it exactly
   * once). Rejects with the signal's reason when `signal` aborts first.
   */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted === true) return Promise.reject(signal.reason as Error);
    if (this.#used < this.#cap) {
      this.#used++;
      return Promise.resolve(this.#releaser());
    }
    return new Promise((resolve, reject) => {
      const grant = (): void => {
        signal?.removeEventListener('abort', onAbort);
        this.#used++;
        resolve(this.#releaser());
      };
      const onAbort = (): void => {
        const i = this.#waiting.indexOf(grant);
        if (i >= 0) this.#waiting.splice(i, 1);
        reject(signal?.reason as Error);
      };
      this.#waiting.push(grant);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#used--;
      this.#waiting.shift()?.();
    };
  }
}
