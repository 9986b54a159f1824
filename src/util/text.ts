/** Small text helpers shared across sonde. */

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
