/**
 * The bundle's chunks import each other as `./chunk-….js`, dozens of them on a start. Node's
 * own resolver checks each such file on disk (stat, real path) and looks up the nearest
 * package.json for its module type; here a relative `.js` import between files of the
 * entry's own directory resolves to the URL beside its importer, as an ES module, without
 * those checks (Node still reads the file, and fails as usual when it is missing). Other
 * imports (Node's modules, packages, a plugin's files) resolve as usual. Needs
 * `module.registerHooks` (Node ≥ 22.15); without it nothing changes.
 */
import * as nodeModule from 'node:module';

interface ResolveContext {
  parentURL?: string | undefined;
}
interface ResolveResult {
  url: string;
  format?: string | null | undefined;
  shortCircuit?: boolean;
}
type Resolve = (
  specifier: string,
  context: ResolveContext,
  next: (specifier: string, context: ResolveContext) => ResolveResult,
) => ResolveResult;
type RegisterHooks = (hooks: { resolve: Resolve }) => unknown;

/** `./x.js` from a file directly in `dir` (a file URL ending in `/`): the URL beside it, else Node's resolution. */
export function siblingResolve(dir: string): Resolve {
  return (specifier, context, next) => {
    const parent = context.parentURL;
    if (
      parent !== undefined &&
      specifier.startsWith('./') &&
      specifier.endsWith('.js') &&
      !specifier.includes('/', 2) &&
      parent.startsWith(dir) &&
      !parent.includes('/', dir.length)
    )
      return { url: dir + specifier.slice(2), format: 'module', shortCircuit: true };
    return next(specifier, context);
  };
}

/** Resolve imports between the files of `dir` (the entry's directory URL) directly from now on. */
export function resolveSiblingsDirectly(dir: string): void {
  const register = (nodeModule as { registerHooks?: RegisterHooks }).registerHooks;
  if (typeof register !== 'function') return;
  register({ resolve: siblingResolve(dir) });
}
