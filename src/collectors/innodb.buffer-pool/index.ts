/**
 * innodb.buffer-pool — buffer pool statistics summed over all pool instances, from
 * information_schema.INNODB_BUFFER_POOL_STATS (needs PROCESS).
 *
 * The query is one row: `SUM(<column>) AS <name>` for each wanted column, so several
 * instances (MySQL's innodb_buffer_pool_instances; MariaDB ≥ 10.5 has one) read as one pool.
 * Column names come only from the fixed list below, never from the plan, so they are safe
 * to interpolate.
 *
 * Sonde fixes Blip here:
 * - `all: yes` collects every column (Blip ignores it);
 * - the real columns are YOUNG_MAKE_PER_THOUSAND_GETS / NOT_YOUNG_MAKE_PER_THOUSAND_GETS;
 *   Blip's `…_get` spellings (error 1054 in Blip) are accepted in plans and reported with
 *   the real name;
 * - types say what the numbers are: sizes, pending counts, per-second rates and ratios are
 *   GAUGE, running totals CUMULATIVE_COUNTER (Blip: everything a counter, `*_rate` delta —
 *   a delta sink would turn `pool_size` into 0).
 */
import type { CollectResult, CollectorHelp, CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import type { DomainPlan } from '../../core/plan.js';
import { parseValue } from '../../db/values.js';
import { field, option } from '../kit/common.js';
import { PerLevelQueryCollector } from '../kit/per-level-query.js';

export const DOMAIN = 'innodb.buffer-pool';

const G = MetricType.Gauge;
const C = MetricType.CumulativeCounter;

/**
 * Every column, as reported (lowercase column name), with its type, in table order.
 * Gauges for sizes, pending counts, rates and ratios; counters for running totals.
 */
export const BUFFER_POOL_COLUMNS: ReadonlyMap<string, MetricType> = new Map<string, MetricType>([
  ['pool_size', G],
  ['free_buffers', G],
  ['database_pages', G],
  ['old_database_pages', G],
  ['modified_database_pages', G],
  ['pending_decompress', G],
  ['pending_reads', G],
  ['pending_flush_lru', G],
  ['pending_flush_list', G],
  ['pages_made_young', C],
  ['pages_not_made_young', C],
  ['pages_made_young_rate', G],
  ['pages_made_not_young_rate', G],
  ['number_pages_read', C],
  ['number_pages_created', C],
  ['number_pages_written', C],
  ['pages_read_rate', G],
  ['pages_create_rate', G],
  ['pages_written_rate', G],
  ['number_pages_get', C],
  ['hit_rate', G],
  ['young_make_per_thousand_gets', G],
  ['not_young_make_per_thousand_gets', G],
  ['number_pages_read_ahead', C],
  ['number_read_ahead_evicted', C],
  ['read_ahead_rate', G],
  ['read_ahead_evicted_rate', G],
  ['lru_io_total', C],
  ['lru_io_current', G],
  ['uncompress_total', C],
  ['uncompress_current', G],
]);

/** Blip's spellings (no such columns) → the real column. */
const BUFFER_POOL_ALIASES: ReadonlyMap<string, string> = new Map([
  ['young_make_per_thousand_get', 'young_make_per_thousand_gets'],
  ['not_young_make_per_thousand_get', 'not_young_make_per_thousand_gets'],
]);

export const help: CollectorHelp = {
  domain: DOMAIN,
  description:
    'InnoDB buffer pool statistics summed over pool instances (information_schema.INNODB_BUFFER_POOL_STATS)',
  sources: ['SELECT SUM(<column>) AS <column>, … FROM information_schema.innodb_buffer_pool_stats'],
  options: [
    {
      name: 'all',
      description: 'Collect every column, or only those listed under metrics',
      default: 'no',
      values: {
        yes: `All ${BUFFER_POOL_COLUMNS.size} columns`,
        no: 'Only the columns listed under metrics (lowercase column names, e.g. pool_size, free_buffers, hit_rate)',
      },
    },
  ],
  errors: [],
  groups: [],
  meta: [],
  metrics: [],
};

/** One level's ready-to-run query and the names it reports, in order. */
export interface BufferPoolQuery {
  sql: string;
  names: string[];
}

/**
 * The names a level collects: every column for `all: yes`, else the plan's metrics,
 * resolved through the aliases and deduplicated. Plan names are case-sensitive, as in
 * Blip. Throws the Prepare error.
 */
export function bufferPoolNames(all: string, metrics: readonly string[]): string[] {
  if (all === 'yes') return [...BUFFER_POOL_COLUMNS.keys()];
  if (metrics.length === 0) throw new Error('no metrics specified');
  const names: string[] = [];
  for (const m of metrics) {
    const name = BUFFER_POOL_ALIASES.get(m) ?? m;
    if (!BUFFER_POOL_COLUMNS.has(name)) throw new Error(`invalid metric "${m}"`);
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

/** `SELECT SUM(c) AS c, … FROM information_schema.innodb_buffer_pool_stats` for known names. */
export function buildBufferPoolQuery(names: readonly string[]): BufferPoolQuery {
  for (const n of names) if (!BUFFER_POOL_COLUMNS.has(n)) throw new Error(`invalid metric "${n}"`);
  const cols = names.map((n) => `SUM(${n}) AS ${n}`).join(', ');
  return { sql: `SELECT ${cols} FROM information_schema.innodb_buffer_pool_stats`, names: [...names] };
}

/** Pure part of collect(): the summed row → values, in query order; NULL sums skipped. */
export function bufferPoolValues(q: BufferPoolQuery, rows: readonly Row[]): MetricValue[] {
  const row = rows[0];
  if (row === undefined) return [];
  const values: MetricValue[] = [];
  for (const name of q.names) {
    const value = parseValue(field(row, name) ?? null);
    if (value === undefined) continue;
    values.push({ name, value, type: BUFFER_POOL_COLUMNS.get(name) ?? MetricType.Unknown });
  }
  return values;
}

export class BufferPoolCollector extends PerLevelQueryCollector<BufferPoolQuery> {
  readonly domain = DOMAIN;
  protected readonly source = 'innodb_buffer_pool_stats';

  protected buildQuery(dp: DomainPlan): BufferPoolQuery {
    return buildBufferPoolQuery(bufferPoolNames(option(dp, 'all'), dp.metrics));
  }

  protected toResult(rows: Row[], q: BufferPoolQuery): CollectResult {
    return { values: bufferPoolValues(q, rows) };
  }
}

export const registration: CollectorRegistration = {
  help,
  create: (ctx) => new BufferPoolCollector(ctx),
};
