/**
 * The lint gate really refuses what eslint.config.mjs says it refuses: imports across the
 * layer map and literal status keys. Runs only those two rules, without type information,
 * on code given as text under a path inside src/, so it takes well under a second.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
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

  it("refuses mysql2's plain connections anywhere in src/, and lets the pool and its types through", async () => {
    for (const from of ['mysql2', 'mysql2/promise']) {
      const found = await gate(
        'src/db/probe.ts',
        `import { createConnection } from '${from}';\nvoid createConnection;\n`,
      );
      assert.equal(found.length, 1, found.join('\n'));
      assert.match(found[0] ?? '', /^no-restricted-imports: .*take connections from a mysql2 pool/);
    }
    const pool = await gate(
      'src/db/probe.ts',
      "import { createPool } from 'mysql2/promise';\nimport type { Connection } from 'mysql2';\nvoid createPool;\nexport type C = Connection;\n",
    );
    assert.deepEqual(pool, []);
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

  it('refuses config/ importing aws/, statically or dynamically (credentials are fetched in db/)', async () => {
    const found = await gate(
      'src/config/connection.ts',
      "import { x } from '../aws/iam.js';\nvoid x;\nexport const y = () => import('../aws/secrets.js');\n",
    );
    assert.equal(found.length, 2, found.join('\n'));
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

/** The folder map of docs/architecture.md: folder → the layers it may import, as written. */
function architectureMap(): Map<string, string[]> {
  const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const map = new Map<string, string[]>();
  for (const m of doc.matchAll(/^\| `src\/([a-z-]+)\/` \| .* \| ([^|]+) \|$/gm)) {
    const allowed = (m[2] ?? '').trim();
    map.set(m[1] ?? '', allowed === 'nothing' ? [] : allowed.split(/,\s*/));
  }
  return map;
}

/** The folders directly under `dir` (repository-relative). */
function foldersOf(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).filter((e) => statSync(join(ROOT, dir, e)).isDirectory());
}

/** Every non-test source file below src/ (repository-relative, posix). */
function sourceFiles(dir = 'src'): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((e) => {
    const p = posix.join(dir, e);
    if (statSync(join(ROOT, p)).isDirectory()) return sourceFiles(p);
    return p.endsWith('.ts') && !/\.test\.ts$|fixture|test-helpers/.test(p) ? [p] : [];
  });
}

describe('the folder map', () => {
  it('names every folder of src/ in docs/architecture.md and in LAYERS, and no other', async () => {
    const { LAYERS } = (await import(join(ROOT, 'eslint.config.mjs'))) as {
      LAYERS: Record<string, string[]>;
    };
    const map = architectureMap();
    const folders = foldersOf('src').sort();
    assert.ok(folders.length >= 20, `found only ${folders.length} folders`);
    assert.deepEqual([...map.keys()].sort(), folders, 'docs/architecture.md map vs src/');
    assert.deepEqual(Object.keys(LAYERS).sort(), folders, 'LAYERS vs src/');
    // What the map says a folder may import is what lint enforces (the map's words for the
    // layers above monitor/ stand for lists).
    for (const [folder, allowed] of map) {
      if (['monitor', 'agent', 'bin'].includes(folder)) continue;
      assert.deepEqual([...allowed].sort(), [...(LAYERS[folder] ?? [])].sort(), `may import of ${folder}`);
    }
  });

  it('keeps only kit/, exporter/ and domain folders in src/collectors/', () => {
    const doms = new Set(
      (JSON.parse(readFileSync(join(ROOT, 'src/collectors/help.json'), 'utf8')) as { domain: string }[]).map(
        (h) => h.domain,
      ),
    );
    const odd = foldersOf('src/collectors').filter((f) => f !== 'kit' && f !== 'exporter' && !doms.has(f));
    assert.deepEqual(odd, []);
    const root = readdirSync(join(ROOT, 'src/collectors')).filter(
      (e) => e.endsWith('.ts') && !e.endsWith('.test.ts'),
    );
    assert.deepEqual(root.sort(), [
      'builtin.ts',
      'default-plan-domains.ts',
      'implementations.ts',
      'registry.ts',
    ]);
  });

  it('has no two files of src/ importing each other in a loop, type imports included', () => {
    const files = sourceFiles();
    const known = new Set(files);
    const edges = new Map<string, string[]>();
    for (const f of files) {
      const text = readFileSync(join(ROOT, f), 'utf8');
      const targets = [...text.matchAll(/(?:from\s+|import\s*\(\s*)'(\.{1,2}\/[^']+)'/g)]
        .map((m) => posix.normalize(posix.join(dirname(f), m[1] ?? '')).replace(/\.js$/, '.ts'))
        .filter((t) => known.has(t));
      edges.set(f, targets);
    }
    const loops: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (f: string, path: string[]): void => {
      state.set(f, 'open');
      for (const t of edges.get(f) ?? []) {
        if (state.get(t) === 'open') loops.push([...path.slice(path.indexOf(t)), f, t].join(' -> '));
        else if (state.get(t) === undefined) visit(t, [...path, f]);
      }
      state.set(f, 'done');
    };
    for (const f of files) if (state.get(f) === undefined) visit(f, []);
    assert.ok(files.length > 200 && [...edges.values()].flat().length > 500, 'the import graph was read');
    assert.deepEqual(loops, []);
  });
});
