#!/usr/bin/env node
/**
 * The production build of the agent: src/bin/sonde.ts and everything it imports, sonde's
 * own modules and its dependencies, bundled and tree-shaken by esbuild into
 * `dist/bundle/bin/sonde.js`. What sonde imports on first use (`await import(…)`: the
 * collectors' and sinks' implementations, the AWS SDK, protobuf, the exporter and probe
 * listeners, the web page's server side, the heartbeat writer, plugin loading) becomes
 * chunks beside it, loaded when first used. Source maps (`*.js.map`, no sources inside)
 * give stack traces in TypeScript terms: the bin turns them on once past `--version` and
 * `--help` (`process.setSourceMapsEnabled`).
 *
 *   node scripts/build-bundle.mjs [--metafile]
 *
 * The bundle and its chunks sit three folders below the package root, like
 * dist/src/bin/sonde.js: the files sonde reads relative to its own code (package.json,
 * web/, certs/) resolve the same from both. `--metafile` writes dist/bundle/meta.json
 * (what went into which file, for esbuild's analyzer).
 */
import { build } from 'esbuild';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { deepStrictEqual } from 'node:assert/strict';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'dist/bundle/bin');

/**
 * CommonJS dependencies (mysql2, pino, …) call `require` for Node's own modules; in an ES
 * module there is none, so each output file gets one made for it.
 */
const REQUIRE_SHIM =
  "import { createRequire as __sondeCreateRequire } from 'node:module';\n" +
  'const require = __sondeCreateRequire(import.meta.url);';

/**
 * mysql2 requires `tls` (for connections with TLS), `zlib` (for the compressed protocol) and
 * `crypto` (for the logins of MySQL's SHA-256 plugins) when it loads, so every start paid for
 * all three: about 5 MiB of memory and some tens of milliseconds, for connections that mostly
 * use none of them. In the bundle each of those `require`s becomes an object that requires
 * the module at its first property read, when the first TLS, compressed or SHA-256 connection
 * is made. The exact statements are checked: a mysql2 release that changes them fails the
 * build instead of loading the modules at start again.
 */
const LAZY_BUILTINS = [
  { file: 'mysql2/lib/base/connection.js', statement: "const Tls = require('tls');" },
  { file: 'mysql2/lib/auth_plugins/sha256_password.js', statement: "const Tls = require('tls');" },
  { file: 'mysql2/lib/auth_plugins/sha256_password.js', statement: "const crypto = require('crypto');" },
  {
    file: 'mysql2/lib/auth_plugins/caching_sha2_password.js',
    statement: "const crypto = require('crypto');",
  },
  { file: 'mysql2/lib/compressed_protocol.js', statement: "const zlib = require('zlib');" },
];

/**
 * The usual login on MariaDB, `mysql_native_password`, hashes with SHA-1 through mysql2's
 * `lib/auth_41.js`, which requires `crypto` when mysql2 loads. In the bundle it requires
 * src/db/driver-crypto.ts instead: SHA-1 in JavaScript, any other algorithm from Node's
 * `crypto` at its first use (that file says why).
 */
const AUTH_41_FILE = 'mysql2/lib/auth_41.js';
const AUTH_41_CRYPTO = "const crypto = require('crypto');";
const DRIVER_CRYPTO = join(ROOT, 'src/db/driver-crypto.ts');

/**
 * mysql2's table of error codes (lib/constants/errors.js) is 3,942 assignments, one statement
 * each (`exports.ER_X = 1045;`, `exports[1045] = 'ER_X';`): V8 runs each as a store of its own
 * when mysql2 loads, about 4 ms of every start. In the bundle the module is the same object as
 * one JSON text (`JSON.parse`, well under a millisecond): the same keys, values and key order,
 * checked here against the module itself.
 */
const ERRORS_FILE = 'mysql2/lib/constants/errors.js';

function errorsAsJson(file) {
  const table = createRequire(join(ROOT, 'package.json'))(file);
  const json = JSON.stringify(table);
  const back = JSON.parse(json);
  deepStrictEqual(Object.keys(back), Object.keys(table));
  deepStrictEqual(back, { ...table });
  return `'use strict';\nmodule.exports = JSON.parse(${JSON.stringify(json)});\n`;
}

/**
 * long (mysql2's 64-bit integers) compiles and instantiates a small WebAssembly module when it
 * loads, to multiply and divide 64-bit integers natively. That ran V8's WebAssembly decoder and
 * compilers at every start, about 1 MiB of RSS 15 s later, for arithmetic mysql2 does only on
 * BIGINT columns of the binary protocol (prepared statements, which sonde never runs) and on
 * length-coded numbers above 2^53. With the statement assigning `null`, long computes the same
 * values in JavaScript, and esbuild drops the module's bytes as dead code.
 */
const LONG_FILE = 'long/umd/index.js';
const LONG_WASM = 'wasm = new WebAssembly.Instance(';

/** `text` with `statement` replaced once; throws, naming `file`, when it is not there. */
function replaceChecked(file, text, statement, replacement) {
  if (!text.includes(statement)) throw new Error(`${file}: \`${statement}\` not found`);
  return text.replace(statement, replacement);
}

/**
 * The edits made to dependency files as they go into the bundle: each file (its path under
 * node_modules) and what its text becomes. Every edit checks what it replaces.
 */
const EDITS = [
  ...LAZY_BUILTINS.map(({ file, statement }) => {
    const [, name, mod] = /^const (\w+) = require\('(\w+)'\);$/.exec(statement);
    const lazy = `const ${name} = new Proxy({}, { get: (_t, key) => require('${mod}')[key] });`;
    return { file, edit: (text) => replaceChecked(file, text, statement, lazy) };
  }),
  {
    file: AUTH_41_FILE,
    edit: (text) =>
      replaceChecked(
        AUTH_41_FILE,
        text,
        AUTH_41_CRYPTO,
        `const crypto = require(${JSON.stringify(DRIVER_CRYPTO)});`,
      ),
  },
  { file: ERRORS_FILE, edit: (_text, path) => errorsAsJson(path) },
  {
    file: LONG_FILE,
    edit: (text) => replaceChecked(LONG_FILE, text, LONG_WASM, 'wasm = null && new WebAssembly.Instance('),
  },
];

/**
 * The plugin applying {@link EDITS}. The build fails when an edit does not find what it
 * replaces, or when a file to edit is no longer bundled: a dependency release that changes
 * them fails the build instead of bringing back what the edits took out.
 */
const dependencyEdits = {
  name: 'dependency-edits',
  setup(b) {
    const seen = new Set();
    const files = [...new Set(EDITS.map((e) => e.file))];
    const pattern = files.map((f) => f.replace(/[.]/g, '\\.').replace(/\//g, '[\\\\/]')).join('|');
    b.onLoad({ filter: new RegExp(`[\\\\/]node_modules[\\\\/](?:${pattern})$`) }, (args) => {
      const path = args.path.replaceAll('\\', '/');
      const edits = EDITS.filter((e) => path.endsWith(`/node_modules/${e.file}`));
      if (edits.length === 0) return undefined;
      let contents = readFileSync(args.path, 'utf8');
      for (const { file, edit } of edits) {
        contents = edit(contents, args.path);
        seen.add(file);
      }
      return { contents, loader: 'js' };
    });
    b.onEnd((result) => {
      const missing = files.filter((f) => !seen.has(f));
      if (result.errors.length === 0 && missing.length > 0)
        return { errors: [{ text: `dependency-edits: not bundled any more: ${missing.join(', ')}` }] };
      return undefined;
    });
  },
};

/**
 * Data a plain run never reads, kept out of the chunks as files beside them: iconv-lite's
 * double-byte character-set tables (0.5 MB: mysql2 decodes a column with them only when the
 * server sends it in Shift JIS, EUC-JP, GBK, Big5 or EUC-KR, while sonde's connections ask
 * for utf8mb4) and mysql2's `'Amazon RDS'` TLS profile (0.18 MB of certificates, for a
 * profile name sonde never passes: it ships its own RDS bundle). Both are `require`d inside
 * functions, on first use; inlined, their text was part of mysql2's chunk, read, decoded and
 * held by V8 at every start (about 1 MiB of RSS). Each such `require` now names a file in
 * `mysql2-data/` beside the chunks (the executable serves it from its assets), written by
 * {@link writeRareData}: the tables copied, the profile as JSON checked equal to the module.
 */
const RARE_DIR = 'mysql2-data';
const RARE_DATA = [
  {
    // `require("./tables/<name>.json")` in iconv-lite's encodings
    importer: /[\\/]node_modules[\\/]iconv-lite[\\/]encodings[\\/][^\\/]+\.js$/,
    specifier: /^\.\/tables\/([\w-]+)\.json$/,
    file: (m) => `iconv-${m[1]}.json`,
    write: (m, importer) => readFileSync(join(dirname(importer), 'tables', `${m[1]}.json`), 'utf8'),
  },
  {
    // `require('./constants/ssl_profiles.js')` in mysql2's connection options
    importer: /[\\/]node_modules[\\/]mysql2[\\/]lib[\\/]connection_config\.js$/,
    specifier: /^\.\/constants\/ssl_profiles\.js$/,
    file: () => 'ssl-profiles.json',
    write: (_m, importer) => {
      const profiles = createRequire(importer)('./constants/ssl_profiles.js');
      const json = JSON.stringify(profiles);
      deepStrictEqual(JSON.parse(json), { ...profiles });
      return json;
    },
  },
];

/** The rare-data files an esbuild run referred to: file name → its text, made on demand. */
function rareData() {
  const files = new Map();
  const plugin = {
    name: 'rare-data',
    setup(b) {
      for (const rule of RARE_DATA)
        b.onResolve({ filter: rule.specifier }, (args) => {
          if (!rule.importer.test(args.importer)) return undefined;
          const m = rule.specifier.exec(args.path);
          const file = rule.file(m);
          files.set(file, () => rule.write(m, args.importer));
          return { path: `./${RARE_DIR}/${file}`, external: true };
        });
      b.onEnd((result) => {
        // A dependency release that requires them another way would inline them again.
        const tables = [...files.keys()].filter((f) => f.startsWith('iconv-')).length;
        if (result.errors.length === 0 && (tables === 0 || !files.has('ssl-profiles.json')))
          return {
            errors: [
              {
                text: `rare-data: not found as before: ${tables} iconv-lite tables, ssl profiles ${files.has('ssl-profiles.json')}`,
              },
            ],
          };
        return undefined;
      });
    },
  };
  return { plugin, files };
}

/**
 * Write the rare-data files the last build of `rare` referred to into `outdir`/mysql2-data;
 * returns their paths.
 */
function writeRareData(outdir, rare) {
  const dir = join(outdir, RARE_DIR);
  mkdirSync(dir, { recursive: true });
  return [...rare.files].map(([file, text]) => {
    writeFileSync(join(dir, file), text());
    return join(dir, file);
  });
}

/**
 * esbuild's options for the bundle in `outdir`; `rare` collects the rare-data files to write
 * after the build ({@link rareData}).
 */
function bundleOptions(outdir, { sourcemap, metafile, rare }) {
  return {
    absWorkingDir: ROOT,
    entryPoints: { sonde: 'src/bin/sonde.ts' },
    outdir,
    entryNames: '[name]',
    chunkNames: '[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    // ES module builds where a package has one (the AWS SDK): tree-shaken, and imported on
    // first use with their named exports.
    mainFields: ['module', 'main'],
    target: 'node22',
    sourcemap: sourcemap ? 'linked' : false,
    sourcesContent: false,
    minifySyntax: true,
    minifyWhitespace: true,
    legalComments: 'linked',
    banner: { js: REQUIRE_SHIM },
    metafile,
    plugins: [dependencyEdits, rare.plugin],
    logLevel: 'warning',
  };
}

/**
 * The require shim where it is not used taken out again: esbuild puts the banner in every
 * file, and each `createRequire` costs the start a few tenths of a millisecond, for the two
 * dozen files on the start path that never call `require`. The banner's two lines become two
 * empty lines, so the source maps stay exact.
 */
function dropUnusedRequireShims(outdir) {
  for (const name of readdirSync(outdir).filter((f) => f.endsWith('.js'))) {
    const file = join(outdir, name);
    const text = readFileSync(file, 'utf8');
    if (!text.startsWith(`${REQUIRE_SHIM}\n`)) continue;
    const body = text.slice(REQUIRE_SHIM.length + 1);
    if (/\brequire\b/.test(body)) continue;
    writeFileSync(file, `\n\n${body}`);
  }
}

/**
 * The entry, its chunks and the rare data into `outdir` (the single executable takes them
 * without maps): esbuild's result (with the metafile when asked) and the rare-data files
 * written.
 */
export async function buildChunks(outdir, { sourcemap = true, metafile = false } = {}) {
  const rare = rareData();
  const result = await build(bundleOptions(outdir, { sourcemap, metafile, rare }));
  dropUnusedRequireShims(outdir);
  return { result, data: writeRareData(outdir, rare) };
}

/** Bundle the agent into dist/bundle/bin; returns esbuild's result (with the metafile when asked). */
export async function buildBundle({ metafile = false } = {}) {
  rmSync(join(ROOT, 'dist/bundle'), { recursive: true, force: true });
  const { result } = await buildChunks(OUT, { metafile });
  if (metafile) writeFileSync(join(ROOT, 'dist/bundle/meta.json'), JSON.stringify(result.metafile));
  return result;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildBundle({ metafile: process.argv.includes('--metafile') });
}
