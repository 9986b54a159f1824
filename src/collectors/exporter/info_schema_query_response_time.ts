/**
 * exporter.info_schema.query_response_time — mysqld_exporter's
 * `info_schema.query_response_time` scraper (on by default).
 *
 * When `@@query_response_time_stats` is on (the QUERY_RESPONSE_TIME plugin of MariaDB and
 * Percona Server), each of QUERY_RESPONSE_TIME, QUERY_RESPONSE_TIME_READ and
 * QUERY_RESPONSE_TIME_WRITE becomes one histogram: a bucket per TIME bound with the running
 * COUNT, the TOTALs as the sum. The `TOO LONG` row counts and adds to the sum but is no bucket.
 * The variable missing or unreadable, or 0, gives nothing and no error; the first table must
 * answer, the read/write ones (Percona Server 5.6/5.7 only) may be missing.
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, distSample, family, parseGoFloat, upstreamHelp, type Family } from './common.js';
import { scanString, scanUint } from './sql_scan.js';

export const DOMAIN = 'exporter.info_schema.query_response_time';

/**
 * Whether the plugin counts: the variable as SHOW reads it. Without the plugin the answer
 * is no row rather than an error (`SELECT @@query_response_time_stats` fails every scrape
 * there, and an error costs more than an empty answer).
 */
export const CHECK_QUERY = "SHOW GLOBAL VARIABLES LIKE 'query\\_response\\_time\\_stats'";

/** The tables, in upper case (the plugin answers the total for a lower-case READ/WRITE name). */
export const TABLES: readonly (readonly [string, Family])[] = [
  [
    'SELECT TIME, COUNT, TOTAL FROM INFORMATION_SCHEMA.QUERY_RESPONSE_TIME',
    family(
      'mysql_info_schema_query_response_time_seconds',
      'The number of all queries by duration they took to execute.',
      'untyped',
    ),
  ],
  [
    'SELECT TIME, COUNT, TOTAL FROM INFORMATION_SCHEMA.QUERY_RESPONSE_TIME_READ',
    family(
      'mysql_info_schema_read_query_response_time_seconds',
      'The number of read queries by duration they took to execute.',
      'untyped',
    ),
  ],
  [
    'SELECT TIME, COUNT, TOTAL FROM INFORMATION_SCHEMA.QUERY_RESPONSE_TIME_WRITE',
    family(
      'mysql_info_schema_write_query_response_time_seconds',
      'The number of write queries by duration they took to execute.',
      'untyped',
    ),
  ],
];

/** A TIME or TOTAL text as a number; what does not read as one (`TOO LONG`) is 0. */
function lenient(text: string): number {
  return parseGoFloat(text.trim()) ?? 0;
}

/**
 * One response-time table → its histogram (pure). Buckets are the running count at each
 * non-zero TIME bound (a repeated bound keeps the last); a COUNT that does not scan fails
 * the table.
 */
export function responseTimeSample(f: Family, rows: readonly Row[]): MetricValue {
  let count = 0;
  let sum = 0;
  const buckets = new Map<number, number>();
  for (const row of rows) {
    const bound = lenient(scanString(row, 'TIME'));
    const n = scanUint(row, 'COUNT', 64);
    const total = lenient(scanString(row, 'TOTAL'));
    count += n;
    sum += total;
    if (bound !== 0) buckets.set(bound, count);
  }
  const points = [...buckets].sort((a, b) => a[0] - b[0]);
  return distSample(f, { kind: 'histogram', points, sum, count });
}

/** The check's answer: on when the variable is `ON` (no row: the plugin is not loaded). */
export function statsOn(rows: readonly Row[]): boolean {
  const first = rows[0];
  const text = first === undefined ? undefined : (first.Value ?? first.VALUE);
  return typeof text === 'string' && text.toUpperCase() === 'ON';
}

export class QueryResponseTimeCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    let check: Row[];
    try {
      check = await this.db.query(CHECK_QUERY, [], { signal });
    } catch (err) {
      if (signal.aborted) throw err;
      return;
    }
    if (!statsOn(check)) return;
    for (const [i, [sql, f]] of TABLES.entries()) {
      try {
        out.push(responseTimeSample(f, await this.db.query(sql, [], { signal })));
      } catch (err) {
        if (i === 0 || signal.aborted) throw err;
      }
    }
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: [CHECK_QUERY, ...TABLES.map(([sql]) => sql)],
    families: TABLES.map(([, f]) => f),
  }),
  create: (ctx) => new QueryResponseTimeCollector(ctx),
};
