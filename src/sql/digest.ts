/**
 * The server's statement-digest reductions over a token list, and the two ways to print the
 * result: as the server prints DIGEST_TEXT (`printNormal`) and as SQL close to the original
 * with every literal replaced (`printObfuscated`).
 *
 * The reductions, as MariaDB and MySQL apply them while they read a statement:
 * - every literal becomes `?`; a `+` or `-` right before a number folds into it when the
 *   token before the sign starts an expression (`(`, `,`, an operator, SELECT, WHERE's AND…),
 *   so `a = -1` keeps its sign (`= - ?`) while `(-1)` does not;
 * - `? , ?` becomes `?, ...`; `( ? )` becomes `(?)`, `( ?, ... )` becomes `(...)`; and a run of
 *   those rows separated by commas becomes `(?) /* , ... *\/` or `(...) /* , ... *\/`;
 * - a name is a barrier: no reduction looks past the last name.
 * With `maxBytes` (the server's max_digest_length) tokens stop once the server's token store
 * would be full: two bytes a token, four plus the name's bytes for a name.
 */
import { Tok, type SqlToken } from './lexer.js';

const GV = 1;
const GVL = 2;
const RSV = 3;
const RSVL = 4;
const RMV = 5;
const RMVL = 6;
const REDUCED_TEXT = ['', '?', '?, ...', '(?)', '(?) /* , ... */', '(...)', '(...) /* , ... */'];

/** Tokens after which an expression starts: a sign there is unary. */
const START_OPS = new Set(['(', ',', '|', '&', '<<', '>>', '+', '-', '*', '/', '%', '^', '&&', '||']);
const START_WORDS = new Set(
  'EVERY AT STARTS ENDS DEFAULT RETURN IF ELSEIF CASE WHEN WHILE UNTIL SELECT OR XOR AND NOT BETWEEN LIKE RLIKE INTERVAL DIV MOD'.split(
    ' ',
  ),
);

export interface Entry {
  /** The token it stands for; undefined for a reduction. */
  tok: SqlToken | undefined;
  /** 0 for a plain token, else one of the reductions GV…RMVL. */
  red: number;
  space: boolean;
}

export interface DigestOptions {
  /** Stop as the server does when its token store (max_digest_length bytes) is full. */
  maxBytes?: number;
  /**
   * For printing SQL: keep optimizer hints as tokens and take `X'…'` for a value like any
   * other (the digest drops hints and keeps `X'…'` as a token of its own).
   */
  sql: boolean;
}

export interface DigestResult {
  entries: Entry[];
  /** The server's store would have been full: its DIGEST_TEXT stops here. */
  truncated: boolean;
}

const isOp = (e: Entry | undefined, op: string): boolean =>
  e !== undefined && e.red === 0 && e.tok?.kind === Tok.Op && e.tok.word === op;

function startsExpr(e: Entry | undefined): boolean {
  if (e === undefined || e.red !== 0 || e.tok === undefined) return false;
  if (e.tok.kind === Tok.Op) return START_OPS.has(e.tok.word);
  return e.tok.kind === Tok.Keyword && START_WORDS.has(e.tok.word);
}

/** Keywords after which an expression (so a literal NULL) may stand, besides START_WORDS. */
const EXPR_WORDS = new Set(['WHERE', 'HAVING', 'ON', 'THEN', 'ELSE', 'BY', 'ESCAPE', 'DO', 'RETURNING']);

/** Token `i` stands where an expression may start: after an operator or such a keyword. */
function inExpression(tokens: readonly SqlToken[], i: number): boolean {
  const prev = tokens[i - 1];
  if (prev === undefined) return true;
  if (prev.kind === Tok.Op) return prev.word !== ')';
  if (prev.kind !== Tok.Keyword) return false;
  return START_WORDS.has(prev.word) || EXPR_WORDS.has(prev.word);
}

/**
 * NULL is a literal where an expression stands (`a = NULL`, `VALUES (NULL)`, `DEFAULT NULL`,
 * `SELECT NOT NULL`); it is a keyword in `IS [NOT] NULL`, in a column definition
 * (`INT NULL`, `INT NOT NULL`) and in `ON DELETE SET NULL`.
 */
function nullIsValue(tokens: readonly SqlToken[], i: number): boolean {
  const prev = tokens[i - 1];
  if (prev?.kind === Tok.Keyword && prev.word === 'IS') return false;
  if (prev?.kind === Tok.Keyword && prev.word === 'NOT') {
    const before = tokens[i - 2];
    return !(before?.kind === Tok.Keyword && before.word === 'IS') && inExpression(tokens, i - 1);
  }
  if (prev?.kind === Tok.Keyword && prev.word === 'SET') {
    const before = tokens[i - 2];
    return !(before?.kind === Tok.Keyword && (before.word === 'DELETE' || before.word === 'UPDATE'));
  }
  return inExpression(tokens, i);
}

class Reducer {
  readonly stack: Entry[] = [];
  private barrier = 0;
  private bytes = 0;
  full = false;

  constructor(private readonly maxBytes: number) {}

  /** The k-th entry from the top (1 = last), not looking past the last name. */
  private peek(k: number): Entry | undefined {
    const i = this.stack.length - k;
    return i >= this.barrier ? this.stack[i] : undefined;
  }

  private pop(k: number): Entry {
    const first = this.stack[this.stack.length - k] as Entry;
    this.stack.length -= k;
    this.bytes -= 2 * k;
    return first;
  }

  private store(e: Entry, size = 2): void {
    if (this.bytes + size > this.maxBytes) {
      this.full = true;
      return;
    }
    this.stack.push(e);
    this.bytes += size;
  }

  value(tok: SqlToken): void {
    let space = tok.space;
    if (tok.numeric) {
      for (;;) {
        const last = this.peek(1);
        if (!(isOp(last, '-') || isOp(last, '+')) || !startsExpr(this.peek(2))) break;
        space = this.pop(1).space;
      }
    }
    let red = GV;
    const last2 = this.peek(2);
    if (isOp(this.peek(1), ',') && (last2?.red === GV || last2?.red === GVL)) {
      space = this.pop(2).space;
      red = GVL;
    }
    this.store({ tok, red, space });
  }

  close(tok: SqlToken): void {
    let red = 0;
    let space = tok.space;
    const last = this.peek(1);
    if (isOp(this.peek(2), '(') && (last?.red === GV || last?.red === GVL)) {
      const single = last.red === GV;
      space = this.pop(2).space;
      red = single ? RSV : RMV;
      const list = single ? RSVL : RMVL;
      const l2 = this.peek(2);
      if (isOp(this.peek(1), ',') && (l2?.red === red || l2?.red === list)) {
        space = this.pop(2).space;
        red = list;
      }
    }
    this.store({ tok: red === 0 ? tok : undefined, red, space });
  }

  ident(tok: SqlToken): void {
    this.store({ tok, red: 0, space: tok.space }, 4 + byteLength(tok.word));
    if (!this.full) this.barrier = this.stack.length;
  }

  plain(tok: SqlToken): void {
    this.store({ tok, red: 0, space: tok.space });
  }
}

function byteLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) n += c >= 0x800 && (c < 0xd800 || c > 0xdfff) ? 2 : 1;
  }
  return n;
}

/** Apply the digest reductions to `tokens`. */
export function reduceTokens(tokens: readonly SqlToken[], opts: DigestOptions): DigestResult {
  const r = new Reducer(opts.maxBytes ?? Number.MAX_SAFE_INTEGER);
  for (let i = 0; i < tokens.length && !r.full; i++) {
    const tok = tokens[i] as SqlToken;
    switch (tok.kind) {
      case Tok.Value:
      case Tok.Doubtful:
        r.value(tok);
        break;
      case Tok.HexString:
        if (opts.sql) r.value(tok);
        else r.plain(tok);
        break;
      case Tok.Null:
        if (nullIsValue(tokens, i)) r.value(tok);
        else r.plain(tok);
        break;
      case Tok.Ident:
        r.ident(tok);
        break;
      case Tok.Hint:
        if (opts.sql) r.plain(tok);
        break;
      default:
        if (tok.kind === Tok.Op && tok.word === ')') r.close(tok);
        else r.plain(tok);
    }
  }
  return { entries: r.stack, truncated: r.full };
}

/** DIGEST_TEXT as the server prints it, without the trailing space. */
export function printNormal(entries: readonly Entry[]): string {
  let out = '';
  for (const e of entries) {
    const tok = e.tok;
    if (e.red !== 0 || tok === undefined) {
      out += REDUCED_TEXT[e.red] + ' ';
      continue;
    }
    switch (tok.kind) {
      case Tok.Ident:
        out += '`' + tok.word + '` ';
        break;
      case Tok.At:
        out += '@';
        break;
      case Tok.HexString:
        out += '(unknown) ';
        break;
      case Tok.Op:
        out += (tok.word === '<>' ? '!=' : tok.word) + ' ';
        break;
      case Tok.Null:
        out += 'NULL ';
        break;
      default:
        out += tok.word + ' ';
    }
  }
  return out.trimEnd();
}

/**
 * SQL with every literal replaced by `?`: names, keywords and operators as written, one space
 * where the text had whitespace or a comment. `hint` prints an optimizer hint's content.
 */
export function printObfuscated(
  text: string,
  entries: readonly Entry[],
  hint: (content: string) => string,
): string {
  let out = '';
  let afterCharset = false;
  for (const e of entries) {
    if ((e.space || afterCharset) && out !== '') out += ' ';
    const tok = e.tok;
    afterCharset = tok?.kind === Tok.Charset;
    if (e.red !== 0 || tok === undefined) {
      out += REDUCED_TEXT[e.red];
    } else if (tok.kind === Tok.Hint) {
      out += '/*+ ' + hint(text.slice(tok.start, tok.end)) + ' */';
    } else if (tok.kind === Tok.HexString || tok.kind === Tok.Doubtful || tok.kind === Tok.Value) {
      out += '?';
    } else {
      out += text.slice(tok.start, tok.end);
    }
  }
  return out;
}
