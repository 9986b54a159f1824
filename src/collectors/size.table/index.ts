/**
 * size.table — bytes per table (data + indexes) from information_schema.TABLES.
 *
 * Protecting the database: the include/exclude filter is a bound WHERE condition (see
 * filter.ts). By default every matching table is reported, as Blip does. The optional
 * `limit` option (sonde's) caps the rows the server sends: the query then asks for limit+1
 * rows, largest first; when the extra row arrives, the `limit` largest tables are reported
 * together with a `table-limit` error that says how many were cut, so a monitor never
 * silently loses tables. The default plans collect size.* every 5 minutes only.
 *
 * `total: yes` adds a value with db="" and tbl="" summing the reported tables. Views are
 * reported with 0 bytes. Same MySQL 8 statistics caching as size.database.
 */
import {
  CollectError,
  type CollectResult,
  type CollectorHelp,
  type CollectorRegistration,
} from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import type { DomainPlan } from '../../core/plan.js';
import { parseValue } from '../../db/values.js';
import { field } from '../kit/common.js';
import { DEFAULT_TABLE_EXCLUDE, parseTableFilter } from '../kit/filter.js';
import { PerLevelQueryCollector } from '../kit/per-level-query.js';

export const DOMAIN = 'size.table';

/** Default cap on the number of tables reported per collection: none (0), as in Blip. */
export const DEFAULT_LIMIT = 0;

export const help: CollectorHelp = {
  domain: DOMAIN,
  description: 'Table sizes: data plus index bytes per table from information_schema.TABLES',
  sources: [
    'SELECT table_schema AS db, table_name AS tbl, COALESCE(data_length + index_length, 0) AS tbl_size_bytes FROM information_schema.TABLES WHERE <filter> ORDER BY tbl_size_bytes DESC, db, tbl [LIMIT <limit+1>]',
  ],
  options: [
    {
      name: 'total',
      description: 'Report a total over the reported tables as bytes with db="" and tbl=""',
      default: 'no',
      values: { yes: 'Per-table values plus the total', no: 'Per-table values only' },
    },
    {
      name: 'include',
      description:
        'Comma-separated tables to report, overriding exclude: db.* (a database), db.tbl, tbl (in any database); * matches any run of characters',
      default: '',
    },
    {
      name: 'exclude',
      description:
        'Comma-separated tables to skip when include is not set (same forms as include); set it empty to skip nothing',
      default: DEFAULT_TABLE_EXCLUDE,
    },
    {
      name: 'limit',
      description:
        'Report at most this many tables, the largest first; more matching tables raise the table-limit error (0, the default: every matching table)',
      default: String(DEFAULT_LIMIT),
    },
  ],
  errors: [
    {
      name: 'table-limit',
      description:
        'More tables match than limit: the largest limit tables are still reported; the policy only decides whether this is reported',
    },
  ],
  groups: [
    { key: 'db', description: 'Database name; "" for the total' },
    { key: 'tbl', description: 'Table name; "" for the total' },
  ],
  meta: [],
  metrics: [
    { name: 'bytes', type: MetricType.Gauge, description: 'data_length + index_length of the table' },
  ],
};

/** One level's ready-to-run query. */
export interface TableQuery {
  sql: string;
  params: string[];
  total: boolean;
  /** 0 = unlimited */
  limit: number;
}

/** Parse the `limit` option: a whole number ≥ 0; unset → {@link DEFAULT_LIMIT}. */
export function parseLimit(text: string | undefined): number {
  const t = (text ?? '').trim();
  if (t === '') return DEFAULT_LIMIT;
  if (!/^\d+$/.test(t) || !Number.isSafeInteger(Number(t))) {
    throw new Error(`invalid value for option limit: ${t} (expected a whole number, 0 = no limit)`);
  }
  return Number(t);
}

/** Build the query for the options of one level (raw option values, as in the plan). */
export function buildTableQuery(options: Readonly<Record<string, string>>): TableQuery {
  const filter = parseTableFilter(options.include, options.exclude);
  const limit = parseLimit(options.limit);
  const cond = filter.condition('table_schema', 'table_name');
  let sql =
    'SELECT table_schema AS db, table_name AS tbl, COALESCE(data_length + index_length, 0) AS tbl_size_bytes FROM information_schema.TABLES';
  if (cond !== undefined) sql += ` WHERE ${cond.sql}`;
  // Largest first so that a cut keeps the tables that matter; db, tbl make it stable.
  sql += ' ORDER BY tbl_size_bytes DESC, db, tbl';
  // One row more than reported tells "exactly limit" from "more than limit".
  if (limit > 0) sql += ` LIMIT ${limit + 1}`;
  return {
    sql,
    params: cond?.params ?? [],
    // Effective default no: only the exact value yes enables it (as in Blip).
    total: (options.total ?? '').trim().toLowerCase() === 'yes',
    limit,
  };
}

/** What collect() makes of the rows: values, and whether the limit cut any. */
export interface TableValues {
  values: MetricValue[];
  /** Rows beyond the limit were returned (the list is incomplete). */
  truncated: boolean;
}

/** Pure part of collect(): rows → per-table values (at most `limit`), then the total. */
export function tableValues(rows: readonly Row[], total: boolean, limit: number): TableValues {
  const truncated = limit > 0 && rows.length > limit;
  const values: MetricValue[] = [];
  let sum = 0;
  for (const row of truncated ? rows.slice(0, limit) : rows) {
    const bytes = parseValue(field(row, 'tbl_size_bytes'));
    if (bytes === undefined) continue;
    sum += bytes;
    values.push({
      name: 'bytes',
      value: bytes,
      type: MetricType.Gauge,
      group: { db: field(row, 'db') ?? '', tbl: field(row, 'tbl') ?? '' },
    });
  }
  if (total) values.push({ name: 'bytes', value: sum, type: MetricType.Gauge, group: { db: '', tbl: '' } });
  return { values, truncated };
}

export class SizeTableCollector extends PerLevelQueryCollector<TableQuery> {
  readonly domain = DOMAIN;
  protected readonly source = 'tables';

  protected buildQuery(dp: DomainPlan): TableQuery {
    // Raw options: table names are case-sensitive. A bad token or limit refuses the plan.
    return buildTableQuery(dp.options);
  }

  protected toResult(rows: Row[], q: TableQuery): CollectResult {
    const { values, truncated } = tableValues(rows, q.total, q.limit);
    if (!truncated) return { values };
    const error = new CollectError(
      `more than ${q.limit} tables match; reported the ${q.limit} largest${q.total ? ' (total covers only those)' : ''}: raise option limit or narrow include/exclude`,
      // Values are kept whatever the policy says; zero adds nothing.
      { policy: 'table-limit', zero: [] },
    );
    return { values, error };
  }
}

export const registration: CollectorRegistration = {
  help,
  create: (ctx) => new SizeTableCollector(ctx),
};
