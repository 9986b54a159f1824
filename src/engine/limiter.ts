/**
 * The per-monitor cap on domains collecting at once. One Limiter is shared by every engine
 * of a monitor (the level collector's and the exporter's), so the monitor never runs more
 * collectors than the cap however the two overlap; with the monitor's pool of 3
 * connections that leaves one for the heartbeat.
 */
import { Semaphore } from '../util/semaphore.js';

/** Domains collecting at once per monitor. */
export const MAX_CONCURRENT_COLLECTORS = 2;

export class Limiter extends Semaphore {
  constructor(cap = MAX_CONCURRENT_COLLECTORS) {
    super(cap);
  }
}

/**
 * A cap of its own inside a shared limiter: a slot needs one of each, so the holder never
 * runs more than `cap` at once and the monitor never more than the shared cap.
 */
export class NestedLimiter extends Limiter {
  readonly #shared: Limiter;

  constructor(cap: number, shared: Limiter) {
    super(cap);
    this.#shared = shared;
  }

  override tryAcquire(): (() => void) | undefined {
    const own = super.tryAcquire();
    if (own === undefined) return undefined;
    const shared = this.#shared.tryAcquire();
    if (shared === undefined) {
      own();
      return undefined;
    }
    return both(own, shared);
  }

  override async acquire(signal?: AbortSignal): Promise<() => void> {
    const own = await super.acquire(signal);
    try {
      return both(own, await this.#shared.acquire(signal));
    } catch (err) {
      own();
      throw err;
    }
  }
}

function both(own: () => void, shared: () => void): () => void {
  return () => {
    shared();
    own();
  };
}
