/**
 * exporter.perf_schema.indexiowaits — mysqld_exporter's `perf_schema.indexiowaits` scraper
 * (off by default upstream).
 *
 * Every index of performance_schema.table_io_waits_summary_by_index_usage outside the mysql
 * and performance_schema schemas: I/O wait counts and times per operation, labelled schema,
 * name (the table), index and operation. The row without an index (INDEX_NAME NULL, served as
 * index `NONE`) counts the table's row operations; only it has an `insert` operation, since
 * inserts use no index.
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, family, upstreamHelp } from './common.js';
import { PFS_PREFIX, num, push, seconds, text } from './perf_schema_common.js';

export const DOMAIN = 'exporter.perf_schema.indexiowaits';

export const QUERY = [
  "SELECT OBJECT_SCHEMA, OBJECT_NAME, ifnull(INDEX_NAME, 'NONE') AS INDEX_NAME,",
  '  COUNT_FETCH, COUNT_INSERT, COUNT_UPDATE, COUNT_DELETE,',
  '  SUM_TIMER_FETCH, SUM_TIMER_INSERT, SUM_TIMER_UPDATE, SUM_TIMER_DELETE',
  'FROM performance_schema.table_io_waits_summary_by_index_usage',
  "WHERE OBJECT_SCHEMA NOT IN ('mysql', 'performance_schema')",
].join('\n');

const WAITS = family(
  `${PFS_PREFIX}index_io_waits_total`,
  'The total number of index I/O wait events for each index and operation.',
  'counter',
);
const SECONDS = family(
  `${PFS_PREFIX}index_io_waits_seconds_total`,
  'The total time of index I/O wait events for each index and operation.',
  'counter',
);

const OPERATIONS = ['fetch', 'insert', 'update', 'delete'] as const;

/** Index rows → samples (pure; exported for recorded result sets). */
export function indexIOWaitsSamples(rows: readonly Row[], out: MetricValue[]): void {
  for (const row of rows) {
    const index = text(row.INDEX_NAME);
    const ops = OPERATIONS.filter((op) => op !== 'insert' || index === 'NONE');
    const base = { schema: text(row.OBJECT_SCHEMA), name: text(row.OBJECT_NAME), index };
    for (const op of ops) push(out, WAITS, num(row[`COUNT_${op.toUpperCase()}`]), { ...base, operation: op });
    for (const op of ops)
      push(out, SECONDS, seconds(row[`SUM_TIMER_${op.toUpperCase()}`]), { ...base, operation: op });
  }
}

export class IndexIOWaitsCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    indexIOWaitsSamples(await this.db.query(QUERY, [], { signal }), out);
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: ['performance_schema.table_io_waits_summary_by_index_usage'],
    families: [WAITS, SECONDS],
    labels: ['schema', 'name', 'index', 'operation'],
  }),
  create: (ctx) => new IndexIOWaitsCollector(ctx),
};
