import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { oneLine } from './text.js';

describe('oneLine', () => {
  it('leaves ordinary text, tabs and backslashes as they are (the same string)', () => {
    const s = 'size.table.bytes = 1 (group: db=app,tbl=a\\b\tc, ünïcödé)';
    assert.equal(oneLine(s), s);
  });

  it('escapes line breaks, ESC and the other control characters', () => {
    assert.equal(oneLine('a\nb\r\nc'), 'a\\nb\\r\\nc');
    assert.equal(oneLine('red\u001b[31mtext'), 'red\\e[31mtext');
    assert.equal(oneLine('bell\u0007nul\u0000del\u007fc1\u0085'), 'bell\\x07nul\\x00del\\x7fc1\\x85');
    assert.equal(oneLine('ls\u2028ps\u2029'), 'ls\\u2028ps\\u2029');
  });

  it('gives a result without any line break for every control character', () => {
    for (let c = 0; c < 0x100; c++) {
      const out = oneLine(`x${String.fromCharCode(c)}y`);
      assert.ok(!['\r', '\n', '\u001b'].some((b) => out.includes(b)), JSON.stringify(out));
    }
  });
});
