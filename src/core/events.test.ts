import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EVENT_NAMES, isEventName, type EventLevel, type EventSpec } from './events.js';

/** The repository's src/ (this file runs from dist/src/core/). */
const SRC = fileURLToPath(new URL('../../../src/', import.meta.url));

/** Source files that ship: tests, fixtures and test helpers emit no real events. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    if (!e.name.endsWith('.ts') || e.name.endsWith('.d.ts')) return [];
    if (/\.test\.ts$|fixture\.ts$|^test-helpers\.ts$/.test(e.name)) return [];
    return [path];
  });
}

interface Emission {
  name: string;
  level: EventLevel;
  where: string;
}

const CALL = /\.(info|error|warn|notice)\(\s*(?:'([a-z0-9-]+)'|([A-Z][A-Z0-9_]*)\s*,)/g;

/**
 * Every `.<level>('<name>'` call of a text, also across lines, and `.<level>(CONSTANT,`
 * where the file defines `const CONSTANT = '<name>'`.
 */
function emissions(text: string, file: string): Emission[] {
  const out: Emission[] = [];
  for (const m of text.matchAll(CALL)) {
    const level = m[1] as EventLevel;
    let name = m[2];
    if (name === undefined && m[3] !== undefined)
      name = new RegExp(`const ${m[3]} = '([a-z0-9-]+)'`).exec(text)?.[1];
    if (name === undefined) continue; // a logger's other calls (e.g. pino's) take no name
    const line = text.slice(0, m.index).split('\n').length;
    out.push({ name, level, where: `${file}:${line}` });
  }
  return out;
}

const ALL: Emission[] = sourceFiles(SRC).flatMap((f) => emissions(readFileSync(f, 'utf8'), relative(SRC, f)));

/**
 * Events emitted at a level the catalogue does not give yet, with where they are: a call
 * there at another level is accepted, and the entry is not required at its catalogue
 * level. Delete the entry once the code emits it at its catalogue level.
 */
const PENDING: ReadonlyMap<string, string> = new Map();

function levelsOf(spec: EventSpec): EventLevel[] {
  return [spec.level, ...(spec.alsoAt ?? [])];
}

describe('event catalogue', () => {
  it('the scanner finds calls across lines and through a constant', () => {
    const text = [
      "const EV = 'repl-soruce-change';",
      "events.error(\n  'collector-panic',\n  id,\n  msg);",
      'this.#events.info(EV, id, msg);',
      "log.info({ a: 1 }, 'not an event');",
    ].join('\n');
    assert.deepEqual(
      emissions(text, 'x.ts').map((e) => [e.name, e.level, e.where]),
      [
        ['collector-panic', 'error', 'x.ts:2'],
        ['repl-soruce-change', 'info', 'x.ts:6'],
      ],
    );
  });

  it('finds the emissions of the source tree', () => {
    assert.ok(ALL.length > 50, `only ${ALL.length} emissions found under ${SRC}`);
    assert.ok(ALL.some((e) => e.name === 'repl-soruce-change' && e.where.startsWith('heartbeat/')));
  });

  it('every emitted name is in EVENT_NAMES, at a level the catalogue gives it', () => {
    const wrong = ALL.filter((e) => {
      if (!isEventName(e.name)) return true;
      if (PENDING.has(e.name) && e.where.startsWith(`${PENDING.get(e.name)}:`)) return false;
      return !levelsOf(EVENT_NAMES[e.name]).includes(e.level);
    }).map((e) => `${e.where}: ${e.level} ${e.name}`);
    assert.deepEqual(wrong, []);
  });

  it('every EVENT_NAMES entry is emitted somewhere at each of its levels', () => {
    const missing: string[] = [];
    for (const [name, spec] of Object.entries(EVENT_NAMES) as [string, EventSpec][]) {
      if (PENDING.has(name)) continue;
      for (const level of levelsOf(spec))
        if (!ALL.some((e) => e.name === name && e.level === level)) missing.push(`${level} ${name}`);
    }
    assert.deepEqual(missing, []);
  });

  it('a pending event is still emitted where the exemption says (else delete the exemption)', () => {
    for (const [name, file] of PENDING) {
      assert.ok(isEventName(name), name);
      assert.ok(
        ALL.some((e) => e.name === name && e.where.startsWith(`${file}:`)),
        `${name} is no longer emitted in ${file}: delete its exemption`,
      );
    }
  });

  it('names are lower-case words joined by dashes, each with a one-line description', () => {
    for (const [name, spec] of Object.entries(EVENT_NAMES) as [string, EventSpec][]) {
      assert.match(name, /^[a-z]+(?:-[a-z]+)*$/, name);
      assert.ok(spec.description.length > 10 && !spec.description.includes('\n'), name);
      assert.ok(!(spec.alsoAt ?? []).includes(spec.level), name);
    }
  });

  it('carries the collection faults a subscriber watches for', () => {
    for (const name of [
      'collector-error',
      'collector-panic',
      'collector-fault',
      'drop-metrics-fence',
      'drop-metrics-flush',
      'lco-collect-panic',
      'lco-receiver-panic',
      'lco-metrics-fault',
      'sink-send-error',
      'boot-error',
    ])
      assert.ok(isEventName(name), name);
    assert.equal(EVENT_NAMES['boot-error'].level, 'info');
    assert.equal(isEventName('collector-panik'), false);
  });
});
