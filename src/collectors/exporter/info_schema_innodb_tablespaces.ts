/**
 * exporter.info_schema.innodb_tablespaces — mysqld_exporter's `info_schema.innodb_tablespaces`
 * scraper (off by default).
 *
 * Finds the tablespace table in information_schema (`INNODB_SYS_TABLESPACES`: MySQL 5.7 and
 * MariaDB; `INNODB_TABLESPACES`: MySQL 8.0) and reads every tablespace: its space ID as
 * `mysql_info_schema_innodb_tablespace_space_info` (labelled name, file format, row format,
 * space type), its file size and allocated size. MariaDB 10.5 and later have no SPACE_TYPE
 * column: the query leaves it out and the label is empty. `file_format` is, as upstream reads
 * it, the text `FILE_FORMAT` where the table has that column (MySQL 5.7) and `NONE` elsewhere.
 * MySQL before 5.7 is not served (upstream skips the scraper there).
 */
import type { CollectorRegistration } from '../../core/collector.js';
import { CollectError } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, family, sample, upstreamHelp } from './common.js';
import { scanString, scanUint } from './sql_scan.js';

export const DOMAIN = 'exporter.info_schema.innodb_tablespaces';

/** Source keys: the query with SPACE_TYPE, or without it (MariaDB 10.5+). */
export const WITH_SPACE_TYPE = 'innodb_sys_tablespaces';
export const WITHOUT_SPACE_TYPE = 'innodb_sys_tablespaces:no_space_type';

export const TABLE_NAME_QUERY =
  "SELECT table_name FROM information_schema.tables WHERE table_name = 'INNODB_SYS_TABLESPACES' OR table_name = 'INNODB_TABLESPACES'";

/** The tablespace query on `table` (one of the two names above), with or without SPACE_TYPE. */
export function tablespacesQuery(table: string, spaceType: boolean): string {
  return (
    'SELECT SPACE, NAME, ifnull((SELECT column_name FROM information_schema.COLUMNS' +
    ` WHERE TABLE_SCHEMA = 'information_schema' AND TABLE_NAME = '${table}' AND COLUMN_NAME = 'FILE_FORMAT' LIMIT 1),` +
    " 'NONE') as FILE_FORMAT, ifnull(ROW_FORMAT, 'NONE') as ROW_FORMAT," +
    (spaceType ? " ifnull(SPACE_TYPE, 'NONE') as SPACE_TYPE," : '') +
    ` FILE_SIZE, ALLOCATED_SIZE FROM information_schema.\`${table}\``
  );
}

const TABLES = new Set(['INNODB_SYS_TABLESPACES', 'INNODB_TABLESPACES']);

export const FAMILIES = {
  info: family(
    'mysql_info_schema_innodb_tablespace_space_info',
    'The Tablespace information and Space ID.',
    'gauge',
  ),
  fileSize: family(
    'mysql_info_schema_innodb_tablespace_file_size_bytes',
    'The apparent size of the file, which represents the maximum size of the file, uncompressed.',
    'gauge',
  ),
  allocatedSize: family(
    'mysql_info_schema_innodb_tablespace_allocated_size_bytes',
    'The actual size of the file, which is the amount of space allocated on disk.',
    'gauge',
  ),
} as const;

/**
 * Tablespace rows → samples (pure; a row that does not scan stops the reading). Without a
 * SPACE_TYPE column the label is empty.
 */
export function tablespaceSamples(rows: readonly Row[], spaceType: boolean, out: MetricValue[]): void {
  for (const row of rows) {
    const space = scanUint(row, 'SPACE', 32);
    const name = scanString(row, 'NAME');
    const info = {
      tablespace_name: name,
      file_format: scanString(row, 'FILE_FORMAT'),
      row_format: scanString(row, 'ROW_FORMAT'),
      space_type: spaceType ? scanString(row, 'SPACE_TYPE') : '',
    };
    const fileSize = scanUint(row, 'FILE_SIZE', 64);
    const allocated = scanUint(row, 'ALLOCATED_SIZE', 64);
    out.push(sample(FAMILIES.info, space, info));
    out.push(sample(FAMILIES.fileSize, fileSize, { tablespace_name: name }));
    out.push(sample(FAMILIES.allocatedSize, allocated, { tablespace_name: name }));
  }
}

export class InnodbTablespacesCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    const found = await this.db.query(TABLE_NAME_QUERY, [], { signal });
    const first = found[0];
    if (first === undefined) throw new CollectError('no tablespace table: sql: no rows in result set');
    const table = scanString(first, Object.keys(first)[0] ?? 'table_name');
    if (!TABLES.has(table))
      throw new CollectError(
        "couldn't find INNODB_SYS_TABLESPACES or INNODB_TABLESPACES in information_schema",
      );
    const spaceType = this.source !== WITHOUT_SPACE_TYPE;
    tablespaceSamples(
      await this.db.query(tablespacesQuery(table, spaceType), [], { signal }),
      spaceType,
      out,
    );
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: [TABLE_NAME_QUERY, tablespacesQuery('INNODB_SYS_TABLESPACES', true)],
    families: Object.values(FAMILIES),
    labels: ['tablespace_name', 'file_format', 'row_format', 'space_type'],
  }),
  create: (ctx) => new InnodbTablespacesCollector(ctx),
};
