/** Small text helpers shared across sonde. */

import { CappedMap } from './capped.js';

/**
 * Blip's reading of a boolean option value: `true`, `yes`, `enable`, `enabled` (any case,
 * surrounding space ignored) are true; anything else is false.
 */
export function isYes(value: string): boolean {
  return YES.has(value.trim().toLowerCase());
}

const YES: ReadonlySet<string> = new Set(['true', 'yes', 'enable', 'enabled']);

/** Go's strconv.ParseBool words, the booleans of command-line flags and their env vars. */
const GO_TRUE: ReadonlySet<string> = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const GO_FALSE: ReadonlySet<string> = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** A Go-style boolean (`1 t T TRUE true True` / `0 f F FALSE false False`); undefined otherwise. */
export function parseGoBool(text: string): boolean | undefined {
  if (GO_TRUE.has(text)) return true;
  if (GO_FALSE.has(text)) return false;
  return undefined;
}

/** Go's html.EscapeString entities, which Blip's API answers carry. */
const HTML_ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  "'": '&#39;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&#34;',
};

/** Escape text for HTML element content and quoted attribute values, as Go's html.EscapeString. */
export function escapeHtml(s: string): string {
  return s.replace(/[&'<>"]/g, (c) => HTML_ENTITIES[c] ?? c);
}

/** What {@link oneLine} escapes: C0 controls but tab, DEL, C1 controls, U+2028 and U+2029. */
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029]/g;

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\u001b': '\\e' };

/**
 * Text from outside sonde (the database, the network, a config value) made safe for a
 * one-line text output: every control character but tab, and the Unicode line and paragraph
 * separators, become visible escapes (`\n`, `\r`, `\e` for ESC, `\x07`, `\u2028`), so one
 * event is always one line and no terminal escape sequence reaches whoever reads it.
 * Backslashes are kept as they are. The one escaping function of every text output: event
 * lines, the log sink, status values and error messages.
 */
export function oneLine(text: string): string {
  CONTROLS.lastIndex = 0;
  if (!CONTROLS.test(text)) return text;
  return text.replace(CONTROLS, (c) => {
    const named = NAMED[c];
    if (named !== undefined) return named;
    const code = c.charCodeAt(0);
    return code > 0xff ? `\\u${code.toString(16)}` : `\\x${code.toString(16).padStart(2, '0')}`;
  });
}

/** Matches every string at once: running it makes V8 flatten its subject. */
const ANYTHING = /^/;

/**
 * `text` in one piece in memory, for a string kept long. V8 keeps a string built by `+` or a
 * template as a tree of its parts, and a 50-character status line held that way takes about
 * 260 bytes of heap, against 80 in one piece (1,000 monitors keep about 20 such lines each). A
 * regular expression flattens its subject in place, and the garbage collector then drops the
 * tree; the text is unchanged.
 */
export function flatten(text: string): string {
  ANYTHING.test(text);
  return text;
}

/** Texts {@link sharedText} keeps; past that it starts over. */
const SHARED_KEPT = 10_000;
const SHARED = new CappedMap<string, string>(SHARED_KEPT);

/**
 * One flat copy of `text` for the whole process, for text that every monitor builds alike and
 * keeps (the statements of a plan's levels): 1,000 monitors then hold one statement, not
 * 1,000 copies each built from its parts.
 */
export function sharedText(text: string): string {
  const shared = SHARED.get(text);
  if (shared !== undefined) return shared;
  SHARED.set(flatten(text), text);
  return text;
}
