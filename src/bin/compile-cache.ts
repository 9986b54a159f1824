/**
 * Node's module compile cache: the compiled code of each module sonde imports is kept on disk
 * and reused by the next start, which then skips most of the parsing and compiling.
 *
 * The directory is `$XDG_CACHE_HOME/sonde/compile-cache` when XDG_CACHE_HOME is set, else
 * `sonde-compile-cache-<uid>` under the OS temp dir. Cached code runs as sonde, so the
 * directory must be sonde's alone: it is created with mode 0700, and one that is a symlink,
 * belongs to another user or is open to group or others is not used. NODE_COMPILE_CACHE (the
 * user's own directory, enabled by Node at startup) wins, and NODE_DISABLE_COMPILE_CACHE=1
 * turns the cache off. Node checks each entry against the module's source, so a rebuilt
 * file is compiled again. Nothing happens on a Node without the API (before 22.1) or when
 * the directory cannot be used: sonde starts as usual, only slower.
 */
import { lstatSync, mkdirSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where the cache goes, from the environment. */
export function compileCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  if (xdg !== undefined && xdg !== '') return join(xdg, 'sonde', 'compile-cache');
  const uid = typeof process.getuid === 'function' ? String(process.getuid()) : 'user';
  return join(tmpdir(), `sonde-compile-cache-${uid}`);
}

/** `dir`, created if missing, when it is a real directory of this user's that no one else may write. */
export function privateDir(dir: string): boolean {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = lstatSync(dir);
    const mine = typeof process.getuid !== 'function' || st.uid === process.getuid();
    return st.isDirectory() && !st.isSymbolicLink() && mine && (st.mode & 0o077) === 0;
  } catch {
    return false;
  }
}

/** Turn the compile cache on for the modules imported from now on; never throws. */
export function enableCompileCache(env: NodeJS.ProcessEnv = process.env): void {
  const enable = (nodeModule as { enableCompileCache?: (dir?: string) => unknown }).enableCompileCache;
  if (typeof enable !== 'function' || env.NODE_COMPILE_CACHE || env.NODE_DISABLE_COMPILE_CACHE) return;
  const dir = compileCacheDir(env);
  if (!privateDir(dir)) return;
  try {
    enable(dir);
  } catch {
    // an unusable directory only costs the speed-up
  }
}
