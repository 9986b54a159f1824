#!/usr/bin/env -S node --max-semi-space-size=4 --no-maglev
/**
 * The `sonde` command's entry: as little as possible before the command line is read.
 *
 * An ES module's static imports are all loaded and run before its body, so this file
 * imports only what it needs itself (a few small modules and Node's own): a plain
 * `--version` is answered from here, and `sonde healthcheck` imports only its own module.
 * Everything else imports the command line (bin/cli.ts) and the agent behind it, after
 * turning on the compile cache (so their compiled code is reused from the previous start)
 * and the source-mapped stack traces (read on first use).
 */
import { enableCompileCache } from './compile-cache.js';
import { plainVersionAsked } from './early.js';
import { resolveSiblingsDirectly } from './sibling-imports.js';
import { installStackMaps } from './stack-maps.js';
import { inSingleExecutable, packageVersion } from '../util/shipped.js';

const argv = process.argv.slice(2);
if (plainVersionAsked(argv, process.argv[1], process.env)) {
  process.stdout.write(`v${packageVersion()}\n`);
  process.exit(0);
}
if (argv[0] === 'healthcheck') {
  const { healthcheck } = await import('./healthcheck.js');
  process.exit(await healthcheck(argv[1]));
}
enableCompileCache();
// The single executable resolves its chunks itself and holds no source maps.
if (!inSingleExecutable()) {
  resolveSiblingsDirectly(new URL('./', import.meta.url).href);
  installStackMaps();
}
const { runCli } = await import('./cli.js');
runCli(argv);
