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
