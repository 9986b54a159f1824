import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { stopLossCheck } from './stop-loss.js';

describe('stop-loss', () => {
  it('is off when empty, 0 or 0%', () => {
    assert.equal(stopLossCheck('', 10, 0), undefined);
    assert.equal(stopLossCheck('0', 10, 0), undefined);
    assert.equal(stopLossCheck('0%', 10, 0), undefined);
  });
  it('blocks a count limit only when more than N are lost', () => {
    assert.equal(stopLossCheck('5', 10, 4), 'before: 10; now: 4; lost 6 > limit 5');
    assert.equal(stopLossCheck('5', 10, 5), undefined);
    assert.equal(stopLossCheck('5', 10, 10), undefined);
  });
  it('blocks a percent limit only when more than P% are lost', () => {
    assert.equal(stopLossCheck('50%', 10, 4), 'before: 10; now: 4; lost 60.000000% > limit 50.000000%');
    assert.equal(stopLossCheck('50%', 10, 5), undefined);
  });
  it('never blocks when nothing was loaded or monitors were added', () => {
    assert.equal(stopLossCheck('1', 0, 0), undefined);
    assert.equal(stopLossCheck('1%', 3, 7), undefined);
  });
  it('rejects a malformed setting, quoting it and the pattern it must match', () => {
    assert.throws(() => stopLossCheck('5x', 10, 1), /'5x' does not match/);
  });
});
