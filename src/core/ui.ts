/**
 * What the web page at `/` reads (docs/ui.md), as the JSON answers of `GET /api/ui/fleet`
 * and `GET /api/ui/monitor` (docs/api.md). The web layer reaches the monitors only through
 * `UiSource`; the CLI wires it to the loaded monitors and the status registry.
 *
 * A value that cannot be measured is `null`, never 0.
 */

/** The names of the chart series a monitor keeps for the page, in storage order. */
export const SERIES_NAMES = [
  /** Queries per second (rate of `status.global.queries`). */
  'qps',
  /** Connected threads (`status.global.threads_connected`). */
  'connections',
  /** `var.global.max_connections`, held from its last read. */
  'max_connections',
  /** Replication lag in seconds (`repl.lag.current`; none when -1). */
  'repl_lag',
  /** InnoDB buffer pool hit ratio, percent, over the interval (read requests vs disk reads). */
  'bp_hit',
  /** InnoDB buffer pool dirty pages (`innodb_buffer_pool_pages_dirty`). */
  'bp_dirty',
  /** Rows read, inserted, updated, deleted per second (`innodb_rows_*`). */
  'rows_read',
  'rows_inserted',
  'rows_updated',
  'rows_deleted',
  /** Slow queries per second (`slow_queries`). */
  'slow_queries',
  /** Temporary tables created on disk per second (`created_tmp_disk_tables`). */
  'tmp_disk_tables',
] as const;
export type SeriesName = (typeof SERIES_NAMES)[number];

/** A monitor's chart series: `t` in epoch ms, one array per series, `null` where missing. */
export interface UiSeries {
  /** Seconds between two points. */
  stepS: number;
  t: number[];
  values: Record<SeriesName, (number | null)[]>;
}

/** The latest point of each series (what the fleet table shows). */
export type UiLatest = Partial<Record<SeriesName, number>>;

/** One row of the fleet table. */
export interface UiFleetRow {
  id: string;
  /** The redacted DSN. */
  dsn: string;
  /**
   * `running`, `stopped`, `starting`, or `failing`: it cannot connect or prepare its plan, is
   * retrying its start, or its last collection failed (core/health.ts).
   */
  state: 'running' | 'stopped' | 'starting' | 'failing';
  /** The `monitor` status text. */
  stateText: string;
  /** Why it is failing ('' when it is not). */
  failingWhy: string;
  /** `mysql` or `mariadb` once connected. */
  flavor: string | null;
  /** The server's version string once connected. */
  version: string | null;
  plan: string | null;
  levelState: string | null;
  /** Seconds since the last level collection started, or null before the first. */
  lastCollectionAgeS: number | null;
  /** Number of `error:*` status keys. */
  errors: number;
  replLagS: number | null;
  qps: number | null;
  connections: number | null;
  maxConnections: number | null;
}

/** The agent itself. */
export interface UiAgent {
  version: string;
  uptimeS: number;
  /** Monitors per fleet state. */
  monitors: Record<UiFleetRow['state'], number>;
  /** Process CPU, percent of one core, over the time since the previous answer (null the first time). */
  cpuPercent: number | null;
  rssBytes: number;
  heapUsedBytes: number;
  collectionsOnTime: number;
  collectionsLate: number;
}

/** `GET /api/ui/fleet`. */
export interface UiFleet {
  agent: UiAgent;
  /** State changes are refused (`api.read-only`): the page hides its actions. */
  readOnly: boolean;
  /** Seconds between two refreshes of the page. */
  refreshS: number;
  monitors: UiFleetRow[];
}

/** One domain of the monitor's active plan and its last run. */
export interface UiDomain {
  domain: string;
  /** When its last run started (epoch ms), its duration, and its error ('' when ok). */
  at: number | null;
  ms: number | null;
  ok: boolean | null;
  error: string;
  metrics: number | null;
}

export interface UiLevel {
  name: string;
  freq: string;
  domains: string[];
}

export interface UiSink {
  name: string;
  /** The sink's own status text (last send), or null when it writes none. */
  last: string | null;
  error: string | null;
}

/** `GET /api/ui/monitor?id=ID`. */
export interface UiMonitor {
  row: UiFleetRow;
  readOnly: boolean;
  refreshS: number;
  plan: { name: string; levels: UiLevel[] } | null;
  domains: UiDomain[];
  sinks: UiSink[];
  /** Every `error:*` key and its text. */
  errors: Record<string, string>;
  /** null when the history is off for this monitor (`ui-history: false`) or agent-wide. */
  series: UiSeries | null;
  /**
   * Why a series has no point, for each series without one: not in the plan (and what to
   * add), not a replica, no collection yet, a rate waiting for its second collection, the
   * monitor failing.
   */
  empty: Partial<Record<SeriesName, string>>;
}

/** What the page's JSON endpoints read; the CLI wires it. */
export interface UiSource {
  fleet(): UiFleet;
  /** undefined when no such monitor is loaded. */
  monitor(id: string): UiMonitor | undefined;
  /** The monitor's Queries tab; undefined when no such monitor is loaded. */
  queries?(id: string): UiQueries | undefined;
}

/** One digest of the Queries tab: the last hour of its `db.server.top_query` records. */
export interface UiTopQuery {
  digest: string;
  /** Schema, or null for statements without a default schema. */
  schema: string | null;
  /** Obfuscated digest text; null for the `other` row. */
  text: string | null;
  calls: number;
  callsPerS: number;
  /** Mean latency in ms (null without calls). */
  meanMs: number | null;
  /** Share of the hour's statement time, 0–1. */
  share: number;
  /** Rows examined per row sent (null when no row was sent). */
  examinedPerSent: number | null;
}

/** One slow statement (a `db.server.query_sample` record). */
export interface UiSample {
  time: number;
  durationS: number | null;
  text: string | null;
  user: string | null;
  rowsExamined: number | null;
  rowsSent: number | null;
  wait: string | null;
}

/** A digest's current plan (the last `db.server.query_plan` record). */
export interface UiPlan {
  digest: string;
  time: number;
  hash: string;
  plan: string;
  text: string | null;
}

/** One lock wait now (a `sonde.lock_wait` record of the last collection). */
export interface UiLockWait {
  type: string;
  waitS: number | null;
  table: string | null;
  index: string | null;
  waitingId: number | null;
  waitingUser: string | null;
  waitingText: string | null;
  blockingId: number | null;
  blockingUser: string | null;
  blockingText: string | null;
  blockingIdle: boolean;
  blockingIdleS: number | null;
}

/** `GET /api/ui/queries?id=ID`: the monitor's Queries tab. */
export interface UiQueries {
  /** Seconds of records the top table covers (the last hour, or since records began). */
  windowS: number;
  top: UiTopQuery[];
  /** Digest → its latest samples, newest first. */
  samples: Record<string, UiSample[]>;
  /** Digest → its current plan. */
  plans: Record<string, UiPlan>;
  locks: UiLockWait[];
  /** When the lock waits were read (epoch ms), null before the first lock.wait collection. */
  locksAt: number | null;
}
