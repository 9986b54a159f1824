/**
 * exporter.perf_schema.tableiowaits — mysqld_exporter's `perf_schema.tableiowaits` scraper
 * (off by default upstream).
 *
 * Every table of performance_schema.table_io_waits_summary_by_table outside the mysql and
 * performance_schema schemas: I/O wait counts and times per operation (fetch, insert, update,
 * delete), labelled schema, name (the table) and operation.
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, family, upstreamHelp } from './common.js';
import { PFS_PREFIX, num, push, seconds, text } from './perf_schema_common.js';

export const DOMAIN = 'exporter.perf_schema.tableiowaits';

export const QUERY = [
  'SELECT OBJECT_SCHEMA, OBJECT_NAME,',
  '  COUNT_FETCH, COUNT_INSERT, COUNT_UPDATE, COUNT_DELETE,',
  '  SUM_TIMER_FETCH, SUM_TIMER_INSERT, SUM_TIMER_UPDATE, SUM_TIMER_DELETE',
  'FROM performance_schema.table_io_waits_summary_by_table',
  "WHERE OBJECT_SCHEMA NOT IN ('mysql', 'performance_schema')",
].join('\n');

const WAITS = family(
  `${PFS_PREFIX}table_io_waits_total`,
  'The total number of table I/O wait events for each table and operation.',
  'counter',
);
const SECONDS = family(
  `${PFS_PREFIX}table_io_waits_seconds_total`,
  'The total time of table I/O wait events for each table and operation.',
  'counter',
);

const OPERATIONS = ['fetch', 'insert', 'update', 'delete'] as const;

/** Table rows → samples (pure; exported for recorded result sets). */
export function tableIOWaitsSamples(rows: readonly Row[], out: MetricValue[]): void {
  for (const row of rows) {
    const base = { schema: text(row.OBJECT_SCHEMA), name: text(row.OBJECT_NAME) };
    for (const op of OPERATIONS)
      push(out, WAITS, num(row[`COUNT_${op.toUpperCase()}`]), { ...base, operation: op });
    for (const op of OPERATIONS)
      push(out, SECONDS, seconds(row[`SUM_TIMER_${op.toUpperCase()}`]), { ...base, operation: op });
  }
}

export class TableIOWaitsCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    tableIOWaitsSamples(await this.db.query(QUERY, [], { signal }), out);
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: ['performance_schema.table_io_waits_summary_by_table'],
    families: [WAITS, SECONDS],
    labels: ['schema', 'name', 'operation'],
  }),
  create: (ctx) => new TableIOWaitsCollector(ctx),
};
