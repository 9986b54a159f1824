/**
 * Reading plan files: glob expansion, read, decode, validate.
 *
 * Node 20 has no fs.glob, so this file carries a small glob with Go's filepath.Glob rules,
 * which is what Blip uses: `*` (any run of characters but `/`), `?` (one character but
 * `/`), `[abc]`, `[a-z]`, `[^a-z]` and `\` escapes, matched per path segment; no `**`.
 * Matches come back in lexical order per directory and joined like Go's filepath.Join
 * (so `./plans/*.yaml` yields `plans/a.yaml`). The match path is the plan name.
 */
import { lstat, readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { CollectorHelp } from '../core/collector.js';
import type { Plan } from '../core/plan.js';
import { PLAN_LIMITS, PlanError, parsePlan, tooBig, validatePlans, type PlanParseOptions } from './parse.js';
import { readRegularText } from '../util/read-file.js';

type Token =
  | { kind: 'lit'; ch: string }
  | { kind: 'star' }
  | { kind: 'any' }
  | { kind: 'class'; negated: boolean; ranges: [number, number][] };

const BAD_PATTERN = 'syntax error in pattern';

/** Go's hasMeta on Unix: `*`, `?`, `[` or `\`. */
export function hasGlobMeta(path: string): boolean {
  return /[*?[\\]/.test(path);
}

/** Split one path segment pattern into tokens; throws on a malformed pattern. */
function tokenize(pattern: string): Token[] {
  const chars = [...pattern];
  const out: Token[] = [];
  let i = 0;
  // One (possibly escaped) character of a class; `-` and `]` must be escaped there.
  const classChar = (): number => {
    let c = chars[i];
    if (c === undefined || c === '-' || c === ']') throw new Error(BAD_PATTERN);
    if (c === '\\') {
      i++;
      c = chars[i];
      if (c === undefined) throw new Error(BAD_PATTERN);
    }
    i++;
    if (i >= chars.length) throw new Error(BAD_PATTERN);
    return c.codePointAt(0)!;
  };
  while (i < chars.length) {
    const c = chars[i]!;
    if (c === '*') {
      out.push({ kind: 'star' });
      i++;
    } else if (c === '?') {
      out.push({ kind: 'any' });
      i++;
    } else if (c === '\\') {
      const next = chars[i + 1];
      if (next === undefined) throw new Error(BAD_PATTERN);
      out.push({ kind: 'lit', ch: next });
      i += 2;
    } else if (c === '[') {
      i++;
      let negated = false;
      if (chars[i] === '^') {
        negated = true;
        i++;
      }
      const ranges: [number, number][] = [];
      for (;;) {
        if (chars[i] === ']' && ranges.length > 0) {
          i++;
          break;
        }
        const lo = classChar();
        let hi = lo;
        if (chars[i] === '-') {
          i++;
          hi = classChar();
        }
        ranges.push([lo, hi]);
      }
      out.push({ kind: 'class', negated, ranges });
    } else {
      out.push({ kind: 'lit', ch: c });
      i++;
    }
  }
  return out;
}

function regexFor(tokens: Token[]): RegExp {
  const hex = (n: number): string => `\\u{${n.toString(16)}}`;
  const body = tokens
    .map((t) => {
      switch (t.kind) {
        case 'star':
          return '[^/]*';
        case 'any':
          return '[^/]';
        case 'lit':
          return hex(t.ch.codePointAt(0)!);
        case 'class':
          // A range with lo > hi matches nothing, as in Go.
          return `[${t.negated ? '^' : ''}${t.ranges
            .filter(([lo, hi]) => lo <= hi)
            .map(([lo, hi]) => `${hex(lo)}-${hex(hi)}`)
            .join('')}${t.negated ? '/' : ''}]`.replace(/^\[\]$/, '(?!)');
      }
      return '';
    })
    .join('');
  return new RegExp(`^${body}$`, 'u');
}

/** Compile one path segment pattern, or throw `syntax error in pattern`. */
function compileSegment(pattern: string): RegExp {
  return regexFor(tokenize(pattern));
}

/** Go's cleanGlobPath: "" → ".", "/" stays, else drop the trailing separator. */
function cleanGlobPath(dir: string): string {
  if (dir === '') return '.';
  if (dir === '/') return dir;
  return dir.slice(0, -1);
}

async function globDir(dir: string, pattern: string): Promise<string[]> {
  try {
    if (!(await stat(dir)).isDirectory()) return [];
  } catch {
    return []; // Go ignores I/O errors here
  }
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const re = compileSegment(pattern);
  return names
    .sort()
    .filter((n) => re.test(n))
    .map((n) => join(dir, n));
}

async function globPaths(pattern: string): Promise<string[]> {
  if (!hasGlobMeta(pattern)) {
    try {
      await lstat(pattern);
      return [pattern];
    } catch {
      return [];
    }
  }
  const cut = pattern.lastIndexOf('/') + 1;
  const dir = cleanGlobPath(pattern.slice(0, cut));
  const file = pattern.slice(cut);
  if (!hasGlobMeta(dir)) return globDir(dir, file);
  const out: string[] = [];
  for (const d of await globPaths(dir)) out.push(...(await globDir(d, file)));
  return out;
}

/**
 * Expand one glob pattern into matching paths (Go filepath.Glob rules, lexical order).
 * Throws a PlanError for a malformed pattern. No match yields `[]`.
 */
export async function glob(pattern: string): Promise<string[]> {
  try {
    for (const seg of pattern.split('/')) compileSegment(seg);
  } catch (err) {
    throw new PlanError(`invalid plan file pattern ${pattern}: ${(err as Error).message}`);
  }
  return globPaths(pattern);
}

function missing(file: string): PlanError {
  const abs = resolve(file);
  return new PlanError(
    `plan file ${file}${abs === file ? '' : ` (${abs})`} does not exist: correct or remove it in plans.files`,
  );
}

/**
 * The plan files one `plans.files` entry names: the glob matches, or the path itself when
 * it has no glob characters. A pattern without matches yields nothing, except a literal
 * path that does not exist, which is an error (sonde's choice).
 */
export async function expandPlanPattern(pattern: string): Promise<string[]> {
  const matches = await glob(pattern);
  if (matches.length === 0 && !hasGlobMeta(pattern)) throw missing(pattern);
  return matches;
}

/**
 * Read and decode one plan file; the plan is named after `file` exactly. Not validated.
 * Errors: `plan file <file> (<absolute>) does not exist: correct or remove it in plans.files`,
 * `cannot decode YAML in <file>: <err>` (also for a file over PLAN_LIMITS.bytes).
 */
export async function readPlanFile(file: string, opts: PlanParseOptions = {}): Promise<Plan> {
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch {
    throw missing(file);
  }
  // Refused before it is read: a plan is never anywhere near this size.
  if (size > PLAN_LIMITS.bytes) throw new PlanError(`cannot decode YAML in ${file}: ${tooBig(size)}`);
  let text: string;
  try {
    text = await readRegularText(file);
  } catch (err) {
    throw new PlanError(`cannot read plan file ${file}: ${(err as Error).message}`, { cause: err });
  }
  try {
    return parsePlan(file, file, text, opts);
  } catch (err) {
    throw new PlanError(`cannot decode YAML in ${file}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * Read the plan files of a `plans.files` list (patterns already `${ENV}`-interpolated), in
 * listed order with glob matches in lexical order, then validate them all together
 * (validatePlans). Throws PlanError on the first read error or with all validation errors.
 */
export async function readPlanFiles(
  patterns: string[],
  getHelp: (domain: string) => CollectorHelp | undefined,
): Promise<Plan[]> {
  const plans: Plan[] = [];
  for (const pattern of patterns) {
    for (const file of await expandPlanPattern(pattern)) plans.push(await readPlanFile(file));
  }
  validatePlans(plans, getHelp);
  return plans;
}
