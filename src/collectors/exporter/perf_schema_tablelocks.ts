/**
 * exporter.perf_schema.tablelocks — mysqld_exporter's `perf_schema.tablelocks` scraper (off
 * by default upstream).
 *
 * Every table of performance_schema.table_lock_waits_summary_by_table outside the mysql,
 * performance_schema and information_schema schemas: lock wait counts and times, labelled
 * schema, name (the table) and operation. SQL locks (`read_normal`, `read_with_shared_locks`,
 * `read_high_priority`, `read_no_insert`, `write_normal`, `write_allow_write`,
 * `write_concurrent_insert`, `write_low_priority`) and external (storage engine) locks
 * (`read`, `write`) are separate families.
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, family, upstreamHelp } from './common.js';
import { PFS_PREFIX, num, push, seconds, text } from './perf_schema_common.js';

export const DOMAIN = 'exporter.perf_schema.tablelocks';

/** SQL lock operations: the label and the column suffix. */
const SQL_LOCKS = [
  'read_normal',
  'read_with_shared_locks',
  'read_high_priority',
  'read_no_insert',
  'write_normal',
  'write_allow_write',
  'write_concurrent_insert',
  'write_low_priority',
] as const;
/** External lock operations: the label and the column suffix. */
const EXTERNAL_LOCKS = [
  ['read', 'read_external'],
  ['write', 'write_external'],
] as const;

const COLUMN_SUFFIXES = [
  'read_normal',
  'read_with_shared_locks',
  'read_high_priority',
  'read_no_insert',
  'read_external',
  'write_allow_write',
  'write_concurrent_insert',
  'write_low_priority',
  'write_normal',
  'write_external',
].map((s) => s.toUpperCase());

export const QUERY = [
  'SELECT OBJECT_SCHEMA, OBJECT_NAME,',
  `  ${COLUMN_SUFFIXES.map((s) => `COUNT_${s}`).join(', ')},`,
  `  ${COLUMN_SUFFIXES.map((s) => `SUM_TIMER_${s}`).join(', ')}`,
  'FROM performance_schema.table_lock_waits_summary_by_table',
  "WHERE OBJECT_SCHEMA NOT IN ('mysql', 'performance_schema', 'information_schema')",
].join('\n');

const SQL_WAITS = family(
  `${PFS_PREFIX}sql_lock_waits_total`,
  'The total number of SQL lock wait events for each table and operation.',
  'counter',
);
const EXTERNAL_WAITS = family(
  `${PFS_PREFIX}external_lock_waits_total`,
  'The total number of external lock wait events for each table and operation.',
  'counter',
);
const SQL_SECONDS = family(
  `${PFS_PREFIX}sql_lock_waits_seconds_total`,
  'The total time of SQL lock wait events for each table and operation.',
  'counter',
);
const EXTERNAL_SECONDS = family(
  `${PFS_PREFIX}external_lock_waits_seconds_total`,
  'The total time of external lock wait events for each table and operation.',
  'counter',
);

/** Table rows → samples (pure; exported for recorded result sets). */
export function tableLocksSamples(rows: readonly Row[], out: MetricValue[]): void {
  for (const row of rows) {
    const base = { schema: text(row.OBJECT_SCHEMA), name: text(row.OBJECT_NAME) };
    const ops: [string, string, boolean][] = [
      ...SQL_LOCKS.map((op): [string, string, boolean] => [op, op.toUpperCase(), false]),
      ...EXTERNAL_LOCKS.map(([op, col]): [string, string, boolean] => [op, col.toUpperCase(), true]),
    ];
    for (const [op, col, external] of ops)
      push(out, external ? EXTERNAL_WAITS : SQL_WAITS, num(row[`COUNT_${col}`]), { ...base, operation: op });
    for (const [op, col, external] of ops)
      push(out, external ? EXTERNAL_SECONDS : SQL_SECONDS, seconds(row[`SUM_TIMER_${col}`]), {
        ...base,
        operation: op,
      });
  }
}

export class TableLocksCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    tableLocksSamples(await this.db.query(QUERY, [], { signal }), out);
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: ['performance_schema.table_lock_waits_summary_by_table'],
    families: [SQL_WAITS, EXTERNAL_WAITS, SQL_SECONDS, EXTERNAL_SECONDS],
    labels: ['schema', 'name', 'operation'],
  }),
  create: (ctx) => new TableLocksCollector(ctx),
};
