/**
 * exporter.info_schema.processlist — mysqld_exporter's `info_schema.processlist` scraper (off
 * by default), options `min_time` (default 0), `processes_by_user` and `processes_by_host`
 * (default true).
 *
 * Threads of `information_schema.processlist` other than the scrape's own, in their state at
 * least `min_time` seconds, grouped in SQL: per command and state their count
 * (`mysql_info_schema_processlist_threads`) and summed time (`…_seconds`); per client host
 * (the host without its port; `unknown` when empty) and per user their count. Command and
 * state are lower-cased, `;,:.()` removed, spaces and dashes turned into `_`, empty →
 * `unknown`.
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, boolOption, family, intOption, sample, upstreamHelp } from './common.js';
import { scanString, scanUint } from './sql_scan.js';

export const DOMAIN = 'exporter.info_schema.processlist';

/** The query for a minimum time in seconds (an integer option, validated in prepare). */
export function processlistQuery(minTime: number): string {
  return (
    "SELECT user, SUBSTRING_INDEX(host, ':', 1) AS host, COALESCE(command, '') AS command," +
    " COALESCE(state, '') AS state, COUNT(*) AS processes, SUM(time) AS seconds" +
    ` FROM information_schema.processlist WHERE ID != connection_id() AND TIME >= ${Math.trunc(minTime)}` +
    ' GROUP BY user, host, command, state'
  );
}

const PREFIX = 'mysql_info_schema_processlist_';

export const FAMILIES = {
  threads: family(`${PREFIX}threads`, 'The number of threads split by current state.', 'gauge'),
  seconds: family(
    `${PREFIX}seconds`,
    'The number of seconds threads have used split by current state.',
    'gauge',
  ),
  byUser: family(`${PREFIX}processes_by_user`, 'The number of processes by user.', 'gauge'),
  byHost: family(`${PREFIX}processes_by_host`, 'The number of processes by host.', 'gauge'),
} as const;

/** A command or state as a label value. */
export function sanitizeState(text: string): string {
  const lower = (text === '' ? 'unknown' : text).toLowerCase();
  return lower.replace(/[;,:.()]/g, '').replace(/[ -]/g, '_');
}

export interface ProcesslistOptions {
  byUser: boolean;
  byHost: boolean;
}

/** Sums a uint32 the way upstream's counters do (wrapping at 2³²). */
function add(m: Map<string, number>, key: string, n: number): void {
  m.set(key, ((m.get(key) ?? 0) + n) % 2 ** 32);
}

/**
 * Grouped processlist rows → samples (pure). Rows that reduce to the same labels are summed;
 * a row that does not scan stops the scrape before anything is emitted.
 */
export function processlistSamples(rows: readonly Row[], opts: ProcesslistOptions, out: MetricValue[]): void {
  const counts = new Map<string, number>();
  const times = new Map<string, number>();
  const byHost = new Map<string, number>();
  const byUser = new Map<string, number>();
  for (const row of rows) {
    const user = scanString(row, 'user');
    const host = scanString(row, 'host');
    const command = sanitizeState(scanString(row, 'command'));
    const state = sanitizeState(scanString(row, 'state'));
    const count = scanUint(row, 'processes', 32);
    const time = scanUint(row, 'seconds', 32);
    const key = JSON.stringify([command, state]);
    add(counts, key, count);
    add(times, key, time);
    add(byHost, host === '' ? 'unknown' : host, count);
    add(byUser, user, count);
  }
  for (const [key, n] of counts) {
    const [command = '', state = ''] = JSON.parse(key) as string[];
    out.push(sample(FAMILIES.threads, n, { command, state }));
    out.push(sample(FAMILIES.seconds, times.get(key) ?? 0, { command, state }));
  }
  if (opts.byHost) for (const [h, n] of byHost) out.push(sample(FAMILIES.byHost, n, { client_host: h }));
  if (opts.byUser) for (const [u, n] of byUser) out.push(sample(FAMILIES.byUser, n, { mysql_user: u }));
}

export class ProcesslistCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    const rows = await this.db.query(processlistQuery(intOption(this.options.min_time)), [], { signal });
    processlistSamples(
      rows,
      {
        byUser: boolOption(this.options.processes_by_user),
        byHost: boolOption(this.options.processes_by_host),
      },
      out,
    );
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: [processlistQuery(0)],
    families: Object.values(FAMILIES),
    labels: ['command', 'state', 'client_host', 'mysql_user'],
  }),
  create: (ctx) => new ProcesslistCollector(ctx),
};
