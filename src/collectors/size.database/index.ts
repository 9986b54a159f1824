/**
 * size.database — bytes per schema (data + indexes) from information_schema.TABLES.
 *
 * The server sums and filters: `include` / `exclude` (exact names, or LIKE patterns with
 * `like: yes`) become a bound WHERE condition, so one row per schema comes back. `total`
 * adds (`yes`) or keeps only (`only`) a value with `db` = "" summing the selected schemas.
 *
 * The source is the same on every flavor. On MySQL 8 information_schema serves cached
 * statistics (information_schema_stats_expiry, 1 day by default), so sizes can lag; set it
 * to 0 on the server for live numbers. MariaDB reports live values. Schemas without tables
 * are absent; views count for nothing.
 */
import type { CollectResult, CollectorHelp, CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import type { DomainPlan } from '../../core/plan.js';
import { parseValue } from '../../db/values.js';
import { field } from '../kit/common.js';
import { DEFAULT_SCHEMA_EXCLUDE, parseSchemaFilter } from '../kit/filter.js';
import { PerLevelQueryCollector } from '../kit/per-level-query.js';

export const DOMAIN = 'size.database';

export type TotalMode = 'no' | 'yes' | 'only';

export const help: CollectorHelp = {
  domain: DOMAIN,
  description: 'Database (schema) sizes: data plus index bytes from information_schema.TABLES',
  sources: [
    'SELECT table_schema AS db, SUM(data_length+index_length) AS bytes FROM information_schema.TABLES WHERE <filter> GROUP BY table_schema',
  ],
  options: [
    {
      name: 'total',
      description: 'Report a total over the selected databases as bytes with db=""',
      default: 'no',
      values: {
        no: 'One value per database, no total',
        yes: 'One value per database plus the total',
        only: 'Only the total (summed by the server)',
      },
    },
    {
      name: 'include',
      description: 'Comma-separated databases to report (all others are skipped); overrides exclude',
      default: '',
    },
    {
      name: 'exclude',
      description: 'Comma-separated databases to skip when include is not set',
      default: DEFAULT_SCHEMA_EXCLUDE,
    },
    {
      name: 'like',
      description: 'How include/exclude entries compare with database names',
      default: 'no',
      values: {
        yes: 'Entries are SQL LIKE patterns (% any run, _ one character)',
        no: 'Entries are exact names',
      },
    },
  ],
  errors: [],
  groups: [{ key: 'db', description: 'Database name; "" for the total' }],
  meta: [],
  metrics: [
    { name: 'bytes', type: MetricType.Gauge, description: 'data_length + index_length of all tables' },
  ],
};

/** One level's ready-to-run query. */
export interface DatabaseQuery {
  sql: string;
  params: string[];
  total: TotalMode;
}

/** `yes` and `only` as written; anything else (unset) is `no`, the effective default. */
export function totalMode(text: string): TotalMode {
  return text === 'yes' || text === 'only' ? text : 'no';
}

/** Build the query for the options of one level (raw option values, as in the plan). */
export function buildDatabaseQuery(options: Readonly<Record<string, string>>): DatabaseQuery {
  const total = totalMode((options.total ?? '').trim().toLowerCase());
  const like = (options.like ?? '').trim().toLowerCase() === 'yes';
  const cond = parseSchemaFilter(options.include, options.exclude, like).condition('table_schema');
  const sql =
    total === 'only'
      ? `SELECT '' AS db, COALESCE(SUM(data_length + index_length), 0) AS bytes FROM information_schema.TABLES WHERE ${cond.sql}`
      : `SELECT table_schema AS db, SUM(data_length + index_length) AS bytes FROM information_schema.TABLES WHERE ${cond.sql} GROUP BY table_schema ORDER BY table_schema`;
  return { sql, params: cond.params, total };
}

/** Pure part of collect(): rows → per-db values, plus the total when `total` is yes. */
export function databaseValues(rows: readonly Row[], total: TotalMode): MetricValue[] {
  const values: MetricValue[] = [];
  let sum = 0;
  for (const row of rows) {
    const bytes = parseValue(field(row, 'bytes'));
    if (bytes === undefined) continue; // NULL: the schema holds only views
    sum += bytes;
    values.push({
      name: 'bytes',
      value: bytes,
      type: MetricType.Gauge,
      group: { db: field(row, 'db') ?? '' },
    });
  }
  if (total === 'yes') values.push({ name: 'bytes', value: sum, type: MetricType.Gauge, group: { db: '' } });
  return values;
}

export class SizeDatabaseCollector extends PerLevelQueryCollector<DatabaseQuery> {
  readonly domain = DOMAIN;
  protected readonly source = 'tables';

  protected buildQuery(dp: DomainPlan): DatabaseQuery {
    // Raw options: names in include/exclude are case-sensitive, so no option() here.
    return buildDatabaseQuery(dp.options);
  }

  protected toResult(rows: Row[], q: DatabaseQuery): CollectResult {
    return { values: databaseValues(rows, q.total) };
  }
}

export const registration: CollectorRegistration = {
  help,
  create: (ctx) => new SizeDatabaseCollector(ctx),
};
