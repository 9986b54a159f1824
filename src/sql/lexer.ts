/**
 * A lexer for MySQL and MariaDB statements: one left-to-right pass over the text that cuts
 * it into the tokens the server's own lexer would see, as far as a statement digest needs
 * them. It never throws and never backtracks: text it cannot read (an unterminated quote, a
 * character no token starts with) ends the token list with one `Doubtful` token that covers
 * everything from that point to the end, so a caller can replace it whole.
 *
 * What it knows (the server's rules, restated):
 * - strings in `'…'` and `"…"` with doubled quotes and backslash escapes (`backslashEscapes`
 *   off reads them as NO_BACKSLASH_ESCAPES does); `"…"` is always a string here, never a
 *   name: under ANSI_QUOTES that hides a name, never shows a value;
 * - names in backticks (doubled backticks inside), plain names, keywords (see keywords.ts);
 *   a word right after `.`, or right before `.` and a name, is a name even if it is a keyword;
 * - numbers: integers, decimals (`1.`, `.5`), exponents, `0x…`, `0b…`, `X'…'`, `B'…'`,
 *   `N'…'`; digits followed by letters are a name (`123abc`, `0xZZ`);
 * - `_charset` introducers, `?` markers, `@var` (its name counts as a value, as the server
 *   digests it), `@@var`, `'user'@'host'`;
 * - comments `#…`, `-- …`, `/* … *\/`; executable comments `/*! … *\/` and `/*M! … *\/` whose
 *   content is code when the server would run it (no version, a version at or below
 *   `serverVersion`; on MariaDB not the MySQL-only versions 50700–99999 unless `M!`); hints
 *   `/*+ … *\/` kept as one `Hint` token.
 */
import { CHARSETS, FUNCTION_WORDS, PRINTED_AS, RESERVED_WORDS } from './keywords.js';

export const Tok = {
  /** A literal: string, number, `?`, user-variable or host name. */
  Value: 1,
  /** NULL: a value, except after IS / NOT and in `SET NULL`. */
  Null: 2,
  /** A name: plain or in backticks. */
  Ident: 3,
  Keyword: 4,
  /** Punctuation and operators. */
  Op: 5,
  /** `X'…'`: the server digests it as a token of its own. */
  HexString: 6,
  /** `_utf8mb4` and the like before a string. */
  Charset: 7,
  /** `@` of `@var`, `@@var`, `user@host`. */
  At: 8,
  /** An optimizer hint `/*+ … *\/`: the span of its content. */
  Hint: 9,
  /** Everything from here on could not be read with certainty. */
  Doubtful: 10,
} as const;
export type TokKind = (typeof Tok)[keyof typeof Tok];

export interface SqlToken {
  kind: TokKind;
  /** Span in the text (for a hint: its content, without the comment marks). */
  start: number;
  end: number;
  /** Whitespace or a comment stood before it. */
  space: boolean;
  /** Keyword: its digest spelling. Op: the operator. Ident: the name as written inside quotes. */
  word: string;
  /** A number (a unary sign before it folds into the value). */
  numeric: boolean;
}

export interface LexOptions {
  /** Backslash escapes in strings (on unless the server runs with NO_BACKSLASH_ESCAPES). */
  backslashEscapes: boolean;
  /** Server version as in executable comments: 10.11.0 is 101100, 8.0.36 is 80036. */
  serverVersion: number;
  /** MySQL runs `/*!NNNNN` up to its version and has no `/*M!`; MariaDB skips 50700–99999. */
  mysql: boolean;
  /** Inside an optimizer hint: a word that starts with a digit (`16M`) is a value. */
  hint: boolean;
}

export interface LexResult {
  tokens: SqlToken[];
  /** A backslash stood inside a string: the other escape mode may read the text otherwise. */
  sawBackslash: boolean;
}

const C_SPACE = 1;
const C_IDENT = 2;
const C_DIGIT = 4;
const C_HEX = 8;
const CLASS = new Uint8Array(128);
const mark = (chars: RegExp, bit: number): void => {
  for (let c = 0; c < 128; c++) if (chars.test(String.fromCharCode(c))) CLASS[c] = (CLASS[c] as number) | bit;
};
mark(/[ \t\n\r\v\f]/, C_SPACE);
mark(/[A-Za-z0-9_$]/, C_IDENT);
mark(/[0-9]/, C_DIGIT);
mark(/[0-9A-Fa-f]/, C_HEX);

const isIdent = (c: number): boolean => c >= 128 || (c >= 0 && ((CLASS[c] as number) & C_IDENT) !== 0);
const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isHex = (c: number): boolean => c >= 0 && c < 128 && ((CLASS[c] as number) & C_HEX) !== 0;
const isSpace = (c: number): boolean => c >= 0 && c < 128 && ((CLASS[c] as number) & C_SPACE) !== 0;

/** Two- and three-character operators, longest first. */
const LONG_OPS = ['<=>', '<=', '<>', '<<', '>=', '>>', '!=', '&&', '||', ':='];
const SINGLE_OPS = new Set('(){},;=<>!~+-*/%&|^.:'.split(''));

const CH = (s: string): number => s.charCodeAt(0);
const QUOTE = CH("'");
const DQUOTE = CH('"');
const BACKTICK = CH('`');
const BACKSLASH = CH('\\');
const DOT = CH('.');
const AT = CH('@');
const STAR = CH('*');
const SLASH = CH('/');
const MINUS = CH('-');
const HASH = CH('#');
const BANG = CH('!');
const PAREN = CH('(');

class Lexer {
  readonly tokens: SqlToken[] = [];
  sawBackslash = false;
  private pos = 0;
  private space = false;
  /** Inside the code of an executable comment: its `*\/` is skipped. */
  private inExec = false;
  /** The next word is a name whatever it spells (after `t.`). */
  private forceIdent = false;
  /** The next word follows `@@`: a keyword or a name, even before `.`. */
  private sysVar = false;
  private readonly n: number;

  constructor(
    private readonly s: string,
    private readonly opts: LexOptions,
  ) {
    this.n = s.length;
  }

  private at(i: number): number {
    return i < this.n ? this.s.charCodeAt(i) : -1;
  }

  run(): void {
    while (this.skipGap()) {
      if (!this.one()) return;
    }
  }

  private push(kind: TokKind, start: number, end: number, word = '', numeric = false): void {
    this.tokens.push({ kind, start, end, space: this.space, word, numeric });
    this.space = false;
    this.pos = end;
  }

  /** Everything from `start` on is replaced: the lexer stops. */
  private doubtful(start: number): false {
    this.push(Tok.Doubtful, start, this.n);
    return false;
  }

  /** Skip whitespace and comments; false at the end of the text. */
  private skipGap(): boolean {
    for (;;) {
      const c = this.at(this.pos);
      if (c < 0) return false;
      if (isSpace(c)) {
        this.pos++;
        this.space = true;
        continue;
      }
      if (c === HASH || (c === MINUS && this.at(this.pos + 1) === MINUS && this.dashComment())) {
        const nl = this.s.indexOf('\n', this.pos);
        this.pos = nl < 0 ? this.n : nl;
        this.space = true;
        continue;
      }
      if (c === STAR && this.inExec && this.at(this.pos + 1) === SLASH) {
        this.inExec = false;
        this.pos += 2;
        this.space = true;
        continue;
      }
      if (c === SLASH && this.at(this.pos + 1) === STAR) {
        this.comment();
        continue;
      }
      return true;
    }
  }

  /** `--` starts a comment when a space, a control character or the end follows. */
  private dashComment(): boolean {
    const c = this.at(this.pos + 2);
    return c < 0 || c <= 32 || c === 127;
  }

  /** At `/*`: skip a comment, open an executable one, or push a hint token. */
  private comment(): void {
    const s = this.s;
    const p = this.pos;
    let q = p + 2;
    const mariaOnly = !this.opts.mysql && this.at(q) === CH('M') && this.at(q + 1) === BANG;
    if (mariaOnly) q++;
    if (this.at(q) === BANG && !this.inExec) {
      q++;
      let digits = 0;
      while (digits < 6 && isDigit(this.at(q + digits))) digits++;
      if (digits < 5) digits = 0;
      const version = digits > 0 ? Number(s.slice(q, q + digits)) : 0;
      const runs =
        digits === 0 ||
        (version <= this.opts.serverVersion &&
          (this.opts.mysql || version < 50700 || version > 99999 || mariaOnly));
      if (runs) {
        this.inExec = true;
        this.pos = q + digits;
        this.space = true;
        return;
      }
    }
    const end = s.indexOf('*/', p + 2);
    const close = end < 0 ? this.n : end;
    if (this.at(p + 2) === CH('+') && end >= 0) {
      this.push(Tok.Hint, p + 3, close);
      this.pos = close + 2;
      this.space = true;
      return;
    }
    this.pos = end < 0 ? this.n : end + 2;
    this.space = true;
  }

  /** Read one token at `pos`; false when the rest is doubtful. */
  private one(): boolean {
    const p = this.pos;
    const c = this.at(p);
    if (c === QUOTE || c === DQUOTE) return this.quoted(p, p, c, Tok.Value);
    if (c === BACKTICK) return this.backtick(p);
    if (isDigit(c)) return this.number(p);
    if (c === DOT && isDigit(this.at(p + 1)) && !this.forceIdent) return this.real(p, p + 1);
    if (isIdent(c)) return this.word(p);
    if (c === AT) return this.atSign(p);
    if (c === CH('?')) {
      this.push(Tok.Value, p, p + 1);
      return true;
    }
    return this.operator(p, c);
  }

  private operator(p: number, c: number): boolean {
    this.forceIdent = false;
    this.sysVar = false;
    for (const op of LONG_OPS) {
      if (this.s.startsWith(op, p)) {
        this.push(Tok.Op, p, p + op.length, op);
        return true;
      }
    }
    const ch = String.fromCharCode(c);
    if (!SINGLE_OPS.has(ch)) return this.doubtful(p);
    this.push(Tok.Op, p, p + 1, ch);
    // `.` followed at once by a name character: that word is a name (`t.select`, `t.5`).
    if (c === DOT && isIdent(this.at(p + 1))) this.forceIdent = true;
    return true;
  }

  /** A quoted string from `quote` (its opening quote at `q`); `from` is where the token starts. */
  private quoted(from: number, q: number, quote: number, kind: TokKind, numeric = false): boolean {
    this.forceIdent = false;
    this.sysVar = false;
    const s = this.s;
    const escapes = this.opts.backslashEscapes;
    let i = q + 1;
    for (;;) {
      if (i >= this.n) return this.doubtful(from);
      const c = s.charCodeAt(i);
      if (c === BACKSLASH) {
        this.sawBackslash = true;
        if (escapes) {
          i += 2;
          continue;
        }
      } else if (c === quote) {
        if (s.charCodeAt(i + 1) === quote) {
          i += 2;
          continue;
        }
        this.push(kind, from, i + 1, '', numeric);
        return true;
      }
      i++;
    }
  }

  private backtick(p: number): boolean {
    this.sysVar = false;
    let i = p + 1;
    for (;;) {
      const e = this.s.indexOf('`', i);
      if (e < 0) return this.doubtful(p);
      if (this.at(e + 1) === BACKTICK) {
        i = e + 2;
        continue;
      }
      this.forceIdent = false;
      this.push(Tok.Ident, p, e + 1, this.s.slice(p + 1, e));
      if (this.at(e + 1) === DOT && isIdent(this.at(e + 2))) this.forceIdent = true;
      return true;
    }
  }

  /** From a digit: hex `0x…`, binary `0b…`, integer, decimal, float, or a name like `123abc`. */
  private number(p: number): boolean {
    if (this.forceIdent) return this.word(p);
    const second = this.at(p + 1);
    if (this.at(p) === CH('0') && (second === CH('x') || second === CH('b'))) {
      const ok = second === CH('x') ? isHex : (c: number) => c === 48 || c === 49;
      let i = p + 2;
      while (ok(this.at(i))) i++;
      if (i > p + 2 && !isIdent(this.at(i))) {
        this.push(Tok.Value, p, i, '', true);
        return true;
      }
      return this.word(p);
    }
    let i = p;
    while (isDigit(this.at(i))) i++;
    const c = this.at(i);
    if (c === DOT) return this.real(p, i + 1);
    const exp = this.exponent(i);
    if (exp > i) {
      this.push(Tok.Value, p, exp, '', true);
      return true;
    }
    if (isIdent(c)) return this.opts.hint ? this.hintValue(p) : this.word(p);
    this.push(Tok.Value, p, i, '', true);
    return true;
  }

  /** In a hint, `16M` and the like are values: the whole word goes. */
  private hintValue(p: number): boolean {
    let e = p;
    while (isIdent(this.at(e))) e++;
    this.push(Tok.Value, p, e);
    return true;
  }

  /** Past the exponent at `i` (`e5`, `E-3`), or `i` when there is none. */
  private exponent(i: number): number {
    const c = this.at(i);
    if (c !== CH('e') && c !== CH('E')) return i;
    let j = i + 1;
    if (this.at(j) === CH('+') || this.at(j) === MINUS) j++;
    if (!isDigit(this.at(j))) return i;
    while (isDigit(this.at(j))) j++;
    return j;
  }

  /** A number with a point: `from` is its start, `i` just past the point. */
  private real(from: number, i: number): boolean {
    this.sysVar = false;
    while (isDigit(this.at(i))) i++;
    const e = this.exponent(i);
    const c = this.at(e);
    if (e === i && (c === CH('e') || c === CH('E'))) return this.doubtful(from);
    this.push(Tok.Value, from, e, '', true);
    return true;
  }

  /** A word: keyword, name, introducer, or the prefix of `X'…'`, `B'…'`, `N'…'`. */
  private word(p: number): boolean {
    const s = this.s;
    let e = p + 1;
    while (isIdent(this.at(e))) e++;
    const forced = this.forceIdent;
    const sysVar = this.sysVar;
    this.forceIdent = false;
    this.sysVar = false;
    if (e === p + 1 && this.at(e) === QUOTE && !forced) {
      const prefix = s[p]?.toLowerCase();
      if (prefix === 'x') return this.quoted(p, e, QUOTE, Tok.HexString);
      if (prefix === 'b') return this.quoted(p, e, QUOTE, Tok.Value, true);
      if (prefix === 'n') return this.quoted(p, e, QUOTE, Tok.Value);
    }
    const next = this.at(e);
    const beforeName = next === DOT && isIdent(this.at(e + 1));
    if (beforeName) this.forceIdent = true;
    const text = s.slice(p, e);
    if (forced || (beforeName && !sysVar)) {
      this.push(Tok.Ident, p, e, text);
      return true;
    }
    const upper = text.toUpperCase();
    if (RESERVED_WORDS.has(upper) || (next === PAREN && !sysVar && FUNCTION_WORDS.has(upper))) {
      this.push(upper === 'NULL' ? Tok.Null : Tok.Keyword, p, e, PRINTED_AS.get(upper) ?? upper);
    } else if (text.charCodeAt(0) === CH('_') && CHARSETS.has(text.slice(1).toLowerCase())) {
      this.push(Tok.Charset, p, e, '(_charset)');
    } else {
      this.push(Tok.Ident, p, e, text);
    }
    return true;
  }

  /** `@`: `@@name` (system variable), `@'x'`/`@"x"`/`` @`x` `` or `@name` (its name a value). */
  private atSign(p: number): boolean {
    this.forceIdent = false;
    this.push(Tok.At, p, p + 1, '@');
    const c = this.at(p + 1);
    if (c === AT) {
      this.push(Tok.At, p + 1, p + 2, '@');
      this.sysVar = this.at(p + 2) !== BACKTICK;
      return true;
    }
    this.sysVar = false;
    if (c === QUOTE || c === DQUOTE || c === BACKTICK) return true;
    let i = p + 1;
    for (;;) {
      const d = this.at(i);
      if (!(isIdent(d) || d === DOT)) break;
      i++;
    }
    this.push(Tok.Value, p + 1, i);
    return true;
  }
}

/** Cut `text` into tokens (see the file comment). Never throws. */
export function lexSql(text: string, opts: LexOptions): LexResult {
  const lexer = new Lexer(text, opts);
  lexer.run();
  return { tokens: lexer.tokens, sawBackslash: lexer.sawBackslash };
}
