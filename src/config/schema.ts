/**
 * Strict zod schemas of the config file (spec config.md §4). Every object is strict: an
 * unknown key is an error. The input is what decode.ts produces: strings (any scalar's text),
 * YamlBool for YAML booleans, null for empty values, arrays and plain objects.
 *
 * Choices, following Go's yaml.v2 that Blip uses:
 * - a string key accepts any scalar and keeps its text (`port: 3306`, `freq: 5`, `env: yes`);
 * - a boolean key accepts only YAML booleans (`true`, `false`, and 1.1's `yes`/`no`/`on`/`off`);
 * - an empty value (`key:` or `~`) means "not set"; inside string maps (tags, meta, sink
 *   options, exporter flags) and string lists it is the empty string; a sink written with no
 *   options (`log:`) is that sink with no options.
 */
import * as z from 'zod';
import { YamlBool } from './decode.js';

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

export const apiSchema = z.strictObject({ bind: opt(str), disable: opt(bool) });
export const httpSchema = z.strictObject({ proxy: opt(str) });
export const monitorLoaderSchema = z.strictObject({
  files: opt(strList),
  'stop-loss': opt(str),
  aws: opt(z.strictObject({ regions: opt(strList) })),
  local: opt(z.strictObject({ 'disable-auto': opt(bool), 'disable-auto-root': opt(bool) })),
});
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
export const exporterSchema = z.strictObject({ mode: opt(str), plan: opt(str), flags: opt(strMap) });
export const heartbeatSchema = z.strictObject({
  freq: opt(str),
  'source-id': opt(str),
  role: opt(str),
  table: opt(str),
});
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

const changeState = z.strictObject({ after: opt(str), plan: opt(str) });
const changeSchema = z.strictObject({
  offline: opt(changeState),
  standby: opt(changeState),
  'read-only': opt(changeState),
  active: opt(changeState),
});

export const tlsSchema = z.strictObject({
  ca: opt(str),
  cert: opt(str),
  key: opt(str),
  'skip-verify': opt(bool),
  disable: opt(bool),
});

// plans.monitor is a monitor object, whose own `plans` may (syntactically) hold a monitor:
// the two schemas refer to each other lazily.
export const plansSchema: z.ZodType = z.lazy(() =>
  z.strictObject({
    files: opt(strList),
    table: opt(str),
    monitor: opt(monitorSchema),
    'disable-default-plans': opt(bool),
    change: opt(changeSchema),
  }),
);

/** One monitor (config.md §4.13): mysql keys at top level plus the sub-sections. */
export const monitorSchema: z.ZodType = z.lazy(() =>
  z.strictObject({
    id: opt(str),
    ...mysqlShape,
    tags: opt(strMap),
    meta: opt(strMap),
    plan: opt(str),
    aws: opt(awsSchema),
    exporter: opt(exporterSchema),
    ha: opt(haSchema),
    heartbeat: opt(heartbeatSchema),
    plans: opt(plansSchema),
    sinks: opt(sinksSchema),
    tls: opt(tlsSchema),
  }),
);

/** The whole config file. */
export const configSchema = z.strictObject({
  api: opt(apiSchema),
  http: opt(httpSchema),
  'monitor-loader': opt(monitorLoaderSchema),
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

/** A monitor file: either `monitors: [...]` or one monitor object (monitors.md §3). */
export const monitorListFileSchema = z.strictObject({ monitors: opt(z.array(monitorSchema)) });
