#!/usr/bin/env node
/**
 * The single executable: `sonde-linux-<arch>`, one file holding Node, sonde and its shipped
 * files, built with Node's single-executable-application support (`npm run build:binary`).
 *
 *   node scripts/build-binary.mjs [--out dist/binary] [--node /path/to/node]
 *
 * Steps:
 * 1. esbuild bundles the agent as for the `sonde` command (scripts/build-bundle.mjs: one
 *    entry, chunks loaded on first use), without source maps.
 * 2. The preparation blob (`node --experimental-sea-config`): the main script
 *    scripts/sea-main.cjs, which serves the chunks to Node's module loader from the blob so
 *    that each is read and compiled only when first imported, as from disk (a single
 *    CommonJS script of everything was 12 MiB larger in memory at start); the Node flags the
 *    bin's `#!` line passes (`execArgv`); the chunks and mysql2's rare data end to end in
 *    one asset (`bundle.pack`, the start's chunks first, with `bundle.index`); the shipped
 *    files as assets of their own (package.json, web/, certs/, named by their path in the
 *    package; uPlot's files under web/ with the names the page serves them by):
 *    src/util/shipped.ts reads them through `node:sea`.
 * 3. A copy of the node binary (`--node`, default the one running this script) with the
 *    blob injected by postject.
 *
 * The executable needs nothing on the host but the C library and, for TLS to servers it
 * should verify, nothing more: Node's own CA store is built in (tls.ca names others).
 */
import { buildChunks } from './build-bundle.mjs';
import { Buffer } from 'node:buffer';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { arch } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

/** The fuse postject flips so that Node looks for the blob (Node's documented sentinel). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

function arg(name, def) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? def) : def;
}

/** The Node flags of the bin's `#!/usr/bin/env -S node …` line, but for source maps (none inside). */
function binNodeFlags() {
  const first = readFileSync(join(ROOT, 'src/bin/sonde.ts'), 'utf8').split('\n', 1)[0] ?? '';
  const m = /^#!\/usr\/bin\/env -S node (.*)$/.exec(first);
  return (m?.[1] ?? '').split(/\s+/).filter((f) => f !== '' && f !== '--enable-source-maps');
}

/** The embedded files: asset name → file on disk. */
function assets(dir) {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const pkgFile = join(dir, 'package.json');
  writeFileSync(pkgFile, `${JSON.stringify({ name: pkg.name, version: pkg.version })}\n`);
  const uplot = dirname(require.resolve('uplot/dist/uPlot.min.css'));
  return {
    'package.json': pkgFile,
    'web/index.html': join(ROOT, 'web/index.html'),
    'web/app.js': join(ROOT, 'web/app.js'),
    'web/app.css': join(ROOT, 'web/app.css'),
    'web/uplot.min.js': join(uplot, 'uPlot.iife.min.js'),
    'web/uplot.min.css': join(uplot, 'uPlot.min.css'),
    'web/uplot-LICENSE.txt': join(uplot, '../LICENSE'),
    'certs/rds-global-bundle.pem': join(ROOT, 'certs/rds-global-bundle.pem'),
  };
}

/**
 * The new file out of the page cache (written to disk first). A file just written is wholly
 * in the page cache, and the kernel then maps up to 16 cached pages around each page a
 * process touches: the executable started right after the build showed about 14 MiB more
 * RSS (clean, shared pages of the file) than after the cache was dropped or a reboot, which
 * made every memory figure of a fresh build wrong. GNU dd's `nocache` asks the kernel to drop
 * the file's cached pages; without dd the build goes on as it is.
 */
function dropFromPageCache(file) {
  try {
    execFileSync('sync', [file], { stdio: 'ignore' });
    execFileSync('dd', [`if=${file}`, 'iflag=nocache', 'count=0', 'status=none'], { stdio: 'ignore' });
  } catch {
    // only the next start's memory figure depends on it
  }
}

/**
 * The modules every run of the agent imports: the entry, the command line (imported by the
 * entry once it knows it is no `--version`) and the default plan's collectors. With what they
 * import statically, their chunks are what every start reads (a sink's chunk is a few hundred
 * bytes beside them).
 */
const START_MODULES = ['src/bin/sonde.ts', 'src/bin/cli.ts', 'src/collectors/default-plan-domains.ts'];

/**
 * The bundle's files in the order they go into the pack: the chunks of START_MODULES and every
 * chunk they import statically, then the rest (chunks imported on first use, the rare data) by
 * name. `files` are paths under `chunks`; esbuild's metafile names outputs from the working
 * directory.
 */
function startFirst(files, metafile, chunks) {
  const byKey = new Map(files.map((f) => [relative(process.cwd(), join(chunks, f)), f]));
  const queue = START_MODULES.map((m) => {
    const k = Object.keys(metafile.outputs).find((o) => metafile.outputs[o].entryPoint === m);
    if (k === undefined) throw new Error(`build-binary: no chunk of ${m} in esbuild's metafile`);
    return k;
  });
  const start = new Set();
  for (let k = queue.shift(); k !== undefined; k = queue.shift()) {
    const file = byKey.get(k);
    if (file === undefined || start.has(file)) continue;
    start.add(file);
    for (const i of metafile.outputs[k]?.imports ?? []) if (i.kind === 'import-statement') queue.push(i.path);
  }
  return [...start, ...files.filter((f) => !start.has(f)).sort()];
}

/**
 * The bundle's files as two assets: `bundle.pack`, their bytes end to end in `order`, and
 * `bundle.index`, each file's offset and length in it (JSON). One asset instead of one per
 * file, with the start's chunks together at its head: Node reads every asset's header when
 * the executable starts, and the kernel maps up to 16 cached pages around each page touched,
 * so 170 small assets kept nearly all of the 3 MB resident for good; the pack leaves the
 * chunks of rare paths unmapped until they are imported. scripts/sea-main.cjs reads a file
 * from the pack in place (`getRawAsset`, no copy of the pack).
 */
function packBundle(chunks, order, work) {
  const index = {};
  const parts = [];
  let offset = 0;
  for (const f of order) {
    const bytes = readFileSync(join(chunks, f));
    index[f] = [offset, bytes.length];
    parts.push(bytes);
    offset += bytes.length;
  }
  const pack = join(work, 'bundle.pack');
  const indexFile = join(work, 'bundle.index.json');
  writeFileSync(pack, Buffer.concat(parts));
  writeFileSync(indexFile, JSON.stringify(index));
  return { 'bundle.index': indexFile, 'bundle.pack': pack };
}

/** Build the executable into `out`; returns its path. */
export async function buildBinary({ out = join(ROOT, 'dist/binary'), node = process.execPath } = {}) {
  const dir = resolve(out);
  const work = join(dir, 'sea');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const chunks = join(work, 'bundle');
  const { result, data } = await buildChunks(chunks, { sourcemap: false, metafile: true });
  const files = [
    ...readdirSync(chunks).filter((f) => f.endsWith('.js')),
    ...data.map((f) => relative(chunks, f)),
  ];
  const bundle = packBundle(chunks, startFirst(files, result.metafile, chunks), work);
  const blob = join(work, 'sea-prep.blob');
  const config = join(work, 'sea-config.json');
  writeFileSync(
    config,
    JSON.stringify(
      {
        main: join(ROOT, 'scripts/sea-main.cjs'),
        output: blob,
        disableExperimentalSEAWarning: true,
        execArgv: binNodeFlags(),
        assets: { ...bundle, ...assets(work) },
      },
      null,
      2,
    ),
  );
  execFileSync(node, ['--experimental-sea-config', config], { stdio: ['ignore', 'ignore', 'inherit'] });
  const exe = join(dir, `sonde-linux-${arch()}`);
  rmSync(exe, { force: true });
  copyFileSync(node, exe);
  chmodSync(exe, 0o755);
  const { inject } = require('postject');
  await inject(exe, 'NODE_SEA_BLOB', readFileSync(blob), { sentinelFuse: SEA_FUSE });
  dropFromPageCache(exe);
  return exe;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const exe = await buildBinary({ out: arg('out', undefined), node: arg('node', undefined) });
  process.stdout.write(`${exe}\n`);
}
