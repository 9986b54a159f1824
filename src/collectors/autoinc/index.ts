/**
 * autoinc — auto-increment headroom per column.
 *
 * For every base table with an auto_increment integer column, `usage` = the table's next
 * AUTO_INCREMENT value / the largest value the column type can hold, a fraction near 0 for
 * a fresh table and near 1 when the column is running out, exactly as Blip computes it so
 * dashboards and alert thresholds carry over. (A full MariaDB TINYINT reports
 * AUTO_INCREMENT = 128, so usage 128/127: slightly above 1 means the next insert fails.)
 * The largest value depends on the integer type and on UNSIGNED: see {@link maxValue}.
 * Columns of other types (FLOAT/DOUBLE auto_increment) are skipped.
 *
 * The include/exclude filter (same tokens as size.table) runs in SQL on the COLUMNS side
 * of the join, so only auto_increment columns of the selected tables come back. AUTO_INCREMENT
 * is parsed as a float, so values above 2^63-1 work (Blip fails the collection there). On
 * MySQL 8, TABLES.AUTO_INCREMENT is cached (information_schema_stats_expiry).
 */
import type { CollectResult, CollectorHelp, CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import type { DomainPlan } from '../../core/plan.js';
import { parseValue } from '../../db/values.js';
import { field } from '../kit/common.js';
import { DEFAULT_TABLE_EXCLUDE, parseTableFilter } from '../kit/filter.js';
import { PerLevelQueryCollector } from '../kit/per-level-query.js';

export const DOMAIN = 'autoinc';

export const help: CollectorHelp = {
  domain: DOMAIN,
  description: 'Auto-increment headroom: largest value used / largest value of the column type',
  sources: [
    "SELECT C.TABLE_SCHEMA, C.TABLE_NAME, C.COLUMN_NAME, C.DATA_TYPE, (LOCATE('unsigned', C.COLUMN_TYPE) > 0) AS is_unsigned, T.AUTO_INCREMENT FROM information_schema.COLUMNS C JOIN information_schema.TABLES T ON … WHERE T.TABLE_TYPE = 'BASE TABLE' AND C.EXTRA = 'auto_increment' AND T.AUTO_INCREMENT IS NOT NULL AND <filter>",
  ],
  options: [
    {
      name: 'include',
      description:
        'Comma-separated tables to check, overriding exclude: db.* (a database), db.tbl, tbl (in any database); * matches any run of characters',
      default: '',
    },
    {
      name: 'exclude',
      description:
        'Comma-separated tables to skip when include is not set (same forms as include); set it empty to skip nothing',
      default: DEFAULT_TABLE_EXCLUDE,
    },
  ],
  errors: [],
  groups: [
    { key: 'db', description: 'Database name' },
    { key: 'tbl', description: 'Table name' },
    { key: 'col', description: 'Auto-increment column name' },
    { key: 'data_type', description: 'Column integer type, e.g. int or bigint unsigned' },
  ],
  meta: [],
  metrics: [
    {
      name: 'usage',
      type: MetricType.Gauge,
      description:
        'Fraction of the column type range used: AUTO_INCREMENT (the next value) / type maximum; near 1 = full',
    },
  ],
};

/** Largest UNSIGNED value per integer DATA_TYPE (exact, as BigInt). */
const UNSIGNED_MAX: ReadonlyMap<string, bigint> = new Map([
  ['tinyint', 255n],
  ['smallint', 65535n],
  ['mediumint', 16777215n],
  ['int', 4294967295n],
  ['bigint', 18446744073709551615n],
]);

/**
 * The largest value of an integer column: the UNSIGNED maximum, or half of it (integer
 * shift: 127, 32767, 8388607, 2147483647, 9223372036854775807) when signed. Undefined for
 * any other DATA_TYPE. The result is a float (bigint maxima round to 2^64 and 2^63).
 */
export function maxValue(dataType: string, unsigned: boolean): number | undefined {
  const max = UNSIGNED_MAX.get(dataType.toLowerCase());
  if (max === undefined) return undefined;
  return Number(unsigned ? max : max >> 1n);
}

const BASE_SQL =
  "SELECT C.TABLE_SCHEMA AS db, C.TABLE_NAME AS tbl, C.COLUMN_NAME AS col, C.DATA_TYPE AS data_type, (LOCATE('unsigned', C.COLUMN_TYPE) > 0) AS is_unsigned, T.AUTO_INCREMENT AS auto_increment" +
  ' FROM information_schema.COLUMNS C JOIN information_schema.TABLES T ON C.TABLE_SCHEMA = T.TABLE_SCHEMA AND C.TABLE_NAME = T.TABLE_NAME' +
  " WHERE T.TABLE_TYPE = 'BASE TABLE' AND C.EXTRA = 'auto_increment' AND T.AUTO_INCREMENT IS NOT NULL";

/** One level's ready-to-run query. */
export interface AutoincQuery {
  sql: string;
  params: string[];
}

/** Build the query for the options of one level (raw option values, as in the plan). */
export function buildAutoincQuery(options: Readonly<Record<string, string>>): AutoincQuery {
  const cond = parseTableFilter(options.include, options.exclude).condition('C.TABLE_SCHEMA', 'C.TABLE_NAME');
  const where = cond === undefined ? '' : ` AND ${cond.sql}`;
  return { sql: `${BASE_SQL}${where} ORDER BY C.TABLE_SCHEMA, C.TABLE_NAME`, params: cond?.params ?? [] };
}

/** Pure part of collect(): rows → one `usage` value per auto-increment integer column. */
export function autoincValues(rows: readonly Row[]): MetricValue[] {
  const values: MetricValue[] = [];
  for (const row of rows) {
    const type = (field(row, 'data_type') ?? '').toLowerCase();
    const unsigned = parseValue(field(row, 'is_unsigned')) === 1;
    const max = maxValue(type, unsigned);
    const next = parseValue(field(row, 'auto_increment'));
    if (max === undefined || next === undefined) continue;
    values.push({
      name: 'usage',
      value: next / max,
      type: MetricType.Gauge,
      group: {
        db: field(row, 'db') ?? '',
        tbl: field(row, 'tbl') ?? '',
        col: field(row, 'col') ?? '',
        data_type: unsigned ? `${type} unsigned` : type,
      },
    });
  }
  return values;
}

export class AutoincCollector extends PerLevelQueryCollector<AutoincQuery> {
  readonly domain = DOMAIN;
  protected readonly source = 'columns';

  protected buildQuery(dp: DomainPlan): AutoincQuery {
    return buildAutoincQuery(dp.options);
  }

  protected toResult(rows: Row[]): CollectResult {
    return { values: autoincValues(rows) };
  }
}

export const registration: CollectorRegistration = {
  help,
  create: (ctx) => new AutoincCollector(ctx),
};
