import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closest, didYouMean, editDistance } from './suggest.js';

describe('did you mean', () => {
  it('counts insertions, deletions, substitutions and swaps, ignoring case', () => {
    assert.equal(editDistance('colect', 'collect'), 1);
    assert.equal(editDistance('duel', 'dual'), 1);
    assert.equal(editDistance('satus.global', 'status.global'), 1);
    assert.equal(editDistance('stauts', 'status'), 1);
    assert.equal(editDistance('FREQ', 'freq'), 0);
    assert.equal(editDistance('', 'abc'), 3);
    assert.equal(editDistance('kitten', 'sitting'), 3);
  });

  it('suggests the closest name only when it is close enough to be a typo', () => {
    assert.equal(closest('colect', ['freq', 'collect']), 'collect');
    assert.equal(closest('innodb.bufer-pool', ['innodb', 'innodb.buffer-pool']), 'innodb.buffer-pool');
    assert.equal(closest('xyz', ['freq', 'collect']), undefined);
    assert.equal(closest('collect', ['collect']), undefined, 'a known word needs no suggestion');
    assert.equal(didYouMean('duel', ['dual', 'legacy']), ' (did you mean dual?)');
    assert.equal(didYouMean('bogus', ['dual', 'legacy']), '');
  });
});
