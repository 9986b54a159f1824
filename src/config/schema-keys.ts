/**
 * The config file's key names, read from its schema (core/config-schema.ts) rather than
 * from a second list: whether a dotted key such as `api.read-only`,
 * `plans.change.standby.plan` or `monitor-loader.aws.regions` exists. The documentation test
 * checks every key the docs name with it.
 *
 * Paths are key names. `*` and `<name>` stand for any key of a map or object (`api.tls.*`,
 * `plans.change.<state>.after`). A list is looked through (`monitors.id` is a key of a list
 * item). A map of strings (`tags`, `meta`, sink options, `exporter.flags`) takes any one key,
 * dots included (`exporter.flags.web.listen-address`): what its values mean is its owner's.
 */
import { configSchema } from '../core/config-schema.js';
import type { SchemaNode } from '../core/config-schema.js';
import { resolveNode as unwrap } from './schema-check.js';

/** A key segment that stands for any key. */
export function isWildcard(segment: string): boolean {
  return segment === '*' || /^<[^<>]+>$/.test(segment);
}

/** The kind of node a path ends on: a section (object), a map, a list or a value. */
export type KeyKind = 'section' | 'map' | 'list' | 'value';

function kindOf(s: SchemaNode): KeyKind {
  const type = unwrap(s).type;
  return type === 'object' ? 'section' : type === 'record' ? 'map' : type === 'array' ? 'list' : 'value';
}

/** The node at `path` below `from`, or undefined when a segment names no key. */
function walk(from: SchemaNode, path: readonly string[]): SchemaNode | undefined {
  let node = from;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i] ?? '';
    let s = unwrap(node);
    while (s.type === 'array') s = unwrap(s.element);
    if (s.type === 'object') {
      const shape = s.shape;
      const keys = Object.keys(shape);
      // A wildcard over a section: any of its keys, tried in turn for the rest of the path.
      if (isWildcard(seg))
        return keys.map((k) => walk(shape[k] as SchemaNode, path.slice(i + 1))).find(Boolean);
      if (!Object.hasOwn(shape, seg)) return undefined;
      node = shape[seg] as SchemaNode;
    } else if (s.type === 'record') {
      // A map of plain values takes the rest of the path as one key (dots included).
      if (kindOf(s.value) === 'value') return s.value;
      node = s.value;
    } else return undefined;
  }
  return node;
}

/** Whether `path` (key names) is a key of the config file, from its top level. */
export function configKeyKind(path: readonly string[]): KeyKind | undefined {
  const node = walk(configSchema, path);
  return node === undefined ? undefined : kindOf(node);
}

/** Every section (object node) of the config, each once: the top level, monitors, plans, … */
function sections(): SchemaNode[] {
  const seen = new Set<SchemaNode>();
  const out: SchemaNode[] = [];
  const visit = (s: SchemaNode): void => {
    const u = unwrap(s);
    if (seen.has(u)) return;
    seen.add(u);
    if (u.type === 'object') {
      out.push(u);
      for (const child of Object.values(u.shape)) visit(child);
    } else if (u.type === 'record') visit(u.value);
    else if (u.type === 'array') visit(u.element);
  };
  visit(configSchema);
  return out;
}

/**
 * Whether `path` is a key of some section of the config, top level or nested: what docs
 * write inside a section's own text (`aws.regions` under `monitor-loader`, `change.<state>.plan`
 * under `plans`, `tls.cert` under `api`).
 */
export function configKeyKindAnywhere(path: readonly string[]): KeyKind | undefined {
  for (const s of sections()) {
    const node = walk(s, path);
    if (node !== undefined) return kindOf(node);
  }
  return undefined;
}

/** The top-level sections of the config file. */
export function configSections(): string[] {
  return Object.keys(configSchema.shape);
}
