/**
 * exporter.info_schema.innodb_cmpmem — mysqld_exporter's `info_schema.innodb_cmpmem` scraper
 * (on by default).
 *
 * Every row of `information_schema.innodb_cmpmem` (one per page size and buffer pool
 * instance) gives four counters labelled page_size and buffer_pool: blocks used, blocks free,
 * relocations, and relocation time (the server's milliseconds / 1000: seconds). The used and
 * free block counts are current values, yet upstream types them counter; sonde keeps that.
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, columnSamples, family, upstreamHelp } from './common.js';
import { scanFloat, scanString } from './sql_scan.js';

export const DOMAIN = 'exporter.info_schema.innodb_cmpmem';

export const QUERY =
  'SELECT page_size, buffer_pool_instance, pages_used, pages_free, relocation_ops, relocation_time FROM information_schema.innodb_cmpmem';

const PREFIX = 'mysql_info_schema_innodb_cmpmem_';

/** Column → family. */
export const FAMILIES = {
  pages_used: family(
    `${PREFIX}pages_used_total`,
    'Number of blocks of the size PAGE_SIZE that are currently in use.',
    'counter',
  ),
  pages_free: family(
    `${PREFIX}pages_free_total`,
    'Number of blocks of the size PAGE_SIZE that are currently available for allocation.',
    'counter',
  ),
  relocation_ops: family(
    `${PREFIX}relocation_ops_total`,
    'Number of times a block of the size PAGE_SIZE has been relocated.',
    'counter',
  ),
  relocation_time: family(
    `${PREFIX}relocation_time_seconds_total`,
    'Total time in seconds spent in relocating blocks.',
    'counter',
  ),
} as const;

/** INNODB_CMPMEM rows → samples (pure; a row that does not scan stops the reading). */
export function innodbCmpMemSamples(rows: readonly Row[], out: MetricValue[]): void {
  columnSamples(
    rows,
    FAMILIES,
    (row) => ({
      page_size: scanString(row, 'page_size'),
      buffer_pool: scanString(row, 'buffer_pool_instance'),
    }),
    // relocation_time is in milliseconds; the family is in seconds
    (row, column) => (column === 'relocation_time' ? scanFloat(row, column) / 1000 : scanFloat(row, column)),
    out,
  );
}

export class InnodbCmpMemCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    innodbCmpMemSamples(await this.db.query(QUERY, [], { signal }), out);
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: [QUERY],
    families: Object.values(FAMILIES),
    labels: ['page_size', 'buffer_pool'],
  }),
  create: (ctx) => new InnodbCmpMemCollector(ctx),
};
