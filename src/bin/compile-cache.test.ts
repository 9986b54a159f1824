import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileCacheDir, privateDir } from './compile-cache.js';

describe('compile cache directory', () => {
  it('goes under XDG_CACHE_HOME when set, else a per-user directory under the temp dir', () => {
    assert.equal(compileCacheDir({ XDG_CACHE_HOME: '/home/u/.cache' }), '/home/u/.cache/sonde/compile-cache');
    const fallback = compileCacheDir({ XDG_CACHE_HOME: '' });
    assert.equal(fallback, join(tmpdir(), `sonde-compile-cache-${process.getuid?.() ?? 'user'}`));
  });

  it('is used only when it is a directory of this user that no one else may write', () => {
    const root = mkdtempSync(join(tmpdir(), 'sonde-cc-test-'));
    try {
      assert.equal(privateDir(join(root, 'fresh')), true, 'created 0700');
      const open = join(root, 'open');
      mkdirSync(open);
      chmodSync(open, 0o777);
      assert.equal(privateDir(open), false, 'world-writable');
      chmodSync(open, 0o750);
      assert.equal(privateDir(open), false, 'group-readable');
      const link = join(root, 'link');
      symlinkSync(join(root, 'fresh'), link);
      assert.equal(privateDir(link), false, 'a symlink');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
