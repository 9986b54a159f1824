import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BUILT_STATUS_LINE, importLine, keptBytes } from './kept-bytes.fixture.js';
import { flatten, oneLine, sharedText } from './text.js';

const TEXT = importLine(['flatten', 'sharedText'], './text.js', import.meta.url);

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

describe('flatten', () => {
  it('gives the same text', () => {
    const parts = ['ok at ', new Date(0).toISOString(), ' in ', (1.5).toFixed(1), 'ms'];
    const built = `${parts[0]}${parts[1]}${parts[2]}${parts[3]}${parts[4]}`;
    assert.equal(flatten(built), parts.join(''));
    assert.equal(flatten(''), '');
    assert.equal(flatten('a\nb'), 'a\nb');
  });

  it('keeps a string built from parts in a third of the heap the parts take', async () => {
    // Measured: about 260 bytes per line as built, 85 flattened (the text is 50 characters).
    await assertCheaperKept(BUILT_STATUS_LINE, 'flatten', 1 / 2);
  });
});

describe('sharedText', () => {
  it('gives the same text', () => {
    const sql = `SELECT 1 FROM t WHERE x IN (${['?', '?'].join(', ')})`;
    assert.equal(sharedText(sql), 'SELECT 1 FROM t WHERE x IN (?, ?)');
    assert.equal(sharedText(`SELECT ${1}`), 'SELECT 1');
  });

  it('keeps one copy of a text built alike many times', async () => {
    // 20,000 equal statements, each built from its parts as a monitor builds its level's.
    const sql =
      '`SELECT subsystem, name, count FROM information_schema.innodb_metrics WHERE name IN (${Array.from({ length: 40 }, () => "?").join(", ")})`';
    await assertCheaperKept(sql, 'sharedText', 1 / 4);
  });
});

/** Strings made by `make` and kept through `keep` take under `share` of the heap they take as built. */
async function assertCheaperKept(make: string, keep: string, share: number): Promise<void> {
  const r = await keptBytes(TEXT, make, { built: '(s) => s', kept: keep });
  assert.ok(
    r.kept < r.built * share,
    `${keep}: ${r.kept.toFixed(0)} bytes per string, built ${r.built.toFixed(0)}`,
  );
}
