/**
 * The lint gate really refuses what eslint.config.mjs says it refuses: imports across the
 * layer map and literal status keys. Runs only those two rules, without type information,
 * on code given as text under a path inside src/, so it takes well under a second.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';

/** The repository root (this file runs from dist/test/lint/). */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

const GATE_RULES = new Set(['no-restricted-imports', 'no-restricted-syntax']);

const eslint = new ESLint({
  cwd: ROOT,
  overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
  ruleFilter: ({ ruleId }) => GATE_RULES.has(ruleId),
});

/** The gate's messages for `code` as if it were the file `path` (relative to the root). */
async function gate(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(ROOT, path) });
  return (result?.messages ?? []).map((m) => `${m.ruleId ?? 'parse'}: ${m.message}`);
}

describe('lint gate: layers', () => {
  it('refuses a collector importing from monitor/', async () => {
    const found = await gate(
      'src/collectors/probe.ts',
      "import { Engine } from '../monitor/engine.js';\nvoid Engine;\n",
    );
    assert.equal(found.length, 1, found.join('\n'));
    assert.match(
      found[0] ?? '',
      /^no-restricted-imports: .*src\/collectors\/ may import only core, util, aws, db/,
    );
  });

  it('refuses a nested collector file importing a sink, and core importing util', async () => {
    const nested = await gate(
      'src/collectors/x/index.ts',
      "import { x } from '../../sinks/log.js';\nvoid x;\n",
    );
    assert.equal(nested.length, 1, nested.join('\n'));
    const core = await gate('src/core/probe.ts', "import { x } from '../util/text.js';\nvoid x;\n");
    assert.equal(core.length, 1, core.join('\n'));
  });

  it('refuses any import of bin/, even from monitor/', async () => {
    const found = await gate('src/monitor/probe.ts', "import { x } from '../bin/sonde.js';\nvoid x;\n");
    assert.equal(found.length, 1, found.join('\n'));
  });

  it('accepts imports the layer map allows', async () => {
    const code = [
      "import { x } from '../core/errors.js';",
      "import { y } from '../util/text.js';",
      "import { z } from '../db/values.js';",
      "import { w } from './common.js';",
      'void [x, y, z, w];',
      '',
    ].join('\n');
    assert.deepEqual(await gate('src/collectors/probe.ts', code), []);
  });

  it('lets test files import across layers', async () => {
    const code = "import { Engine } from '../monitor/engine.js';\nvoid Engine;\n";
    assert.deepEqual(await gate('src/collectors/probe.test.ts', code), []);
  });
});

describe('lint gate: status keys', () => {
  it('refuses a literal key on a status writer, plain or template', async () => {
    const code = [
      'declare const status: { set(k: string, v: string): void; delete(k: string): void };',
      "status.set('monitor', 'x');",
      'status.delete(`error:${String(1)}`);',
      '',
    ].join('\n');
    const found = await gate('src/monitor/probe.ts', code);
    assert.equal(found.length, 2, found.join('\n'));
    assert.ok(found.every((m) => m.startsWith('no-restricted-syntax: status keys come from')));
  });

  it('refuses a literal key on a status property such as this.#status or opts.status', async () => {
    const code = [
      'declare const opts: { status?: { set(k: string, v: string): void } };',
      "opts.status?.set('exporter', 'x');",
      '',
    ].join('\n');
    assert.equal((await gate('src/exporter/probe.ts', code)).length, 1);
  });

  it('accepts keys from the catalogue and literals on other maps', async () => {
    const code = [
      "import { MonitorKey } from '../core/status-keys.js';",
      'declare const status: { set(k: string, v: string): void };',
      "status.set(MonitorKey.monitor, 'x');",
      "new Map<string, string>().set('monitor', 'x');",
      '',
    ].join('\n');
    assert.deepEqual(await gate('src/monitor/probe.ts', code), []);
  });
});
