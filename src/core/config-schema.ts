/**
 * The config file's schema, written as data: each section is a strict object (an unknown key
 * is an error) of optional keys, each key a string, a boolean, a map of strings, a list or a
 * nested section. config/schema-check.ts checks decoded YAML against it, config/decode.ts
 * turns its findings into one-line errors, config/schema-keys.ts answers which keys exist,
 * and the config types in core/config.ts are derived from it (`Out<…>`), so each key is
 * declared once. The input is what config/decode.ts produces: strings (any scalar's text),
 * YamlBool for YAML booleans, null for empty values, arrays and plain objects.
 *
 * Choices, following Go's yaml.v2 that Blip uses:
 * - a string key accepts any scalar and keeps its text (`port: 3306`, `freq: 5`, `env: yes`);
 * - a boolean key accepts only YAML booleans (`true`, `false`, and 1.1's `yes`/`no`/`on`/`off`);
 * - an empty value (`key:` or `~`) means "not set"; inside string maps (tags, meta, sink
 *   options, exporter flags) and string lists it is the empty string; a sink written with no
 *   options (`log:`) is that sink with no options.
 *
 * Why written by hand rather than with a schema library: the schema has six kinds of node
 * and one rule per kind, and a general validator loaded at every start cost more memory and
 * start time than the rest of the config code together (docs/performance.md).
 */

/**
 * A YAML boolean as decoded: its value for boolean keys and its source text for string keys
 * (`enabled: yes` as a tag value is the string `yes`).
 */
export class YamlBool {
  constructor(
    readonly value: boolean,
    readonly text: string,
  ) {}
}

/**
 * One node of the schema. Every key of a section is optional (absent or null = not set).
 * - `string`: any scalar's text; in a map or list (`inMap`), null is the empty string.
 * - `boolean`: a YAML boolean.
 * - `object`: a section of named keys, strict.
 * - `record`: a map of any keys to one kind of value; `nullAsEmpty`: a null value is `{}`.
 * - `array`: a list of one kind of item.
 * - `lazy`: a node defined later (the monitor and plans sections refer to each other).
 */
export type SchemaNode =
  | StringNode
  | BooleanNode
  | ObjectNode<Shape>
  | RecordNode<SchemaNode>
  | ArrayNode<SchemaNode>
  | LazyNode<SchemaNode>;

export interface StringNode {
  readonly type: 'string';
  readonly inMap: boolean;
}
export interface BooleanNode {
  readonly type: 'boolean';
}
export type Shape = Readonly<Record<string, SchemaNode>>;
export interface ObjectNode<S extends Shape> {
  readonly type: 'object';
  readonly shape: S;
}
export interface RecordNode<V extends SchemaNode> {
  readonly type: 'record';
  readonly value: V;
  readonly nullAsEmpty: boolean;
}
export interface ArrayNode<E extends SchemaNode> {
  readonly type: 'array';
  readonly element: E;
}
export interface LazyNode<T extends SchemaNode> {
  readonly type: 'lazy';
  readonly get: () => T;
}

/** The value a node yields once checked: optional keys may be absent. */
export type Out<N> = N extends StringNode
  ? string
  : N extends BooleanNode
    ? boolean
    : N extends ObjectNode<infer S>
      ? { [K in keyof S]?: Out<S[K]> | undefined }
      : N extends RecordNode<infer V>
        ? Record<string, Out<V>>
        : N extends ArrayNode<infer E>
          ? Out<E>[]
          : never;

const str: StringNode = { type: 'string', inMap: false };
const bool: BooleanNode = { type: 'boolean' };
const mapValue: StringNode = { type: 'string', inMap: true };

function section<S extends Shape>(shape: S): ObjectNode<S> {
  return { type: 'object', shape };
}
function list<E extends SchemaNode>(element: E): ArrayNode<E> {
  return { type: 'array', element };
}

const strMap: RecordNode<StringNode> = { type: 'record', value: mapValue, nullAsEmpty: false };
const strList = list(mapValue);

export const apiSchema = section({
  bind: str,
  disable: bool,
  'allowed-hosts': strList,
  'token-file': str,
  tls: section({ cert: str, key: str, 'client-ca': str }),
  /** Refuse every state change (403); the web page hides its actions. */
  'read-only': bool,
  /** The web page's chart history for every monitor (docs/ui.md); default true. */
  'ui-history': bool,
});
export const httpSchema = section({ proxy: str });
/** The agent-wide multi-target listener (`/probe`, `/metrics`, `/targets`); off without `bind`. */
export const probeSchema = section({ bind: str, 'web-config-file': str });
export const monitorLoaderSchema = section({
  files: strList,
  'stop-loss': str,
  /** RDS discovery: regions to list, and optional filters on the instances found. */
  aws: section({ regions: strList, engines: strList, tags: strMap }),
  local: section({ 'disable-auto': bool, 'disable-auto-root': bool, candidates: strList }),
});
/** sink name → option → value */
export const sinksSchema: RecordNode<RecordNode<StringNode>> = {
  type: 'record',
  value: { ...strMap, nullAsEmpty: true },
  nullAsEmpty: false,
};
export const awsSchema = section({
  'iam-auth': bool,
  'password-secret': str,
  region: str,
  'disable-auto-region': bool,
  'disable-auto-tls': bool,
});
export const exporterSchema = section({
  mode: str,
  plan: str,
  flags: strMap,
  'token-file': str,
});
export const heartbeatSchema = section({
  freq: str,
  'source-id': str,
  role: str,
  table: str,
});
/** Placeholder section with no keys yet. */
export const haSchema = section({});

const mysqlShape = {
  hostname: str,
  mycnf: str,
  password: str,
  'password-file': str,
  socket: str,
  'timeout-connect': str,
  username: str,
};
export const mysqlSchema = section(mysqlShape);

export const planChangeStateSchema = section({ after: str, plan: str });
export const planChangeSchema = section({
  offline: planChangeStateSchema,
  standby: planChangeStateSchema,
  'read-only': planChangeStateSchema,
  active: planChangeStateSchema,
});

export const tlsSchema = section({
  ca: str,
  cert: str,
  key: str,
  'skip-verify': bool,
  disable: bool,
});

// plans.monitor is a monitor object, whose own `plans` may (syntactically) hold a monitor.
// The two sections refer to each other lazily; their types are the derived bases plus the
// one recursive key each, written out below.

/** `plans` without its `monitor` key. */
const plansBaseShape = {
  files: strList,
  table: str,
  'disable-default-plans': bool,
  change: planChangeSchema,
};

/** A monitor without its `plans` key: mysql keys at top level plus the sub-sections. */
const monitorBaseShape = {
  id: str,
  /** Blip's: which database the monitor watches; sonde watches `mysql` (MySQL, MariaDB) only. */
  'database-type': str,
  /** Blip's: settings of the database type; `mysql` reads the monitor's own keys, so none are used. */
  'database-config': strMap,
  ...mysqlShape,
  tags: strMap,
  meta: strMap,
  plan: str,
  /** This monitor's chart history for the web page; default true. */
  'ui-history': bool,
  aws: awsSchema,
  exporter: exporterSchema,
  ha: haSchema,
  heartbeat: heartbeatSchema,
  sinks: sinksSchema,
  tls: tlsSchema,
};

/** The `plans` section (top level or of a monitor). */
export type PlansShape = Out<ObjectNode<typeof plansBaseShape>> & { monitor?: MonitorShape | undefined };

/** One monitor as written in the config. */
export type MonitorShape = Out<ObjectNode<typeof monitorBaseShape>> & { plans?: PlansShape | undefined };

/** The `plans` section: its `monitor` key last. */
export const plansSchema: LazyNode<ObjectNode<Shape>> = {
  type: 'lazy',
  get: () => plansSection,
};

/** One monitor: mysql keys at top level plus the sub-sections, `plans` last. */
export const monitorSchema: LazyNode<ObjectNode<Shape>> = {
  type: 'lazy',
  get: () => monitorSection,
};

const plansSection = section({ ...plansBaseShape, monitor: monitorSchema });
const monitorSection = section({ ...monitorBaseShape, plans: plansSchema });

/** The whole config file. */
export const configSchema = section({
  api: apiSchema,
  http: httpSchema,
  probe: probeSchema,
  'monitor-loader': monitorLoaderSchema,
  /** ES modules that register collectors, sinks and translators (docs/plugins.md). */
  plugins: strList,
  sinks: sinksSchema,
  aws: awsSchema,
  exporter: exporterSchema,
  ha: haSchema,
  heartbeat: heartbeatSchema,
  mysql: mysqlSchema,
  plans: plansSchema,
  tags: strMap,
  tls: tlsSchema,
  monitors: list(monitorSchema),
});

/** The config file's type: `plans` and `monitors` with their recursive types. */
export type ConfigShape = Omit<Out<typeof configSchema>, 'plans' | 'monitors'> & {
  plans?: PlansShape | undefined;
  monitors?: MonitorShape[] | undefined;
};

/**
 * A monitor file: either `monitors: [...]` or one monitor object (the second form is the
 * only one Blip knows).
 */
export const monitorListFileSchema = section({ monitors: list(monitorSchema) });
