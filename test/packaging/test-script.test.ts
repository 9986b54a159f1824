/**
 * The test script's runner (scripts/run-tests.sh, what `npm test` ends with): it runs every
 * Node line even when the first one fails, then prints one summary, and exits non-zero when
 * any line failed. Driven here with two "Node lines" that are the running node behind two
 * wrappers, the first of which makes a test fail.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/agent.js';

/** A bin dir whose `node` is the running node with LINE=<name> in its environment. */
function fakeLine(dir: string, name: string): string {
  const bin = join(dir, name);
  mkdirSync(bin);
  writeFileSync(join(bin, 'node'), `#!/bin/sh\nLINE=${name} exec "${process.execPath}" "$@"\n`);
  chmodSync(join(bin, 'node'), 0o755);
  return bin;
}

function runTests(bins: string[], files: string[]): { code: number | null; stdout: string; stderr: string } {
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT; // a runner of its own, not a child of this one
  const r = spawnSync('bash', [join(ROOT, 'scripts/run-tests.sh'), ...bins, '--', ...files], {
    encoding: 'utf8',
    env,
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('scripts/run-tests.sh', () => {
  it('runs the second Node line after the first failed, prints one summary, exits 1', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sonde-runtests-'));
    try {
      const first = fakeLine(dir, 'first');
      const second = fakeLine(dir, 'second');
      const file = join(dir, 'x.test.mjs');
      writeFileSync(
        file,
        `import { test } from 'node:test';\n` +
          `test('passes', () => {});\n` +
          `test('fails on the first line only', () => { if (process.env.LINE === 'first') throw new Error('boom'); });\n`,
      );
      const r = runTests([first, second], [file]);
      assert.equal(r.code, 1, r.stderr);
      const summary = r.stderr.slice(r.stderr.indexOf('sonde: test summary'));
      const lines = summary.split('\n').filter((l) => l.startsWith('  Node '));
      assert.equal(lines.length, 2, summary);
      assert.match(
        lines[0] ?? '',
        /^ {2}Node v\d+\.\d+\.\d+: 1 passed, 1 failed, 0 skipped -- FAILED \(exit 1\)$/,
      );
      assert.match(lines[1] ?? '', /^ {2}Node v\d+\.\d+\.\d+: 2 passed, 0 failed, 0 skipped$/);
      assert.match(summary, /sonde: tests FAILED\n$/);
      assert.equal(r.stderr.match(/sonde: tests on Node/g)?.length, 2, 'both lines ran');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('exits 0 with a summary when every line passed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sonde-runtests-'));
    try {
      const file = join(dir, 'ok.test.mjs');
      writeFileSync(file, `import { test } from 'node:test';\ntest('passes', () => {});\n`);
      const r = runTests([fakeLine(dir, 'a'), fakeLine(dir, 'b')], [file]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stderr,
        /sonde: test summary\n {2}Node .*: 1 passed, 0 failed, 0 skipped\n {2}Node .*\n/,
      );
      assert.match(r.stderr, /sonde: all tests passed\n$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
