/**
 * exporter.info_schema.innodb_cmp — mysqld_exporter's `info_schema.innodb_cmp` scraper (on by
 * default).
 *
 * Every row of `information_schema.innodb_cmp` (one per compressed page size) gives five
 * counters labelled page_size: compressions, successful compressions, compression time,
 * decompressions and decompression time (seconds, as the server counts them).
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, columnSamples, family, upstreamHelp } from './common.js';
import { scanFloat, scanString } from './sql_scan.js';

export const DOMAIN = 'exporter.info_schema.innodb_cmp';

export const QUERY =
  'SELECT page_size, compress_ops, compress_ops_ok, compress_time, uncompress_ops, uncompress_time FROM information_schema.innodb_cmp';

const PREFIX = 'mysql_info_schema_innodb_cmp_';

/** Column → family. */
export const FAMILIES = {
  compress_ops: family(
    `${PREFIX}compress_ops_total`,
    'Number of times a B-tree page of the size PAGE_SIZE has been compressed.',
    'counter',
  ),
  compress_ops_ok: family(
    `${PREFIX}compress_ops_ok_total`,
    'Number of times a B-tree page of the size PAGE_SIZE has been successfully compressed.',
    'counter',
  ),
  compress_time: family(
    `${PREFIX}compress_time_seconds_total`,
    'Total time in seconds spent in attempts to compress B-tree pages.',
    'counter',
  ),
  uncompress_ops: family(
    `${PREFIX}uncompress_ops_total`,
    'Number of times a B-tree page of the size PAGE_SIZE has been uncompressed.',
    'counter',
  ),
  uncompress_time: family(
    `${PREFIX}uncompress_time_seconds_total`,
    'Total time in seconds spent in uncompressing B-tree pages.',
    'counter',
  ),
} as const;

/** INNODB_CMP rows → samples (pure; a row that does not scan stops the reading). */
export function innodbCmpSamples(rows: readonly Row[], out: MetricValue[]): void {
  columnSamples(rows, FAMILIES, (row) => ({ page_size: scanString(row, 'page_size') }), scanFloat, out);
}

export class InnodbCmpCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    innodbCmpSamples(await this.db.query(QUERY, [], { signal }), out);
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, { sources: [QUERY], families: Object.values(FAMILIES), labels: ['page_size'] }),
  create: (ctx) => new InnodbCmpCollector(ctx),
};
