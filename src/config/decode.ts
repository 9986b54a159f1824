/**
 * Strict YAML decoding shared by the main config file and monitor files.
 *
 * The `yaml` package parses into an AST; we walk it ourselves so that we can
 * - report duplicate keys with their key path (yaml only knows an offset),
 * - remember the line of every key, so a schema problem's key path maps back to a line,
 * - keep the source text of scalars: Blip (Go yaml.v2) accepts any scalar for a string
 *   key and stores its text, so `port: 3306` in sink options is the string `3306`, `freq: 5`
 *   is `5` (then a duration error) and `password: 0123` stays `0123`, not `83`.
 *
 * The document is read as YAML 1.1 like Go's yaml.v2: `yes`/`no`/`on`/`off` are booleans
 * for boolean keys, and `<<` merge keys are honoured.
 */
import { isAlias, isMap, isNode, isPair, isScalar, isSeq, LineCounter, parseDocument, visit } from 'yaml';
import type { Alias, Document, Node as YamlNode, Scalar } from 'yaml';
import { YamlBool } from '../core/config-schema.js';
import type { SchemaNode } from '../core/config-schema.js';
import { checkSchema, resolveNode as unlazy } from './schema-check.js';
import type { SchemaIssue } from './schema-check.js';
import { didYouMean } from '../util/suggest.js';

// YamlBool is declared beside the schemas that read it; decoding creates it.
export { YamlBool };

/** A decoded path: map keys and list indexes. */
export type KeyPath = readonly PropertyKey[];

/** `monitors[0].tls.ca` */
export function formatPath(path: KeyPath): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out === '' ? String(p) : `.${String(p)}`;
  }
  return out;
}

/** One-line decode failure; `detail` is `line N: ...` (file name added by the caller). */
export class DecodeFailure extends Error {
  constructor(
    readonly detail: string,
    readonly line: number | undefined,
    readonly key: string | undefined,
  ) {
    super(detail);
    this.name = 'DecodeFailure';
  }
}

/** YAML kind of a node, for "expected X, got Y" messages. */
type Kind = 'null' | 'boolean' | 'number' | 'string' | 'mapping' | 'list' | 'value';

interface WalkCtx {
  /** the node each alias stands for: the last node before it with that anchor */
  targets: Map<Alias, YamlNode>;
  lc: LineCounter;
  lines: Map<string, number>;
  kinds: Map<string, Kind>;
  /** alias expansions so far: capped, so a "billion laughs" document cannot blow up memory */
  aliases: number;
}

const MAX_ALIAS_EXPANSIONS = 1000;

/**
 * The target of every alias, found in one pass over the document. (The library's own
 * `Alias.resolve` walks the whole document for each alias it resolves.)
 */
function aliasTargets(doc: Document): Map<Alias, YamlNode> {
  const last = new Map<string, YamlNode>();
  const out = new Map<Alias, YamlNode>();
  visit(doc, {
    Node(_key, node) {
      if (isAlias(node)) {
        const target = last.get(node.source);
        if (target) out.set(node, target);
      } else if (isNode(node) && typeof node.anchor === 'string' && node.anchor !== '') {
        last.set(node.anchor, node);
      }
    },
  });
  return out;
}

function pathKey(path: KeyPath): string {
  return JSON.stringify(path.map((p) => (typeof p === 'number' ? p : String(p))));
}

function lineOf(ctx: WalkCtx, node: unknown): number | undefined {
  const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
  if (!range) return undefined;
  return ctx.lc.linePos(range[0]).line;
}

/** Assign without ever touching the prototype (a `__proto__` key is just a key). */
function define(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

function scalarKind(s: Scalar): Kind {
  const v = s.value;
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'number' || typeof v === 'bigint') return 'number';
  if (typeof v === 'string') return 'string';
  return 'value';
}

function scalarValue(s: Scalar): unknown {
  const v = s.value;
  if (v === null || v === undefined) return null;
  if (typeof v === 'boolean') return new YamlBool(v, s.source ?? String(v));
  if (typeof v === 'string') return v;
  // Numbers, dates (YAML 1.1 timestamps), ...: keep the text as written.
  if (typeof s.source === 'string') return s.source;
  if (typeof v === 'number' || typeof v === 'bigint') return v.toString();
  return JSON.stringify(v) ?? '';
}

function isMergeKey(key: unknown): boolean {
  return isScalar(key) && (typeof key.value === 'symbol' || (key.value === '<<' && key.type === 'PLAIN'));
}

function resolveNode(ctx: WalkCtx, node: unknown, path: KeyPath): unknown {
  if (!isAlias(node)) return node;
  if (++ctx.aliases > MAX_ALIAS_EXPANSIONS) {
    const line = lineOf(ctx, node) ?? 1;
    throw new DecodeFailure(`line ${line}: too many alias expansions`, line, formatPath(path));
  }
  const target = ctx.targets.get(node);
  if (target === undefined) {
    throw new DecodeFailure(
      `line ${lineOf(ctx, node) ?? 1}: unresolved alias *${node.source} at ${formatPath(path) || 'top level'}`,
      lineOf(ctx, node),
      formatPath(path),
    );
  }
  return target;
}

function walk(ctx: WalkCtx, raw: unknown, path: KeyPath, depth: number): unknown {
  if (depth > 64) {
    throw new DecodeFailure(
      `line ${lineOf(ctx, raw) ?? 1}: document nested too deeply at ${formatPath(path)}`,
      lineOf(ctx, raw),
      formatPath(path),
    );
  }
  const node = resolveNode(ctx, raw, path);
  const pk = pathKey(path);
  if (node === null || node === undefined) {
    ctx.kinds.set(pk, 'null');
    return null;
  }
  if (isScalar(node)) {
    ctx.kinds.set(pk, scalarKind(node));
    return scalarValue(node);
  }
  if (isSeq(node)) {
    ctx.kinds.set(pk, 'list');
    return node.items.map((item, i) => {
      const line = lineOf(ctx, item);
      if (line !== undefined) ctx.lines.set(pathKey([...path, i]), line);
      return walk(ctx, item, [...path, i], depth + 1);
    });
  }
  if (isMap(node)) {
    ctx.kinds.set(pk, 'mapping');
    const out: Record<string, unknown> = {};
    // Merge keys first, so explicit keys (and their lines) override what they bring in.
    for (const pair of node.items) {
      if (!isPair(pair) || !isMergeKey(pair.key)) continue;
      const src = resolveNode(ctx, pair.value, path);
      const sources = isSeq(src) ? src.items.map((s) => resolveNode(ctx, s, path)) : [src];
      for (const s of sources) {
        if (!isMap(s)) {
          const line = lineOf(ctx, pair.key) ?? 1;
          throw new DecodeFailure(
            `line ${line}: merge key << at ${formatPath(path) || 'top level'} needs a mapping`,
            line,
            formatPath(path),
          );
        }
        const merged = walk(ctx, s, path, depth + 1) as Record<string, unknown>;
        for (const [k, v] of Object.entries(merged)) if (!Object.hasOwn(out, k)) define(out, k, v);
      }
    }
    ctx.kinds.set(pk, 'mapping');
    const seen = new Set<string>();
    for (const pair of node.items) {
      if (isMergeKey(pair.key)) continue;
      const keyNode = resolveNode(ctx, pair.key, path);
      const line = lineOf(ctx, pair.key) ?? lineOf(ctx, pair.value) ?? 1;
      if (!isScalar(keyNode)) {
        throw new DecodeFailure(
          `line ${line}: a key at ${formatPath(path) || 'top level'} must be a plain value`,
          line,
          formatPath(path),
        );
      }
      const v = keyNode.value;
      const key = typeof v === 'string' ? v : (keyNode.source ?? String(v));
      const childPath = [...path, key];
      if (seen.has(key)) {
        throw new DecodeFailure(
          `line ${line}: duplicate key ${formatPath(childPath)}`,
          line,
          formatPath(childPath),
        );
      }
      seen.add(key);
      ctx.lines.set(pathKey(childPath), line);
      define(out, key, walk(ctx, pair.value, childPath, depth + 1));
    }
    return out;
  }
  ctx.kinds.set(pk, 'value');
  return null;
}

/** The decoded value plus where each key path came from. */
export interface DecodedYaml {
  /** plain JS: objects, arrays, strings, YamlBool, null; `undefined` for an empty document */
  value: unknown;
  lineOf(path: KeyPath): number;
  kindOf(path: KeyPath): string;
}

/**
 * The largest config or monitor file sonde reads, in bytes (4 MiB): about twenty thousand
 * monitors. Decoding takes memory in proportion to the text, so a larger file is refused
 * before it is parsed (and, by the readers, before it is read).
 */
export const MAX_YAML_BYTES = 4 * 1024 * 1024;

/** `<n> bytes, more than the limit of 4194304 (4 MiB)` */
export function tooLarge(bytes: number): string {
  return `${bytes} bytes, more than the limit of ${MAX_YAML_BYTES} (4 MiB)`;
}

/**
 * Parse YAML text into plain values; syntax errors, duplicate keys and a text over
 * MAX_YAML_BYTES throw a DecodeFailure.
 */
export function decodeYaml(text: string): DecodedYaml {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_YAML_BYTES) throw new DecodeFailure(tooLarge(bytes), undefined, undefined);
  const lc = new LineCounter();
  const doc = parseDocument(text, {
    lineCounter: lc,
    prettyErrors: false,
    uniqueKeys: false, // we detect duplicates ourselves, with the key path
    version: '1.1',
  });
  const err = doc.errors[0];
  if (err) {
    const line = lc.linePos(err.pos[0]).line || 1;
    const msg = (err.message.split('\n')[0] ?? err.code).replace(/\s+at line \d+, column \d+:?$/, '');
    throw new DecodeFailure(`line ${line}: ${msg}`, line, undefined);
  }
  const ctx: WalkCtx = { targets: aliasTargets(doc), lc, lines: new Map(), kinds: new Map(), aliases: 0 };
  const contents = doc.contents as YamlNode | null;
  const value = contents === null ? undefined : walk(ctx, contents, [], 0);
  return {
    value,
    lineOf(path: KeyPath): number {
      for (let n = path.length; n > 0; n--) {
        const l = ctx.lines.get(pathKey(path.slice(0, n)));
        if (l !== undefined) return l;
      }
      return lineOf(ctx, contents) ?? 1;
    },
    kindOf(path: KeyPath): string {
      return ctx.kinds.get(pathKey(path)) ?? 'nothing';
    },
  };
}

const EXPECTED: Record<string, string> = {
  object: 'mapping',
  record: 'mapping',
  array: 'list',
  string: 'string',
  boolean: 'boolean',
};

interface Candidate {
  line: number;
  key: string;
  text: string;
}

/** The keys the section at `path` has (for "did you mean"); [] when it cannot tell. */
export function knownKeysAt(schema: SchemaNode, path: KeyPath): string[] {
  let s: SchemaNode | undefined = schema;
  for (const p of path) {
    if (s === undefined) break;
    s = unlazy(s);
    if (typeof p === 'number') s = s.type === 'array' ? s.element : undefined;
    else if (s.type === 'object') s = Object.hasOwn(s.shape, String(p)) ? s.shape[String(p)] : undefined;
    else s = s.type === 'record' ? s.value : undefined;
  }
  if (s === undefined) return [];
  s = unlazy(s);
  return s.type === 'object' ? Object.keys(s.shape) : [];
}

function candidates(issue: SchemaIssue, decoded: DecodedYaml, schema: SchemaNode): Candidate[] {
  const path = issue.path;
  if (issue.code === 'unrecognized_keys') {
    const known = knownKeysAt(schema, path);
    return issue.keys.map((k) => {
      const p = [...path, k];
      const key = formatPath(p);
      return { line: decoded.lineOf(p), key, text: `unknown key ${key}${didYouMean(k, known)}` };
    });
  }
  const key = formatPath(path);
  const line = decoded.lineOf(path);
  const got = decoded.kindOf(path);
  const want = EXPECTED[issue.expected] ?? issue.expected;
  if (key === '') return [{ line, key, text: `expected a ${want} at the top level, got ${got}` }];
  if (got === 'nothing') return [{ line, key, text: `missing key ${key}` }];
  return [{ line, key, text: `wrong type for key ${key}: expected ${want}, got ${got}` }];
}

/** Remove `undefined` members. */
export function pruneUndefined<T>(v: T): T {
  if (Array.isArray(v)) return v.map((x: unknown) => pruneUndefined(x)) as T;
  if (v !== null && typeof v === 'object' && !(v instanceof YamlBool)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (x !== undefined) define(out, k, pruneUndefined(x));
    }
    return out as T;
  }
  return v;
}

/**
 * Validate decoded YAML against a section of the config schema. Failure throws a DecodeFailure naming the
 * line and key path of the earliest problem in the file, e.g.
 * `line 7: unknown key monitors[0].hostnme`. An empty document yields `empty`.
 */
export function validateDecoded<T>(decoded: DecodedYaml, schema: SchemaNode, empty: T): T {
  if (decoded.value === undefined || decoded.value === null) return empty;
  const result = checkSchema(schema, decoded.value);
  if (result.ok) return result.value as T;
  let best: Candidate | undefined;
  for (const issue of result.issues) {
    for (const c of candidates(issue, decoded, schema)) if (!best || c.line < best.line) best = c;
  }
  if (!best) throw new DecodeFailure('line 1: invalid document', 1, undefined);
  throw new DecodeFailure(`line ${best.line}: ${best.text}`, best.line, best.key);
}

/** decodeYaml then validateDecoded. */
export function strictDecode<T>(text: string, schema: SchemaNode, empty: T): T {
  return validateDecoded(decodeYaml(text), schema, empty);
}
