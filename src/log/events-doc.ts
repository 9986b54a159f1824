/**
 * The event table of docs/events.md, made from the catalogue (`EVENT_NAMES`):
 * `node scripts/gen-events-doc.mjs` writes it between the markers, and
 * src/log/events-doc.test.ts fails when the page and the catalogue differ.
 */
import { EVENT_NAMES, type EventSpec } from '../core/events.js';

export const EVENTS_TABLE_BEGIN =
  '<!-- events:begin (generated from src/core/events.ts by `npx tsc -p . && node scripts/gen-events-doc.mjs`; do not edit by hand) -->';
export const EVENTS_TABLE_END = '<!-- events:end -->';

/** A table cell: no line break, no unescaped pipe. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
}

/** The Markdown table of every event, in catalogue order, between the markers. */
export function eventsTable(): string {
  const rows = (Object.entries(EVENT_NAMES) as [string, EventSpec][]).map(([name, spec]) => {
    const levels = [spec.level, ...(spec.alsoAt ?? [])].join(', ');
    return `| \`${name}\` | ${levels} | ${spec.sondeOnly === true ? 'sonde' : 'Blip'} | ${cell(spec.description)} |`;
  });
  return [
    EVENTS_TABLE_BEGIN,
    '',
    '| Event | Level | From | Meaning |',
    '|---|---|---|---|',
    ...rows,
    '',
    EVENTS_TABLE_END,
  ].join('\n');
}

/** `doc` with the text between the markers (markers included) replaced by the table. */
export function withEventsTable(doc: string): string {
  const begin = doc.indexOf('<!-- events:begin');
  const end = doc.indexOf(EVENTS_TABLE_END);
  if (begin < 0 || end < begin)
    throw new Error('docs/events.md: the events:begin / events:end markers are missing');
  return doc.slice(0, begin) + eventsTable() + doc.slice(end + EVENTS_TABLE_END.length);
}
