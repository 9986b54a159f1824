// Writes src/collectors/help.json (the static help the agent registers its domains with) and
// docs/domains.md, both from the built collectors' implementations and the source table.
// Build first, and again after (the build copies help.json into dist/):
//   npx tsc -p . && node scripts/gen-docs.mjs && npx tsc -p .
// src/collectors/registry.test.ts fails whenever help.json differs from the implementations,
// src/collectors/kit/docs.test.ts whenever docs/domains.md differs from this output.
import { writeFileSync } from 'node:fs';
import { URL } from 'node:url';
import { BUILTIN } from '../dist/src/collectors/implementations.js';
import { domainsMarkdown } from '../dist/src/collectors/kit/docs.js';
import { SOURCE_TABLE } from '../dist/src/collectors/kit/sources.js';

const inOrder = BUILTIN.map((r) => r.help);
writeFileSync(
  new URL('../src/collectors/help.json', import.meta.url),
  `${JSON.stringify(inOrder, null, 2)}\n`,
);
const helps = [...inOrder].sort((a, b) => (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0));
writeFileSync(new URL('../docs/domains.md', import.meta.url), domainsMarkdown(helps, SOURCE_TABLE));
process.stderr.write(`wrote src/collectors/help.json and docs/domains.md (${helps.length} domains)\n`);
