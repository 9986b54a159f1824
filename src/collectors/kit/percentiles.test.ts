import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parsePercentile, parsePercentiles, percentileName } from './percentiles.js';

void describe('percentile metric names', () => {
  void it('reads the three spellings of a percentile', () => {
    const cases: [string, number][] = [
      ['p50', 0.5],
      ['p0.5', 0.5],
      ['P50', 0.5],
      [' p95 ', 0.95],
      ['p99', 0.99],
      ['p999', 0.999],
      ['p99.9', 0.999],
      ['p0.999', 0.999],
      ['p10', 0.1],
      ['p100', 1],
      ['p9999', 0.9999],
      ['p0', 0],
      ['99', 0.99],
    ];
    // 99.9 / 100 is 0.9990000000000001 in IEEE doubles (in Go too): compare to 1e-12.
    for (const [text, q] of cases) assert.ok(Math.abs(parsePercentile(text) - q) < 1e-12, text);
  });

  void it('names a quantile by its percentage with one decimal, zeros and dot removed', () => {
    const cases: [number, string][] = [
      [0.5, 'p50'],
      [0.95, 'p95'],
      [0.99, 'p99'],
      [0.999, 'p999'],
      [0.1, 'p10'],
      [1, 'p100'],
      [0.9999, 'p100'], // Blip quirk: one decimal only
      [0, 'p'], // Blip quirk
      [0.995, 'p995'],
      [0.05, 'p5'],
    ];
    for (const [q, name] of cases) assert.equal(percentileName(q), name, String(q));
  });

  void it('a plan list becomes names and quantiles, in plan order', () => {
    assert.deepEqual(parsePercentiles(['p99', 'P50', 'p0.999']), [
      { name: 'p99', q: 0.99 },
      { name: 'p50', q: 0.5 },
      { name: 'p999', q: 0.999 },
    ]);
    assert.equal(parsePercentiles(['p99.9'])[0]?.name, 'p999');
  });

  void it('refuses an empty list (Blip text), text that is no number, and q outside (0, 1]', () => {
    assert.throws(
      () => parsePercentiles([]),
      /^Error: no percentile metrics specified, expected at least 1 like 'p99'$/,
    );
    assert.throws(
      () => parsePercentiles(['pfoo']),
      /^Error: invalid percentile metric 'pfoo': 'foo' is not a number$/,
    );
    assert.throws(() => parsePercentiles(['p0x10']), /is not a number/);
    assert.throws(
      () => parsePercentiles(['p0']),
      /^Error: invalid percentile metric 'p0': must be greater than 0/,
    );
    assert.throws(() => parsePercentiles(['p-5']), /must be greater than 0/);
  });
});
