import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { monotonicMs } from './clock.js';

describe('monotonicMs', () => {
  it('reads milliseconds of the same clock as performance.now(), never going back', () => {
    const m0 = monotonicMs();
    const p0 = performance.now();
    let p1 = p0;
    let last = m0;
    while (p1 - p0 < 5) {
      const m = monotonicMs();
      assert.ok(m >= last, `${m} after ${last}`);
      last = m;
      p1 = performance.now();
    }
    const m1 = monotonicMs();
    // both read the monotonic clock, and its reads enclose performance.now()'s
    assert.ok(m1 - m0 >= p1 - p0, `${m1 - m0} ms against ${p1 - p0} ms`);
  });
});
