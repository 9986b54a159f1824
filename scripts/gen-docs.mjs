// Writes docs/domains.md from the built collectors' help and the source table. Build first:
//   npx tsc -p . && node scripts/gen-docs.mjs
// src/collectors/docs.test.ts fails whenever the committed file differs from this output.
import { writeFileSync } from 'node:fs';
import { URL } from 'node:url';
import { builtinCollectors } from '../dist/src/collectors/builtin.js';
import { domainsMarkdown } from '../dist/src/collectors/docs.js';
import { SOURCE_TABLE } from '../dist/src/collectors/sources.js';

const registry = builtinCollectors();
const helps = registry.domains().map((d) => registry.help(d));
const target = new URL('../docs/domains.md', import.meta.url);
writeFileSync(target, domainsMarkdown(helps, SOURCE_TABLE));
process.stderr.write(`wrote docs/domains.md (${helps.length} domains)\n`);
