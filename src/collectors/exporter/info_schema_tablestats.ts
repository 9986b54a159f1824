/**
 * exporter.info_schema.tablestats — mysqld_exporter's `info_schema.tablestats` scraper (off
 * by default).
 *
 * With userstat on (MariaDB, Percona Server: `userstat=1`), every row of
 * `information_schema.table_statistics` gives three counters labelled schema and table:
 * rows read, rows changed, and rows changed × indexes changed. Without userstat (the variable
 * missing or `OFF`) there is nothing, and no error.
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, columnSamples, family, upstreamHelp } from './common.js';
import { scanString, scanUint } from './sql_scan.js';
import { USERSTAT_CHECK, userstatOn } from './userstat.js';

export const DOMAIN = 'exporter.info_schema.tablestats';

export const QUERY =
  'SELECT TABLE_SCHEMA, TABLE_NAME, ROWS_READ, ROWS_CHANGED, ROWS_CHANGED_X_INDEXES FROM information_schema.table_statistics';

const PREFIX = 'mysql_info_schema_table_statistics_';

/** Column → family. */
export const FAMILIES = {
  ROWS_READ: family(`${PREFIX}rows_read_total`, 'The number of rows read from the table.', 'counter'),
  ROWS_CHANGED: family(`${PREFIX}rows_changed_total`, 'The number of rows changed in the table.', 'counter'),
  ROWS_CHANGED_X_INDEXES: family(
    `${PREFIX}rows_changed_x_indexes_total`,
    'The number of rows changed in the table, multiplied by the number of indexes changed.',
    'counter',
  ),
} as const;

/** TABLE_STATISTICS rows → samples (pure; a row that does not scan stops the reading). */
export function tableStatsSamples(rows: readonly Row[], out: MetricValue[]): void {
  columnSamples(
    rows,
    FAMILIES,
    (row) => ({ schema: scanString(row, 'TABLE_SCHEMA'), table: scanString(row, 'TABLE_NAME') }),
    (row, column) => scanUint(row, column, 64),
    out,
  );
}

export class TableStatsCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    if (!(await userstatOn(this.db, signal))) return;
    tableStatsSamples(await this.db.query(QUERY, [], { signal }), out);
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: [USERSTAT_CHECK, QUERY],
    families: Object.values(FAMILIES),
    labels: ['schema', 'table'],
  }),
  create: (ctx) => new TableStatsCollector(ctx),
};
