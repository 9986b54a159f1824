/**
 * A fake {@link Clock} for tests: time moves only when the test calls advance(), which runs
 * every timer that falls due in order and lets promise callbacks settle between them.
 */
import type { Clock, TimerHandle } from './clock.js';

interface Timer {
  id: number;
  at: number;
  fn: () => void;
}

/** Let pending promise callbacks and immediates run (no real time passes). */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r));
}

export class FakeClock implements Clock {
  #now: number;
  #seq = 0;
  #timers: Timer[] = [];

  constructor(start = Date.UTC(2026, 10, 23, 12, 0, 0)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  precise(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer: Timer = { id: ++this.#seq, at: this.#now + Math.max(0, ms), fn };
    this.#timers.push(timer);
    return timer;
  }

  clearTimeout(handle: TimerHandle): void {
    this.#timers = this.#timers.filter((t) => t !== handle);
  }

  /** Timers not yet fired. */
  get pending(): number {
    return this.#timers.length;
  }

  /** Move time forward by `ms`, firing due timers in order and settling promises after each. */
  async advance(ms: number): Promise<void> {
    const until = this.#now + ms;
    await settle();
    for (;;) {
      const next = this.#timers.filter((t) => t.at <= until).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (next === undefined) break;
      this.#timers = this.#timers.filter((t) => t !== next);
      this.#now = Math.max(this.#now, next.at);
      next.fn();
      await settle();
    }
    this.#now = until;
    await settle();
  }
}
