import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import protobuf from 'protobufjs';
import { ProtoWriter } from './protobuf.js';

const root = protobuf.parse(`
syntax = "proto3";
message All {
  uint64 u = 1; int64 i = 2; bool b = 3; double d = 4; fixed64 f = 5; sfixed64 sf = 6;
  string s = 7; bytes by = 8; Sub sub = 9; fixed32 f32 = 10; repeated string rs = 11;
}
message Sub { string name = 1; }
`).root;
const All = root.lookupType('All');

describe('ProtoWriter', () => {
  it('writes every wire type as protobufjs decodes it', () => {
    const w = new ProtoWriter()
      .varint(1, 2n ** 64n - 1n)
      .varint(2, -5)
      .bool(3, true)
      .double(4, -0.1)
      .fixed64(5, 1714564805123000000n)
      .fixed64(6, -2n)
      .string(7, 'héllo ✓')
      .bytes(8, Uint8Array.from([0, 255]))
      .message(9, (s) => s.string(1, 'inner'))
      .fixed32(10, 4294967295)
      .string(11, 'a')
      .string(11, 'b');
    const o = All.toObject(All.decode(w.finish()), { longs: String, bytes: Array });
    assert.deepEqual(o, {
      u: '18446744073709551615',
      i: '-5',
      b: true,
      d: -0.1,
      f: '1714564805123000000',
      sf: '-2',
      s: 'héllo ✓',
      by: [0, 255],
      sub: { name: 'inner' },
      f32: 4294967295,
      rs: ['a', 'b'],
    });
  });

  it('encodes field tags above 15 and varints at 7-bit boundaries byte for byte', () => {
    assert.deepEqual([...new ProtoWriter().varint(1, 127).finish()], [0x08, 0x7f]);
    assert.deepEqual([...new ProtoWriter().varint(1, 128).finish()], [0x08, 0x80, 0x01]);
    assert.deepEqual([...new ProtoWriter().varint(16, 1).finish()], [0x80, 0x01, 0x01]);
    assert.deepEqual([...new ProtoWriter().string(2, '').finish()], [0x12, 0x00]);
  });
  it('writes the same bytes as a protobufjs schema encoding of the same message', () => {
    const mine = new ProtoWriter()
      .varint(1, 300)
      .varint(2, -1)
      .double(4, 2.5)
      .fixed64(5, 1714564805123000000n)
      .string(7, 'x')
      .message(9, (s) => s.string(1, 'n'))
      .finish();
    const theirs = All.encode(
      All.create({ u: 300, i: -1, d: 2.5, f: '1714564805123000000', s: 'x', sub: { name: 'n' } }),
    ).finish();
    assert.deepEqual([...mine], [...theirs]);
  });
});
