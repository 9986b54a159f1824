// The single executable's main script (scripts/build-binary.mjs): the bundle's chunks are
// embedded as assets `bundle/<file>.js`, mysql2's rare data as `bundle/mysql2-data/*.json`;
// this script serves them to Node's module loader under file:///sonde-sea/dist/bundle/bin/
// (three folders deep, like the bundle on disk) and imports the entry. Chunks are read and
// compiled when first imported, as from disk, and the data when first required; every other
// specifier (Node's modules, a plugin's files) resolves as usual.
'use strict';
const { registerHooks } = require('node:module');
const { getAsset } = require('node:sea');

const ROOT = 'file:///sonde-sea/dist/bundle/bin/';

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier.startsWith('./') && context.parentURL?.startsWith(ROOT))
      return { url: new URL(specifier, context.parentURL).href, shortCircuit: true };
    if (specifier.startsWith(ROOT)) return { url: specifier, shortCircuit: true };
    return nextResolve(specifier, context);
  },
  load(url, context, nextLoad) {
    if (!url.startsWith(ROOT)) return nextLoad(url, context);
    const source = getAsset(`bundle/${url.slice(ROOT.length)}`, 'utf8');
    // The chunks, and the rare data mysql2 requires on first use (mysql2-data/*.json).
    return { format: url.endsWith('.json') ? 'json' : 'module', source, shortCircuit: true };
  },
});

import(`${ROOT}sonde.js`).catch((err) => {
  process.stderr.write(`sonde: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
