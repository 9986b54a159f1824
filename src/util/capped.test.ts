import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CappedMap, CappedSet } from './capped.js';

describe('CappedMap', () => {
  it('keeps up to its limit, then starts over with the new key', () => {
    const m = new CappedMap<string, number>(3);
    for (const [i, k] of ['a', 'b', 'c'].entries()) m.set(k, i);
    assert.deepEqual(
      [...m],
      [
        ['a', 0],
        ['b', 1],
        ['c', 2],
      ],
    );
    m.set('b', 10); // a key it has: no start over
    assert.deepEqual(
      [...m],
      [
        ['a', 0],
        ['b', 10],
        ['c', 2],
      ],
    );
    m.set('d', 3);
    assert.deepEqual([...m], [['d', 3]]);
    assert.equal(m.get('a'), undefined);
    assert.ok(m instanceof Map);
  });
});

describe('CappedSet', () => {
  it('keeps up to its limit, then starts over with the new value', () => {
    const s = new CappedSet<string>(2);
    s.add('a').add('b').add('a');
    assert.deepEqual([...s], ['a', 'b']);
    s.add('c');
    assert.deepEqual([...s], ['c']);
    assert.ok(s instanceof Set);
  });
});
