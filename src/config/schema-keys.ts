/**
 * The config file's key names, read from its zod schema (core/config-schema.ts) rather than
 * from a second list: whether a dotted key such as `api.read-only`,
 * `plans.change.standby.plan` or `monitor-loader.aws.regions` exists. The documentation test
 * checks every key the docs name with it.
 *
 * Paths are key names. `*` and `<name>` stand for any key of a map or object (`api.tls.*`,
 * `plans.change.<state>.after`). A list is looked through (`monitors.id` is a key of a list
 * item). A map of strings (`tags`, `meta`, sink options, `exporter.flags`) takes any one key,
 * dots included (`exporter.flags.web.listen-address`): what its values mean is its owner's.
 */
import type * as z from 'zod';
import { configSchema } from '../core/config-schema.js';

/** The parts of a zod schema's definition that the walk reads. */
interface Def {
  type: string;
  in?: z.ZodType;
  out?: z.ZodType;
  innerType?: z.ZodType;
  getter?: () => z.ZodType;
  shape?: Record<string, z.ZodType>;
  valueType?: z.ZodType;
  element?: z.ZodType;
}

const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

/** A lazy schema's target, built once (its getter makes a new object on every call). */
const lazyTargets = new WeakMap<z.ZodType, z.ZodType>();

function lazyTarget(s: z.ZodType, getter: () => z.ZodType): z.ZodType {
  let t = lazyTargets.get(s);
  if (t === undefined) lazyTargets.set(s, (t = getter()));
  return t;
}

/** The schema under its wrappers: preprocessing, optional, lazy. */
function unwrap(s: z.ZodType): z.ZodType {
  for (;;) {
    const def = defOf(s);
    if (def.type === 'pipe' && def.out) s = def.out;
    else if ((def.type === 'optional' || def.type === 'nullable' || def.type === 'default') && def.innerType)
      s = def.innerType;
    else if (def.type === 'lazy' && def.getter) s = lazyTarget(s, def.getter);
    else return s;
  }
}

/** A key segment that stands for any key. */
export function isWildcard(segment: string): boolean {
  return segment === '*' || /^<[^<>]+>$/.test(segment);
}

/** The kind of node a path ends on: a section (object), a map, a list or a value. */
export type KeyKind = 'section' | 'map' | 'list' | 'value';

function kindOf(s: z.ZodType): KeyKind {
  const type = defOf(unwrap(s)).type;
  return type === 'object' ? 'section' : type === 'record' ? 'map' : type === 'array' ? 'list' : 'value';
}

/** The node at `path` below `from`, or undefined when a segment names no key. */
function walk(from: z.ZodType, path: readonly string[]): z.ZodType | undefined {
  let node = from;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i] ?? '';
    let s = unwrap(node);
    while (defOf(s).type === 'array' && defOf(s).element) s = unwrap(defOf(s).element as z.ZodType);
    const def = defOf(s);
    if (def.type === 'object' && def.shape) {
      const shape = def.shape;
      const keys = Object.keys(shape);
      // A wildcard over a section: any of its keys, tried in turn for the rest of the path.
      if (isWildcard(seg))
        return keys.map((k) => walk(shape[k] as z.ZodType, path.slice(i + 1))).find(Boolean);
      if (!Object.hasOwn(shape, seg)) return undefined;
      node = shape[seg] as z.ZodType;
    } else if (def.type === 'record' && def.valueType) {
      // A map of plain values takes the rest of the path as one key (dots included).
      if (kindOf(def.valueType) === 'value') return def.valueType;
      node = def.valueType;
    } else return undefined;
  }
  return node;
}

/** Whether `path` (key names) is a key of the config file, from its top level. */
export function configKeyKind(path: readonly string[]): KeyKind | undefined {
  const node = walk(configSchema, path);
  return node === undefined ? undefined : kindOf(node);
}

/** Every section (object schema) of the config, each once: the top level, monitors, plans, … */
function sections(): z.ZodType[] {
  const seen = new Set<unknown>();
  const out: z.ZodType[] = [];
  const visit = (s: z.ZodType): void => {
    const u = unwrap(s);
    const def = defOf(u);
    if (seen.has(def)) return;
    seen.add(def);
    if (def.type === 'object' && def.shape) {
      out.push(u);
      for (const child of Object.values(def.shape)) visit(child);
    } else if (def.type === 'record' && def.valueType) visit(def.valueType);
    else if (def.type === 'array' && def.element) visit(def.element);
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
  return Object.keys(defOf(unwrap(configSchema)).shape ?? {});
}
