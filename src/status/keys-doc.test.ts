import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { STATUS_KEYS } from '../core/status-keys.js';

/** docs/api.md, read from the repository root (this file runs from dist/src/status/). */
const API_DOC = readFileSync(new URL('../../../docs/api.md', import.meta.url), 'utf8');

/** The body of the `## <title…>` section: up to the next level-2 heading. */
function section(doc: string, title: string): string {
  const start = doc.split('\n').findIndex((l) => l.startsWith(`## ${title}`));
  assert.ok(start >= 0, `docs/api.md has no section "## ${title}"`);
  const lines = doc.split('\n').slice(start + 1);
  const end = lines.findIndex((l) => l.startsWith('## '));
  return (end < 0 ? lines : lines.slice(0, end)).join('\n');
}

interface Table {
  /** The `###` heading the table stands under, '' before any. */
  heading: string;
  header: string[];
  /** The first cell of each row, back-quotes removed. */
  keys: string[];
}

function cells(line: string): string[] {
  return line
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((c) => c.trim());
}

/** Every Markdown table of `text`, with its header and the first cell of each row. */
function tables(text: string): Table[] {
  const out: Table[] = [];
  let heading = '';
  let current: Table | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('### ')) heading = line.slice(4).trim();
    if (!line.trim().startsWith('|')) {
      current = undefined;
      continue;
    }
    if (current === undefined) {
      current = { heading, header: cells(line), keys: [] };
      out.push(current);
    } else if (!/^\|[-|\s:]+\|?$/.test(line.trim())) {
      current.keys.push((cells(line)[0] ?? '').replace(/^`|`$/g, ''));
    }
  }
  return out;
}

/** The tables whose first column is `Key`. */
function keyTables(text: string): Table[] {
  return tables(text).filter((t) => t.header[0] === 'Key');
}

const catalogue = (scope: 'server' | 'monitor'): string[] =>
  STATUS_KEYS.filter((k) => k.scope === scope)
    .map((k) => k.key)
    .sort();

describe('docs/api.md and the status-key catalogue', () => {
  it('the GET /status table lists exactly the server keys of the catalogue', () => {
    const found = keyTables(section(API_DOC, 'Server status'));
    assert.equal(found.length, 1, 'one key table in the server status section');
    assert.deepEqual([...(found[0]?.keys ?? [])].sort(), catalogue('server'));
  });

  it('the monitor key table lists exactly the monitor keys of the catalogue', () => {
    const monitorTables = keyTables(section(API_DOC, 'Monitor status'));
    const index = monitorTables.find((t) => t.header[1] === 'Meaning');
    assert.ok(index, 'a `Key | Meaning` table in the GET /status/monitors section');
    assert.deepEqual([...index.keys].sort(), catalogue('monitor'));
  });

  it('the tables of monitor texts describe exactly the monitor keys of the catalogue', () => {
    const detail = keyTables(section(API_DOC, 'Monitor status')).filter((t) => t.header[1] !== 'Meaning');
    const keys = new Set(detail.flatMap((t) => t.keys));
    assert.deepEqual([...keys].sort(), catalogue('monitor'));
  });

  it('the catalogue has no key twice', () => {
    const keys = STATUS_KEYS.map((k) => `${k.scope} ${k.key}`);
    assert.equal(new Set(keys).size, keys.length);
  });
});
