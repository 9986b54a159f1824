/**
 * Turning MySQL's textual values into numbers (as Blip's `sqlutil.Float64` does), and
 * mysqld_exporter's reading of them for the exporter emulation.
 *
 * Every value sonde reads from SHOW / INFORMATION_SCHEMA / performance_schema arrives as
 * text. parseValue() decides whether that text is a metric value; `undefined` means "not a
 * number, skip it silently". Do NOT use `Number(text)`: `Number("")` is 0 and
 * `Number("0x10")` is 16, neither of which MySQL means.
 */
import type { Row } from '../core/db.js';

/** Strict decimal grammar: optional sign, digits with optional fraction, optional exponent. */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** Exact, case-sensitive keyword table. */
const KEYWORDS: ReadonlyMap<string, number> = new Map([
  ['ON', 1],
  ['YES', 1],
  ['Yes', 1],
  ['OFF', 0],
  ['NO', 0],
  ['No', 0],
  ['DISABLED', 0],
  ['Connecting', 0],
]);

/** The longest keyword's length. */
const KEYWORD_MAX_LENGTH = Math.max(...[...KEYWORDS.keys()].map((k) => k.length));

const MONTHS: Record<string, number> = {
  Jan: 0,
  Feb: 1,
  Mar: 2,
  Apr: 3,
  May: 4,
  Jun: 5,
  Jul: 6,
  Aug: 7,
  Sep: 8,
  Oct: 9,
  Nov: 10,
  Dec: 11,
};

/**
 * Go layout `Jan 02 15:04:05 2006 MST`, as in `Ssl_server_not_after` (`Apr 10 12:00:00 2034 GMT`).
 * OpenSSL pads single-digit days with a space (`Apr  1 …`), so a one-digit day after one or
 * two spaces is accepted too. The zone abbreviation is not interpreted: UTC, GMT and unknown
 * abbreviations all mean offset 0, as Go does for abbreviations it cannot resolve.
 */
const OPENSSL_DATE = /^([A-Z][a-z]{2}) {1,2}(\d{1,2}) (\d{2}):(\d{2}):(\d{2}) (\d{4}) ([A-Z]{3,5})$/;

/** `YYYY-MM-DD HH:MM:SS`, optional fractional seconds (Go accepts them when parsing), UTC. */
const SQL_DATETIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.\d+)?$/;

/**
 * Unix seconds of a UTC calendar time, or undefined when a field is out of range (Go's
 * time.Parse rejects Feb 30 rather than rolling it over, and so do we).
 */
function unixSeconds(
  year: number,
  month0: number,
  day: number,
  hour: number,
  min: number,
  sec: number,
): number | undefined {
  if (hour > 23 || min > 59 || sec > 59 || day < 1 || month0 < 0 || month0 > 11) return undefined;
  const ms = Date.UTC(year, month0, day, hour, min, sec);
  const d = new Date(ms);
  // Date.UTC maps years 0..99 to 1900..1999; fix that up so year 0050 stays year 50.
  if (year < 100) d.setUTCFullYear(year);
  if (d.getUTCDate() !== day || d.getUTCMonth() !== month0) return undefined;
  return Math.floor(d.getTime() / 1000);
}

/**
 * Parse one textual MySQL value.
 *
 * - decimal numbers (`123`, `-1.5`, `1e+06`) → that number (non-finite results are rejected)
 * - `ON`, `YES`, `Yes` → 1; `OFF`, `NO`, `No`, `DISABLED`, `Connecting` → 0 (case-sensitive)
 * - `Jan 02 15:04:05 2006 MST` and `YYYY-MM-DD HH:MM:SS` (UTC) → Unix seconds
 * - anything else, including `null`, `""`, `NULL`, `on` → undefined (skip the value)
 */
export function parseValue(text: string | null | undefined): number | undefined {
  if (text === null || text === undefined || text === '') return undefined;

  // Most values are plain unsigned integers: no pattern needed for those.
  if (allDigits(text)) {
    const n = Number(text);
    return Number.isFinite(n) ? n : undefined;
  }
  // Text such as a path or a character set name starts with none of a number's first
  // characters: it is not tried against the pattern.
  if (mayBeDecimal(text.charCodeAt(0)) && DECIMAL.test(text)) {
    const n = Number(text);
    return Number.isFinite(n) ? n : undefined;
  }

  // Only a short text can be a keyword; a longer one is not hashed for the lookup.
  if (text.length <= KEYWORD_MAX_LENGTH) {
    const keyword = KEYWORDS.get(text);
    if (keyword !== undefined) return keyword;
  }

  return parseDateText(text);
}

/** Whether a character can start a decimal number: a digit, a sign or a point. */
function mayBeDecimal(c: number): boolean {
  return (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46;
}

/** True when every character of a non-empty text is an ASCII digit. */
function allDigits(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/**
 * `YYYY-MM-DD HH:MM:SS` (UTC, fraction ignored) and `Jan 02 15:04:05 2006 MST` (OpenSSL's
 * certificate dates) → Unix seconds; undefined for anything else.
 */
export function parseDateText(text: string): number | undefined {
  // Both forms are at least 19 characters long and start with a digit (the SQL form) or a
  // capital letter (the month): anything else is no date, without trying the patterns.
  const c = text.charCodeAt(0);
  const digit = c >= 48 && c <= 57;
  if (text.length < 19 || !(digit || (c >= 65 && c <= 90))) return undefined;
  let m = digit ? SQL_DATETIME.exec(text) : null;
  if (m !== null) {
    const [, y, mo, d, h, mi, s] = m.map(Number) as [number, number, number, number, number, number, number];
    return unixSeconds(y, mo - 1, d, h, mi, s);
  }

  m = digit ? null : OPENSSL_DATE.exec(text);
  if (m !== null) {
    const month0 = MONTHS[m[1] ?? ''];
    if (month0 === undefined) return undefined;
    return unixSeconds(Number(m[6]), month0, Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]));
  }

  return undefined;
}

/**
 * mysqld_exporter's keywords for text values of global status and variables (compared
 * lowercase): they become `1` or `0`, so e.g. `wsrep_cluster_status` exists as it does
 * there. parseValue() then reads them like any number.
 */
const UPSTREAM_KEYWORDS: ReadonlyMap<string, string> = new Map([
  ['yes', '1'],
  ['on', '1'],
  ['no', '0'],
  ['off', '0'],
  ['disabled', '0'],
  ['connecting', '0'],
  ['primary', '1'],
  ['non-primary', '0'],
  ['disconnected', '0'],
]);

/**
 * A text value as mysqld_exporter reads it: its keyword (`on`, `yes`, `primary`…, any case)
 * as `1` or `0`; any other text as it is.
 */
export function upstreamText(value: string): string {
  const c = value.charCodeAt(0);
  if ((c >= 48 && c <= 57) || c === 45 /* - */ || c === 46 /* . */) return value; // a number
  return UPSTREAM_KEYWORDS.get(value.toLowerCase()) ?? value;
}

/** First letters (both cases) of each kept-name set: most rows are rejected without lowercasing. */
const FIRST_LETTERS = new WeakMap<ReadonlySet<string>, ReadonlySet<string>>();

function firstLetters(keep: ReadonlySet<string>): ReadonlySet<string> {
  let firsts = FIRST_LETTERS.get(keep);
  if (firsts === undefined) {
    firsts = new Set([...keep].flatMap((n) => [n.charAt(0), n.charAt(0).toUpperCase()]));
    FIRST_LETTERS.set(keep, firsts);
  }
  return firsts;
}

/**
 * Read `Variable_name`/`Value` rows (SHOW GLOBAL STATUS / VARIABLES) as mysqld_exporter
 * does: keyword values are rewritten to `1`/`0` in place (any case), and the values of the
 * names in `keep` (lowercase) are copied to `text` as the server wrote them. Numbers and
 * other text are left as they are.
 */
export function upstreamValues(rows: Row[], keep: ReadonlySet<string>, text: Record<string, string>): void {
  const firsts = firstLetters(keep);
  for (const row of rows) {
    const value = row.Value ?? row.VALUE ?? row.value;
    if (value === undefined || value === null || value === '') continue;
    const rawName = row.Variable_name ?? row.VARIABLE_NAME ?? row.variable_name ?? '';
    if (firsts.has(rawName.charAt(0))) {
      const name = rawName.toLowerCase();
      if (keep.has(name)) {
        text[name] = value;
        continue;
      }
    }
    const kw = upstreamText(value);
    if (kw !== value) row['Value' in row ? 'Value' : 'VALUE' in row ? 'VALUE' : 'value'] = kw;
  }
}
