import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash as nodeCreateHash } from 'node:crypto';
import { createHash } from './driver-crypto.js';

/** Inputs as mysql2's login passes them: the password as text, the scramble and hashes as bytes. */
const INPUTS: (string | Buffer)[][] = [
  [''],
  ['secret'],
  ['pässwörd-日本-🔑'],
  [Buffer.alloc(0)],
  [Buffer.from('0123456789abcdefghij', 'latin1'), Buffer.from('klmnopqrstuv', 'latin1')],
  // the three-part stage 3 hash: 8 and 12 bytes of scramble, then a 20-byte digest
  [Buffer.alloc(8, 0xa5), Buffer.alloc(12, 0x5a), nodeCreateHash('sha1').update('pw').digest()],
  // block boundaries: 55, 56, 63, 64 and 65 bytes
  ...[55, 56, 63, 64, 65, 1000].map((n) => [Buffer.alloc(n, n & 0xff)]),
];

describe("the crypto of mysql2's login in the bundle", () => {
  it("gives SHA-1 digests equal to Node's, for text and bytes, in one or several updates", () => {
    for (const parts of INPUTS) {
      const ours = createHash('sha1');
      const node = nodeCreateHash('sha1');
      for (const p of parts) {
        assert.equal(ours.update(p), ours, 'update returns the hash, as Node chains it');
        node.update(p);
      }
      const digest = ours.digest();
      assert.ok(Buffer.isBuffer(digest), 'digest is a Buffer (mysql2 slices and xors it)');
      assert.equal(digest.toString('hex'), node.digest('hex'), JSON.stringify(parts.map(String)));
    }
  });

  it("hands any other algorithm to Node's crypto", () => {
    const digest = createHash('sha256').update('abc').digest();
    assert.equal(digest.toString('hex'), nodeCreateHash('sha256').update('abc').digest('hex'));
    assert.throws(() => createHash('no-such-hash'), /Digest method not supported/);
  });
});
