/**
 * What the userstat scrapers share (info_schema.clientstats, .userstats, .tablestats,
 * .schemastats): the check that the server collects the statistics, and the reading of the
 * CLIENT_STATISTICS / USER_STATISTICS tables, whose families follow the table's columns.
 *
 * The tables exist on MariaDB and Percona Server with `userstat=1`. A server without the
 * variable, or with it `OFF`, gives no samples and no error, as mysqld_exporter does.
 */
import type { Db, Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { family, sample, type Family } from './common.js';
import { scanFloat, scanString } from './sql_scan.js';

/** The variable check the userstat scrapers run first (the first row counts). */
export const USERSTAT_CHECK =
  "SHOW GLOBAL VARIABLES WHERE Variable_Name='userstat' OR Variable_Name='userstat_running'";

/**
 * Whether the userstat tables are worth reading: false when the check fails, finds no
 * variable or finds it `OFF` (exactly that spelling). An aborted scrape still throws.
 */
export async function userstatOn(db: Db, signal: AbortSignal): Promise<boolean> {
  let rows: Row[];
  try {
    rows = await db.query(USERSTAT_CHECK, [], { signal });
  } catch (err) {
    if (signal.aborted) throw err;
    return false;
  }
  const first = rows[0];
  if (first === undefined) return false;
  const [name, value] = Object.values(first);
  if (name === null || name === undefined || value === null || value === undefined) return false;
  return value !== 'OFF';
}

/** One statistics table whose columns become families: the first column is the label. */
export interface StatisticsTable {
  /** Family name prefix, e.g. `mysql_info_schema_client_statistics_`. */
  readonly prefix: string;
  /** The label the first column fills (`client`, `user`). */
  readonly label: string;
  /** Known columns → their family. */
  readonly known: ReadonlyMap<string, Family>;
  /** Families of other columns (untyped), made on first sight. */
  readonly other: Map<string, Family>;
}

/** A table's known columns: [COLUMN, family suffix, TYPE, HELP]. */
export function statisticsTable(
  prefix: string,
  label: string,
  columns: readonly (readonly [string, string, 'counter' | 'gauge', string])[],
): StatisticsTable {
  const known = new Map(columns.map(([c, suffix, type, help]) => [c, family(prefix + suffix, help, type)]));
  return { prefix, label, known, other: new Map() };
}

function columnFamily(table: StatisticsTable, column: string): Family {
  let f = table.known.get(column) ?? table.other.get(column);
  if (f === undefined) {
    f = family(table.prefix + column.toLowerCase(), `Unsupported metric from column ${column}`, 'untyped');
    table.other.set(column, f);
  }
  return f;
}

/**
 * Rows of a statistics table → samples (pure; exported for recorded result sets). The first
 * column is the label, every other column must be a number: a row that is not stops the
 * reading with a scan error (the rows before it are kept).
 */
export function statisticsSamples(table: StatisticsTable, rows: readonly Row[], out: MetricValue[]): void {
  for (const row of rows) {
    const [first, ...columns] = Object.keys(row);
    if (first === undefined) continue;
    const labels = { [table.label]: scanString(row, first) };
    const values = columns.map((c) => scanFloat(row, c));
    columns.forEach((c, i) => out.push(sample(columnFamily(table, c), values[i] ?? 0, labels)));
  }
}
