/**
 * exporter.perf_schema.eventsstatementssum — mysqld_exporter's
 * `perf_schema.eventsstatementssum` scraper (off by default upstream).
 *
 * One row: the sums over every digest of performance_schema.events_statements_summary_by_digest,
 * as unlabelled counters. The lock time stays in picoseconds (as upstream serves it); the
 * wait time is in seconds. With no digest at all the sums are NULL and nothing is served.
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, family, upstreamHelp } from './common.js';
import { PFS_PREFIX, num, push, seconds } from './perf_schema_common.js';

export const DOMAIN = 'exporter.perf_schema.eventsstatementssum';

const f = (name: string, help: string) =>
  family(`${PFS_PREFIX}events_statements_sum_${name}`, help, 'counter');

/** Summed column → family; the bool marks the one timer served in seconds. */
const SUMS = [
  ['COUNT_STAR', f('total', 'The total count of events statements.'), false],
  [
    'SUM_CREATED_TMP_DISK_TABLES',
    f('created_tmp_disk_tables', 'The number of on-disk temporary tables created.'),
    false,
  ],
  ['SUM_CREATED_TMP_TABLES', f('created_tmp_tables', 'The number of temporary tables created.'), false],
  ['SUM_ERRORS', f('errors', 'Number of errors.'), false],
  ['SUM_LOCK_TIME', f('lock_time', 'Time in picoseconds spent waiting for locks.'), false],
  ['SUM_NO_GOOD_INDEX_USED', f('no_good_index_used', 'Number of times no good index was found.'), false],
  ['SUM_NO_INDEX_USED', f('no_index_used', 'Number of times no index was found.'), false],
  ['SUM_ROWS_AFFECTED', f('rows_affected', 'Number of rows affected by statements.'), false],
  ['SUM_ROWS_EXAMINED', f('rows_examined', "Number of rows read during statements' execution."), false],
  ['SUM_ROWS_SENT', f('rows_sent', 'Number of rows returned.'), false],
  [
    'SUM_SELECT_FULL_JOIN',
    f('select_full_join', 'Number of joins performed by statements which did not use an index.'),
    false,
  ],
  [
    'SUM_SELECT_FULL_RANGE_JOIN',
    f(
      'select_full_range_join',
      'Number of joins performed by statements which used a range search of the first table.',
    ),
    false,
  ],
  [
    'SUM_SELECT_RANGE',
    f('select_range', 'Number of joins performed by statements which used a range of the first table.'),
    false,
  ],
  [
    'SUM_SELECT_RANGE_CHECK',
    f(
      'select_range_check',
      'Number of joins without keys performed by statements that check for key usage after each row.',
    ),
    false,
  ],
  [
    'SUM_SELECT_SCAN',
    f('select_scan', 'Number of joins performed by statements which used a full scan of the first table.'),
    false,
  ],
  [
    'SUM_SORT_MERGE_PASSES',
    f('sort_merge_passes', 'Number of merge passes by the sort algorithm performed by statements.'),
    false,
  ],
  ['SUM_SORT_RANGE', f('sort_range', 'Number of sorts performed by statements which used a range.'), false],
  ['SUM_SORT_ROWS', f('sort_rows', 'Number of rows sorted.'), false],
  [
    'SUM_SORT_SCAN',
    f('sort_scan', 'Number of sorts performed by statements which used a full table scan.'),
    false,
  ],
  ['SUM_TIMER_WAIT', f('timer_wait', 'Total wait time of the summarized events that are timed.'), true],
  ['SUM_WARNINGS', f('warnings', 'Number of warnings.'), false],
] as const;

/** `SUM(x) AS SUM_x` for every summed column (COUNT_STAR → SUM_COUNT_STAR). */
export const QUERY = [
  'SELECT',
  SUMS.map(([c]) => `  SUM(${c}) AS SUM_${c}`).join(',\n'),
  'FROM performance_schema.events_statements_summary_by_digest',
].join('\n');

/** The sums row → samples (pure; exported for recorded result sets). */
export function eventsStatementsSumSamples(rows: readonly Row[], out: MetricValue[]): void {
  for (const row of rows) {
    for (const [column, fam, timer] of SUMS) {
      const v = row[`SUM_${column}`];
      push(out, fam, timer ? seconds(v) : num(v));
    }
  }
}

export class EventsStatementsSumCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    eventsStatementsSumSamples(await this.db.query(QUERY, [], { signal }), out);
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: ['performance_schema.events_statements_summary_by_digest'],
    families: SUMS.map(([, fam]) => fam),
  }),
  create: (ctx) => new EventsStatementsSumCollector(ctx),
};
