/**
 * The section checks, shared by the top-level config (boot) and each monitor (every load,
 * sonde's choice). Each check returns the exact error text or undefined.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ExporterConfig, HeartbeatConfig, PlansConfig, TlsConfig } from '../core/config.js';
import { errorMessage } from '../core/errors.js';
import { LEVEL_STATES } from '../core/plan.js';
import { parseDuration } from '../util/duration.js';

const STOP_LOSS = /^(\d+)(%?)$/;

/** monitor-loader.stop-loss: `""`, `N` or `N%`. */
export function checkStopLoss(v: string | undefined): string | undefined {
  if (v === undefined || v === '') return undefined;
  if (!STOP_LOSS.test(v)) return `'${v}' does not match /^(\\d+)(%?)$/`;
  return undefined;
}

/** The mysqld_exporter flags sonde implements; any other key is refused, never ignored. */
export const EXPORTER_FLAGS: readonly string[] = ['web.listen-address', 'web.telemetry-path'];

/** exporter.mode: `""`, `dual` or `legacy`. */
export function checkExporter(e: ExporterConfig | undefined): string | undefined {
  const mode = e?.mode ?? '';
  if (mode !== '' && mode !== 'dual' && mode !== 'legacy') {
    return `invalid config.exporter.mode: ${mode}; valid values: dual, legacy`;
  }
  return undefined;
}

/** exporter.flags: only the keys sonde implements. */
export function checkExporterFlags(e: ExporterConfig | undefined): string | undefined {
  const unknown = Object.keys(e?.flags ?? {}).find((k) => !EXPORTER_FLAGS.includes(k));
  if (unknown !== undefined) {
    return `invalid config.exporter.flags: ${unknown}: not supported; supported flags: ${EXPORTER_FLAGS.join(', ')}`;
  }
  return undefined;
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
