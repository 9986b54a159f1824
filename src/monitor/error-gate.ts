/**
 * One monitor's error lines under a backoff: while a monitor keeps failing (its server is
 * down, a privilege is missing), it prints at most one error line per backoff step —
 * 1 s, then ×2 with ±20 % jitter, up to 60 s — and the next line it prints says how many
 * it held back. The first collection without errors resets the gate. Status keys are not
 * affected: they always show the current errors. Info and debug lines pass through; held
 * back error lines are still printed as debug lines, and still reach the event stream.
 */
import type { EventLevel, EventName, Events } from '../core/events.js';
import { Backoff } from '../util/backoff.js';
import { systemClock, type Clock } from '../util/clock.js';
import { formatTimestamp } from '../util/time.js';

const FIRST_STEP_MS = 1000;
const CAP_MS = 60_000;

export class ErrorGate implements Events {
  readonly #inner: Events;
  readonly #clock: Clock;
  readonly #backoff: Backoff;
  /** no error line before this time (epoch ms) */
  #openAt = 0;
  #held = 0;
  #heldSince = 0;

  constructor(inner: Events, clock: Clock = systemClock, random: () => number = Math.random) {
    this.#inner = inner;
    this.#clock = clock;
    // ±20 % jitter: Backoff spreads by ±50 % of (random − 0.5), so scale the random part.
    this.#backoff = new Backoff(CAP_MS, FIRST_STEP_MS, 2, () => 0.5 + (random() - 0.5) * 0.4);
  }

  info(event: EventName, monitorId: string, message?: string): void {
    this.#inner.info(event, monitorId, message);
  }

  debug(message: string | (() => string), monitorId?: string): void {
    this.#inner.debug(message, monitorId);
  }

  error(event: EventName, monitorId: string, message: string): void {
    const now = this.#clock.now();
    if (now < this.#openAt) {
      if (this.#held === 0) this.#heldSince = now;
      this.#held++;
      this.#inner.debug(() => `held back: [${event}] ${message}`, monitorId);
      // Only the line is held back: the event stream still gets the event.
      this.#inner.unprinted?.('error', event, monitorId, message);
      return;
    }
    const held =
      this.#held > 0
        ? ` (${this.#held} more errors held back since ${formatTimestamp(new Date(this.#heldSince))})`
        : '';
    this.#held = 0;
    this.#openAt = now + this.#backoff.next();
    this.#inner.error(event, monitorId, `${message}${held}`);
  }

  unprinted(level: EventLevel, event: EventName, monitorId: string, message: string): void {
    this.#inner.unprinted?.(level, event, monitorId, message);
  }

  /** The monitor worked without errors: the next error prints at once. */
  reset(): void {
    this.#backoff.reset();
    this.#openAt = 0;
    this.#held = 0;
  }
}
