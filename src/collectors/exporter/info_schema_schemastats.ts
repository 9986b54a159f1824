/**
 * exporter.info_schema.schemastats — mysqld_exporter's `info_schema.schemastats` scraper (off
 * by default).
 *
 * With userstat on (MariaDB, Percona Server: `userstat=1`), `information_schema.table_statistics`
 * summed per schema gives three counters labelled schema: rows read, rows changed, and rows
 * changed × indexes changed. Without userstat (the variable missing or `OFF`) there is
 * nothing, and no error.
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, columnSamples, family, upstreamHelp } from './common.js';
import { scanString, scanUint } from './sql_scan.js';
import { USERSTAT_CHECK, userstatOn } from './userstat.js';

export const DOMAIN = 'exporter.info_schema.schemastats';

export const QUERY =
  'SELECT TABLE_SCHEMA, SUM(ROWS_READ) AS ROWS_READ, SUM(ROWS_CHANGED) AS ROWS_CHANGED, ' +
  'SUM(ROWS_CHANGED_X_INDEXES) AS ROWS_CHANGED_X_INDEXES FROM information_schema.TABLE_STATISTICS GROUP BY TABLE_SCHEMA';

const PREFIX = 'mysql_info_schema_schema_statistics_';

/** Column → family. */
export const FAMILIES = {
  ROWS_READ: family(`${PREFIX}rows_read_total`, 'The number of rows read from the schema.', 'counter'),
  ROWS_CHANGED: family(`${PREFIX}rows_changed_total`, 'The number of rows changed in the schema.', 'counter'),
  ROWS_CHANGED_X_INDEXES: family(
    `${PREFIX}rows_changed_x_indexes_total`,
    'The number of rows changed in the schema, multiplied by the number of indexes changed.',
    'counter',
  ),
} as const;

/** Per-schema sums → samples (pure; a row that does not scan stops the reading). */
export function schemaStatsSamples(rows: readonly Row[], out: MetricValue[]): void {
  columnSamples(
    rows,
    FAMILIES,
    (row) => ({ schema: scanString(row, 'TABLE_SCHEMA') }),
    (row, column) => scanUint(row, column, 64),
    out,
  );
}

export class SchemaStatsCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    if (!(await userstatOn(this.db, signal))) return;
    schemaStatsSamples(await this.db.query(QUERY, [], { signal }), out);
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: [USERSTAT_CHECK, QUERY],
    families: Object.values(FAMILIES),
    labels: ['schema'],
  }),
  create: (ctx) => new SchemaStatsCollector(ctx),
};
