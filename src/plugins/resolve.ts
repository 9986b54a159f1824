/**
 * Where a `plugins:` entry points: a file (`./x.js`, `../x.mjs`, `/abs/x.js`, `file:` URL),
 * relative to the config file's directory, or a package name (`sonde-plugin-x`,
 * `@acme/sonde-x`, `pkg/sub`) looked up as Node looks up a package required from a file in
 * that directory: `node_modules` of the directory and of each parent, then NODE_PATH and the
 * global folders Node knows. A package's entry is its `exports` for `.` (conditions
 * `import`, `node`, `default`), else `main`, else `index.js`; a subpath must be listed in
 * `exports` (when the package has one) or be a file of the package.
 */
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fileErrorText, readRegularTextSync } from '../util/read-file.js';

/** A resolution failure; its message is the problem alone (the caller names the module). */
export class ResolveError extends Error {}

/** True when `spec` names a file rather than a package. */
export function isPathSpec(spec: string): boolean {
  return spec.startsWith('./') || spec.startsWith('../') || isAbsolute(spec) || spec.startsWith('file:');
}

/** The file URL to import for `spec`, relative to `baseDir`. */
export function resolvePluginSpec(spec: string, baseDir: string): string {
  if (spec.startsWith('file:')) return fileOf(fileURLToPath(spec), spec);
  if (isPathSpec(spec)) return fileOf(resolve(baseDir, spec), spec);
  return resolvePackage(spec, baseDir);
}

function fileOf(path: string, spec: string): string {
  if (!existsSync(path)) throw new ResolveError(`no such file: ${path}`);
  if (statSync(path).isDirectory()) throw new ResolveError(`${spec} is a directory; name the module file`);
  return pathToFileURL(path).href;
}

/** `@scope/name/sub` → ['@scope/name', './sub']; `name` → ['name', '.']. */
function splitPackage(spec: string): [string, string] {
  const parts = spec.split('/');
  const n = spec.startsWith('@') ? 2 : 1;
  const name = parts.slice(0, n).join('/');
  const valid = /^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/i;
  if (parts.length < n || !valid.test(name)) throw new ResolveError('not a file path or package name');
  const rest = parts.slice(n).join('/');
  return [name, rest === '' ? '.' : `./${rest}`];
}

function resolvePackage(spec: string, baseDir: string): string {
  const [name, subpath] = splitPackage(spec);
  const dirs = createRequire(join(baseDir, 'sonde.yaml')).resolve.paths(name) ?? [];
  const pkgDir = dirs.map((d) => join(d, name)).find((d) => existsSync(join(d, 'package.json')));
  if (pkgDir === undefined) {
    const hint =
      /\.(m?js|cjs)$/.test(spec) && existsSync(resolve(baseDir, spec)) ? ` (a file? write ./${spec})` : '';
    throw new ResolveError(`cannot find package ${name} from ${baseDir}${hint}`);
  }
  let pkg: { exports?: unknown; main?: unknown };
  try {
    pkg = JSON.parse(readRegularTextSync(join(pkgDir, 'package.json'))) as typeof pkg;
  } catch (err) {
    const why = err instanceof SyntaxError ? err.message : fileErrorText(err);
    throw new ResolveError(`cannot read ${join(pkgDir, 'package.json')}: ${why}`);
  }
  let target: string | undefined;
  if (pkg.exports !== undefined) {
    target = exportTarget(pkg.exports, subpath);
    if (target === undefined) throw new ResolveError(`package ${name} does not export ${subpath}`);
  } else if (subpath !== '.') target = subpath;
  else target = typeof pkg.main === 'string' && pkg.main !== '' ? pkg.main : 'index.js';
  return fileOf(resolve(pkgDir, target), spec);
}

const CONDITIONS = ['import', 'node', 'default'];

/** The target of `subpath` in a package's `exports` (exact keys only, no patterns). */
function exportTarget(exports: unknown, subpath: string): string | undefined {
  const isMap =
    exports !== null &&
    typeof exports === 'object' &&
    !Array.isArray(exports) &&
    Object.keys(exports).some((k) => k.startsWith('.'));
  if (!isMap) return subpath === '.' ? conditional(exports) : undefined;
  return conditional((exports as Record<string, unknown>)[subpath]);
}

/** A target string out of a conditions object (or an array of fallbacks). */
function conditional(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return v.map(conditional).find((t) => t !== undefined);
  if (v === null || typeof v !== 'object') return undefined;
  const m = v as Record<string, unknown>;
  for (const c of Object.keys(m)) {
    const t = CONDITIONS.includes(c) ? conditional(m[c]) : undefined;
    if (t !== undefined) return t;
  }
  return undefined;
}
