/**
 * The section checks, shared by the top-level config (boot) and each monitor (every load,
 * sonde's choice). Each check returns the exact error text or undefined.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type {
  ExporterConfig,
  HeartbeatConfig,
  MonitorLoaderConfig,
  PlansConfig,
  ProbeConfig,
  TlsConfig,
} from '../core/config.js';
import { errorMessage } from '../core/errors.js';
import { LEVEL_STATES } from '../core/plan.js';
import { UPSTREAM_EXPORTER_FLAGS, scraperByName, subflagByName } from '../core/upstream.js';
import { parseDuration } from '../util/duration.js';
import { didYouMean } from '../util/suggest.js';
import { parseGoBool } from '../util/text.js';
import { parseHostPort } from '../util/net.js';

const STOP_LOSS = /^(\d+)(%?)$/;

/** monitor-loader.stop-loss: `""`, `N` or `N%`. */
export function checkStopLoss(v: string | undefined): string | undefined {
  if (v === undefined || v === '') return undefined;
  if (!STOP_LOSS.test(v)) return `'${v}' does not match /^(\\d+)(%?)$/`;
  return undefined;
}

/** An AWS region name (`us-east-1`, `us-gov-west-1`, `eusc-de-east-1`). */
const AWS_REGION = /^[a-z]+(-[a-z]+)+-\d+$/;

/**
 * monitor-loader.aws: each region a region name or `auto`, listed once; each engine filter
 * non-empty; tag filters only with regions to list.
 */
export function checkRdsDiscovery(a: MonitorLoaderConfig['aws']): string | undefined {
  const key = 'invalid config.monitor-loader.aws';
  const regions = a?.regions ?? [];
  for (const [i, r] of regions.entries()) {
    if (r !== 'auto' && !AWS_REGION.test(r))
      return `${key}.regions[${i}]: ${JSON.stringify(r)}: want a region name such as us-east-1, or auto`;
    if (regions.indexOf(r) !== i) return `${key}.regions[${i}]: ${r} is listed twice`;
  }
  for (const [i, e] of (a?.engines ?? []).entries()) {
    if (e.trim() === '') return `${key}.engines[${i}]: empty engine name`;
  }
  if (regions.length === 0 && ((a?.engines ?? []).length > 0 || Object.keys(a?.tags ?? {}).length > 0))
    return `${key}: engines and tags filter RDS discovery, which is off without regions`;
  return undefined;
}

/**
 * probe: `bind` empty (no listener) or `host:port`/`:port`/`[v6]:port`; `web-config-file`
 * only with a `bind` (it protects that listener).
 */
export function checkProbe(p: ProbeConfig | undefined): string | undefined {
  const bind = p?.bind ?? '';
  if (bind !== '') {
    try {
      parseHostPort(bind);
    } catch {
      return `invalid config.probe.bind: ${JSON.stringify(bind)}: want host:port or :port`;
    }
  }
  if ((p?.['web-config-file'] ?? '') !== '' && bind === '')
    return 'invalid config.probe.web-config-file: probe.bind is not set, so there is no probe listener to protect';
  return undefined;
}

/** exporter.mode: `""`, `dual` or `legacy`. */
export function checkExporter(e: ExporterConfig | undefined): string | undefined {
  const mode = e?.mode ?? '';
  if (mode !== '' && mode !== 'dual' && mode !== 'legacy') {
    return `invalid config.exporter.mode: ${mode}${didYouMean(mode, ['dual', 'legacy'])}; valid values: dual, legacy`;
  }
  return undefined;
}

/**
 * exporter.flags: mysqld_exporter's flags by their names — its exporter-wide flags
 * (UPSTREAM_EXPORTER_FLAGS), `collect.<scraper>` and the scrapers' sub-flags — with values
 * of the right kind. Any other key is refused, never ignored.
 */
export function checkExporterFlags(e: ExporterConfig | undefined): string | undefined {
  for (const [key, value] of Object.entries(e?.flags ?? {})) {
    const why = exporterFlagProblem(key, value);
    if (why !== undefined) return `invalid config.exporter.flags: ${key}: ${why}`;
  }
  return undefined;
}

const BOOL_FLAGS = new Set([
  'tls.insecure-skip-verify',
  'exporter.enable_lock_wait_timeout',
  'exporter.log_slow_filter',
]);
const INT_FLAGS = new Set([
  'exporter.lock_wait_timeout',
  'exporter.query_timeout',
  'exporter.max_open_connections',
]);

/** Why one exporter flag is refused, or undefined. */
export function exporterFlagProblem(key: string, value: string): string | undefined {
  const v = value.trim();
  if (key in UPSTREAM_EXPORTER_FLAGS) {
    if (BOOL_FLAGS.has(key) && !isBool(v)) return `${value}: not true or false`;
    if (INT_FLAGS.has(key) && !/^-?\d+$/.test(v)) return `${value}: not an integer`;
    if (key === 'exporter.max_open_connections' && Number(v) < 1) return `${value}: must be >= 1`;
    if (key === 'exporter.query_timeout' && Number(v) < 0) return `${value}: must be >= 0`;
    if (key === 'web.listen-address') return listenAddressesProblem(v);
    if (key === 'timeout-offset' && !(Number.isFinite(Number(v)) && v !== '' && Number(v) >= 0))
      return `${value}: not a number of seconds >= 0`;
    return undefined;
  }
  if (key.startsWith('collect.')) {
    const scraper = scraperByName(key.slice('collect.'.length));
    if (scraper !== undefined) return isBool(v) ? undefined : `${value}: not true or false`;
    const sub = subflagByName(key);
    if (sub !== undefined) {
      const kind = sub[1].kind;
      if (kind === 'bool' && !isBool(v)) return `${value}: not true or false`;
      if (kind === 'int' && !/^-?\d+$/.test(v)) return `${value}: not an integer`;
      return undefined;
    }
    return 'no such mysqld_exporter collector or collector flag';
  }
  return `not supported; supported flags: ${Object.keys(UPSTREAM_EXPORTER_FLAGS).join(', ')}, collect.<collector> and its sub-flags`;
}

/**
 * `web.listen-address`: one `host:port` or a comma-separated list of them (mysqld_exporter
 * repeats the flag); empty means the default. Values still holding `%{…}` are checked later.
 */
function listenAddressesProblem(v: string): string | undefined {
  if (v === '' || v.includes('%{')) return undefined;
  for (const addr of v.split(',').map((a) => a.trim())) {
    if (addr === '') return `${v}: empty address in the list`;
    try {
      parseHostPort(addr, 'listen address');
    } catch (err) {
      return errorMessage(err);
    }
  }
  return undefined;
}

function isBool(v: string): boolean {
  return parseGoBool(v) !== undefined;
}

/** heartbeat: freq a duration > 0; other keys need freq. */
export function checkHeartbeat(h: HeartbeatConfig | undefined): string | undefined {
  const freq = h?.freq ?? '';
  if (freq === '') {
    if ((h?.['source-id'] ?? '') !== '' || (h?.role ?? '') !== '' || (h?.table ?? '') !== '') {
      return 'invalid config.heartbeat: freq is not set but other values are set; set freq to enable heartbeat';
    }
    return undefined;
  }
  if (freq === '0') return 'invalid config.heartbeat.freq: 0: must be greater than zero';
  let ms: number;
  try {
    ms = parseDuration(freq);
  } catch (err) {
    return `invalid config.heartbeat.freq: ${freq}: ${errorMessage(err)}`;
  }
  if (ms <= 0) {
    const ns = Math.round(ms * 1e6) || 0; // `|| 0` turns -0 into 0
    return `invalid config.heartbeat.freq: ${freq} (${ns}): value <= 0; must be greater than zero`;
  }
  return undefined;
}

/**
 * A duration key (mysql.timeout-connect): empty is fine, anything else must parse.
 * `key` is the dotted name used in the message, e.g. `config.mysql.timeout-connect`.
 */
export function checkDuration(key: string, v: string | undefined): string | undefined {
  if (v === undefined || v === '') return undefined;
  try {
    parseDuration(v);
  } catch (err) {
    return `invalid ${key}: ${v}: ${errorMessage(err)}`;
  }
  return undefined;
}

/** plans.change.<state>.after must be a duration (Blip silently uses 0; sonde rejects it). */
export function checkPlans(p: PlansConfig | undefined): string | undefined {
  for (const state of LEVEL_STATES) {
    const err = checkDuration(`config.plans.change.${state}.after`, p?.change?.[state]?.after);
    if (err) return err;
  }
  return undefined;
}

/**
 * tls: when not disabled and any file is set, each file must exist (relative paths against
 * `cwd`), and cert and key go together. Valid sets: ca; cert+key; ca+cert+key.
 */
export function checkTls(t: TlsConfig | undefined, cwd: string): string | undefined {
  if (!t || t.disable === true) return undefined;
  const files = { ca: t.ca ?? '', cert: t.cert ?? '', key: t.key ?? '' };
  if (files.ca === '' && files.cert === '' && files.key === '') return undefined;
  for (const k of ['ca', 'cert', 'key'] as const) {
    const f = files[k];
    if (f !== '' && !existsSync(resolve(cwd, f))) return `config.tls.${k}: ${f}: file does not exist`;
  }
  if (files.key !== '' && files.cert === '')
    return 'config.tls: missing cert (cert and key are mutually dependent)';
  if (files.cert !== '' && files.key === '')
    return 'config.tls: missing key (cert and key are mutually dependent)';
  return undefined;
}
