/**
 * Checks decoded YAML against the config schema (core/config-schema.ts): the value with
 * every key that is not set left out, or the problems found, each with its key path.
 *
 * Every problem in the document is reported, in document order within a section: its keys
 * in the schema's order first, then its unknown keys; config/decode.ts picks the one on the
 * earliest line. A section is any object (`isObject`), a map only a plain one (`isPlainMap`),
 * and a map never yields a `__proto__` key.
 */
import { YamlBool } from '../core/config-schema.js';
import type { ObjectNode, SchemaNode, Shape } from '../core/config-schema.js';

/** A key path: map keys and list indexes. */
export type IssuePath = readonly (string | number)[];

/** What the schema wanted where the value is of another kind. */
export type Expected = 'object' | 'record' | 'array' | 'string' | 'boolean';

export type SchemaIssue =
  | { code: 'invalid_type'; path: IssuePath; expected: Expected }
  | { code: 'unrecognized_keys'; path: IssuePath; keys: string[] };

export type CheckResult = { ok: true; value: unknown } | { ok: false; issues: SchemaIssue[] };

/** Any non-null object that is not an array: what a section accepts. */
function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An object made by `{}` or `Object.create(null)`, even with its own `constructor` key. */
export function isPlainMap(v: unknown): v is Record<string, unknown> {
  if (!isObject(v)) return false;
  const ctor = v.constructor;
  if (ctor === undefined || typeof ctor !== 'function') return true;
  const proto: unknown = (ctor as { prototype?: unknown }).prototype;
  return isObject(proto) && Object.hasOwn(proto, 'isPrototypeOf');
}

/** Assign without ever touching the prototype (a `__proto__` key is just a key). */
function define(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The node under a lazy one. */
export function resolveNode(node: SchemaNode): SchemaNode {
  while (node.type === 'lazy') node = node.get();
  return node;
}

function checkObject(
  node: ObjectNode<Shape>,
  input: unknown,
  path: IssuePath,
  issues: SchemaIssue[],
): Record<string, unknown> | undefined {
  if (!isObject(input)) {
    issues.push({ code: 'invalid_type', path, expected: 'object' });
    return undefined;
  }
  const out: Record<string, unknown> = {};
  const shape = node.shape;
  for (const key of Object.keys(shape)) {
    // Every key is optional: absent, undefined or null is "not set".
    if (!(key in input)) continue;
    const v = input[key];
    if (v === null || v === undefined) continue;
    const r = check(shape[key] as SchemaNode, v, [...path, key], issues);
    if (r !== undefined) define(out, key, r);
  }
  const unknown: string[] = [];
  for (const key in input) if (!Object.hasOwn(shape, key)) unknown.push(key);
  if (unknown.length > 0) issues.push({ code: 'unrecognized_keys', path, keys: unknown });
  return out;
}

function checkRecord(
  value: SchemaNode,
  input: unknown,
  path: IssuePath,
  issues: SchemaIssue[],
): Record<string, unknown> | undefined {
  if (!isPlainMap(input)) {
    issues.push({ code: 'invalid_type', path, expected: 'record' });
    return undefined;
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(input)) {
    if (key === '__proto__') continue;
    const r = check(value, input[key], [...path, key], issues);
    if (r !== undefined) define(out, key, r);
  }
  return out;
}

/** The checked value of `input` at `path` (undefined when it failed), problems into `issues`. */
function check(node: SchemaNode, input: unknown, path: IssuePath, issues: SchemaIssue[]): unknown {
  switch (node.type) {
    case 'lazy':
      return check(node.get(), input, path, issues);
    case 'string': {
      const v = input === null && node.inMap ? '' : input instanceof YamlBool ? input.text : input;
      if (typeof v === 'string') return v;
      issues.push({ code: 'invalid_type', path, expected: 'string' });
      return undefined;
    }
    case 'boolean': {
      const v = input instanceof YamlBool ? input.value : input;
      if (typeof v === 'boolean') return v;
      issues.push({ code: 'invalid_type', path, expected: 'boolean' });
      return undefined;
    }
    case 'object':
      return checkObject(node, input, path, issues);
    case 'record':
      return checkRecord(node.value, input === null && node.nullAsEmpty ? {} : input, path, issues);
    case 'array':
      if (!Array.isArray(input)) {
        issues.push({ code: 'invalid_type', path, expected: 'array' });
        return undefined;
      }
      return input.map((item: unknown, i) => check(node.element, item, [...path, i], issues));
  }
}

/** Check `input` (decoded YAML, not null) against `schema`. */
export function checkSchema(schema: SchemaNode, input: unknown): CheckResult {
  const issues: SchemaIssue[] = [];
  const value = check(schema, input, [], issues);
  return issues.length === 0 ? { ok: true, value } : { ok: false, issues };
}
