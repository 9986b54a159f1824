/**
 * Prometheus names for sonde's own domains (every built-in domain except status.global,
 * var.global, innodb and the `exporter.*` domains, which have names of their own).
 *
 * The rule, one for every domain:
 *
 *     mysql_<domain>_<metric>[_<unit>][_total]
 *
 * - `<domain>` and `<metric>` lowercased, every character outside `[a-z0-9_]` → `_`
 *   (`innodb.buffer-pool` → `innodb_buffer_pool`, `repl.lag` → `repl_lag`);
 * - `<unit>` is the base unit the value is converted to: `seconds` (from milliseconds,
 *   microseconds or picoseconds), `ratio` (a fraction 0–1, from percent), `bytes`; it is not
 *   repeated when the metric is named after it (`size.table.bytes` → `mysql_size_table_bytes`);
 * - `_total` and TYPE counter for cumulative counters; gauges and bools are gauges;
 * - labels are the value's group keys, as they are (`db`, `tbl`, `channel`, …);
 * - the percentile domains (query.response-time, percona.response-time) name a family per
 *   domain, `mysql_<domain>_seconds`, and put the metric (`p99`, `p999`) in the label
 *   `percentile`;
 * - delta counters, events and unknown types are not translated: Prometheus computes rates
 *   from cumulative counters, a value that restarts every interval has no Prometheus type
 *   (set the domain's `truncate-table: no` to get counters);
 * - negative values are the domains' "not measured" markers (`-1` = not a replica, no
 *   heartbeat) and are passed as they are, never converted.
 *
 * docs/prometheus-names.md lists every name. The functions here return a sample without
 * the conversion applied: translate.ts caches the template and divides each value by `div`.
 */
import { MetricType, type MetricValue } from '../core/metrics.js';
import type { PromSample } from './exposition.js';

/** A translation of one value: the sample, and the divisor that converts it to the base unit. */
export type SondeSample = PromSample & { div?: number | undefined };

/** How one metric of a domain is named. */
interface Spec {
  /** Appended to `mysql_<domain>_<metric>`: `_seconds`, `_ratio`; `` for none. */
  unit: string;
  /** The value is divided by this to reach the unit (1000 for ms → s). */
  div?: number;
  help: string;
  /** Force a gauge for a cumulative value that is not a counter (min/max/avg timers). */
  gauge?: boolean;
}

const MS = 1e3;
const US = 1e6;
const PS = 1e12;

/** `mysql_` + sanitized parts joined by `_`. */
function promName(...parts: string[]): string {
  return `mysql_${parts.join('_')}`.replace(/[^a-zA-Z0-9_]/g, '_').toLowerCase();
}

const s = (help: string, unit = '', div?: number): Spec =>
  div === undefined ? { unit, help } : { unit, help, div };

/** Per domain: metric → spec. Domains with many columns build theirs below. */
const FIXED: Readonly<Record<string, Readonly<Record<string, Spec>>>> = {
  repl: {
    running: s(
      'Replication state from SHOW SLAVE/REPLICA STATUS: 1 = both threads running without error, 0 = stopped, connecting or broken, -1 = not a replica.',
    ),
  },
  'repl.lag': {
    current: s(
      'Replication lag in seconds from the heartbeat (or Performance Schema); -1 = no heartbeat or not a replica.',
      'seconds',
      MS,
    ),
    backlog: s('Transactions received but not yet applied.'),
    worker_usage: s('Fraction (0-1) of applier workers busy.', 'ratio', 100),
  },
  'size.database': { bytes: s('Data plus index bytes of all tables of the database ("" = total).') },
  'size.table': { bytes: s('Data plus index bytes of the table ("" = total).') },
  'size.binlog': { bytes: s('Total size of the binary log files.') },
  trx: { oldest: s('Age of the oldest open InnoDB transaction (0 when none).', 'seconds') },
  autoinc: {
    usage: s('Fraction of the auto-increment column type range used; near 1 = full.', 'ratio'),
  },
  tls: { enabled: s('1 when the server accepts TLS connections, 0 when TLS is disabled or unavailable.') },
  'stmt.current': {
    slowest: s('Run time so far of the longest-running statement (0 when none).', 'seconds', US),
    slow: s('Running statements whose run time so far is at least slow-threshold.'),
  },
  // The query-analytics domains: their records never become series; their counts do. Delta
  // counts (calls, records, samples, plans read) have no Prometheus type and are left out.
  'query.top': {
    calls: s('Statements the server counted in the interval (sonde’s own left out).'),
    records: s('db.server.top_query records made in the interval.'),
    digests: s('Rows in the statement digest summary table.'),
    lost_calls: s('Statements counted in the catch-all row of a full digest table.'),
  },
  'query.sample': {
    samples: s('db.server.query_sample records made in the interval.'),
    capped: s('Slow statements not sent: their digest had its samples for this hour.'),
  },
  'query.plan': {
    running: s('Statements running at least the threshold now.'),
    explained: s('Plans read in the interval.'),
    changes: s('db.server.query_plan records made in the interval.'),
  },
  'lock.wait': {
    waits: s('Connections waiting for a lock now, by lock type (row, metadata).'),
    oldest_wait_seconds: s('How long the longest current lock wait has lasted (0 when none).', 'seconds'),
  },
  'stmt.schema': Object.fromEntries(
    [
      ['count_star', 'Statements run', ''],
      ['sum_timer_wait', 'Time spent running statements', 'seconds'],
      ['sum_lock_time', 'Time spent waiting for table locks', 'seconds'],
      ['sum_errors', 'Statements that raised an error', ''],
      ['sum_warnings', 'Statements that raised a warning', ''],
      ['sum_rows_affected', 'Rows affected', ''],
      ['sum_rows_sent', 'Rows sent', ''],
      ['sum_rows_examined', 'Rows examined', ''],
      ['sum_created_tmp_disk_tables', 'On-disk temporary tables created', ''],
      ['sum_created_tmp_tables', 'In-memory temporary tables created', ''],
      ['sum_sort_rows', 'Rows sorted', ''],
      ['sum_select_scan', 'Full scans of a first table', ''],
      ['sum_select_full_join', 'Joins without an index', ''],
      ['sum_no_index_used', 'Statements that used no index', ''],
      ['sum_no_good_index_used', 'Statements that found no good index', ''],
    ].map(([m, h, unit]) => [
      m,
      s(`${h} in the schema, over its statement digests.`, unit, unit === '' ? undefined : PS),
    ]),
  ) as Record<string, Spec>,
};

/** INNODB_BUFFER_POOL_STATS columns (summed over pool instances) → HELP. */
const BUFFER_POOL_HELP: Readonly<Record<string, string>> = {
  pool_size: 'Buffer pool size in pages.',
  free_buffers: 'Free pages in the buffer pool.',
  database_pages: 'Pages holding data in the buffer pool.',
  old_database_pages: 'Pages in the old sublist of the buffer pool LRU list.',
  modified_database_pages: 'Modified (dirty) pages in the buffer pool.',
  pending_decompress: 'Pages pending decompression.',
  pending_reads: 'Pending page reads.',
  pending_flush_lru: 'Pages pending flush from the LRU list.',
  pending_flush_list: 'Pages pending flush from the flush list.',
  pages_made_young: 'Pages made young (moved to the head of the LRU list).',
  pages_not_made_young: 'Pages not made young.',
  pages_made_young_rate: 'Pages made young per second, since the last InnoDB monitor printout.',
  pages_made_not_young_rate: 'Pages not made young per second, since the last InnoDB monitor printout.',
  number_pages_read: 'Pages read into the buffer pool.',
  number_pages_created: 'Pages created in the buffer pool.',
  number_pages_written: 'Pages written from the buffer pool.',
  pages_read_rate: 'Pages read per second, since the last InnoDB monitor printout.',
  pages_create_rate: 'Pages created per second, since the last InnoDB monitor printout.',
  pages_written_rate: 'Pages written per second, since the last InnoDB monitor printout.',
  number_pages_get: 'Logical page read requests.',
  hit_rate:
    'Buffer pool hit rate per thousand page gets (1000 = all from memory), since the last InnoDB monitor printout.',
  young_make_per_thousand_gets: 'Pages made young per thousand page gets.',
  not_young_make_per_thousand_gets: 'Pages not made young per thousand page gets.',
  number_pages_read_ahead: 'Pages read ahead.',
  number_read_ahead_evicted: 'Pages read ahead and evicted without being accessed.',
  read_ahead_rate: 'Read-ahead pages per second, since the last InnoDB monitor printout.',
  read_ahead_evicted_rate:
    'Read-ahead pages evicted unused per second, since the last InnoDB monitor printout.',
  lru_io_total: 'LRU list I/O operations.',
  lru_io_current: 'LRU list I/O operations in the current interval.',
  uncompress_total: 'Pages decompressed.',
  uncompress_current: 'Pages decompressed in the current interval.',
};

const IO_OPS: Readonly<Record<string, string>> = {
  star: 'all',
  wait: 'all',
  read: 'read',
  write: 'write',
  fetch: 'fetch',
  insert: 'insert',
  update: 'update',
  delete: 'delete',
};

/** A performance_schema.table_io_waits_summary_by_table column → spec (undefined: not a column). */
function waitIoSpec(column: string): Spec | undefined {
  const m = /^(count|sum_timer|min_timer|avg_timer|max_timer)_(\w+)$/.exec(column);
  const op = m === null ? undefined : IO_OPS[m[2] ?? ''];
  if (m === null || op === undefined) return undefined;
  if (m[1] === 'count') return s(`Table I/O wait events (${op} operations).`);
  if (m[1] === 'sum_timer') return s(`Total time waited on table I/O (${op} operations).`, 'seconds', PS);
  const stat = m[1] === 'min_timer' ? 'Shortest' : m[1] === 'avg_timer' ? 'Average' : 'Longest';
  return { ...s(`${stat} table I/O wait (${op} operations).`, 'seconds', PS), gauge: true };
}

const ERROR_HELP: Readonly<Record<string, string>> = {
  'error.global': 'Server errors raised, by error ("" = total).',
  'error.account': 'Server errors raised, by account and error ("" = total).',
  'error.host': 'Server errors raised, by client host and error ("" = total).',
  'error.user': 'Server errors raised, by user and error ("" = total).',
  'error.thread': 'Server errors raised, by thread and error ("" = total).',
};

const PERCENTILE_HELP: Readonly<Record<string, string>> = {
  'query.response-time':
    'Statement latency percentile from the performance_schema statement histogram, by percentile (p99, p999, ...).',
  'percona.response-time':
    'Query latency percentile from the QUERY_RESPONSE_TIME plugin (mean of the bucket reached), by percentile (p99, p999, ...).',
};

/** The spec of a non-percentile domain's metric; a generic one for a metric the table lacks. */
function specOf(domain: string, metric: string): Spec | undefined {
  const fixed = FIXED[domain];
  if (fixed !== undefined) return fixed[metric];
  if (domain === 'innodb.buffer-pool') {
    const help = BUFFER_POOL_HELP[metric];
    return help === undefined ? undefined : s(help);
  }
  if (domain === 'wait.io.table') return waitIoSpec(metric);
  const error = ERROR_HELP[domain];
  if (error !== undefined) return metric === 'raised' ? s(error) : undefined;
  return undefined;
}

/** Every domain this module names. */
export const SONDE_PROM_DOMAINS: readonly string[] = [
  ...Object.keys(FIXED),
  'innodb.buffer-pool',
  'wait.io.table',
  ...Object.keys(ERROR_HELP),
  ...Object.keys(PERCENTILE_HELP),
].sort();

/**
 * Label names the translation puts on series: the domains' group keys and `percentile`.
 * (The group keys are fixed by each collector; the unit test checks them against the help.)
 */
export const SONDE_LABELS: readonly string[] = [
  'channel',
  'col',
  'data_type',
  'db',
  'error_host',
  'error_name',
  'error_number',
  'error_thread',
  'error_user',
  'percentile',
  'tbl',
  'type',
];

/** TYPE of a value: cumulative counters are counters (unless forced to gauge), gauges and bools gauges. */
function promTypeOf(v: MetricValue, gaugeOnly: boolean): 'counter' | 'gauge' | undefined {
  if (v.type === MetricType.Gauge || v.type === MetricType.Bool) return 'gauge';
  if (v.type === MetricType.CumulativeCounter) return gaugeOnly ? 'gauge' : 'counter';
  return undefined;
}

/**
 * One value of one of {@link SONDE_PROM_DOMAINS}, named by the module's rule; null for a
 * type that is not translated. A metric the domain does not document gets the rule's name
 * and a generic HELP. `div` is not applied.
 */
export function sondeSample(domain: string, v: MetricValue): SondeSample | null {
  const percentileHelp = PERCENTILE_HELP[domain];
  if (percentileHelp !== undefined) {
    if (promTypeOf(v, true) === undefined) return null;
    const labels = { ...v.group, percentile: v.name };
    return {
      name: promName(domain, 'seconds'),
      help: percentileHelp,
      type: 'gauge',
      value: v.value,
      labels,
      div: US,
    };
  }
  const spec = specOf(domain, v.name) ?? s(`sonde metric ${domain}.${v.name}.`);
  const type = promTypeOf(v, spec.gauge === true);
  if (type === undefined) return null;
  const metric = v.name.toLowerCase();
  const unit = spec.unit === '' || metric === spec.unit || metric.endsWith(`_${spec.unit}`) ? '' : spec.unit;
  const base = promName(domain, metric, ...(unit === '' ? [] : [unit]));
  const name = type === 'counter' ? `${base}_total` : base;
  const out: SondeSample = { name, help: spec.help, type, value: v.value, labels: v.group, div: spec.div };
  return out;
}
