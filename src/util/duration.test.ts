import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatDuration, isDuration, parseDuration } from './duration.js';

describe('parseDuration', () => {
  it('parses Go duration grammar into milliseconds', () => {
    assert.equal(parseDuration('5s'), 5000);
    assert.equal(parseDuration('1.5s'), 1500);
    assert.equal(parseDuration('1m30s'), 90_000);
    assert.equal(parseDuration('250ms'), 250);
    assert.equal(parseDuration('2h'), 7_200_000);
    assert.equal(parseDuration('10us'), 0.01);
    assert.equal(parseDuration('10µs'), 0.01);
    assert.equal(parseDuration('10μs'), 0.01);
    assert.equal(parseDuration('100ns'), 0.0001);
    assert.equal(parseDuration('0'), 0);
    assert.equal(parseDuration('-2ms'), -2);
  });
  it('rejects what Go rejects', () => {
    for (const bad of ['', '5', '1d', 's', '5 s', 'abc', '--1s']) {
      assert.equal(isDuration(bad), false, bad);
    }
    assert.throws(() => parseDuration('5'), /missing unit/);
    assert.throws(() => parseDuration('1d'), /invalid duration "1d"/);
  });
});

describe('formatDuration', () => {
  it('prints like Go Duration.String()', () => {
    assert.equal(formatDuration(0), '0s');
    assert.equal(formatDuration(0.00085), '850ns');
    assert.equal(formatDuration(0.0125), '12.5µs');
    assert.equal(formatDuration(2.249204), '2.249204ms');
    assert.equal(formatDuration(4500), '4.5s');
    assert.equal(formatDuration(1650), '1.65s');
    assert.equal(formatDuration(20_000), '20s');
    assert.equal(formatDuration(60_000), '1m0s');
    assert.equal(formatDuration(123_500), '2m3.5s');
    assert.equal(formatDuration(3_600_000), '1h0m0s');
    assert.equal(formatDuration(298_000), '4m58s');
    assert.equal(formatDuration(-1500), '-1.5s');
    // Zeros inside the fraction stay, trailing ones go.
    assert.equal(formatDuration(2.05), '2.05ms');
    assert.equal(formatDuration(1.000001), '1.000001ms');
    assert.equal(formatDuration(0.012001), '12.001µs');
    assert.equal(formatDuration(1000.1), '1.0001s');
    assert.equal(formatDuration(61_000.5), '1m1.0005s');
    assert.equal(formatDuration(7), '7ms');
  });
});
