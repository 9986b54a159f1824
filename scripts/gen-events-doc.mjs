// Writes the event table of docs/events.md from the catalogue in src/core/events.ts.
// Build first: npx tsc -p . && node scripts/gen-events-doc.mjs
// src/log/events-doc.test.ts fails whenever docs/events.md differs from this output.
import { readFileSync, writeFileSync } from 'node:fs';
import { URL } from 'node:url';
import { withEventsTable } from '../dist/src/log/events-doc.js';

const path = new URL('../docs/events.md', import.meta.url);
writeFileSync(path, withEventsTable(readFileSync(path, 'utf8')));
process.stderr.write('wrote docs/events.md\n');
