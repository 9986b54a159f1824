/**
 * The examples a user copies are type-checked against the package's own declarations
 * (`import … from 'sonde'` resolves to dist/src/index.d.ts through the package's exports):
 * a change to a public type that would break them fails here, not on a user's machine.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/agent.js';

const EXAMPLES = ['examples/library/embed.mjs', 'examples/plugins/custom-table/index.js'];

/** tsc in strict mode over JavaScript files with `// @ts-check`. */
function typeCheck(files: string[]): SpawnSyncReturns<string> {
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  const flags = ['--noEmit', '--allowJs', '--checkJs', '--strict', '--skipLibCheck', '--types', 'node'];
  const target = ['--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022'];
  return spawnSync(process.execPath, [tsc, ...flags, ...target, ...files], { cwd: ROOT, encoding: 'utf8' });
}

describe('the examples', () => {
  it('type-check strictly against the published types', () => {
    const res = typeCheck(EXAMPLES);
    assert.equal(res.status, 0, res.stdout + res.stderr);
  });

  it('a type mistake in an example is reported (the check is live)', () => {
    const bad = join(ROOT, 'dist/test/packaging/bad-example.mjs');
    writeFileSync(
      bad,
      "// @ts-check\nimport { createAgent } from 'sonde';\ncreateAgent({ hooks: { startMonitor: (m) => m.nope.length > 0 } });\n",
    );
    const res = typeCheck([bad]);
    assert.notEqual(res.status, 0);
    assert.match(res.stdout, /nope/);
  });
});
