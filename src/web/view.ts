/**
 * The web page's JSON (core/ui.ts, docs/ui.md) built from the loaded monitors, their status
 * keys and the process: what `GET /api/ui/fleet` and `GET /api/ui/monitor` answer.
 */
import type { ServerInfo } from '../core/db.js';
import type { Plan } from '../core/plan.js';
import type { LevelTiming } from '../core/probe.js';
import { monitorHealth } from '../core/health.js';
import { MonitorKey, monitorKeyOf } from '../core/status-keys.js';
import { SERIES_NAMES, type SeriesName } from '../core/ui.js';
import type {
  UiAgent,
  UiDomain,
  UiFleet,
  UiFleetRow,
  UiMonitor,
  UiQueries,
  UiSink,
  UiSource,
} from '../core/ui.js';
import type { QueryBuffer } from './queries.js';
import type { DomainRecord } from '../engine/engine.js';
import type { SeriesBuffer } from './series.js';

/** What the page reads of one monitor (a Monitor has all of it). */
export interface UiMonitorLike {
  readonly id: string;
  readonly dsn: string;
  readonly running: boolean;
  readonly config: { sinks?: Record<string, unknown> | undefined };
  readonly series?: SeriesBuffer;
  readonly queries?: QueryBuffer;
  readonly serverInfo?: ServerInfo | undefined;
  readonly activePlan?: Plan | undefined;
  readonly timing?: LevelTiming;
  domainRecords?(): ReadonlyMap<string, DomainRecord>;
}

export interface UiViewDeps {
  version: string;
  /** The loaded monitors, sorted by id. */
  monitors(): readonly UiMonitorLike[];
  /** One monitor's status keys (undefined when it has none). */
  statusOf(id: string): Record<string, string> | undefined;
  /** Seconds the agent has been running. */
  uptimeS(): number;
  /** `api.read-only`. */
  readOnly: boolean;
  /** Epoch ms now; Date.now by default. */
  now?: () => number;
}

/** Refresh bounds: the page polls at the fastest collection interval, within these. */
const MIN_REFRESH_S = 1;
const MAX_REFRESH_S = 60;
const DEFAULT_REFRESH_S = 5;

/** The fastest level of a plan in seconds, bounded for polling; the default without one. */
function refreshOf(plans: readonly (Plan | undefined)[]): number {
  let ms = Infinity;
  for (const p of plans) for (const l of Object.values(p?.levels ?? {})) ms = Math.min(ms, l.freqMs);
  if (!Number.isFinite(ms)) return DEFAULT_REFRESH_S;
  return Math.min(MAX_REFRESH_S, Math.max(MIN_REFRESH_S, Math.round(ms / 1000)));
}

/** The plan's metrics each series reads: domain, then metric names (any of them). */
const SOURCES: Readonly<Record<SeriesName, readonly [string, readonly string[], 'rate' | 'value']>> = {
  qps: ['status.global', ['queries'], 'rate'],
  connections: ['status.global', ['threads_connected'], 'value'],
  max_connections: ['var.global', ['max_connections'], 'value'],
  repl_lag: ['repl.lag', ['current'], 'value'],
  bp_hit: ['status.global', ['innodb_buffer_pool_read_requests', 'innodb_buffer_pool_reads'], 'rate'],
  bp_dirty: ['status.global', ['innodb_buffer_pool_pages_dirty'], 'value'],
  rows_read: ['status.global', ['innodb_rows_read', 'rows_read'], 'rate'],
  rows_inserted: ['status.global', ['innodb_rows_inserted', 'handler_write'], 'rate'],
  rows_updated: ['status.global', ['innodb_rows_updated', 'handler_update'], 'rate'],
  rows_deleted: ['status.global', ['innodb_rows_deleted', 'handler_delete'], 'rate'],
  slow_queries: ['status.global', ['slow_queries'], 'rate'],
  tmp_disk_tables: ['status.global', ['created_tmp_disk_tables'], 'rate'],
};

/** Whether a level of the plan collects one of `metrics` of `domain` (a domain without a metric list collects all). */
function collects(plan: Plan | undefined, domain: string, metrics: readonly string[]): boolean {
  for (const level of Object.values(plan?.levels ?? {})) {
    const dp = level.collect[domain];
    if (dp === undefined) continue;
    if (dp.metrics.length === 0) return true;
    if (dp.metrics.some((x) => metrics.includes(x.toLowerCase()))) return true;
  }
  return false;
}

/** Why each series without a point has none. */
function emptyReasons(
  m: UiMonitorLike,
  status: Record<string, string>,
  history: boolean,
): Partial<Record<SeriesName, string>> {
  const out: Partial<Record<SeriesName, string>> = {};
  if (!history) return out;
  const snap = m.series?.snapshot();
  const health = monitorHealth(status, m.running);
  for (const name of SERIES_NAMES) {
    if (snap?.values[name].some((v) => v !== null)) continue;
    const [domain, metrics, kind] = SOURCES[name];
    if (m.activePlan !== undefined && !collects(m.activePlan, domain, metrics))
      out[name] =
        `not in the plan: add ${domain}${metrics.length === 1 ? `.${metrics[0]}` : ` (${metrics.join(' or ')})`} to a level of plan ${m.activePlan.name}`;
    else if (health.state === 'failing') out[name] = `no data: the monitor is failing: ${health.why}`;
    else if (health.state === 'stopped') out[name] = 'no data: the monitor is stopped';
    else if (m.series?.lastAt === undefined || m.activePlan === undefined)
      out[name] = 'no data yet: no collection so far';
    else if (name === 'repl_lag' && m.series?.notReplica === true)
      out[name] = 'not a replica: repl.lag has no heartbeat from a source to measure';
    else if (name === 'bp_hit' && (snap?.t.length ?? 0) >= 2)
      out[name] = 'no data: no buffer pool read requests between collections (an idle server)';
    else if (kind === 'rate') out[name] = 'no data yet: a rate needs two collections';
    else out[name] = `no data yet: ${domain} has not returned it`;
  }
  return out;
}

/** A finite number or null. */
function num(v: number | undefined): number | null {
  return v === undefined || !Number.isFinite(v) ? null : v;
}

/** One row of the fleet table. */
export function fleetRow(m: UiMonitorLike, status: Record<string, string>, now: number): UiFleetRow {
  const health = monitorHealth(status, m.running);
  const latest = m.series?.latest() ?? {};
  const lastAt = m.series?.lastAt;
  return {
    id: m.id,
    dsn: m.dsn || status[MonitorKey.dsn] || '',
    state: health.state,
    stateText: status[MonitorKey.monitor] ?? '',
    failingWhy: health.why,
    flavor: m.serverInfo?.flavor ?? null,
    version: m.serverInfo?.versionString ?? null,
    plan: status[MonitorKey.levelPlan] ?? null,
    levelState: status[MonitorKey.levelState] ?? null,
    lastCollectionAgeS: lastAt === undefined ? null : Math.max(0, Math.round((now - lastAt) / 1000)),
    errors: Object.keys(status).filter((k) => k.startsWith('error:')).length,
    replLagS: num(latest.repl_lag),
    qps: num(latest.qps),
    connections: num(latest.connections),
    maxConnections: num(latest.max_connections),
  };
}

/** Process CPU as a percent of one core between two calls. */
function cpuMeter(now: () => number): () => number | null {
  let prev: { cpu: NodeJS.CpuUsage; at: number } | undefined;
  return () => {
    const cpu = process.cpuUsage();
    const at = now();
    const before = prev;
    prev = { cpu, at };
    if (before === undefined || at <= before.at) return null;
    const usedUs = cpu.user + cpu.system - before.cpu.user - before.cpu.system;
    return Math.round((usedUs / 1000 / (at - before.at)) * 1000) / 10;
  };
}

function domainsOf(m: UiMonitorLike): UiDomain[] {
  const records = m.domainRecords?.() ?? new Map<string, DomainRecord>();
  const names = new Set<string>(records.keys());
  for (const l of Object.values(m.activePlan?.levels ?? {}))
    for (const d of Object.keys(l.collect)) names.add(d);
  return [...names].sort().map((domain) => {
    const r = records.get(domain);
    return {
      domain,
      at: r?.at ?? null,
      ms: r?.ms ?? null,
      ok: r?.ok ?? null,
      error: r?.error ?? '',
      metrics: r?.metrics ?? null,
    };
  });
}

function sinksOf(m: UiMonitorLike, status: Record<string, string>): UiSink[] {
  const names = Object.keys(m.config.sinks ?? {});
  return (names.length > 0 ? names : ['log']).sort().map((name) => ({
    name,
    last: status[monitorKeyOf.sink(name)] ?? null,
    error: status[monitorKeyOf.sinkSendError(name)] ?? status[monitorKeyOf.sinkError(name)] ?? null,
  }));
}

/** The page's data source over the loaded monitors. */
export function uiSource(deps: UiViewDeps): UiSource {
  const now = deps.now ?? Date.now;
  const cpu = cpuMeter(now);
  const statusOf = (id: string): Record<string, string> => deps.statusOf(id) ?? {};
  const agent = (rows: readonly UiFleetRow[], monitors: readonly UiMonitorLike[]): UiAgent => {
    const counts: UiAgent['monitors'] = { running: 0, starting: 0, failing: 0, stopped: 0 };
    for (const r of rows) counts[r.state]++;
    const mem = process.memoryUsage();
    return {
      version: deps.version,
      uptimeS: deps.uptimeS(),
      monitors: counts,
      cpuPercent: cpu(),
      rssBytes: mem.rss,
      heapUsedBytes: mem.heapUsed,
      collectionsOnTime: monitors.reduce((n, m) => n + (m.timing?.onTime ?? 0), 0),
      collectionsLate: monitors.reduce((n, m) => n + (m.timing?.late ?? 0), 0),
    };
  };
  return {
    fleet(): UiFleet {
      const monitors = deps.monitors();
      const t = now();
      const rows = monitors.map((m) => fleetRow(m, statusOf(m.id), t));
      return {
        agent: agent(rows, monitors),
        readOnly: deps.readOnly,
        refreshS: refreshOf(monitors.map((m) => m.activePlan)),
        monitors: rows,
      };
    },
    queries(id: string): UiQueries | undefined {
      const m = deps.monitors().find((x) => x.id === id);
      if (m === undefined) return undefined;
      return (
        m.queries?.view(now()) ?? { windowS: 0, top: [], samples: {}, plans: {}, locks: [], locksAt: null }
      );
    },
    monitor(id: string): UiMonitor | undefined {
      const m = deps.monitors().find((x) => x.id === id);
      if (m === undefined) return undefined;
      const status = statusOf(id);
      const plan = m.activePlan;
      const levels = Object.values(plan?.levels ?? {}).sort((a, b) => a.freqMs - b.freqMs);
      const history = m.series !== undefined && m.series.slots > 0;
      return {
        row: fleetRow(m, status, now()),
        readOnly: deps.readOnly,
        refreshS: refreshOf([plan]),
        plan:
          plan === undefined
            ? null
            : {
                name: plan.name,
                levels: levels.map((l) => ({
                  name: l.name,
                  freq: l.freq,
                  domains: Object.keys(l.collect).sort(),
                })),
              },
        domains: domainsOf(m),
        sinks: sinksOf(m, status),
        errors: Object.fromEntries(Object.entries(status).filter(([k]) => k.startsWith('error:'))),
        series: history ? (m.series?.snapshot() ?? null) : null,
        empty: emptyReasons(m, status, history),
      };
    },
  };
}
