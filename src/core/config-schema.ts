/**
 * Strict zod schemas of the config file; the config types in core/config.ts are inferred
 * from them. Every object is strict: an unknown key is an error. The input is what
 * config/decode.ts produces: strings (any scalar's text), YamlBool for YAML booleans, null
 * for empty values, arrays and plain objects.
 *
 * Choices, following Go's yaml.v2 that Blip uses:
 * - a string key accepts any scalar and keeps its text (`port: 3306`, `freq: 5`, `env: yes`);
 * - a boolean key accepts only YAML booleans (`true`, `false`, and 1.1's `yes`/`no`/`on`/`off`);
 * - an empty value (`key:` or `~`) means "not set"; inside string maps (tags, meta, sink
 *   options, exporter flags) and string lists it is the empty string; a sink written with no
 *   options (`log:`) is that sink with no options.
 *
 * Lives in core (importing only zod) so that core/config.ts can infer its types here.
 */
import * as z from 'zod';

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

const nullToUndefined = (v: unknown): unknown => (v === null ? undefined : v);
const scalarText = (v: unknown): unknown => (v instanceof YamlBool ? v.text : v);

const str = z.preprocess(scalarText, z.string());
const bool = z.preprocess((v) => (v instanceof YamlBool ? v.value : v), z.boolean());

/** Optional key: absent or null → undefined. */
function opt<T extends z.ZodType>(s: T) {
  return z.preprocess(nullToUndefined, s.optional());
}

const mapValue = z.preprocess((v) => (v === null ? '' : scalarText(v)), z.string());
const strMap = z.record(z.string(), mapValue);
const strList = z.array(mapValue);

export const apiSchema = z.strictObject({
  bind: opt(str),
  disable: opt(bool),
  'allowed-hosts': opt(strList),
  'token-file': opt(str),
  tls: opt(z.strictObject({ cert: opt(str), key: opt(str), 'client-ca': opt(str) })),
  /** Refuse every state change (403); the web page hides its actions. */
  'read-only': opt(bool),
  /** The web page's chart history for every monitor (docs/ui.md); default true. */
  'ui-history': opt(bool),
});
export const httpSchema = z.strictObject({ proxy: opt(str) });
/** The agent-wide multi-target listener (`/probe`, `/metrics`, `/targets`); off without `bind`. */
export const probeSchema = z.strictObject({ bind: opt(str), 'web-config-file': opt(str) });
export const monitorLoaderSchema = z.strictObject({
  files: opt(strList),
  'stop-loss': opt(str),
  /** RDS discovery: regions to list, and optional filters on the instances found. */
  aws: opt(z.strictObject({ regions: opt(strList), engines: opt(strList), tags: opt(strMap) })),
  local: opt(
    z.strictObject({ 'disable-auto': opt(bool), 'disable-auto-root': opt(bool), candidates: opt(strList) }),
  ),
});
/** sink name → option → value */
export const sinksSchema = z.record(
  z.string(),
  z.preprocess((v) => (v === null ? {} : v), strMap),
);
export const awsSchema = z.strictObject({
  'iam-auth': opt(bool),
  'password-secret': opt(str),
  region: opt(str),
  'disable-auto-region': opt(bool),
  'disable-auto-tls': opt(bool),
});
export const exporterSchema = z.strictObject({
  mode: opt(str),
  plan: opt(str),
  flags: opt(strMap),
  'token-file': opt(str),
});
export const heartbeatSchema = z.strictObject({
  freq: opt(str),
  'source-id': opt(str),
  role: opt(str),
  table: opt(str),
});
/** Placeholder section with no keys yet. */
export const haSchema = z.strictObject({});

const mysqlShape = {
  hostname: opt(str),
  mycnf: opt(str),
  password: opt(str),
  'password-file': opt(str),
  socket: opt(str),
  'timeout-connect': opt(str),
  username: opt(str),
};
export const mysqlSchema = z.strictObject(mysqlShape);

export const planChangeStateSchema = z.strictObject({ after: opt(str), plan: opt(str) });
export const planChangeSchema = z.strictObject({
  offline: opt(planChangeStateSchema),
  standby: opt(planChangeStateSchema),
  'read-only': opt(planChangeStateSchema),
  active: opt(planChangeStateSchema),
});

export const tlsSchema = z.strictObject({
  ca: opt(str),
  cert: opt(str),
  key: opt(str),
  'skip-verify': opt(bool),
  disable: opt(bool),
});

// plans.monitor is a monitor object, whose own `plans` may (syntactically) hold a monitor.
// The two schemas refer to each other lazily; their types are the inferred bases plus the
// one recursive key each, written out below.

/** `plans` without its `monitor` key. */
const plansBase = z.strictObject({
  files: opt(strList),
  table: opt(str),
  'disable-default-plans': opt(bool),
  change: opt(planChangeSchema),
});

/** A monitor without its `plans` key: mysql keys at top level plus the sub-sections. */
const monitorBase = z.strictObject({
  id: opt(str),
  /** Blip's: which database the monitor watches; sonde watches `mysql` (MySQL, MariaDB) only. */
  'database-type': opt(str),
  /** Blip's: settings of the database type; `mysql` reads the monitor's own keys, so none are used. */
  'database-config': opt(strMap),
  ...mysqlShape,
  tags: opt(strMap),
  meta: opt(strMap),
  plan: opt(str),
  /** This monitor's chart history for the web page; default true. */
  'ui-history': opt(bool),
  aws: opt(awsSchema),
  exporter: opt(exporterSchema),
  ha: opt(haSchema),
  heartbeat: opt(heartbeatSchema),
  sinks: opt(sinksSchema),
  tls: opt(tlsSchema),
});

/** The `plans` section (top level or of a monitor). */
export type PlansShape = z.output<typeof plansBase> & { monitor?: MonitorShape | undefined };

/** One monitor as written in the config. */
export type MonitorShape = z.output<typeof monitorBase> & { plans?: PlansShape | undefined };

export const plansSchema: z.ZodType<PlansShape> = z.lazy(() =>
  plansBase.extend({ monitor: opt(monitorSchema) }),
);

/** One monitor: mysql keys at top level plus the sub-sections. */
export const monitorSchema: z.ZodType<MonitorShape> = z.lazy(() =>
  monitorBase.extend({ plans: opt(plansSchema) }),
);

/** The whole config file. */
export const configSchema = z.strictObject({
  api: opt(apiSchema),
  http: opt(httpSchema),
  probe: opt(probeSchema),
  'monitor-loader': opt(monitorLoaderSchema),
  /** ES modules that register collectors, sinks and translators (docs/plugins.md). */
  plugins: opt(strList),
  sinks: opt(sinksSchema),
  aws: opt(awsSchema),
  exporter: opt(exporterSchema),
  ha: opt(haSchema),
  heartbeat: opt(heartbeatSchema),
  mysql: opt(mysqlSchema),
  plans: opt(plansSchema),
  tags: opt(strMap),
  tls: opt(tlsSchema),
  monitors: opt(z.array(monitorSchema)),
});

/**
 * A monitor file: either `monitors: [...]` or one monitor object (the second form is the
 * only one Blip knows).
 */
export const monitorListFileSchema = z.strictObject({ monitors: opt(z.array(monitorSchema)) });
