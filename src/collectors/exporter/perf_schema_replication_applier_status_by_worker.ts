/**
 * exporter.perf_schema.replication_applier_status_by_worker — mysqld_exporter's
 * `perf_schema.replication_applier_status_by_worker` scraper: per applier worker, the
 * timestamps of the last applied and of the currently applying transaction, from
 * `performance_schema.replication_applier_status_by_worker` (MySQL 8.0+; older MySQL lacks
 * the columns and the scraper serves nothing there, and MariaDB's table has none of them).
 *
 * Seven gauges per row, labelled channel_name and member_id (the WORKER_ID). A timestamp
 * `YYYY-MM-DD hh:mm:ss.ffffff` is read as UTC and served as Unix seconds with its
 * microseconds; MySQL's zero timestamp (`0000-00-00 00:00:00.000000`: no such transaction)
 * is served as 0; any other text, or NULL, leaves that sample out.
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, family, sample, upstreamHelp, type Family } from './common.js';

export const DOMAIN = 'exporter.perf_schema.replication_applier_status_by_worker';

/** The timestamp columns in the order of the statement, with their families. */
const TIMESTAMPS: readonly (readonly [string, Family])[] = [
  [
    'LAST_APPLIED_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP',
    family(
      'mysql_perf_schema_last_applied_transaction_original_commit_timestamp_seconds',
      'A timestamp shows when the last transaction applied by this worker was committed on the original master.',
      'gauge',
    ),
  ],
  [
    'LAST_APPLIED_TRANSACTION_IMMEDIATE_COMMIT_TIMESTAMP',
    family(
      'mysql_perf_schema_last_applied_transaction_immediate_commit_timestamp_seconds',
      'A timestamp shows when the last transaction applied by this worker was committed on the immediate master.',
      'gauge',
    ),
  ],
  [
    'LAST_APPLIED_TRANSACTION_START_APPLY_TIMESTAMP',
    family(
      'mysql_perf_schema_last_applied_transaction_start_apply_timestamp_seconds',
      'A timestamp shows when this worker started applying the last applied transaction.',
      'gauge',
    ),
  ],
  [
    'LAST_APPLIED_TRANSACTION_END_APPLY_TIMESTAMP',
    family(
      'mysql_perf_schema_last_applied_transaction_end_apply_timestamp_seconds',
      'A shows when this worker finished applying the last applied transaction.',
      'gauge',
    ),
  ],
  [
    'APPLYING_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP',
    family(
      'mysql_perf_schema_applying_transaction_original_commit_timestamp_seconds',
      'A timestamp that shows when the transaction this worker is currently applying was committed on the original master.',
      'gauge',
    ),
  ],
  [
    'APPLYING_TRANSACTION_IMMEDIATE_COMMIT_TIMESTAMP',
    family(
      'mysql_perf_schema_applying_transaction_immediate_commit_timestamp_seconds',
      'A timestamp shows when the transaction this worker is currently applying was committed on the immediate master.',
      'gauge',
    ),
  ],
  [
    'APPLYING_TRANSACTION_START_APPLY_TIMESTAMP',
    family(
      'mysql_perf_schema_applying_transaction_start_apply_timestamp_seconds',
      'A timestamp shows when this worker started its first attempt to apply the transaction that is currently being applied.',
      'gauge',
    ),
  ],
];

export const SQL = `SELECT CHANNEL_NAME, WORKER_ID, ${TIMESTAMPS.map(([c]) => c).join(', ')}
  FROM performance_schema.replication_applier_status_by_worker`;

const TIMESTAMP = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6})$/;
const ZERO_TIMESTAMP = '0000-00-00 00:00:00.000000';
/** 0001-01-01 00:00:00 UTC in Unix milliseconds. */
const ZERO_TIME_MS = new Date(0).setUTCFullYear(1, 0, 1);

/**
 * A `YYYY-MM-DD hh:mm:ss.ffffff` timestamp (UTC) → Unix seconds; 0 for the zero timestamp
 * (and for 0001-01-01 00:00:00, the zero time of the clock it is compared with); undefined
 * for anything else. Computed from whole nanoseconds so that every microsecond rounds the
 * same way as a float division of the nanosecond count.
 */
export function workerTimestamp(text: string | null | undefined): number | undefined {
  if (text === ZERO_TIMESTAMP) return 0;
  const m = TIMESTAMP.exec(text ?? '');
  if (m === null) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  if (date.getUTCDate() !== d) return undefined; // 31 April, 29 February of a common year
  date.setUTCHours(h, mi, s, 0);
  const ms = date.getTime();
  if (ms === ZERO_TIME_MS && m[7] === '000000') return 0;
  const nanos = BigInt(ms) * 1_000_000n + BigInt(m[7]!) * 1000n;
  return Number(nanos) / 1e9;
}

/** Worker rows (columns by position, in the statement's order) → samples. */
export function applierWorkerSamples(rows: readonly Row[], out: MetricValue[]): void {
  for (const row of rows) {
    const [channel, worker, ...times] = Object.values(row);
    const labels = { channel_name: channel ?? '', member_id: worker ?? '' };
    TIMESTAMPS.forEach(([, f], i) => {
      const value = workerTimestamp(times[i]);
      if (value !== undefined) out.push(sample(f, value, labels));
    });
  }
}

export class ReplicationApplierStatusByWorkerCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    if (this.source === 'none') return; // MySQL before 8.0: the scraper does not run there
    applierWorkerSamples(await this.db.query(SQL, [], { signal }), out);
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: ['performance_schema.replication_applier_status_by_worker (MySQL 8.0+)'],
    families: TIMESTAMPS.map(([, f]) => f),
    labels: ['channel_name', 'member_id'],
  }),
  create: (ctx) => new ReplicationApplierStatusByWorkerCollector(ctx),
};
