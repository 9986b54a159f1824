/**
 * The npm package holds what runs and nothing else: `npm pack` as npm itself computes it
 * (package.json `files`), checked file by file, and the packed command started from an
 * unpacked tarball.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, normalize } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../helpers/agent.js';

const run = promisify(execFile);

interface Pkg {
  version: string;
  bin: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

/** The bundle's source maps: shipped, for stack traces that name sonde's TypeScript lines. */
const BUNDLE_MAP = /^dist\/bundle\/bin\/[^/]+\.js\.map$/;

/** Paths that belong to development only. */
const DEV_ONLY =
  /(^|\/)(test|tests|bench|fixtures?)\/|\.test\.(js|d\.ts)$|fixture|test-helpers|\.map$|(?<!\.d)\.ts$|^src\//;

/** Specifiers of the static and dynamic imports of a compiled module. */
function importsOf(js: string): string[] {
  const out: string[] = [];
  for (const m of js.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/g))
    out.push(m[1] ?? '');
  for (const m of js.matchAll(/(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g)) out.push(m[1] ?? '');
  for (const m of js.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push(m[1] ?? '');
  // Files read from a package (the web page serves uPlot's from node_modules).
  for (const m of js.matchAll(/\brequire\.resolve\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push(m[1] ?? '');
  return out;
}

/** `pkg` of `pkg/sub` and `@scope/pkg` of `@scope/pkg/sub`. */
function packageName(spec: string): string {
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? spec);
}

describe('npm pack', () => {
  let pkg: Pkg;
  let files: string[];

  before(async () => {
    pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as Pkg;
    // --ignore-scripts: `prepare` would rebuild dist/ under the running tests.
    const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT });
    const report = JSON.parse(stdout) as { files: { path: string }[] }[];
    files = (report[0]?.files ?? []).map((f) => f.path);
  });

  it('holds the command, package.json, the README, the docs, the web page, the RDS CA bundle and the deploy files', () => {
    for (const bin of Object.values(pkg.bin)) assert.ok(files.includes(normalize(bin)), `bin ${bin} packed`);
    for (const f of [
      'package.json',
      'README.md',
      'docs/config.md',
      'docs/deploy.md',
      'examples/sonde.yaml',
      'web/index.html',
      'web/app.js',
      'web/app.css',
      'web/queries.js',
      'certs/rds-global-bundle.pem',
      'dist/src/index.js',
      'dist/src/index.d.ts',
      'dist/bundle/bin/sonde.js',
      'dist/bundle/bin/sonde.js.map',
    ])
      assert.ok(files.includes(f), `${f} packed`);
    assert.ok(files.includes('deploy/sonde.service'), 'deploy/sonde.service packed');
  });

  it('holds no test, fixture, bench, source map or TypeScript source', () => {
    assert.deepEqual(
      files.filter((f) => DEV_ONLY.test(f) && !BUNDLE_MAP.test(f)),
      [],
    );
    assert.deepEqual(
      files.filter(
        (f) =>
          !/^(dist\/src\/|dist\/bundle\/bin\/|docs\/|web\/|examples\/|deploy\/|certs\/)/.test(f) &&
          !/^[^/]+$/.test(f),
      ),
      [],
    );
  });

  it('every packed module imports only packed modules, Node built-ins and runtime dependencies', async () => {
    const packed = new Set(files);
    const builtins = new Set(builtinModules);
    const problems: string[] = [];
    for (const f of files.filter((p) => p.endsWith('.js'))) {
      for (const spec of importsOf(await readFile(join(ROOT, f), 'utf8'))) {
        if (spec.startsWith('.')) {
          const target = normalize(join(dirname(f), spec));
          if (!packed.has(target)) problems.push(`${f}: ${spec} is not packed`);
        } else if (!spec.startsWith('node:') && !builtins.has(packageName(spec))) {
          if (!(packageName(spec) in pkg.dependencies))
            problems.push(`${f}: ${spec} is not a runtime dependency`);
        }
      }
    }
    assert.deepEqual(problems, []);
  });

  it('the command is the bundle: every chunk it imports and every source map is packed', async () => {
    assert.match(pkg.bin.sonde ?? '', /^dist\/bundle\/bin\/sonde\.js$/);
    const packed = new Set(files);
    const problems: string[] = [];
    const bundle = files.filter((f) => f.startsWith('dist/bundle/bin/') && f.endsWith('.js'));
    assert.ok(bundle.length > 10, 'the bundle is split into chunks loaded on first use');
    for (const f of bundle) {
      const js = await readFile(join(ROOT, f), 'utf8');
      // Minified: `import{a}from"./chunk-X.js"`, `import("./x-Y.js")`, `import"./chunk-Z.js"`.
      for (const m of js.matchAll(/(?:\bfrom|\bimport\(?)\s*["'](\.\/[\w.-]+\.js)["']/g)) {
        const spec = m[1] ?? '';
        if (!packed.has(normalize(join(dirname(f), spec)))) problems.push(`${f}: ${spec} is not packed`);
      }
      const map = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(js)?.[1];
      if (map === undefined || !packed.has(normalize(join(dirname(f), map))))
        problems.push(`${f}: no packed source map`);
    }
    assert.deepEqual(problems, []);
  });

  it('runtime dependencies are all imported by packed code', async () => {
    const used = new Set<string>();
    for (const f of files.filter((p) => p.endsWith('.js')))
      for (const spec of importsOf(await readFile(join(ROOT, f), 'utf8'))) used.add(packageName(spec));
    assert.deepEqual(
      Object.keys(pkg.dependencies).filter((d) => !used.has(d)),
      [],
    );
  });
});

describe('the packed command', () => {
  let dir: string;
  let bin: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sonde-pack-'));
    const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], {
      cwd: ROOT,
    });
    const [report] = JSON.parse(stdout) as { filename: string }[];
    await run('tar', ['-xzf', join(dir, report?.filename ?? ''), '-C', dir]);
    // The dependencies come from the checkout; which ones are needed is checked above.
    await symlink(join(ROOT, 'node_modules'), join(dir, 'package/node_modules'));
    const pkg = JSON.parse(await readFile(join(dir, 'package/package.json'), 'utf8')) as Pkg;
    bin = join(dir, 'package', pkg.bin.sonde ?? '');
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('prints its version', async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as Pkg;
    const { stdout } = await run(process.execPath, [bin, '--version']);
    assert.equal(stdout, `v${pkg.version}\n`);
  });

  it('loads every collector (--print-domains)', async () => {
    const { stdout } = await run(process.execPath, [bin, '--print-domains']);
    assert.match(stdout, /status\.global/);
  });
});
