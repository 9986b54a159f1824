// The single executable's main script (scripts/build-binary.mjs): the bundle's chunks
// (`<file>.js`) and mysql2's rare data (`mysql2-data/*.json`) are embedded end to end in one
// asset, `bundle.pack`, with their places in `bundle.index`; this script serves them to
// Node's module loader under file:///sonde-sea/dist/bundle/bin/ (three folders deep, like the
// bundle on disk) and imports the entry. Chunks are read and compiled when first imported, as
// from disk, and the data when first required; every other specifier (Node's modules, a
// plugin's files) resolves as usual.
'use strict';
const { registerHooks } = require('node:module');
const { Buffer } = require('node:buffer');
const { getAsset, getRawAsset } = require('node:sea');

const ROOT = 'file:///sonde-sea/dist/bundle/bin/';
/** Each bundle file's [offset, length] in the pack; the pack is the executable's own bytes. */
const INDEX = JSON.parse(getAsset('bundle.index', 'utf8'));
const PACK = getRawAsset('bundle.pack');

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier.startsWith('./') && context.parentURL?.startsWith(ROOT))
      return { url: new URL(specifier, context.parentURL).href, shortCircuit: true };
    if (specifier.startsWith(ROOT)) return { url: specifier, shortCircuit: true };
    return nextResolve(specifier, context);
  },
  load(url, context, nextLoad) {
    if (!url.startsWith(ROOT)) return nextLoad(url, context);
    const [offset, length] = INDEX[url.slice(ROOT.length)] ?? [];
    if (offset === undefined) return nextLoad(url, context);
    const source = Buffer.from(PACK, offset, length).toString('utf8');
    // The chunks, and the rare data mysql2 requires on first use (mysql2-data/*.json).
    return { format: url.endsWith('.json') ? 'json' : 'module', source, shortCircuit: true };
  },
});

import(`${ROOT}sonde.js`).catch((err) => {
  process.stderr.write(`sonde: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
