import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileErrorText, readRegularText, readRegularTextSync } from './read-file.js';

let dir: string;

describe('readRegularText', () => {
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'sonde-read-'));
    writeFileSync(join(dir, 'ok'), 'hello\n');
    writeFileSync(join(dir, 'big'), 'x'.repeat(2048));
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    symlinkSync('/dev/zero', join(dir, 'zero'));
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a regular file, async and sync', async () => {
    assert.equal(await readRegularText(join(dir, 'ok')), 'hello\n');
    assert.equal(readRegularTextSync(join(dir, 'ok')), 'hello\n');
  });

  it('refuses a FIFO without waiting for a writer, and a symlink to /dev/zero', async () => {
    for (const [name, what] of [
      ['fifo', 'a FIFO'],
      ['zero', 'a character device'],
    ] as const) {
      const path = join(dir, name);
      await assert.rejects(readRegularText(path), {
        code: 'EFTYPE',
        message: `not a regular file (${what})`,
      });
      assert.throws(() => readRegularTextSync(path), { code: 'EFTYPE', syscall: 'open' });
    }
  });

  it('refuses a file over the cap, and keeps system errors as they are', async () => {
    await assert.rejects(readRegularText(join(dir, 'big'), { maxBytes: 1024 }), {
      code: 'EFBIG',
      message: 'larger than 1 KiB',
    });
    const missing = await readRegularText(join(dir, 'nope')).catch((e: unknown) => e);
    assert.equal(fileErrorText(missing), 'ENOENT');
    const isDir = await readRegularText(dir).catch((e: unknown) => e);
    assert.equal(fileErrorText(isDir), 'EISDIR');
  });
});
