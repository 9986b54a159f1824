/**
 * exporter.info_schema.rocksdb_perf_context — mysqld_exporter's
 * `info_schema.rocksdb_perf_context` scraper (off by default; new since mysqld_exporter 0.14).
 *
 * Every row of `information_schema.ROCKSDB_PERF_CONTEXT` (MyRocks: MariaDB's RocksDB plugin,
 * Percona Server) whose STAT_TYPE is one of the 23 known statistics becomes a counter
 * `mysql_info_schema_rocksdb_perf_context_<stat lowercase>` labelled schema, table and part
 * (the partition, empty when none); other statistics are skipped. Without the plugin the query
 * fails and the scrape reports it, as upstream does.
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, family, sample, upstreamHelp, type Family } from './common.js';
import { scanFloat, scanString } from './sql_scan.js';

export const DOMAIN = 'exporter.info_schema.rocksdb_perf_context';

export const QUERY =
  "SELECT TABLE_SCHEMA, TABLE_NAME, ifnull(PARTITION_NAME, '') AS PARTITION_NAME, STAT_TYPE, VALUE FROM information_schema.ROCKSDB_PERF_CONTEXT";

/** STAT_TYPE → HELP of the statistics served (all counters). */
// prettier-ignore
const STATS: readonly (readonly [string, string])[] = [
  ['USER_KEY_COMPARISON_COUNT', 'Total number of user key comparisons performed in binary search.'],
  ['BLOCK_CACHE_HIT_COUNT', 'Total number of block read operations from cache.'],
  ['BLOCK_READ_COUNT', 'Total number of block read operations from disk.'],
  ['BLOCK_READ_BYTE', 'Total number of bytes read from disk.'],
  ['GET_READ_BYTES', 'Number of bytes read during Get operations.'],
  ['MULTIGET_READ_BYTES', 'Number of bytes read during MultiGet operations.'],
  ['ITER_READ_BYTES', 'Number of bytes read during iterator operations.'],
  ['INTERNAL_KEY_SKIPPED_COUNT', 'Count of internal keys skipped during operations.'],
  ['INTERNAL_DELETE_SKIPPED_COUNT', 'Count of internal delete operations that were skipped.'],
  ['INTERNAL_RECENT_SKIPPED_COUNT', 'Count of recently skipped internal operations.'],
  ['INTERNAL_MERGE_COUNT', 'Total number of internal merge operations.'],
  ['GET_FROM_MEMTABLE_COUNT', 'Number of Get operations served from the memtable.'],
  ['SEEK_ON_MEMTABLE_COUNT', 'Count of seek operations in the memtable.'],
  ['NEXT_ON_MEMTABLE_COUNT', 'Count of next operations in the memtable.'],
  ['PREV_ON_MEMTABLE_COUNT', 'Count of previous operations in the memtable.'],
  ['SEEK_CHILD_SEEK_COUNT', 'Count of child seek operations in RocksDB.'],
  ['BLOOM_MEMTABLE_HIT_COUNT', 'Count of successful hits in the bloom filter for memtable searches.'],
  ['BLOOM_MEMTABLE_MISS_COUNT', 'Count of misses in the bloom filter for memtable searches.'],
  ['BLOOM_SST_HIT_COUNT', 'Count of successful hits in the bloom filter for SSTable searches.'],
  ['BLOOM_SST_MISS_COUNT', 'Count of misses in the bloom filter for SSTable searches.'],
  ['KEY_LOCK_WAIT_COUNT', 'Count of key lock wait events in RocksDB.'],
  ['IO_BYTES_WRITTEN', 'Total number of bytes written by I/O operations in RocksDB.'],
  ['IO_BYTES_READ', 'Total number of bytes read by I/O operations in RocksDB.'],
];

/** STAT_TYPE → family. */
export const FAMILIES: ReadonlyMap<string, Family> = new Map(
  STATS.map(([stat, help]) => [
    stat,
    family(`mysql_info_schema_rocksdb_perf_context_${stat.toLowerCase()}`, help, 'counter'),
  ]),
);

/** ROCKSDB_PERF_CONTEXT rows → samples (pure; a row that does not scan stops the reading). */
export function rocksdbPerfContextSamples(rows: readonly Row[], out: MetricValue[]): void {
  for (const row of rows) {
    const labels = {
      schema: scanString(row, 'TABLE_SCHEMA'),
      table: scanString(row, 'TABLE_NAME'),
      part: scanString(row, 'PARTITION_NAME'),
    };
    const stat = scanString(row, 'STAT_TYPE');
    const value = scanFloat(row, 'VALUE');
    const f = FAMILIES.get(stat);
    if (f !== undefined) out.push(sample(f, value, labels));
  }
}

export class RocksdbPerfContextCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    rocksdbPerfContextSamples(await this.db.query(QUERY, [], { signal }), out);
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: [QUERY],
    families: [...FAMILIES.values()],
    labels: ['schema', 'table', 'part'],
  }),
  create: (ctx) => new RocksdbPerfContextCollector(ctx),
};
