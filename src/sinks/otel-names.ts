/**
 * OpenTelemetry naming for the `otlp` sink (`naming: otel`): which sonde values have an
 * equivalent among the metrics of the OpenTelemetry Collector's MySQL receiver, and under
 * which name, unit, attribute set and sum kind they are sent.
 *
 * The receiver reports every metric as an integer Sum (cumulative temporality); some are
 * monotonic (counters such as `mysql.handlers`), some are not (levels such as
 * `mysql.threads` or `mysql.buffer_pool.pages`). Several status variables fold into one
 * metric told apart by one attribute: `Handler_commit` becomes `mysql.handlers` with
 * `kind=commit`. The table below is the single source of the mapping; docs/otel.md lists
 * the same rows and a test checks that both agree.
 */

/** One metric of the receiver: its unit and whether its Sum is monotonic. */
export interface OtelMetricSpec {
  readonly unit: string;
  readonly monotonic: boolean;
}

/** The receiver's metrics that sonde can fill. */
export const OTEL_METRICS: Readonly<Record<string, OtelMetricSpec>> = {
  'mysql.buffer_pool.data_pages': { unit: '1', monotonic: false },
  'mysql.buffer_pool.limit': { unit: 'By', monotonic: false },
  'mysql.buffer_pool.operations': { unit: '1', monotonic: true },
  'mysql.buffer_pool.page_flushes': { unit: '1', monotonic: true },
  'mysql.buffer_pool.pages': { unit: '1', monotonic: false },
  'mysql.buffer_pool.usage': { unit: 'By', monotonic: false },
  'mysql.client.network.io': { unit: 'By', monotonic: true },
  'mysql.commands': { unit: '1', monotonic: true },
  'mysql.connection.count': { unit: '1', monotonic: true },
  'mysql.connection.errors': { unit: '1', monotonic: true },
  'mysql.double_writes': { unit: '1', monotonic: true },
  'mysql.handlers': { unit: '1', monotonic: true },
  'mysql.joins': { unit: '1', monotonic: true },
  'mysql.locks': { unit: '1', monotonic: true },
  'mysql.log_operations': { unit: '1', monotonic: true },
  'mysql.mysqlx_connections': { unit: '1', monotonic: true },
  'mysql.mysqlx_worker_threads': { unit: '1', monotonic: false },
  'mysql.opened_resources': { unit: '1', monotonic: true },
  'mysql.operations': { unit: '1', monotonic: true },
  'mysql.page_operations': { unit: '1', monotonic: true },
  'mysql.prepared_statements': { unit: '1', monotonic: true },
  'mysql.query.client.count': { unit: '1', monotonic: true },
  'mysql.query.count': { unit: '1', monotonic: true },
  'mysql.query.slow.count': { unit: '1', monotonic: true },
  'mysql.replica.time_behind_source': { unit: 's', monotonic: false },
  'mysql.row_locks': { unit: '1', monotonic: true },
  'mysql.row_operations': { unit: '1', monotonic: true },
  'mysql.sorts': { unit: '1', monotonic: true },
  'mysql.table.io.wait.count': { unit: '1', monotonic: true },
  'mysql.table.io.wait.time': { unit: 'ns', monotonic: true },
  'mysql.table_open_cache': { unit: '1', monotonic: true },
  'mysql.threads': { unit: '1', monotonic: false },
  'mysql.tmp_resources': { unit: '1', monotonic: true },
  'mysql.uptime': { unit: 's', monotonic: true },
};

/** How one sonde value (`<domain>.<metric>`) is sent under OpenTelemetry naming. */
export interface OtelRule {
  /** `<domain>.<metric>` of the sonde value. */
  readonly source: string;
  /** Receiver metric name, a key of {@link OTEL_METRICS}. */
  readonly metric: string;
  /** Fixed data point attributes (the value's place in the folded metric). */
  readonly attributes: Readonly<Record<string, string>>;
  /** Group keys renamed to the receiver's attribute names; other group keys are kept. */
  readonly renameGroups?: Readonly<Record<string, string>>;
  /** Unit conversion: value ÷ divisor (negative sentinels such as -1 are kept as they are). */
  readonly divisor?: number;
}

/** A value the receiver computes from two status variables: `minuend − subtrahend`. */
export interface OtelDerivedRule {
  readonly domain: string;
  readonly minuend: string;
  readonly subtrahend: string;
  readonly metric: string;
  readonly attributes: Readonly<Record<string, string>>;
}

const SG = 'status.global';

/** `prefix + v` → `metric{key=v}` for each value (or `[variable suffix, attribute value]`). */
function family(
  metric: string,
  key: string,
  prefix: string,
  values: ReadonlyArray<string | [string, string]>,
): OtelRule[] {
  return values.map((v) => {
    const [suffix, value] = typeof v === 'string' ? [v, v] : v;
    return { source: `${SG}.${prefix}${suffix}`, metric, attributes: { [key]: value } };
  });
}

/** One status variable → one metric without attributes. */
function single(variable: string, metric: string): OtelRule {
  return { source: `${SG}.${variable}`, metric, attributes: {} };
}

const TABLE_GROUPS = { db: 'schema', tbl: 'table' } as const;
const IO_OPERATIONS = ['fetch', 'insert', 'update', 'delete'] as const;

/** Every sonde value with a receiver equivalent. */
export const OTEL_RULES: readonly OtelRule[] = [
  // InnoDB buffer pool
  ...family('mysql.buffer_pool.pages', 'kind', 'innodb_buffer_pool_pages_', ['data', 'free', 'misc']),
  {
    source: `${SG}.innodb_buffer_pool_pages_dirty`,
    metric: 'mysql.buffer_pool.data_pages',
    attributes: { status: 'dirty' },
  },
  {
    source: `${SG}.innodb_buffer_pool_bytes_dirty`,
    metric: 'mysql.buffer_pool.usage',
    attributes: { status: 'dirty' },
  },
  single('innodb_buffer_pool_pages_flushed', 'mysql.buffer_pool.page_flushes'),
  ...family('mysql.buffer_pool.operations', 'operation', 'innodb_buffer_pool_', [
    'read_ahead_rnd',
    'read_ahead',
    'read_ahead_evicted',
    'read_requests',
    'reads',
    'wait_free',
    'write_requests',
  ]),
  { source: 'var.global.innodb_buffer_pool_size', metric: 'mysql.buffer_pool.limit', attributes: {} },
  // Statements
  ...family('mysql.commands', 'command', 'com_', [
    'delete',
    'delete_multi',
    'insert',
    'select',
    'update',
    'update_multi',
  ]),
  ...family('mysql.prepared_statements', 'command', 'com_stmt_', [
    'execute',
    'close',
    'fetch',
    'prepare',
    'reset',
    'send_long_data',
  ]),
  single('queries', 'mysql.query.count'),
  single('questions', 'mysql.query.client.count'),
  single('slow_queries', 'mysql.query.slow.count'),
  // Connections and threads
  single('connections', 'mysql.connection.count'),
  ...family('mysql.connection.errors', 'error', 'connection_errors_', [
    'accept',
    'internal',
    'max_connections',
    'peer_address',
    'select',
    'tcpwrap',
  ]),
  ...family('mysql.connection.errors', 'error', '', [
    ['aborted_clients', 'aborted_clients'],
    ['aborted_connects', 'aborted'],
    ['locked_connects', 'locked'],
  ]),
  ...family('mysql.threads', 'kind', 'threads_', ['cached', 'connected', 'created', 'running']),
  ...family('mysql.client.network.io', 'kind', 'bytes_', ['received', 'sent']),
  ...family('mysql.mysqlx_connections', 'status', 'mysqlx_connections_', ['accepted', 'closed', 'rejected']),
  ...family('mysql.mysqlx_worker_threads', 'kind', 'mysqlx_worker_threads', [
    ['', 'available'],
    ['_active', 'active'],
  ]),
  // Handlers, sorts, joins, locks, temporary and opened resources
  ...family('mysql.handlers', 'kind', 'handler_', [
    'commit',
    'delete',
    'discover',
    'external_lock',
    'mrr_init',
    'prepare',
    'read_first',
    'read_key',
    'read_last',
    'read_next',
    'read_prev',
    'read_rnd',
    'read_rnd_next',
    'rollback',
    'savepoint',
    'savepoint_rollback',
    'update',
    'write',
  ]),
  ...family('mysql.sorts', 'kind', 'sort_', ['merge_passes', 'range', 'rows', 'scan']),
  ...family('mysql.joins', 'kind', 'select_', [
    ['full_join', 'full'],
    ['full_range_join', 'full_range'],
    ['range', 'range'],
    ['range_check', 'range_check'],
    ['scan', 'scan'],
  ]),
  ...family('mysql.locks', 'kind', 'table_locks_', ['immediate', 'waited']),
  ...family('mysql.tmp_resources', 'resource', 'created_tmp_', ['disk_tables', 'files', 'tables']),
  ...family('mysql.opened_resources', 'kind', 'opened_', [
    ['files', 'file'],
    ['tables', 'table'],
    ['table_definitions', 'table_definition'],
  ]),
  ...family('mysql.table_open_cache', 'status', 'table_open_cache_', [
    ['hits', 'hit'],
    ['misses', 'miss'],
    ['overflows', 'overflow'],
  ]),
  // InnoDB I/O, log, pages, rows
  ...family('mysql.double_writes', 'kind', 'innodb_dblwr_', ['pages_written', 'writes']),
  ...family('mysql.log_operations', 'operation', 'innodb_', [
    ['log_waits', 'waits'],
    ['log_write_requests', 'write_requests'],
    ['log_writes', 'writes'],
    ['os_log_fsyncs', 'fsyncs'],
  ]),
  ...family('mysql.operations', 'operation', 'innodb_data_', ['fsyncs', 'reads', 'writes']),
  ...family('mysql.page_operations', 'operation', 'innodb_pages_', ['created', 'read', 'written']),
  ...family('mysql.row_locks', 'kind', 'innodb_row_lock_', ['waits', 'time']),
  ...family('mysql.row_operations', 'operation', 'innodb_rows_', ['deleted', 'inserted', 'read', 'updated']),
  single('uptime', 'mysql.uptime'),
  // Replication: sonde's lag is in milliseconds, the receiver's in seconds.
  { source: 'repl.lag.current', metric: 'mysql.replica.time_behind_source', attributes: {}, divisor: 1000 },
  // Table I/O waits: counts as they are, timers from picoseconds to nanoseconds.
  ...IO_OPERATIONS.map((op) => ({
    source: `wait.io.table.count_${op}`,
    metric: 'mysql.table.io.wait.count',
    attributes: { operation: op },
    renameGroups: TABLE_GROUPS,
  })),
  ...IO_OPERATIONS.map((op) => ({
    source: `wait.io.table.sum_timer_${op}`,
    metric: 'mysql.table.io.wait.time',
    attributes: { operation: op },
    renameGroups: TABLE_GROUPS,
    divisor: 1000,
  })),
];

/** Values the receiver derives from two status variables (clean = data − dirty). */
export const OTEL_DERIVED: readonly OtelDerivedRule[] = [
  {
    domain: SG,
    minuend: 'innodb_buffer_pool_pages_data',
    subtrahend: 'innodb_buffer_pool_pages_dirty',
    metric: 'mysql.buffer_pool.data_pages',
    attributes: { status: 'clean' },
  },
  {
    domain: SG,
    minuend: 'innodb_buffer_pool_bytes_data',
    subtrahend: 'innodb_buffer_pool_bytes_dirty',
    metric: 'mysql.buffer_pool.usage',
    attributes: { status: 'clean' },
  },
];

const BY_SOURCE: ReadonlyMap<string, OtelRule> = new Map(OTEL_RULES.map((r) => [r.source, r]));

/** The rule for one sonde value, or undefined when the receiver has no equivalent. */
export function otelRule(domain: string, name: string): OtelRule | undefined {
  return BY_SOURCE.get(`${domain}.${name}`);
}

/** The value a rule sends: divided by its divisor, negative sentinels kept. */
export function otelValue(rule: OtelRule, value: number): number {
  if (rule.divisor === undefined || value < 0) return value;
  return value / rule.divisor;
}

/** Data point attributes of a value under a rule: the rule's, then the (renamed) group. */
export function otelAttributes(
  rule: OtelRule,
  group: Record<string, string> | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(group ?? {})) out[rule.renameGroups?.[k] ?? k] = v;
  return { ...out, ...rule.attributes };
}
