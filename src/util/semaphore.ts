/**
 * A counting semaphore with abortable waits: whoever gives up waiting leaves the queue at
 * once, so waiters never pile up behind a resource that does not come back.
 */

export class Semaphore {
  readonly #cap: number;
  #used = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(cap: number) {
    this.#cap = cap;
  }

  /** Slots in use now. */
  get used(): number {
    return this.#used;
  }

  /** A free slot now, or undefined when all are taken (then wait with acquire()). */
  tryAcquire(): (() => void) | undefined {
    if (this.#used >= this.#cap) return undefined;
    this.#used++;
    return this.#releaser();
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
