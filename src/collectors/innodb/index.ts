/**
 * innodb — counters from information_schema.INNODB_METRICS.
 *
 * `all` picks the rows: `no` (default) the metrics listed in the plan, `enabled` the rows
 * the server currently maintains, `yes` every row. The "enabled" column differs by flavor
 * (MySQL: STATUS='enabled'; MariaDB: ENABLED=1, no STATUS column); the source table picks
 * the filter. Each value carries meta `subsystem`; for the mysqld_exporter emulation also
 * `name`, `type` and `comment` (INNODB_META), read with the values the first time and
 * remembered after that.
 */
import type {
  CollectResult,
  Collector,
  CollectorContext,
  CollectorHelp,
  CollectorRegistration,
} from '../../core/collector.js';
import type { Db, Row } from '../../core/db.js';
import { INNODB_META, MetricType, type MetricValue } from '../../core/metrics.js';
import type { Plan } from '../../core/plan.js';
import { parseValue } from '../../db/values.js';
import { columnKey, field, levelPlans, option, placeholders, queryError } from '../kit/common.js';
import { prepareSource } from '../kit/sources.js';
import { sharedText } from '../../util/text.js';
import { CappedMap } from '../../util/capped.js';

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

const COLUMNS = 'subsystem, name, count';
/** The exporter emulation also reads the columns mysqld_exporter names and describes metrics by. */
const EXPORTER_COLUMNS = 'subsystem, name, count, type, comment';
const FROM = 'FROM information_schema.innodb_metrics';

/** The `all: enabled` filter of each source key the source table gives for innodb. */
const ENABLED_FILTER: Readonly<Record<string, string>> = {
  'innodb_metrics:status': "status='enabled'",
  'innodb_metrics:enabled': 'enabled=1',
};

/** One level's query. */
export interface InnodbQuery {
  sql: string;
  params: string[];
}

/**
 * The query for an `all` option value and metric list. Only `enabled` depends on the
 * server: `source` is the source table's key for it. An empty list with `all: no` is
 * refused here (Blip sends `IN ()`, a syntax error). `exporter` adds the TYPE and COMMENT
 * columns.
 */
export function buildInnodbQuery(
  all: string,
  metrics: readonly string[],
  source: string,
  exporter = false,
): InnodbQuery {
  const q = innodbQuery(all, metrics, source, exporter);
  q.sql = sharedText(q.sql); // every monitor of the plan builds the same statement
  return q;
}

function innodbQuery(
  all: string,
  metrics: readonly string[],
  source: string,
  exporter: boolean,
): InnodbQuery {
  const base = `SELECT ${exporter ? EXPORTER_COLUMNS : COLUMNS} ${FROM}`;
  if (all === 'yes') return { sql: base, params: [] };
  if (all === 'enabled') {
    const filter = ENABLED_FILTER[source];
    if (filter === undefined) throw new Error(`innodb: no enabled filter for source ${source}`);
    return { sql: `${base} WHERE ${filter}`, params: [] };
  }
  if (metrics.length === 0) throw new Error('no metrics specified');
  // NAME compares case-insensitively by column collation; lowercase for tidiness.
  const names = metrics.map((m) => m.toLowerCase());
  return { sql: `${base} WHERE name IN (${placeholders(names.length)})`, params: names };
}

/**
 * The exporter meta of each metric (subsystem, name, type, comment), made once and shared
 * by every value of that metric while the server's columns stay the same. TYPE and COMMENT
 * never change on a running server: once every metric of a level was read with them, the
 * level's lean query (without them) is enough, which keeps scrapes cheap.
 */
export class InnodbMetaCache {
  readonly #byName = new Map<string, Readonly<Record<string, string>>>();

  /** The frozen meta for one row's columns (`type` lowercased). */
  meta(subsystem: string, name: string, type: string, comment: string): Readonly<Record<string, string>> {
    const lowerType = type.toLowerCase();
    const cached = this.#byName.get(name);
    if (
      cached !== undefined &&
      cached[INNODB_META.subsystem] === subsystem &&
      cached[INNODB_META.type] === lowerType &&
      cached[INNODB_META.comment] === comment
    )
      return cached;
    const meta = Object.freeze({
      [INNODB_META.subsystem]: subsystem,
      [INNODB_META.name]: name,
      [INNODB_META.type]: lowerType,
      [INNODB_META.comment]: comment,
    });
    this.#byName.set(name, meta);
    return meta;
  }

  /** The meta made earlier for a metric read by the lean query, if its subsystem still matches. */
  known(subsystem: string, name: string): Readonly<Record<string, string>> | undefined {
    const cached = this.#byName.get(name);
    return cached?.[INNODB_META.subsystem] === subsystem ? cached : undefined;
  }
}

/**
 * Pure part of collect(): INNODB_METRICS rows → values with subsystem meta. With `exporter`
 * (the exporter emulation) the meta also carries NAME, TYPE and COMMENT, shared per metric:
 * from the rows, or with `lean` (rows without TYPE and COMMENT) from what the cache already
 * knows. Undefined when a lean row names a metric the cache does not know yet.
 */
export function innodbValues(
  rows: readonly Row[],
  exporter?: InnodbMetaCache,
  lean = false,
): MetricValue[] | undefined {
  const values: MetricValue[] = [];
  for (const row of rows) {
    const rawName = field(row, 'name') ?? '';
    const name = rawName.toLowerCase();
    let value = parseValue(field(row, 'count') ?? null);
    if (name === '' || value === undefined) continue;
    if (value < 0) value = 0; // old MySQL bug #75966 made some counts negative
    const subsystem = field(row, 'subsystem') ?? '';
    let meta: Readonly<Record<string, string>> | undefined;
    if (exporter === undefined) meta = { [INNODB_META.subsystem]: subsystem };
    else {
      meta = lean
        ? exporter.known(subsystem, rawName)
        : exporter.meta(subsystem, rawName, field(row, 'type') ?? '', field(row, 'comment') ?? '');
      if (meta === undefined) return undefined;
    }
    values.push({
      name,
      value,
      type: GAUGES.has(name) ? MetricType.Gauge : MetricType.CumulativeCounter,
      meta,
    });
  }
  return values;
}

/** What an {@link InnodbReader} works out once per metric (NAME and SUBSYSTEM as the server spells them). */
interface MetricInfo {
  rawName: string;
  subsystem: string;
  /** lowercase NAME; '' when the row is skipped */
  name: string;
  type: MetricType;
  meta: Readonly<Record<string, string>>;
}

/** Metrics the shared table remembers; past that it starts over (metrics are a small, stable set). */
const METRICS_KEPT = 20_000;

/** Every reader's metric table: a metric is worked out once per process, its MetricInfo kept once. */
const METRICS = new CappedMap<string, MetricInfo>(METRICS_KEPT);

function metricInfo(rawName: string, subsystem: string): MetricInfo {
  const key = `${subsystem}\0${rawName}`;
  let info = METRICS.get(key);
  if (info === undefined) {
    const name = rawName.toLowerCase();
    info = {
      rawName,
      subsystem,
      name,
      type: GAUGES.has(name) ? MetricType.Gauge : MetricType.CumulativeCounter,
      meta: Object.freeze({ [INNODB_META.subsystem]: subsystem }),
    };
    METRICS.set(key, info);
  }
  return info;
}

/**
 * innodbValues() without the exporter, in one pass and with the per-metric work (lowercasing,
 * the type, the meta) done once per metric: INNODB_METRICS lists the same metrics in the same
 * order every time, so a row is recognised by comparing its NAME and SUBSYSTEM with the ones
 * at its position. Each metric's meta is one frozen object; the values are made anew each
 * time (see VariableReader).
 */
export class InnodbReader {
  /** The metric of each row of the last read, by position. */
  #infos: MetricInfo[] = [];

  read(rows: readonly Row[]): MetricValue[] {
    const values: MetricValue[] = [];
    const first = rows[0];
    if (first === undefined) return values;
    const nameKey = columnKey(first, 'name');
    const subsystemKey = columnKey(first, 'subsystem');
    const countKey = columnKey(first, 'count');
    const infos = this.#infos;
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i] as Row;
      const rawName = (nameKey === undefined ? undefined : row[nameKey]) ?? '';
      const subsystem = (subsystemKey === undefined ? undefined : row[subsystemKey]) ?? '';
      let info = infos[i];
      if (info === undefined || info.rawName !== rawName || info.subsystem !== subsystem) {
        info = metricInfo(rawName, subsystem);
        infos[i] = info;
      }
      if (info.name === '') continue;
      let n = parseValue((countKey === undefined ? undefined : row[countKey]) ?? null);
      if (n === undefined) continue;
      if (n < 0) n = 0; // old MySQL bug #75966 made some counts negative
      values.push({ name: info.name, value: n, type: info.type, meta: info.meta });
    }
    if (infos.length > rows.length) infos.length = rows.length;
    return values;
  }
}

export class InnodbCollector implements Collector {
  readonly domain = DOMAIN;
  readonly #db: Db;
  readonly #exporter: InnodbMetaCache | undefined;
  #levels = new Map<string, InnodbQuery>();
  /** Each level's row reader without the exporter (innodbValues() in one pass), made on first use. */
  readonly #readers = new Map<string, InnodbReader>();
  /** Exporter reading: each level's query without TYPE and COMMENT, once the cache knows them. */
  #lean = new Map<string, InnodbQuery>();
  /** Levels whose metrics the cache knows (their lean query is enough). */
  readonly #known = new Set<string>();

  constructor(ctx: CollectorContext) {
    this.#db = ctx.db;
    this.#exporter = ctx.exporterReading === undefined ? undefined : new InnodbMetaCache();
  }

  async prepare(plan: Plan, signal: AbortSignal): Promise<void> {
    const levels = new Map<string, InnodbQuery>();
    const lean = new Map<string, InnodbQuery>();
    let source: Promise<string> | undefined;
    for (const [level, dp] of levelPlans(plan, DOMAIN)) {
      const all = option(dp, 'all');
      // The source only matters for `all: enabled`; ask the server only then.
      const key = all === 'enabled' ? await (source ??= this.#source(signal)) : '';
      levels.set(level, buildInnodbQuery(all, dp.metrics, key, this.#exporter !== undefined));
      if (this.#exporter !== undefined) lean.set(level, buildInnodbQuery(all, dp.metrics, key));
    }
    this.#levels = levels;
    this.#readers.clear();
    this.#lean = lean;
    this.#known.clear();
  }

  async #source(signal: AbortSignal): Promise<string> {
    const prepared = await prepareSource(this.#db, DOMAIN, signal);
    return prepared.sources[0] ?? '';
  }

  async collect(level: string, signal: AbortSignal): Promise<CollectResult> {
    const full = this.#levels.get(level);
    if (full === undefined) return { values: [] };
    const lean = this.#known.has(level) ? this.#lean.get(level) : undefined;
    try {
      if (this.#exporter === undefined) {
        const rows = await this.#db.query(full.sql, full.params, { signal });
        let reader = this.#readers.get(level);
        if (reader === undefined) {
          reader = new InnodbReader();
          this.#readers.set(level, reader);
        }
        return { values: reader.read(rows) };
      }
      if (lean !== undefined) {
        const rows = await this.#db.query(lean.sql, lean.params, { signal });
        const values = innodbValues(rows, this.#exporter, true);
        if (values !== undefined) return { values };
        this.#known.delete(level); // a metric the cache has not seen: read the columns again
      }
      const values =
        innodbValues(await this.#db.query(full.sql, full.params, { signal }), this.#exporter) ?? [];
      if (this.#exporter !== undefined) this.#known.add(level);
      return { values };
    } catch (err) {
      return { values: [], error: queryError(err) };
    }
  }
}

export const registration: CollectorRegistration = {
  help,
  create: (ctx) => new InnodbCollector(ctx),
};
