import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  formatShard,
  inShard,
  parseShard,
  processOrdinalSource,
  shardOfId,
  type OrdinalSource,
} from './shard.js';

/**
 * hashmod worked out by hand from the hex digest: the last 16 hex digits are bytes 8 to 15
 * of the MD5 digest, most significant first; as a BigInt they are the unsigned integer.
 */
function byHand(id: string, n: number): number {
  const hex = createHash('md5').update(Buffer.from(id, 'utf8')).digest('hex');
  return Number(BigInt(`0x${hex.slice(16)}`) % BigInt(n));
}

describe('shard: the hash', () => {
  it('matches fixed vectors (digest, second half as an unsigned 64-bit integer, modulo n)', () => {
    // Worked out once with another MD5 implementation: id, second half of the digest, its
    // value, then the value modulo 3, 2 and 7.
    const vectors: [string, string, bigint, number, number, number][] = [
      ['db1', '92571d6b0039dd30', 10544929397913804080n, 2, 0, 5],
      ['db2', 'f9f153f2638ea853', 18010268685348808787n, 2, 1, 2],
      ['localhost', 'b6494f812ad13e79', 13135117204390493817n, 0, 1, 1],
      ['mysql-0.prod:3306', 'f82a36e9c051fffe', 17882165648009854974n, 0, 0, 6],
      ['é', 'f6fb8a999b4bc76f', 17796970744824711023n, 2, 1, 3],
    ];
    for (const [id, half, value, m3, m2, m7] of vectors) {
      const hex = createHash('md5').update(id, 'utf8').digest('hex');
      assert.equal(hex.slice(16), half, id);
      assert.equal(BigInt(`0x${half}`), value, id);
      assert.deepEqual([shardOfId(id, 3), shardOfId(id, 2), shardOfId(id, 7)], [m3, m2, m7], id);
    }
  });

  it('needs the full 64 bits: these values are above 2^63, where a double loses digits', () => {
    // 18010268685348808787 (db2) as a double is 18010268685348808704; modulo 3 that is 0, not 2.
    assert.equal(Number(18010268685348808787n), 18010268685348808704);
    assert.equal(Number(18010268685348808787n) % 3, 0);
    assert.equal(shardOfId('db2', 3), 2);
  });

  it('agrees with the hand computation for many ids and counts, and one shard keeps each id', () => {
    for (let k = 0; k < 200; k++) {
      const id = `monitor-${k}`;
      for (const n of [1, 2, 3, 5, 16]) {
        assert.equal(shardOfId(id, n), byHand(id, n), `${id} over ${n}`);
        const keepers = Array.from({ length: n }, (_, index) => index).filter((index) =>
          inShard(id, { index, count: n }),
        );
        assert.deepEqual(keepers, [byHand(id, n)]);
      }
    }
  });

  it('spreads ids over the shards', () => {
    const counts = [0, 0, 0];
    for (let k = 0; k < 300; k++) counts[shardOfId(`db${k}`, 3)]! += 1;
    for (const c of counts) assert.ok(c > 50, `shard sizes ${counts.join(', ')}`);
  });
});

describe('shard: parsing', () => {
  const host =
    (hostname: string, ordinal?: string): (() => OrdinalSource) =>
    () => ({ hostname, ordinal });
  const noOrdinal = host('vm');
  const parse = (text: string, src = noOrdinal, what = '--shard') => parseShard(text, what, src);

  it('reads i/n', () => {
    assert.deepEqual(parse('0/3'), { index: 0, count: 3 });
    assert.deepEqual(parse('2/3'), { index: 2, count: 3 });
    assert.deepEqual(parse('0/1'), { index: 0, count: 1 });
    assert.deepEqual(parse(' 1/2 '), { index: 1, count: 2 });
    assert.equal(formatShard(parse('1/3')), '1/3');
  });

  it('refuses bad values with one line naming the flag or variable', () => {
    const cases: [string, string][] = [
      ['3/3', 'invalid --shard "3/3": the shard index must be below n (shards are 0 to 2)'],
      ['a/b', 'invalid --shard "a/b": want i/n with whole numbers 0 <= i < n (e.g. 1/3), or ordinal/n'],
      ['0/0', 'invalid --shard "0/0": the shard count n must be at least 1'],
      ['', 'invalid --shard "": want i/n with whole numbers 0 <= i < n (e.g. 1/3), or ordinal/n'],
      ['1', 'invalid --shard "1": want i/n with whole numbers 0 <= i < n (e.g. 1/3), or ordinal/n'],
      ['-1/3', 'invalid --shard "-1/3": want i/n with whole numbers 0 <= i < n (e.g. 1/3), or ordinal/n'],
      ['1/3/4', 'invalid --shard "1/3/4": want i/n with whole numbers 0 <= i < n (e.g. 1/3), or ordinal/n'],
      ['1e2/3', 'invalid --shard "1e2/3": want i/n with whole numbers 0 <= i < n (e.g. 1/3), or ordinal/n'],
      [
        'ordinal/x',
        'invalid --shard "ordinal/x": want i/n with whole numbers 0 <= i < n (e.g. 1/3), or ordinal/n',
      ],
    ];
    for (const [text, message] of cases) assert.throws(() => parse(text), { message }, text);
    assert.throws(() => parse('5/2', noOrdinal, 'SONDE_SHARD'), {
      message: 'invalid SONDE_SHARD "5/2": the shard index must be below n (shards are 0 to 1)',
    });
  });

  it('reads the ordinal form from a StatefulSet host name', () => {
    assert.deepEqual(parse('ordinal/3', host('sonde-2')), { index: 2, count: 3 });
    assert.deepEqual(parse('ordinal/3', host('my-sonde-agent-0')), { index: 0, count: 3 });
    assert.deepEqual(parse('ordinal/3', host('sonde-1.sonde.monitoring.svc.cluster.local')), {
      index: 1,
      count: 3,
    });
    assert.throws(() => parse('ordinal/3', host('sonde')), {
      message:
        'invalid --shard "ordinal/3": host name "sonde" does not end in -<ordinal> (a StatefulSet pod is <name>-<ordinal>); set SONDE_SHARD_ORDINAL or give i/n',
    });
    assert.throws(() => parse('ordinal/3', host('sonde-3')), {
      message:
        'invalid --shard "ordinal/3": ordinal 3 (from host name sonde-3) is not below n=3: n must equal the number of agents (the StatefulSet\'s replicas)',
    });
  });

  it('prefers SONDE_SHARD_ORDINAL (the pod-index label) over the host name; empty is unset', () => {
    assert.deepEqual(parse('ordinal/3', host('vm', '1')), { index: 1, count: 3 });
    assert.deepEqual(parse('ordinal/3', host('sonde-2', '0')), { index: 0, count: 3 });
    assert.deepEqual(parse('ordinal/3', host('sonde-2', '')), { index: 2, count: 3 });
    assert.throws(() => parse('ordinal/3', host('sonde-2', 'one')), {
      message: 'invalid --shard "ordinal/3": SONDE_SHARD_ORDINAL "one" is not a whole number',
    });
    assert.throws(() => parse('ordinal/3', host('vm', '7'), 'SONDE_SHARD'), {
      message:
        'invalid SONDE_SHARD "ordinal/3": ordinal 7 (from SONDE_SHARD_ORDINAL=7) is not below n=3: n must equal the number of agents (the StatefulSet\'s replicas)',
    });
  });

  it('takes the host name from HOSTNAME, else from the system', () => {
    assert.deepEqual(processOrdinalSource({ HOSTNAME: 'sonde-4', SONDE_SHARD_ORDINAL: '2' }), {
      hostname: 'sonde-4',
      ordinal: '2',
    });
    const fallback = processOrdinalSource({ HOSTNAME: '' });
    assert.ok(fallback.hostname.length > 0);
    assert.equal(fallback.ordinal, undefined);
  });
});
