/**
 * innodb — counters from information_schema.INNODB_METRICS (spec domains.md §2.3).
 *
 * `all` picks the rows: `no` (default) the metrics listed in the plan, `enabled` the rows
 * the server currently maintains, `yes` every row. The "enabled" column differs by flavor
 * (MySQL: STATUS='enabled'; MariaDB: ENABLED=1, no STATUS column), so the filter is chosen
 * from the detected flavor, not the version number. Each value carries meta `subsystem`.
 */
import type {
  CollectResult,
  Collector,
  CollectorContext,
  CollectorHelp,
  CollectorRegistration,
} from '../../core/collector.js';
import type { Db, Flavor, Row } from '../../core/db.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import type { Plan } from '../../core/plan.js';
import { parseValue } from '../../db/values.js';
import { field, levelPlans, option, placeholders, queryError } from '../common.js';

export const DOMAIN = 'innodb';

/** INNODB_METRICS names reported as GAUGE (35); all others are CUMULATIVE_COUNTER. */
export const GAUGES: ReadonlySet<string> = new Set([
  'buffer_pool_bytes_data',
  'buffer_pool_bytes_dirty',
  'buffer_pool_pages_data',
  'buffer_pool_pages_dirty',
  'buffer_pool_pages_free',
  'buffer_pool_pages_misc',
  'buffer_pool_pages_total',
  'buffer_pool_size',
  'ddl_pending_alter_table',
  'file_num_open_files',
  'innodb_page_size',
  'lock_row_lock_time_avg',
  'lock_row_lock_time_max',
  'lock_threads_waiting',
  'log_lsn_archived',
  'log_lsn_buf_dirty_pages_added',
  'log_lsn_buf_pool_oldest_approx',
  'log_lsn_buf_pool_oldest_lwm',
  'log_lsn_checkpoint_age',
  'log_lsn_current',
  'log_lsn_last_checkpoint',
  'log_lsn_last_flush',
  'log_max_modified_age_async',
  'log_max_modified_age_sync',
  'os_log_pending_fsyncs',
  'os_log_pending_writes',
  'os_pending_reads',
  'os_pending_writes',
  'purge_dml_delay_usec',
  'purge_resume_count',
  'purge_stop_count',
  'lock_row_lock_current_waits',
  'trx_active_transactions',
  'trx_rseg_current_size',
  'trx_rseg_history_len',
]);

export const help: CollectorHelp = {
  domain: DOMAIN,
  description: 'InnoDB metrics (information_schema.INNODB_METRICS)',
  sources: ['SELECT subsystem, name, count FROM information_schema.innodb_metrics'],
  options: [
    {
      name: 'all',
      description: 'Which INNODB_METRICS rows to collect',
      default: 'no',
      values: {
        yes: 'Every row, enabled or not',
        enabled: 'Only the metrics the server has enabled (innodb_monitor_enable)',
        no: 'Only the metrics listed under metrics (disabled ones included, frozen at their last value)',
      },
    },
  ],
  errors: [],
  groups: [],
  meta: [{ key: 'subsystem', description: 'SUBSYSTEM column of the metric, as the server spells it' }],
  metrics: [],
};

const BASE_SQL = 'SELECT subsystem, name, count FROM information_schema.innodb_metrics';

/** One level's query. */
export interface InnodbQuery {
  sql: string;
  params: string[];
}

/**
 * The query for an `all` option value and metric list. Only `enabled` depends on the
 * flavor. An empty list with `all: no` is refused here (Blip sends `IN ()`, a syntax error).
 */
export function buildInnodbQuery(all: string, metrics: readonly string[], flavor: Flavor): InnodbQuery {
  if (all === 'yes') return { sql: BASE_SQL, params: [] };
  if (all === 'enabled') {
    return {
      sql: `${BASE_SQL} WHERE ${flavor === 'mariadb' ? 'enabled=1' : "status='enabled'"}`,
      params: [],
    };
  }
  if (metrics.length === 0) throw new Error('no metrics specified');
  // NAME compares case-insensitively by column collation; lowercase for tidiness.
  const names = metrics.map((m) => m.toLowerCase());
  return { sql: `${BASE_SQL} WHERE name IN (${placeholders(names.length)})`, params: names };
}

/** Pure part of collect(): INNODB_METRICS rows → values with subsystem meta. */
export function innodbValues(rows: readonly Row[]): MetricValue[] {
  const values: MetricValue[] = [];
  for (const row of rows) {
    const name = (field(row, 'name') ?? '').toLowerCase();
    let value = parseValue(field(row, 'count') ?? null);
    if (name === '' || value === undefined) continue;
    if (value < 0) value = 0; // old MySQL bug #75966 made some counts negative
    values.push({
      name,
      value,
      type: GAUGES.has(name) ? MetricType.Gauge : MetricType.CumulativeCounter,
      meta: { subsystem: field(row, 'subsystem') ?? '' },
    });
  }
  return values;
}

export class InnodbCollector implements Collector {
  readonly domain = DOMAIN;
  readonly #db: Db;
  #levels = new Map<string, InnodbQuery>();

  constructor(ctx: CollectorContext) {
    this.#db = ctx.db;
  }

  async prepare(plan: Plan, signal: AbortSignal): Promise<void> {
    const levels = new Map<string, InnodbQuery>();
    let flavor: Flavor | undefined;
    for (const [level, dp] of levelPlans(plan, DOMAIN)) {
      const all = option(dp, 'all');
      // The flavor only matters for `all: enabled`; ask the server only then.
      if (all === 'enabled') flavor ??= (await this.#db.serverInfo({ signal })).flavor;
      levels.set(level, buildInnodbQuery(all, dp.metrics, flavor ?? 'mysql'));
    }
    this.#levels = levels;
  }

  async collect(level: string, signal: AbortSignal): Promise<CollectResult> {
    const q = this.#levels.get(level);
    if (q === undefined) return { values: [] };
    let rows: Row[];
    try {
      rows = await this.#db.query(q.sql, q.params, { signal });
    } catch (err) {
      return { values: [], error: queryError(err) };
    }
    return { values: innodbValues(rows) };
  }
}

export const registration: CollectorRegistration = {
  help,
  create: (ctx) => new InnodbCollector(ctx),
};
