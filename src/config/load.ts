/**
 * Locate, read, strictly decode, merge over defaults, `${ENV}`-interpolate and validate the
 * config file.
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import type { Config } from '../core/config.js';
import { LEVEL_STATES } from '../core/plan.js';
import { DecodeFailure, MAX_YAML_BYTES, strictDecode, tooLarge } from './decode.js';
import { ConfigError, interpolateKey, osErrorText } from './errors.js';
import { noteMonitorSource } from './monitor.js';
import { configSchema } from '../core/config-schema.js';
import {
  checkDuration,
  checkExporter,
  checkExporterFlags,
  checkHeartbeat,
  checkPlans,
  checkProbe,
  checkRdsDiscovery,
  checkStopLoss,
  checkTls,
} from './validate.js';
import { readRegularText } from '../util/read-file.js';

export { ConfigError } from './errors.js';
export type { ConfigErrorKind } from './errors.js';

/**
 * Files tried in order when no file is given: relative names in the working directory
 * (`blip.yaml` for Blip's users), then the system-wide file a package or container installs.
 */
export const DEFAULT_CONFIG_FILES: readonly string[] = ['sonde.yaml', 'blip.yaml', '/etc/sonde/sonde.yaml'];

/** Built-in defaults; the file is decoded on top of them. Never mutate. */
export const DEFAULT_CONFIG: Readonly<Config> = deepFreeze({
  api: { bind: '127.0.0.1:7522' },
  mysql: { username: 'blip', 'timeout-connect': '10s' },
});

function deepFreeze<T>(o: T): T {
  if (o !== null && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

/** A fresh, mutable copy of the built-in defaults. */
export function defaultConfig(): Config {
  return structuredClone(DEFAULT_CONFIG);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * `over` on top of `base`: maps merge key by key, lists and scalars replace,
 * a key absent from `over` keeps `base`'s value. Returns new objects; inputs are untouched.
 */
export function mergeConfig<T>(base: T, over: T): T {
  if (over === undefined) return structuredClone(base);
  if (isPlainObject(base) && isPlainObject(over)) {
    const out: Record<string, unknown> = structuredClone(base);
    for (const [k, v] of Object.entries(over)) {
      if (v === undefined) continue;
      Object.defineProperty(out, k, {
        value: mergeConfig(out[k], v),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out as T;
  }
  return structuredClone(over);
}

function mapValues(
  m: Record<string, string> | undefined,
  key: string,
  f: (key: string, s: string) => string,
): void {
  if (!m) return;
  for (const k of Object.keys(m)) m[k] = f(`${key}.${k}`, m[k] ?? '');
}

/**
 * `${ENV}` interpolation of the server config, in place, for exactly the keys that
 * docs/config.md lists as interpolated at server level. Not interpolated: map keys,
 * booleans, `monitors` (done per monitor when loading) and `plans.monitor`. exporter.mode
 * and exporter.plan are interpolated too (Blip no-ops them; sonde's choice). An unset
 * variable without a default throws a ConfigError naming `file` and the key.
 */
export function interpolateServerConfig(
  c: Config,
  env: NodeJS.ProcessEnv = process.env,
  file = '<config>',
): Config {
  const str = (key: string, s: string): string => interpolateKey(s, env, file, key);
  const e = (key: string, s: string | undefined): string | undefined =>
    s === undefined ? undefined : str(key, s);
  const list = (key: string, l: string[] | undefined): string[] | undefined =>
    l?.map((s, i) => str(`${key}[${i}]`, s));

  if (c.api) {
    c.api.bind = e('api.bind', c.api.bind);
    c.api['token-file'] = e('api.token-file', c.api['token-file']);
    c.api['allowed-hosts'] = list('api.allowed-hosts', c.api['allowed-hosts']);
    const tls = c.api.tls;
    if (tls) {
      tls.cert = e('api.tls.cert', tls.cert);
      tls.key = e('api.tls.key', tls.key);
      tls['client-ca'] = e('api.tls.client-ca', tls['client-ca']);
    }
  }
  if (c.http) c.http.proxy = e('http.proxy', c.http.proxy);
  if (c.probe) {
    c.probe.bind = e('probe.bind', c.probe.bind);
    c.probe['web-config-file'] = e('probe.web-config-file', c.probe['web-config-file']);
  }
  const ml = c['monitor-loader'];
  if (ml) {
    ml['stop-loss'] = e('monitor-loader.stop-loss', ml['stop-loss']);
    ml.files = list('monitor-loader.files', ml.files);
  }
  c.plugins = list('plugins', c.plugins);
  if (c.aws) {
    c.aws['password-secret'] = e('aws.password-secret', c.aws['password-secret']);
    c.aws.region = e('aws.region', c.aws.region);
  }
  if (c.exporter) {
    c.exporter.mode = e('exporter.mode', c.exporter.mode);
    c.exporter.plan = e('exporter.plan', c.exporter.plan);
    mapValues(c.exporter.flags, 'exporter.flags', str);
  }
  if (c.heartbeat) {
    const h = c.heartbeat;
    for (const k of ['freq', 'source-id', 'role', 'table'] as const) h[k] = e(`heartbeat.${k}`, h[k]);
  }
  if (c.mysql) {
    const m = c.mysql; // hostname and socket are not interpolated at this level
    for (const k of ['mycnf', 'username', 'password', 'password-file', 'timeout-connect'] as const) {
      m[k] = e(`mysql.${k}`, m[k]);
    }
  }
  if (c.plans) {
    const p = c.plans;
    p.files = list('plans.files', p.files);
    p.table = e('plans.table', p.table);
    for (const state of LEVEL_STATES) {
      const st = p.change?.[state];
      if (!st) continue;
      st.after = e(`plans.change.${state}.after`, st.after);
      st.plan = e(`plans.change.${state}.plan`, st.plan);
    }
  }
  for (const [name, opts] of Object.entries(c.sinks ?? {})) mapValues(opts, `sinks.${name}`, str);
  mapValues(c.tags, 'tags', str);
  if (c.tls) {
    for (const k of ['ca', 'cert', 'key'] as const) c.tls[k] = e(`tls.${k}`, c.tls[k]);
  }
  return dropUndefined(c);
}

/** Assigning `e(undefined)` creates keys holding undefined; remove them again. */
function dropUndefined<T>(v: T): T {
  if (Array.isArray(v)) {
    for (const x of v) dropUndefined(x);
  } else if (isPlainObject(v)) {
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) delete v[k];
      else dropUndefined(x);
    }
  }
  return v;
}

export interface ValidateConfigOptions {
  /** base of relative tls paths; default process.cwd() */
  cwd?: string;
  /** config file path, recorded on the error */
  file?: string | undefined;
}

/**
 * Validate the top-level sections in this order (probe, monitor-loader, exporter,
 * heartbeat, mysql, plans, tls) and throw a ConfigError
 * (kind `invalid`) with the exact text of the first failure. api.bind is not test-bound here
 * (the CLI does that); `monitors` entries are validated when they are finalized.
 */
export function validateConfig(c: Config, opts: ValidateConfigOptions = {}): void {
  const cwd = opts.cwd ?? process.cwd();
  const checks: [string, () => string | undefined][] = [
    ['probe', () => checkProbe(c.probe)],
    ['monitor-loader.stop-loss', () => checkStopLoss(c['monitor-loader']?.['stop-loss'])],
    ['monitor-loader.aws', () => checkRdsDiscovery(c['monitor-loader']?.aws)],
    ['exporter.mode', () => checkExporter(c.exporter)],
    ['exporter.flags', () => checkExporterFlags(c.exporter)],
    ['heartbeat', () => checkHeartbeat(c.heartbeat)],
    [
      'mysql.timeout-connect',
      () => checkDuration('config.mysql.timeout-connect', c.mysql?.['timeout-connect']),
    ],
    ['plans.change', () => checkPlans(c.plans)],
    ['tls', () => checkTls(c.tls, cwd)],
  ];
  for (const [key, check] of checks) {
    const err = check();
    if (err !== undefined) throw new ConfigError(err, { kind: 'invalid', file: opts.file, key });
  }
}

export interface ParseConfigOptions {
  /** absolute path of the file, used in messages; default `<config>` */
  path?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/**
 * Decode config text strictly, merge it over DEFAULT_CONFIG, interpolate `${ENV}` and
 * validate. An empty document yields the defaults. Decode errors are one line:
 * `cannot decode YAML in <path>: line <n>: unknown key <key path>`.
 */
export function parseConfig(text: string, opts: ParseConfigOptions = {}): Config {
  const path = opts.path ?? '<config>';
  let fromFile: Config;
  try {
    fromFile = strictDecode<Config>(text, configSchema, {});
  } catch (err) {
    if (err instanceof DecodeFailure) {
      throw new ConfigError(`cannot decode YAML in ${path}: ${err.detail}`, {
        kind: 'load',
        file: path,
        line: err.line,
        key: err.key,
        cause: err,
      });
    }
    throw err;
  }
  let c: Config;
  try {
    c = finishConfig(mergeConfig<Config>(defaultConfig(), fromFile), opts.env, opts.cwd, opts.path);
  } catch (err) {
    throw opts.path !== undefined && err instanceof ConfigError ? withFileLine(err, text, opts.path) : err;
  }
  c.monitors?.forEach((m, i) => noteMonitorSource(m, { file: path, key: `monitors[${i}]` }));
  if (c.plans?.monitor) noteMonitorSource(c.plans.monitor, { file: path, key: 'plans.monitor' });
  return c;
}

/**
 * A validation error of a config file, prefixed with the file and the line of the key it is
 * about (the key's value, or the key itself), when the file has that key: `<file>: line <n>: …`.
 */
function withFileLine(err: ConfigError, text: string, file: string): ConfigError {
  if (err.kind !== 'invalid' || err.key === undefined || err.message.startsWith(file)) return err;
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: false });
  const path = err.key.split('.');
  let node: unknown;
  for (let n = path.length; n > 0 && node === undefined; n--) node = doc.getIn(path.slice(0, n), true);
  const range = (node as { range?: [number, number, number] } | undefined)?.range;
  const where = range === undefined ? '' : `line ${lines.linePos(range[0]).line}: `;
  return new ConfigError(`${file}: ${where}${err.message}`, {
    kind: err.kind,
    file,
    ...(range === undefined ? {} : { line: lines.linePos(range[0]).line }),
    key: err.key,
    cause: err,
  });
}

function finishConfig(
  merged: Config,
  env: NodeJS.ProcessEnv | undefined,
  cwd: string | undefined,
  file: string | undefined,
): Config {
  const c = interpolateServerConfig(merged, env ?? process.env, file);
  // api.bind: empty (also after interpolation) means the default.
  if (c.api?.bind === undefined || c.api.bind === '') {
    c.api = { ...c.api, bind: DEFAULT_CONFIG.api?.bind ?? '127.0.0.1:7522' };
  }
  validateConfig(c, { cwd, file });
  return c;
}

async function exists(p: string): Promise<boolean> {
  try {
    await stat(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * Load the server config.
 *
 * - `file` given (from `--config` or `SONDE_CONFIG`/`BLIP_CONFIG`): it must exist, else
 *   ConfigError `config file FILE does not exist` (FILE as given).
 * - no file: the first of `opts.search` (default DEFAULT_CONFIG_FILES) that exists, relative
 *   names resolved against `cwd`; none → built-in defaults and `path` undefined.
 *
 * Relative paths are resolved against `opts.cwd` (default the process working directory).
 * Throws ConfigError: kind `load` for locate/read/decode failures, `invalid` for validation.
 */
export async function loadConfig(
  file: string | undefined,
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; search?: readonly string[] } = {},
): Promise<{ config: Config; path: string | undefined }> {
  const cwd = opts.cwd ?? process.cwd();
  let path: string | undefined;
  if (file !== undefined && file !== '') {
    path = resolve(cwd, file);
    if (!(await exists(path))) {
      throw new ConfigError(`config file ${file} does not exist`, { kind: 'load', file: path });
    }
  } else {
    for (const name of opts.search ?? DEFAULT_CONFIG_FILES) {
      const p = resolve(cwd, name);
      if (await exists(p)) {
        path = p;
        break;
      }
    }
  }
  if (path === undefined) {
    return { config: finishConfig(defaultConfig(), opts.env, cwd, undefined), path: undefined };
  }
  const size = (await stat(path).catch(() => undefined))?.size ?? 0;
  if (size > MAX_YAML_BYTES) {
    throw new ConfigError(`cannot decode YAML in ${path}: ${tooLarge(size)}`, { kind: 'load', file: path });
  }
  let text: string;
  try {
    text = await readRegularText(path);
  } catch (err) {
    throw new ConfigError(`cannot read config file: ${osErrorText(err, path)}`, {
      kind: 'load',
      file: path,
      cause: err,
    });
  }
  return { config: parseConfig(text, { path, env: opts.env ?? process.env, cwd }), path };
}
