/**
 * exporter.auto_increment.columns — mysqld_exporter's `auto_increment.columns` scraper: per
 * auto_increment column of every table that has a next value, that value and the largest
 * value the column's integer type can hold, labelled schema, table and column.
 *
 * One statement over information_schema.columns joined to information_schema.tables
 * (columns first, the schema and table names compared as binary strings). The maximum is
 * 2^bits − 1 for tinyint, smallint, mediumint, int and bigint (one bit more when unsigned);
 * for another type (MariaDB allows auto_increment on FLOAT and DOUBLE) it is NULL and only
 * the current value is served. A current value that is no number fails the scrape (the rows
 * before it are kept).
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, family, parseGoFloat, sample, upstreamHelp } from './common.js';
import { CatalogueReader } from '../kit/common.js';

export const DOMAIN = 'exporter.auto_increment.columns';

export const SQL = `SELECT c.table_schema, c.table_name, column_name, auto_increment,
  pow(2, case data_type
    when 'tinyint'   then 7
    when 'smallint'  then 15
    when 'mediumint' then 23
    when 'int'       then 31
    when 'bigint'    then 63
    end+(column_type like '% unsigned'))-1 as max_int
  FROM information_schema.columns c
  STRAIGHT_JOIN information_schema.tables t ON (BINARY c.table_schema=t.table_schema AND BINARY c.table_name=t.table_name)
  WHERE c.extra = 'auto_increment' AND t.auto_increment IS NOT NULL`;

const VALUE = family(
  'mysql_info_schema_auto_increment_column',
  'The current value of an auto_increment column from information_schema.',
  'gauge',
);
const MAX = family(
  'mysql_info_schema_auto_increment_column_max',
  'The max value of an auto_increment column from information_schema.',
  'gauge',
);

/** Rows (schema, table, column, value, max by position) → samples. */
export function autoIncrementSamples(rows: readonly Row[], out: MetricValue[]): void {
  for (const row of rows) {
    const [schema, table, column, current, max] = Object.values(row);
    const labels = { schema: schema ?? '', table: table ?? '', column: column ?? '' };
    const value = parseGoFloat(current ?? '');
    if (value === undefined)
      throw new Error(
        `auto_increment of ${labels.schema}.${labels.table}.${labels.column}: ${JSON.stringify(current)} is no number`,
      );
    out.push(sample(VALUE, value, labels));
    const maxValue = parseGoFloat(max ?? '');
    if (maxValue !== undefined) out.push(sample(MAX, maxValue, labels));
  }
}

export class AutoIncrementColumnsCollector extends UpstreamCollector {
  readonly domain = DOMAIN;
  readonly #catalogue = new CatalogueReader(this.db);

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    const read = await this.#catalogue.read(SQL, [], signal);
    autoIncrementSamples(read.rows, out);
    if (read.error !== undefined) throw read.error;
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: ['information_schema.columns', 'information_schema.tables'],
    families: [VALUE, MAX],
    labels: ['schema', 'table', 'column'],
  }),
  create: (ctx) => new AutoIncrementColumnsCollector(ctx),
};
