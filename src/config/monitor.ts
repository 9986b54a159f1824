/**
 * Monitor finalization: inherit the monitor defaults, interpolate
 * `${ENV}` then `%{monitor.*}`, derive the id, validate, and reject duplicate ids.
 */
import { resolve } from 'node:path';
import type {
  AwsConfig,
  Config,
  ExporterConfig,
  FinalMonitorConfig,
  HeartbeatConfig,
  MonitorConfig,
  PlanChangeConfig,
  PlansConfig,
  TlsConfig,
} from '../core/config.js';
import { errorMessage } from '../core/errors.js';
import { LEVEL_STATES } from '../core/plan.js';
import { interpolateMonitor } from '../util/interpolate.js';
import { ConfigError, interpolateKey } from './errors.js';
import { myCnfHostname, readMyCnfSync } from './mycnf.js';
import {
  checkDuration,
  checkExporter,
  checkExporterFlags,
  checkHeartbeat,
  checkPlans,
  checkTls,
} from './validate.js';

/** Heartbeat table used when heartbeat.freq is set without a table. */
export const DEFAULT_HEARTBEAT_TABLE = 'blip.heartbeat';

function isEmpty(s: string | undefined): boolean {
  return s === undefined || s === '';
}

/** `target[k] = src[k]` when target's is empty and src's is not. */
function fillString<T extends object>(
  target: T,
  src: T | undefined,
  keys: readonly (keyof T & string)[],
): void {
  if (!src) return;
  for (const k of keys) {
    const cur = target[k] as string | undefined;
    const def = src[k] as string | undefined;
    if (isEmpty(cur) && !isEmpty(def)) target[k] = def as T[keyof T & string];
  }
}

/** `target[k] = src[k]` when target's tri-state boolean is not set. */
function fillBool<T extends object>(
  target: T,
  src: T | undefined,
  keys: readonly (keyof T & string)[],
): void {
  if (!src) return;
  for (const k of keys) {
    if (target[k] === undefined && src[k] !== undefined) target[k] = src[k];
  }
}

/**
 * Copy the defaults into one monitor (sonde's inheritance rules). Returns a new
 * object; neither input is modified.
 *
 * - socket, hostname, mycnf, username, password, password-file, timeout-connect: if empty
 * - tags: key by key, the monitor's keys win; meta, id, plan: never inherited
 * - aws strings if empty, aws booleans if not set (tri-state)
 * - exporter: mode if empty; only when a mode results: plan if empty (left empty when
 *   neither has one: the exporter then picks its plan, see plan/exporter-plan.ts), flags
 *   merged with the monitor's keys winning
 * - heartbeat: each key if empty, then freq set and no table → `blip.heartbeat`
 * - plans.files: the whole list when the monitor has none; plans.change.*: each if empty;
 *   plans.table/monitor/disable-default-plans: not inherited
 * - sinks: a sink name the monitor lacks gets a copy of the default's options; a name it has
 *   keeps only its own options
 * - tls files if empty, tls booleans if not set
 */
export function inheritDefaults(monitor: MonitorConfig, defaults: Config): MonitorConfig {
  const m = structuredClone(monitor);
  const d = defaults;

  fillString(m, d.mysql, [
    'socket',
    'hostname',
    'mycnf',
    'username',
    'password',
    'password-file',
    'timeout-connect',
  ]);

  if (d.tags && Object.keys(d.tags).length > 0) {
    const tags = { ...(m.tags ?? {}) };
    for (const [k, v] of Object.entries(d.tags)) if (!Object.hasOwn(tags, k)) tags[k] = v;
    m.tags = tags;
  }

  const aws: AwsConfig = { ...m.aws };
  fillString(aws, d.aws, ['password-secret', 'region']);
  fillBool(aws, d.aws, ['iam-auth', 'disable-auto-region', 'disable-auto-tls']);
  m.aws = aws;

  const exp: ExporterConfig = { ...m.exporter };
  fillString(exp, d.exporter, ['mode']);
  if (!isEmpty(exp.mode)) {
    fillString(exp, d.exporter, ['plan', 'token-file']);
    if (d.exporter?.flags || exp.flags) exp.flags = { ...d.exporter?.flags, ...exp.flags };
  }
  m.exporter = exp;

  const hb: HeartbeatConfig = { ...m.heartbeat };
  fillString(hb, d.heartbeat, ['freq', 'table', 'source-id', 'role']);
  if (!isEmpty(hb.freq) && isEmpty(hb.table)) hb.table = DEFAULT_HEARTBEAT_TABLE;
  m.heartbeat = hb;

  const plans: PlansConfig = { ...m.plans };
  if ((plans.files ?? []).length === 0 && (d.plans?.files ?? []).length > 0) {
    plans.files = [...(d.plans?.files ?? [])];
  }
  const change: PlanChangeConfig = { ...plans.change };
  for (const st of LEVEL_STATES) {
    const s = { ...change[st] };
    fillString(s, d.plans?.change?.[st], ['after', 'plan']);
    change[st] = s;
  }
  plans.change = change;
  m.plans = plans;

  if (d.sinks) {
    const sinks = { ...m.sinks };
    for (const [name, opts] of Object.entries(d.sinks)) {
      if (!Object.hasOwn(sinks, name)) sinks[name] = { ...opts };
    }
    m.sinks = sinks;
  }

  const tls: TlsConfig = { ...m.tls };
  fillString(tls, d.tls, ['ca', 'cert', 'key']);
  fillBool(tls, d.tls, ['skip-verify', 'disable']);
  m.tls = tls;

  return compactMonitor(m);
}

function mapValues(
  m: Record<string, string> | undefined,
  key: string,
  f: (s: string, key: string) => string,
): void {
  if (!m) return;
  for (const k of Object.keys(m)) m[k] = f(m[k] ?? '', `${key}.${k}`);
}

/**
 * Apply `f` to the monitor's interpolated string fields, in the order written below (the
 * order in which `%{monitor.*}` sees earlier fields already interpolated); `f` also gets the
 * key path. `afterIdFields` runs between `hostname` and `username`: the fields that determine
 * a derived id (id, mycnf, socket, hostname) are done by then. `withAfter` says whether
 * plans.change.*.after is included (it is for `${ENV}`, not for `%{monitor.*}`).
 */
function eachField(
  m: MonitorConfig,
  f: (s: string, key: string) => string,
  withAfter: boolean,
  afterIdFields?: () => void,
): void {
  const one = <T extends object>(o: T | undefined, k: keyof T & string, prefix = ''): void => {
    if (o && typeof o[k] === 'string') o[k] = f(o[k], `${prefix}${k}`) as T[keyof T & string];
  };
  one(m, 'id');
  one(m, 'mycnf');
  one(m, 'socket');
  one(m, 'hostname');
  afterIdFields?.();
  one(m, 'username');
  one(m, 'password');
  one(m, 'password-file');
  one(m, 'timeout-connect');
  mapValues(m.tags, 'tags', f);
  mapValues(m.meta, 'meta', f);
  one(m, 'database-type');
  mapValues(m['database-config'], 'database-config', f);
  one(m.aws, 'password-secret', 'aws.');
  one(m.aws, 'region', 'aws.');
  // exporter.mode and .plan are no-ops in Blip (bug); interpolated here (sonde's choice).
  one(m.exporter, 'mode', 'exporter.');
  one(m.exporter, 'plan', 'exporter.');
  one(m.exporter, 'token-file', 'exporter.');
  mapValues(m.exporter?.flags, 'exporter.flags', f);
  for (const k of ['freq', 'source-id', 'role', 'table'] as const) one(m.heartbeat, k, 'heartbeat.');
  if (m.plans) {
    if (m.plans.files) m.plans.files = m.plans.files.map((s, i) => f(s, `plans.files[${i}]`));
    one(m.plans, 'table', 'plans.');
    for (const st of LEVEL_STATES) {
      if (withAfter) one(m.plans.change?.[st], 'after', `plans.change.${st}.`);
      one(m.plans.change?.[st], 'plan', `plans.change.${st}.`);
    }
  }
  one(m, 'plan');
  for (const [name, opts] of Object.entries(m.sinks ?? {})) mapValues(opts, `sinks.${name}`, f);
  one(m.tls, 'ca', 'tls.');
  one(m.tls, 'cert', 'tls.');
  one(m.tls, 'key', 'tls.');
}

/** Where a monitor was written: its file and its key path there (`monitors[2]`, or `""`). */
export interface MonitorSource {
  file: string;
  key: string;
}

const SOURCES = new WeakMap<MonitorConfig, MonitorSource>();

/** Remember where `m` was read, for the messages of its finalization. */
export function noteMonitorSource(m: MonitorConfig, source: MonitorSource): void {
  SOURCES.set(m, source);
}

/** Where `m` was read, when it was noted. */
export function monitorSource(m: MonitorConfig): MonitorSource | undefined {
  return SOURCES.get(m);
}

export interface FinalizeOptions {
  /** base of relative mycnf/tls paths; default process.cwd() */
  cwd?: string;
  /** receives warnings (e.g. a monitor left with an empty id) */
  warn?: (msg: string) => void;
}

/**
 * The id of a monitor whose `id` is empty: hostname as written (with
 * `:port`) → socket → my.cnf `[client]` host[:port] → my.cnf socket (sonde's choice) → "".
 */
export function deriveMonitorId(m: MonitorConfig, opts: FinalizeOptions = {}): string {
  if (!isEmpty(m.id)) return m.id ?? '';
  if (!isEmpty(m.hostname)) return m.hostname ?? '';
  if (!isEmpty(m.socket)) return m.socket ?? '';
  if (!isEmpty(m.mycnf)) {
    const path = m.mycnf ?? '';
    try {
      const cnf = readMyCnfSync(resolve(opts.cwd ?? process.cwd(), path));
      if (cnf.host !== '') return myCnfHostname(cnf);
      if (cnf.socket !== '') return cnf.socket;
      opts.warn?.(`monitor with mycnf ${path} has no id: set id, or host or socket in its [client] section`);
    } catch (err) {
      opts.warn?.(`monitor with mycnf ${path} has no id: ${errorMessage(err)}`);
    }
  }
  return '';
}

/**
 * Finalize one monitor: (1) inherit defaults, (2) `${ENV}`, (3) `%{monitor.*}` in
 * eachField's order, (4) derive the id, (5) validate. `%{monitor.id}` resolves to the
 * final id (sonde's choice): the id is derived right after the fields it depends on (id,
 * mycnf, socket, hostname) are interpolated, before every later field. Within those four
 * fields `%{monitor.id}` reads the explicit id (or "").
 */
export function finalizeMonitor(
  monitor: MonitorConfig,
  defaults: Config,
  env: NodeJS.ProcessEnv = process.env,
  opts: FinalizeOptions = {},
): FinalMonitorConfig {
  const m = inheritDefaults(monitor, defaults);
  const src = monitorSource(monitor);
  const file = src?.file ?? `monitor ${monitor.id ?? monitor.hostname ?? monitor.socket ?? ''}`.trimEnd();
  const keyOf = (key: string): string => (src?.key ? `${src.key}.${key}` : key);
  eachField(m, (s, key) => interpolateKey(s, env, file, keyOf(key)), true);
  let id = '';
  eachField(
    m,
    (s) => interpolateMonitor(s, m),
    false,
    () => {
      id = deriveMonitorId(m, opts);
      m.id = id;
    },
  );
  const final = compactMonitor<FinalMonitorConfig>({ ...m, id });
  final.id = id;
  validateMonitor(final, { cwd: opts.cwd });
  return final;
}

/**
 * Finalize every monitor and fail with `duplicate monitor id: <id>` when two
 * end up with the same id (sonde's choice; Blip silently keeps the later one).
 * Throws ConfigError.
 */
export function finalizeMonitors(
  monitors: MonitorConfig[],
  defaults: Config,
  env: NodeJS.ProcessEnv = process.env,
  opts: FinalizeOptions = {},
): FinalMonitorConfig[] {
  const seen = new Set<string>();
  const out: FinalMonitorConfig[] = [];
  for (const mon of monitors) {
    const f = finalizeMonitor(mon, defaults, env, opts);
    if (seen.has(f.id))
      throw new ConfigError(`duplicate monitor id: ${f.id}`, { kind: 'invalid', key: 'id' });
    seen.add(f.id);
    out.push(f);
  }
  return out;
}

/**
 * The top-level section checks applied to a monitor's own sections (sonde's choice; a no-op
 * in Blip):
 * exporter.mode, heartbeat, timeout-connect, plans.change.*.after, tls. Messages are the
 * top-level ones prefixed with `monitor <id>: `. Throws ConfigError.
 */
export function validateMonitor(m: FinalMonitorConfig, opts: { cwd?: string | undefined } = {}): void {
  const cwd = opts.cwd ?? process.cwd();
  const checks: [string, () => string | undefined][] = [
    ['database-type', () => checkDatabaseType(m['database-type'])],
    ['exporter.mode', () => checkExporter(m.exporter)],
    ['exporter.flags', () => checkExporterFlags(m.exporter)],
    ['heartbeat', () => checkHeartbeat(m.heartbeat)],
    ['timeout-connect', () => checkDuration('config.timeout-connect', m['timeout-connect'])],
    ['plans.change', () => checkPlans(m.plans)],
    ['tls', () => checkTls(m.tls, cwd)],
  ];
  for (const [key, check] of checks) {
    const err = check();
    if (err !== undefined) throw new ConfigError(`monitor ${m.id}: ${err}`, { kind: 'invalid', key });
  }
}

/** The database types sonde monitors: `mysql` (MySQL and MariaDB), Blip's default. */
export const DATABASE_TYPES: readonly string[] = ['mysql'];

/** `database-type`: empty (the default, mysql) or one sonde monitors. */
function checkDatabaseType(t: string | undefined): string | undefined {
  if (t === undefined || t === '' || DATABASE_TYPES.includes(t)) return undefined;
  return `invalid database-type: ${t}; valid values: ${DATABASE_TYPES.join(', ')} (sonde monitors MySQL and MariaDB)`;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

const STRING_MAPS = new Set(['tags', 'meta', 'flags', 'database-config']);

/**
 * Drop undefined and empty values and sections left empty, so equal configs compare equal
 * however they were written ("empty" = absent or ""). Kept as written: values
 * inside string maps (a tag may be ""), sinks with no options (`log: {}` is a sink), `id`.
 */
function compactMonitor<T extends MonitorConfig>(m: T): T {
  const compact = (v: unknown, inMap: boolean): unknown => {
    if (Array.isArray(v)) return v.map((x) => compact(x, false));
    if (!isPlainObject(v)) return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined || (x === '' && !inMap)) continue;
      if (Array.isArray(x) && x.length === 0) continue;
      const c = compact(x, STRING_MAPS.has(k));
      if (isPlainObject(c) && Object.keys(c).length === 0) continue;
      out[k] = c;
    }
    return out;
  };
  const out = compact(m, false) as T;
  const sinks = Object.entries(m.sinks ?? {});
  if (sinks.length > 0) out.sinks = Object.fromEntries(sinks.map(([name, opts]) => [name, { ...opts }]));
  if (m.id !== undefined) out.id = m.id;
  if (m.plans?.monitor && out.plans) out.plans.monitor = compactMonitor(m.plans.monitor);
  return out;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

/**
 * Deep value equality of two finalized monitors, for the reload diff:
 * key order does not matter and an `undefined` member equals an absent one.
 */
export function monitorsEqual(a: MonitorConfig, b: MonitorConfig): boolean {
  return deepEqual(a, b);
}

/**
 * The connection monitor of the shared plan table (top-level `plans.monitor`):
 * Blip uses it raw; sonde applies the `mysql` defaults and the monitor interpolation
 * (sonde's choice), nothing else (no tags, sinks, heartbeat...). Undefined when not set.
 */
export function finalizePlansMonitor(
  c: Config,
  env: NodeJS.ProcessEnv = process.env,
  opts: FinalizeOptions = {},
): FinalMonitorConfig | undefined {
  const m = c.plans?.monitor;
  if (!m) return undefined;
  return finalizeMonitor(m, c.mysql ? { mysql: c.mysql } : {}, env, opts);
}
