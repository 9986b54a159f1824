/**
 * exporter.perf_schema.eventsstatements — mysqld_exporter's `perf_schema.eventsstatements`
 * scraper (off by default upstream).
 *
 * Reads performance_schema.events_statements_summary_by_digest: the `limit` digests with the
 * largest total latency among those seen in the last `timelimit` seconds, outside the
 * schemas mysql, performance_schema, information_schema and `exclude_schemas` (statements
 * without a default schema have SCHEMA_NAME NULL and are never selected, as upstream). Each
 * digest gives counters labelled schema, digest and digest_text (cut to
 * `digest_text_limit` characters), and a summary of its latency.
 *
 * MySQL 8.0.28 and later add SUM_CPU_TIME and the QUANTILE_95/99/999 columns: the CPU-time
 * counter and the summary's quantiles. Elsewhere the CPU time cannot be measured and is not
 * served, and the summary has its count and sum only. The lock time is read on every server.
 */
import { CollectError, type CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, distSample, family, intOption, upstreamHelp } from './common.js';
import { PFS_PREFIX, num, push, seconds, text } from './perf_schema_common.js';

export const DOMAIN = 'exporter.perf_schema.eventsstatements';

/** Source keys: the plain digest table, or MySQL 8.0.28+'s with CPU time and quantiles. */
export const SOURCE_DIGEST = 'events_statements_summary_by_digest';
export const SOURCE_DIGEST_QUANTILES = 'events_statements_summary_by_digest:quantiles';

const LABELS = ['schema', 'digest', 'digest_text'] as const;

const f = (name: string, help: string) => family(`${PFS_PREFIX}events_statements_${name}`, help, 'counter');

/** Counter families by the column they read (after SCHEMA_NAME, DIGEST, DIGEST_TEXT). */
const COUNTERS = [
  ['COUNT_STAR', f('total', 'The total count of events statements by digest.'), false],
  ['SUM_TIMER_WAIT', f('seconds_total', 'The total time of events statements by digest.'), true],
  [
    'SUM_LOCK_TIME',
    f('lock_time_seconds_total', 'The total lock time of events statements by digest.'),
    true,
  ],
  ['SUM_CPU_TIME', f('cpu_time_seconds_total', 'The total cpu time of events statements by digest.'), true],
  ['SUM_ERRORS', f('errors_total', 'The errors of events statements by digest.'), false],
  ['SUM_WARNINGS', f('warnings_total', 'The warnings of events statements by digest.'), false],
  [
    'SUM_ROWS_AFFECTED',
    f('rows_affected_total', 'The total rows affected of events statements by digest.'),
    false,
  ],
  ['SUM_ROWS_SENT', f('rows_sent_total', 'The total rows sent of events statements by digest.'), false],
  [
    'SUM_ROWS_EXAMINED',
    f('rows_examined_total', 'The total rows examined of events statements by digest.'),
    false,
  ],
  [
    'SUM_CREATED_TMP_TABLES',
    f('tmp_tables_total', 'The total tmp tables of events statements by digest.'),
    false,
  ],
  [
    'SUM_CREATED_TMP_DISK_TABLES',
    f('tmp_disk_tables_total', 'The total tmp disk tables of events statements by digest.'),
    false,
  ],
  [
    'SUM_SORT_MERGE_PASSES',
    f(
      'sort_merge_passes_total',
      'The total number of merge passes by the sort algorithm performed by digest.',
    ),
    false,
  ],
  ['SUM_SORT_ROWS', f('sort_rows_total', 'The total number of sorted rows by digest.'), false],
  [
    'SUM_NO_INDEX_USED',
    f('no_index_used_total', 'The total number of statements that used full table scans by digest.'),
    false,
  ],
] as const;

/** The latency summary (TYPE summary: its value carries the distribution). */
const LATENCY = family(
  `${PFS_PREFIX}events_statements_latency`,
  'A summary of statement latency by digest',
  'untyped',
);

/** Quantile columns and the quantile label each gets (upstream's keys: 95, 99, 999). */
const QUANTILES = [
  ['QUANTILE_95', 95],
  ['QUANTILE_99', 99],
  ['QUANTILE_999', 999],
] as const;

/** Schemas never reported. */
export const ALWAYS_EXCLUDED = ['mysql', 'performance_schema', 'information_schema'] as const;

/** The columns read, in order; the quantile source adds SUM_CPU_TIME and the quantiles. */
function columns(quantiles: boolean): string[] {
  const cols = COUNTERS.map(([c]) => c).filter((c) => quantiles || c !== 'SUM_CPU_TIME');
  return quantiles ? [...cols, ...QUANTILES.map(([c]) => c)] : cols;
}

export interface StatementsQuery {
  sql: string;
  params: string[];
}

/**
 * The digest query: the newest digests within `timeLimit` seconds grouped by their values,
 * the `limit` slowest; excluded schemas as placeholders (the defaults, then the extra ones,
 * without repeats).
 */
export function statementsQuery(
  source: string,
  opts: { limit: number; timeLimit: number; digestTextLimit: number; excludeSchemas: readonly string[] },
): StatementsQuery {
  const cols = columns(source === SOURCE_DIGEST_QUANTILES).filter((c) => c !== 'COUNT_STAR');
  const excluded = [...new Set<string>([...ALWAYS_EXCLUDED, ...opts.excludeSchemas])];
  const sql = [
    "SELECT ifnull(SCHEMA_NAME, 'NONE') AS SCHEMA_NAME, DIGEST,",
    `  LEFT(DIGEST_TEXT, ${opts.digestTextLimit}) AS DIGEST_TEXT, COUNT_STAR, ${cols.join(', ')}`,
    'FROM (',
    '  SELECT * FROM performance_schema.events_statements_summary_by_digest',
    `  WHERE SCHEMA_NAME NOT IN (${excluded.map(() => '?').join(', ')})`,
    `    AND LAST_SEEN > DATE_SUB(NOW(), INTERVAL ${opts.timeLimit} SECOND)`,
    '  ORDER BY LAST_SEEN DESC',
    ') Q',
    `GROUP BY Q.SCHEMA_NAME, Q.DIGEST, Q.DIGEST_TEXT, Q.COUNT_STAR, ${cols.map((c) => `Q.${c}`).join(', ')}`,
    'ORDER BY SUM_TIMER_WAIT DESC',
    `LIMIT ${opts.limit}`,
  ].join('\n');
  return { sql, params: excluded };
}

/** `a, b,,c ` → [a, b, c]: the comma-separated form of the repeatable exclude_schemas flag. */
export function schemaList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** Digest rows → samples (pure; exported for recorded result sets). */
export function eventsStatementsSamples(rows: readonly Row[], out: MetricValue[]): void {
  for (const row of rows) {
    const labels = {
      schema: text(row.SCHEMA_NAME),
      digest: text(row.DIGEST),
      digest_text: text(row.DIGEST_TEXT),
    };
    for (const [column, fam, timer] of COUNTERS) {
      if (!(column in row)) continue;
      push(out, fam, timer ? seconds(row[column]) : num(row[column]), labels);
    }
    const count = num(row.COUNT_STAR);
    const sum = seconds(row.SUM_TIMER_WAIT);
    if (count === undefined || sum === undefined) continue;
    const points: [number, number][] = [];
    for (const [column, q] of QUANTILES) {
      const v = seconds(row[column]);
      if (v !== undefined) points.push([q, v]);
    }
    out.push(distSample(LATENCY, { kind: 'summary', points, sum, count }, labels));
  }
}

const NON_NEGATIVE = ['limit', 'timelimit', 'digest_text_limit'] as const;

export class EventsStatementsCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  override async prepare(...args: Parameters<UpstreamCollector['prepare']>): Promise<void> {
    await super.prepare(...args);
    for (const name of NON_NEGATIVE) {
      if (intOption(this.options[name]) < 0)
        throw new CollectError(`invalid option ${name}: ${this.options[name]}: must be 0 or more`);
    }
  }

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    const q = statementsQuery(this.source, {
      limit: intOption(this.options.limit),
      timeLimit: intOption(this.options.timelimit),
      digestTextLimit: intOption(this.options.digest_text_limit),
      excludeSchemas: schemaList(this.options.exclude_schemas),
    });
    eventsStatementsSamples(await this.db.query(q.sql, q.params, { signal }), out);
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: ['performance_schema.events_statements_summary_by_digest'],
    families: [...COUNTERS.map(([, fam]) => fam), LATENCY],
    labels: LABELS,
  }),
  create: (ctx) => new EventsStatementsCollector(ctx),
};
