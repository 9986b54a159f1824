/**
 * wait.io.table — table I/O wait counts and timers from
 * performance_schema.table_io_waits_summary_by_table.
 *
 * One row per table the server has seen I/O on: COUNT_* and SUM/MIN/AVG/MAX_TIMER_* for all
 * I/O and split by read/write/fetch/insert/update/delete (35 columns). Each selected column
 * becomes a metric, grouped by `db` and `tbl`; timers stay in picoseconds (Blip does not
 * convert them). The include/exclude filter (filter.ts) is applied by the server, so a
 * monitor with many tables only receives the ones it asked for; by default the system
 * schemas are excluded.
 *
 * By default the table is truncated after each read, so values are DELTA_COUNTERs covering
 * one interval (truncate failures: truncate.ts); with `truncate-table: no` they are
 * CUMULATIVE_COUNTERs since server start.
 *
 * `group-by` chooses the grouping: `table` (the default, one set per table), `schema` (the
 * tables of each schema added up, `tbl` empty) or `both`. Per schema, counts and sums add
 * up, `max` is the largest, `min` the smallest among tables that had waits, and `avg` is
 * sum ÷ count; the columns these need are read even when the plan does not list them.
 *
 * Flavors: every MySQL, and MariaDB, have the table, but it only fills with
 * `performance_schema=ON` (MariaDB's default is OFF). With it off the domain reports
 * "not supported" once instead of silently reporting nothing.
 */
import type {
  CollectError,
  CollectResult,
  Collector,
  CollectorContext,
  CollectorHelp,
  CollectorRegistration,
} from '../../core/collector.js';
import type { Db, Row, ServerInfo } from '../../core/db.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import type { Plan } from '../../core/plan.js';
import { parseValue } from '../../db/values.js';
import { field, mapLevels, option, queryError } from '../kit/common.js';
import { DEFAULT_TABLE_EXCLUDE, parseTableFilter } from '../kit/filter.js';
import { performanceSchemaEnabled } from '../kit/pfs.js';
import { prepareSource, unsupportedError } from '../kit/sources.js';
import { LevelTruncate, TRUNCATE_POLICY, truncateHow, type TruncateHow } from '../kit/truncate.js';

export const DOMAIN = 'wait.io.table';

export const TABLE = 'table_io_waits_summary_by_table';

/** The 35 columns, lowercase, in table order: count_star, sum_timer_wait, … max_timer_delete. */
export const COLUMNS: readonly string[] = [
  ['star', 'wait'],
  ['read', 'read'],
  ['write', 'write'],
  ['fetch', 'fetch'],
  ['insert', 'insert'],
  ['update', 'update'],
  ['delete', 'delete'],
].flatMap(([count = '', timer = '']) => [
  `count_${count}`,
  `sum_timer_${timer}`,
  `min_timer_${timer}`,
  `avg_timer_${timer}`,
  `max_timer_${timer}`,
]);

const COLUMN_SET: ReadonlySet<string> = new Set(COLUMNS);

export const help: CollectorHelp = {
  domain: DOMAIN,
  description: 'Table I/O waits (counts, and timers in picoseconds) per table from performance_schema',
  sources: [`SELECT OBJECT_SCHEMA, OBJECT_NAME, <columns> FROM performance_schema.${TABLE} WHERE <filter>`],
  options: [
    {
      name: 'include',
      description: 'Tables to collect, comma-separated: db.tbl, db.* or tbl (include wins over exclude)',
      default: '',
    },
    {
      name: 'exclude',
      description: 'Tables to skip, comma-separated: db.tbl, db.* or tbl',
      default: DEFAULT_TABLE_EXCLUDE,
    },
    {
      name: 'truncate-table',
      description: 'Truncate the table after each read, so every value covers one interval',
      default: 'yes',
      values: {
        yes: 'Truncate after each read (values are delta counters; needs DROP on the table)',
        no: 'Never truncate (values are cumulative counters)',
      },
    },
    {
      name: 'truncate-timeout',
      description: 'How long the truncate may wait (for a metadata lock) before it counts as failed',
      default: '250ms',
    },
    {
      name: 'group-by',
      description: 'Report values per table, per schema (its tables added up, tbl=""), or both',
      default: 'table',
      values: {
        table: 'One set of values per table (db, tbl)',
        schema: 'One set of values per schema (db, tbl="")',
        both: 'Per table and per schema',
      },
    },
    {
      name: 'all',
      description: 'Collect all 35 columns, or only those listed under metrics',
      default: 'no',
      values: {
        yes: 'All columns',
        no: 'Only the columns listed under metrics (e.g. count_read, sum_timer_wait)',
      },
    },
  ],
  errors: [
    {
      name: TRUNCATE_POLICY,
      description: `Truncating performance_schema.${TABLE} failed (timeout, missing DROP privilege...)`,
    },
  ],
  groups: [
    { key: 'db', description: 'Schema name (OBJECT_SCHEMA)' },
    { key: 'tbl', description: 'Table name (OBJECT_NAME); "" for a schema (group-by schema or both)' },
  ],
  meta: [],
  metrics: [],
};

/** Option `group-by`. */
export type WaitIoGroupBy = 'table' | 'schema' | 'both';

/** The `group-by` option's value; an unknown one refuses the plan. */
export function parseGroupBy(text: string | undefined): WaitIoGroupBy {
  const t = (text ?? '').trim().toLowerCase();
  if (t === '') return 'table';
  if (t === 'table' || t === 'schema' || t === 'both') return t;
  throw new Error(`invalid value for option group-by: ${t} (expected table, schema or both)`);
}

/** One level's ready-to-run query. */
export interface WaitIoQuery {
  sql: string;
  params: string[];
  /** Selected columns, lowercase, in select order: the reported ones, then those a schema sum needs. */
  columns: string[];
  /** The columns reported (the plan's, or all 35). */
  report: string[];
  groupBy: WaitIoGroupBy;
}

/** `avg_timer_read` → `read`; `count_star` → `wait`. */
function operationOf(column: string): string {
  const op = column.replace(/^(count|sum_timer|min_timer|avg_timer|max_timer)_/, '');
  return op === 'star' ? 'wait' : op;
}

const countOf = (op: string): string => `count_${op === 'wait' ? 'star' : op}`;

/** The columns a per-schema value of `column` is computed from, besides itself. */
function schemaInputs(column: string): string[] {
  const op = operationOf(column);
  if (column.startsWith('avg_')) return [`sum_timer_${op}`, countOf(op)];
  if (column.startsWith('min_')) return [countOf(op)];
  return [];
}

/**
 * Pure: the query for a level. `include`/`exclude` are the raw option values (undefined
 * when the key is absent: then the system schemas are excluded). Plan metrics that are no
 * column are ignored; none left → undefined (nothing to collect).
 */
export function buildWaitIoQuery(
  all: boolean,
  metrics: readonly string[],
  include: string | undefined,
  exclude: string | undefined,
  groupBy: WaitIoGroupBy = 'table',
): WaitIoQuery | undefined {
  const report = all
    ? [...COLUMNS]
    : [...new Set(metrics.map((m) => m.trim().toLowerCase()))].filter((m) => COLUMN_SET.has(m));
  if (report.length === 0) return undefined;
  const columns = [...report];
  if (groupBy !== 'table')
    for (const c of report.flatMap(schemaInputs)) if (!columns.includes(c)) columns.push(c);
  const filter = parseTableFilter(include, exclude).condition('OBJECT_SCHEMA', 'OBJECT_NAME');
  const sql = `SELECT OBJECT_SCHEMA, OBJECT_NAME, ${columns.join(', ')} FROM performance_schema.${TABLE}`;
  return filter === undefined
    ? { sql, params: [], columns, report, groupBy }
    : { sql: `${sql} WHERE ${filter.sql}`, params: filter.params, columns, report, groupBy };
}

/**
 * Pure part of collect(): rows → one value per column per table, grouped by db/tbl. Values
 * are parsed as float (Blip's int64 fails above 2^63−1 ps); rows with a NULL schema or name
 * are skipped.
 */
export function waitIoValues(
  rows: readonly Row[],
  columns: readonly string[],
  type: MetricType,
): MetricValue[] {
  const values: MetricValue[] = [];
  for (const row of rows) {
    const db = field(row, 'OBJECT_SCHEMA');
    const tbl = field(row, 'OBJECT_NAME');
    if (db === null || db === undefined || tbl === null || tbl === undefined) continue;
    for (const col of columns) {
      const value = parseValue(field(row, col));
      if (value === undefined) continue;
      values.push({ name: col, value, type, group: { db, tbl } });
    }
  }
  return values;
}

/** One schema's running totals: column → value (undefined: no table had one yet). */
type SchemaSums = Map<string, number>;

/** Add one table's row to its schema's totals (counts and sums add, max is the largest). */
function addToSchema(sums: SchemaSums, row: Row, columns: readonly string[]): void {
  for (const col of columns) {
    const v = parseValue(field(row, col));
    if (v === undefined) continue;
    const had = sums.get(col);
    if (col.startsWith('max_')) sums.set(col, had === undefined ? v : Math.max(had, v));
    else if (col.startsWith('min_')) {
      // A table without waits of this kind reports min 0: not a wait time.
      if (parseValue(field(row, countOf(operationOf(col)))) === 0) continue;
      sums.set(col, had === undefined ? v : Math.min(had, v));
    } else if (!col.startsWith('avg_')) sums.set(col, (had ?? 0) + v);
  }
}

/**
 * Pure: rows → one value per reported column per schema (db=<schema>, tbl=""); `avg` is
 * the schema's sum ÷ count (0 without waits), `min` 0 when no table had waits of its kind.
 */
export function waitIoSchemaValues(
  rows: readonly Row[],
  report: readonly string[],
  columns: readonly string[],
  type: MetricType,
): MetricValue[] {
  const schemas = new Map<string, SchemaSums>();
  for (const row of rows) {
    const db = field(row, 'OBJECT_SCHEMA');
    const tbl = field(row, 'OBJECT_NAME');
    if (db === null || db === undefined || tbl === null || tbl === undefined) continue;
    let sums = schemas.get(db);
    if (sums === undefined) schemas.set(db, (sums = new Map<string, number>()));
    addToSchema(sums, row, columns);
  }
  const values: MetricValue[] = [];
  for (const [db, sums] of schemas) {
    for (const col of report) {
      const op = operationOf(col);
      let value: number | undefined;
      if (col.startsWith('avg_')) {
        const n = sums.get(countOf(op)) ?? 0;
        value = n > 0 ? (sums.get(`sum_timer_${op}`) ?? 0) / n : 0;
      } else value = sums.get(col) ?? (col.startsWith('min_') ? 0 : undefined);
      if (value !== undefined) values.push({ name: col, value, type, group: { db, tbl: '' } });
    }
  }
  return values;
}

/** The values of one read, grouped as the level's `group-by` says. */
function groupedValues(rows: readonly Row[], q: WaitIoQuery, type: MetricType): MetricValue[] {
  const perTable = q.groupBy === 'schema' ? [] : waitIoValues(rows, q.report, type);
  const perSchema = q.groupBy === 'table' ? [] : waitIoSchemaValues(rows, q.report, q.columns, type);
  return [...perTable, ...perSchema];
}

interface LevelState {
  query: WaitIoQuery | undefined;
  truncate: LevelTruncate;
}

export class WaitIoTableCollector implements Collector {
  readonly domain = DOMAIN;
  readonly #db: Db;
  #levels = new Map<string, LevelState>();
  #info: ServerInfo | undefined;
  #how: TruncateHow = 'truncate';
  /** Set when the domain cannot work here (performance_schema off). */
  #unsupported: CollectError | undefined;

  constructor(ctx: CollectorContext) {
    this.#db = ctx.db;
  }

  async prepare(plan: Plan, signal: AbortSignal): Promise<void> {
    this.#levels = mapLevels(plan, DOMAIN, (dp): LevelState => ({
      query: buildWaitIoQuery(
        option(dp, 'all') === 'yes',
        dp.metrics,
        dp.options.include,
        dp.options.exclude,
        parseGroupBy(dp.options['group-by']),
      ),
      truncate: new LevelTruncate(dp, true),
    }));
    if (this.#levels.size === 0) return;
    const prepared = await prepareSource(this.#db, DOMAIN, signal);
    const info = prepared.info ?? (await this.#db.serverInfo({ signal }));
    this.#info = info;
    this.#how = truncateHow(info);
    this.#unsupported = prepared.unsupported;
    if ((await performanceSchemaEnabled(this.#db, signal)) === false) {
      const reason = 'performance_schema is disabled (start the server with performance_schema=ON)';
      this.#unsupported ??= unsupportedError(DOMAIN, info, reason);
    }
  }

  async collect(level: string, signal: AbortSignal): Promise<CollectResult> {
    const st = this.#levels.get(level);
    if (st === undefined || this.#info === undefined) return { values: [] };
    if (this.#unsupported !== undefined) return { values: [], error: this.#unsupported };
    if (st.query === undefined) return { values: [] }; // no valid column listed

    let rows: Row[];
    try {
      rows = await this.#db.query(st.query.sql, st.query.params, { signal });
    } catch (err) {
      return { values: [], error: queryError(err) };
    }
    const type = st.truncate.enabled ? MetricType.DeltaCounter : MetricType.CumulativeCounter;
    const values = groupedValues(rows, st.query, type);
    return st.truncate.after(this.#db, TABLE, values, this.#how, signal);
  }
}

export const registration: CollectorRegistration = {
  help,
  create: (ctx) => new WaitIoTableCollector(ctx),
};
