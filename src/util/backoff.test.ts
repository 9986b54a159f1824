import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Backoff, sleep } from './backoff.js';

describe('Backoff', () => {
  it('grows ×1.5 from 500 ms and is capped', () => {
    const b = new Backoff(2000, 500, 1.5, () => 0.5); // no jitter
    assert.deepEqual([b.next(), b.next(), b.next(), b.next(), b.next()], [500, 750, 1125, 1688, 2000]);
    b.reset();
    assert.equal(b.next(), 500);
  });
  it('jitters by ±50 %', () => {
    assert.equal(new Backoff(10_000, 500, 1.5, () => 0).next(), 250);
    assert.equal(new Backoff(10_000, 500, 1.5, () => 0.999999).next(), 750);
  });
  it('sleep ends early on abort', async () => {
    const ac = new AbortController();
    const p = sleep(60_000, ac.signal);
    ac.abort();
    assert.equal(await p, false);
    assert.equal(await sleep(1), true);
  });
});
