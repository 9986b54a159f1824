import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { EVENT_NAMES } from '../core/events.js';
import { eventsTable, withEventsTable } from './events-doc.js';

/** docs/events.md, read from the repository root (this file runs from dist/src/util/). */
const DOC = readFileSync(new URL('../../../docs/events.md', import.meta.url), 'utf8');

describe('docs/events.md', () => {
  it('holds the table generated from the catalogue (regenerate: npx tsc -p . && node scripts/gen-events-doc.mjs)', () => {
    assert.equal(withEventsTable(DOC), DOC);
    assert.ok(DOC.includes(eventsTable()));
  });

  it('the table has one row per catalogue entry, with its level', () => {
    const rows = eventsTable()
      .split('\n')
      .filter((l) => l.startsWith('| `'));
    assert.equal(rows.length, Object.keys(EVENT_NAMES).length);
    assert.ok(
      rows.includes(rows.find((r) => r.startsWith('| `server-stopped` | error, notice | Blip |')) ?? '-'),
    );
    assert.ok(rows.some((r) => r.startsWith('| `boot-error` | info, error | Blip |')));
    assert.ok(rows.some((r) => r.startsWith('| `server-reload` | notice | sonde |')));
  });

  it('refuses a page without the markers', () => {
    assert.throws(() => withEventsTable('# Events\n'), /markers are missing/);
  });
});
