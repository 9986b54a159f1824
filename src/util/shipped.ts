/**
 * The files sonde ships beside its code: package.json (the version), web/ (the page) and
 * certs/ (the RDS CA bundle). Three builds read them:
 *
 * - the TypeScript output, dist/src/<folder>/*.js, and the bundle, dist/bundle/bin/*.js
 *   (scripts/build-bundle.mjs): both three folders below the package root, so the files
 *   are found relative to the code's own location;
 * - the single executable (scripts/build-binary.mjs): no package on disk; the files are
 *   embedded in it as assets named by their path in the package (`web/app.js`), read
 *   through `node:sea`.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** The package root, from dist/src/util/ or from dist/bundle/bin/ alike. */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

interface Sea {
  isSea(): boolean;
  getAsset(key: string): ArrayBuffer;
}

let sea: Sea | null | undefined;

/** `node:sea` when this process is a single executable, else null. */
function seaApi(): Sea | null {
  if (sea === undefined) {
    try {
      const api = createRequire(import.meta.url)('node:sea') as Sea;
      sea = api.isSea() ? api : null;
    } catch {
      sea = null; // a Node without the module: not a single executable
    }
  }
  return sea;
}

/** Whether sonde runs as a single executable (its shipped files embedded). */
export function inSingleExecutable(): boolean {
  return seaApi() !== null;
}

/**
 * A shipped file's content: the single executable's embedded asset `key` (the file's path
 * in the package), else the file at `path()` (by default `key` under the package root).
 */
export function readShipped(key: string, path: () => string = () => PACKAGE_ROOT + key): Buffer {
  const api = seaApi();
  return api ? Buffer.from(api.getAsset(key)) : readFileSync(path());
}

let version: string | undefined;

/** sonde's version, from package.json. */
export function packageVersion(): string {
  version ??= (JSON.parse(readShipped('package.json').toString('utf8')) as { version: string }).version;
  return version;
}
