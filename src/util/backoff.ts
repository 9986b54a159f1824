/**
 * Exponential backoff used for monitor startup, plan preparation and offline polling:
 * first ≈500 ms, ×1.5 per retry, ±50 % jitter, capped, never gives up.
 */
export class Backoff {
  #attempt = 0;
  constructor(
    readonly capMs: number,
    readonly firstMs = 500,
    readonly factor = 1.5,
    readonly random: () => number = Math.random,
  ) {}

  /** Next wait in ms. */
  next(): number {
    const base = Math.min(this.capMs, this.firstMs * this.factor ** this.#attempt);
    this.#attempt++;
    const jitter = 1 + (this.random() - 0.5); // 0.5 .. 1.5
    return Math.min(this.capMs, Math.round(base * jitter));
  }

  reset(): void {
    this.#attempt = 0;
  }
}

/** Sleep that ends early (resolving false) when `signal` aborts; true when the full time passed. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve(false);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(t);
      resolve(false);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
