/**
 * Node's module compile cache: the compiled code of each module sonde imports is kept on disk
 * and reused by the next start, which then skips most of the parsing and compiling.
 *
 * The directory is `$XDG_CACHE_HOME/sonde/compile-cache` when XDG_CACHE_HOME is set, else
 * `sonde-compile-cache-<uid>` under the OS temp dir; NODE_COMPILE_CACHE (set by the user)
 * wins, and NODE_DISABLE_COMPILE_CACHE=1 turns it off. Node checks each entry against the
 * module's source, so a rebuilt file is compiled again. Nothing happens on a Node without
 * the API (before 22.1) or when the directory cannot be written: sonde starts as usual.
 */
import * as nodeModule from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where the cache goes, from the environment (NODE_COMPILE_CACHE is Node's own). */
export function compileCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  if (xdg !== undefined && xdg !== '') return join(xdg, 'sonde', 'compile-cache');
  const uid = typeof process.getuid === 'function' ? String(process.getuid()) : 'user';
  return join(tmpdir(), `sonde-compile-cache-${uid}`);
}

/** Turn the compile cache on for the modules imported from now on; never throws. */
export function enableCompileCache(): void {
  const enable = (nodeModule as { enableCompileCache?: (dir?: string) => unknown }).enableCompileCache;
  if (typeof enable !== 'function') return;
  try {
    // With NODE_COMPILE_CACHE set, Node enabled it at startup in the user's directory.
    enable(process.env.NODE_COMPILE_CACHE ? undefined : compileCacheDir());
  } catch {
    // an unusable directory only costs the speed-up
  }
}
