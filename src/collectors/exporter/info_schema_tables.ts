/**
 * exporter.info_schema.tables — mysqld_exporter's `info_schema.tables` scraper (off by
 * default), option `databases` (`--collect.info_schema.tables.databases`, default `*`).
 *
 * For each database — every schema but mysql, performance_schema, information_schema and sys
 * with `*`, else the comma-separated list as given — one query on `information_schema.tables`
 * (bounded by the list: one statement per database, each cancelled with the scrape). Per
 * table: `mysql_info_schema_table_version` (labelled with its type, engine, row format and
 * create options), `mysql_info_schema_table_rows`, and `mysql_info_schema_table_size` per
 * component (data_length, index_length, data_free); NULLs read as `NONE` / 0 in SQL.
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, family, sample, upstreamHelp } from './common.js';
import { scanString, scanUint } from './sql_scan.js';
import { CatalogueReader } from '../kit/common.js';

export const DOMAIN = 'exporter.info_schema.tables';

export const TABLES_QUERY = `SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, ifnull(ENGINE, 'NONE') as ENGINE,
 ifnull(VERSION, '0') as VERSION, ifnull(ROW_FORMAT, 'NONE') as ROW_FORMAT, ifnull(TABLE_ROWS, '0') as TABLE_ROWS,
 ifnull(DATA_LENGTH, '0') as DATA_LENGTH, ifnull(INDEX_LENGTH, '0') as INDEX_LENGTH,
 ifnull(DATA_FREE, '0') as DATA_FREE, ifnull(CREATE_OPTIONS, 'NONE') as CREATE_OPTIONS
 FROM information_schema.tables WHERE TABLE_SCHEMA = ?`;

export const DATABASES_QUERY =
  "SELECT SCHEMA_NAME FROM information_schema.schemata WHERE SCHEMA_NAME NOT IN ('mysql', 'performance_schema', 'information_schema', 'sys')";

export const FAMILIES = {
  version: family('mysql_info_schema_table_version', "The version number of the table's .frm file", 'gauge'),
  rows: family(
    'mysql_info_schema_table_rows',
    'The estimated number of rows in the table from information_schema.tables',
    'gauge',
  ),
  size: family(
    'mysql_info_schema_table_size',
    'The size of the table components from information_schema.tables',
    'gauge',
  ),
} as const;

/** The size components: column → `component` label. */
const COMPONENTS = [
  ['DATA_LENGTH', 'data_length'],
  ['INDEX_LENGTH', 'index_length'],
  ['DATA_FREE', 'data_free'],
] as const;

/** The `databases` option → the databases to read, or undefined for `*` (all but the system ones). */
export function databaseList(option: string): string[] | undefined {
  return option === '*' ? undefined : option.split(',');
}

/** information_schema.tables rows → samples (pure; a row that does not scan stops the reading). */
export function tableSamples(rows: readonly Row[], out: MetricValue[]): void {
  for (const row of rows) {
    const schema = scanString(row, 'TABLE_SCHEMA');
    const table = scanString(row, 'TABLE_NAME');
    const info = {
      schema,
      table,
      type: scanString(row, 'TABLE_TYPE'),
      engine: scanString(row, 'ENGINE'),
      row_format: scanString(row, 'ROW_FORMAT'),
      create_options: scanString(row, 'CREATE_OPTIONS'),
    };
    const version = scanUint(row, 'VERSION', 64);
    const rowCount = scanUint(row, 'TABLE_ROWS', 64);
    const sizes = COMPONENTS.map(([c, component]) => [component, scanUint(row, c, 64)] as const);
    out.push(sample(FAMILIES.version, version, info));
    out.push(sample(FAMILIES.rows, rowCount, { schema, table }));
    for (const [component, v] of sizes) out.push(sample(FAMILIES.size, v, { schema, table, component }));
  }
}

export class TablesCollector extends UpstreamCollector {
  readonly domain = DOMAIN;
  readonly #catalogue = new CatalogueReader(this.db);

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    let databases = databaseList(this.options.databases ?? '*');
    if (databases === undefined) {
      const rows = await this.db.query(DATABASES_QUERY, [], { signal });
      databases = rows.map((r) => scanString(r, 'SCHEMA_NAME'));
    }
    let stale: Error | undefined;
    for (const database of databases) {
      const read = await this.#catalogue.read(TABLES_QUERY, [database], signal);
      tableSamples(read.rows, out);
      stale ??= read.error;
    }
    if (stale !== undefined) throw stale;
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: [DATABASES_QUERY, TABLES_QUERY],
    families: Object.values(FAMILIES),
    labels: ['schema', 'table', 'type', 'engine', 'row_format', 'create_options', 'component'],
  }),
  create: (ctx) => new TablesCollector(ctx),
};
