/**
 * What mysqld_exporter's exporter-wide flags (`exporter.flags`) change in sonde's exporter:
 * the session its queries run with, each collector's deadline, how many collectors run at
 * once, and the offset taken off Prometheus' scrape timeout. The flags were validated when
 * the config was loaded; a value that does not parse here falls back to the default.
 *
 * - `exporter.lock_wait_timeout` (2) with `exporter.enable_lock_wait_timeout` (true): every
 *   query of the exporter, its ping included, runs with `lock_wait_timeout` = that many
 *   seconds in its session; disabled, with the server's global value (`DEFAULT`), since
 *   mysqld_exporter then sets nothing. The monitor's other queries keep the pool's 5 s.
 * - `exporter.log_slow_filter` (false): the session's `log_slow_filter` is
 *   `tmp_table_on_disk,filesort_on_disk`, so MariaDB and Percona Server slow-log a scrape
 *   only when it spills to disk. Oracle MySQL has no such variable: its ping fails with
 *   `Unknown system variable` and the scrape reports `mysql_up 0`, as mysqld_exporter's
 *   connection fails there.
 * - `exporter.query_timeout` (0): seconds each collector and the ping may take, counted from
 *   the scrape's start. Set to 0, no query has a limit of its own: only the scrape's deadline
 *   stops it. Not set at all (a config file's `exporter.flags` without it), the exporter
 *   plan's collector deadline and the 5 s ping limit apply; mysqld_exporter's command line
 *   always sets it (0 by default, as mysqld_exporter).
 * - `exporter.max_open_connections` (2): collectors of one scrape running at once. The
 *   monitor's pool keeps one of its 3 connections for the heartbeat and the plan changer,
 *   so values above 2 run 2.
 * - `timeout-offset` (0.25): seconds taken off `X-Prometheus-Scrape-Timeout-Seconds`.
 */
import type { SessionValue } from '../core/db.js';
import { UPSTREAM_EXPORTER_FLAGS } from '../core/upstream.js';
import { MAX_CONCURRENT_COLLECTORS } from '../engine/limiter.js';
import { flagBool } from '../plan/exporter-plan.js';

/**
 * The per-query limit of `exporter.query_timeout=0`: longer than any scrape may last, so the
 * scrape's own deadline is what stops a query (a timer accepts at most about 24.8 days).
 */
export const NO_QUERY_LIMIT_MS = 86_400_000;

/** The `log_slow_filter` value mysqld_exporter gives its sessions. */
export const EXPORTER_LOG_SLOW_FILTER = 'tmp_table_on_disk,filesort_on_disk';

export interface ExporterSettings {
  /** Session variables of every exporter query and ping. */
  session: Readonly<Record<string, SessionValue>>;
  /**
   * Per-collector (and ping) deadline from the scrape's start, ms; undefined = the plan's;
   * NO_QUERY_LIMIT_MS for `exporter.query_timeout=0` (only the scrape's deadline).
   */
  queryTimeoutMs: number | undefined;
  /** Collectors of one scrape at once (1 or 2). */
  maxCollectors: number;
  /** Seconds taken off the scrape-timeout header. */
  timeoutOffsetS: number;
}

function flag(flags: Readonly<Record<string, string>>, key: string): string {
  const v = flags[key];
  return (v === undefined ? (UPSTREAM_EXPORTER_FLAGS[key] ?? '') : v).trim();
}

function bool(flags: Readonly<Record<string, string>>, key: string): boolean {
  return flagBool(flag(flags, key)) ?? flagBool(UPSTREAM_EXPORTER_FLAGS[key] ?? '') ?? false;
}

function int(flags: Readonly<Record<string, string>>, key: string): number {
  const n = Number(flag(flags, key));
  return Number.isInteger(n) ? n : Number(UPSTREAM_EXPORTER_FLAGS[key] ?? '0');
}

/** The exporter's settings from its flags (`exporter.flags`, validated at load). */
export function exporterSettings(flags: Readonly<Record<string, string>> = {}): ExporterSettings {
  const session: Record<string, SessionValue> = {
    lock_wait_timeout: bool(flags, 'exporter.enable_lock_wait_timeout')
      ? int(flags, 'exporter.lock_wait_timeout')
      : null,
  };
  if (bool(flags, 'exporter.log_slow_filter')) session.log_slow_filter = EXPORTER_LOG_SLOW_FILTER;
  const queryTimeout = int(flags, 'exporter.query_timeout');
  const limitSet = (flags['exporter.query_timeout'] ?? '').trim() !== '';
  const maxOpen = int(flags, 'exporter.max_open_connections');
  const offset = Number(flag(flags, 'timeout-offset'));
  return {
    session,
    queryTimeoutMs: queryTimeout > 0 ? queryTimeout * 1000 : limitSet ? NO_QUERY_LIMIT_MS : undefined,
    maxCollectors: Math.max(1, Math.min(maxOpen, MAX_CONCURRENT_COLLECTORS)),
    timeoutOffsetS: Number.isFinite(offset) && offset >= 0 ? offset : 0.25,
  };
}
