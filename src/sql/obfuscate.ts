/**
 * SQL text without its literals: what sonde shows of a statement (`obfuscateSql`), the
 * server's digest form of it (`normalizeSql`) and a stable hash of that form
 * (`sqlFingerprint`). None of them throws; none lets a literal through (docs/query-analytics.md,
 * "Privacy: how SQL text is obfuscated", states the rules).
 */
import { printNormal, printObfuscated, reduceTokens } from './digest.js';
import { lexSql, Tok, type SqlToken } from './lexer.js';

export interface SqlTextOptions {
  /**
   * The server reads strings as NO_BACKSLASH_ESCAPES does. Either way the text is also read
   * the other way when a backslash stands in a string, and whatever either reading takes for
   * a literal is replaced.
   */
  noBackslashEscapes?: boolean;
  /** The server's flavor (default mariadb): which executable comments it runs. */
  flavor?: 'mariadb' | 'mysql';
  /**
   * Server version as executable comments write it: 10.11.0 = 101100, 8.0.36 = 80036
   * (default 101100 for MariaDB, 80000 for MySQL).
   */
  serverVersion?: number;
}

export interface NormalizeOptions extends SqlTextOptions {
  /**
   * The server's max_digest_length (the smaller of it and performance_schema_max_digest_length
   * for DIGEST_TEXT): stop where the server's digest stops. Default: no limit.
   */
  maxDigestLength?: number;
}

const MARIADB_VERSION = 101100;
const MYSQL_VERSION = 80000;
/** What comes out when something went wrong inside: nothing of the text. */
const NOTHING = '?';

/**
 * Tokens of `text`. When a backslash stands in a string, the text is read in the other
 * escape mode too: if the expected reading parses to the end and the other does not, the
 * expected one is right; otherwise everything from the first point where a token would be
 * printed as written while the other reading has a literal there is replaced.
 */
function safeTokens(text: string, opts: SqlTextOptions, hint = false): SqlToken[] {
  const mysql = opts.flavor === 'mysql';
  const serverVersion = opts.serverVersion ?? (mysql ? MYSQL_VERSION : MARIADB_VERSION);
  const escapes = opts.noBackslashEscapes !== true;
  const main = lexSql(text, { backslashEscapes: escapes, serverVersion, mysql, hint });
  if (!main.sawBackslash) return main.tokens;
  const other = lexSql(text, { backslashEscapes: !escapes, serverVersion, mysql, hint });
  if (!endsDoubtful(main.tokens) && endsDoubtful(other.tokens)) return main.tokens;
  return cutAtConflict(main.tokens, other.tokens, text.length);
}

const endsDoubtful = (tokens: readonly SqlToken[]): boolean =>
  tokens[tokens.length - 1]?.kind === Tok.Doubtful;

const isLiteral = (t: SqlToken): boolean =>
  t.kind === Tok.Value || t.kind === Tok.HexString || t.kind === Tok.Doubtful;

/**
 * The first token of `main` that would be printed as written (a name, a keyword, a hint…)
 * but overlaps a literal of `other` starts the doubtful rest.
 */
function cutAtConflict(main: SqlToken[], other: readonly SqlToken[], end: number): SqlToken[] {
  const literals = other.filter(isLiteral);
  let j = 0;
  for (let k = 0; k < main.length; k++) {
    const t = main[k] as SqlToken;
    if (isLiteral(t)) continue;
    while (j < literals.length && (literals[j] as SqlToken).end <= t.start) j++;
    const lit = literals[j];
    if (lit !== undefined && lit.start < t.end) {
      const rest: SqlToken = {
        kind: Tok.Doubtful,
        start: t.start,
        end,
        space: t.space,
        word: '',
        numeric: false,
      };
      return [...main.slice(0, k), rest];
    }
  }
  return main;
}

function obfuscate(text: string, opts: SqlTextOptions, inHint: boolean): string {
  const { entries } = reduceTokens(safeTokens(text, opts, inHint), { sql: true });
  return printObfuscated(text, entries, (hint) => (inHint ? NOTHING : obfuscate(hint, opts, true)));
}

/**
 * `text` with every literal (string, number, hex, bit, date, NULL as a value, `@var`) replaced
 * by `?`, comments removed (optimizer hints kept, their literals replaced too), lists of
 * values collapsed as the server's digest collapses them (`IN (...)`,
 * `VALUES (...) /* , ... *\/`), names and keywords as written, whitespace folded. Text that
 * cannot be read with certainty is replaced from that point on.
 */
export function obfuscateSql(text: string, opts: SqlTextOptions = {}): string {
  try {
    return obfuscate(text, opts, false);
  } catch {
    return NOTHING;
  }
}

/**
 * The statement as the server prints its digest (DIGEST_TEXT): literals and lists reduced,
 * comments and optimizer hints dropped, keywords in capitals under the server's spelling, names
 * in backticks, one space between tokens (no trailing space).
 */
export function normalizeSql(text: string, opts: NormalizeOptions = {}): string {
  try {
    const { entries } = reduceTokens(safeTokens(text, opts), { sql: false, maxBytes: opts.maxDigestLength });
    return printNormal(entries);
  } catch {
    return NOTHING;
  }
}

/** A stable 16-hex-digit hash of the normal form: equal for statements that differ only in literals. */
export function sqlFingerprint(text: string, opts: NormalizeOptions = {}): string {
  const { createHash } = process.getBuiltinModule('node:crypto');
  return createHash('sha256').update(normalizeSql(text, opts)).digest('hex').slice(0, 16);
}
