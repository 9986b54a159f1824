/**
 * exporter.perf_schema.file_instances — mysqld_exporter's `perf_schema.file_instances`
 * scraper (off by default upstream).
 *
 * Every file of performance_schema.file_summary_by_instance whose FILE_NAME matches the
 * `filter` regular expression (the server's REGEXP): read/write operation counts and bytes,
 * labelled file_name (with `remove_prefix` taken off its start when it starts with it),
 * event_name and mode.
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, family, upstreamHelp } from './common.js';
import { PFS_PREFIX, num, push, text } from './perf_schema_common.js';

export const DOMAIN = 'exporter.perf_schema.file_instances';

export const QUERY = [
  'SELECT FILE_NAME, EVENT_NAME,',
  '  COUNT_READ, COUNT_WRITE,',
  '  SUM_NUMBER_OF_BYTES_READ, SUM_NUMBER_OF_BYTES_WRITE',
  'FROM performance_schema.file_summary_by_instance',
  'WHERE FILE_NAME REGEXP ?',
].join('\n');

const BYTES = family(
  `${PFS_PREFIX}file_instances_bytes`,
  'The number of bytes processed by file read/write operations.',
  'counter',
);
const OPS = family(
  `${PFS_PREFIX}file_instances_total`,
  'The total number of file read/write operations.',
  'counter',
);

/** File rows → samples, `removePrefix` taken off the file names (pure; exported for recorded result sets). */
export function fileInstancesSamples(rows: readonly Row[], removePrefix: string, out: MetricValue[]): void {
  for (const row of rows) {
    let fileName = text(row.FILE_NAME);
    if (removePrefix !== '' && fileName.startsWith(removePrefix))
      fileName = fileName.slice(removePrefix.length);
    const read = { file_name: fileName, event_name: text(row.EVENT_NAME), mode: 'read' };
    const write = { ...read, mode: 'write' };
    push(out, OPS, num(row.COUNT_READ), read);
    push(out, OPS, num(row.COUNT_WRITE), write);
    push(out, BYTES, num(row.SUM_NUMBER_OF_BYTES_READ), read);
    push(out, BYTES, num(row.SUM_NUMBER_OF_BYTES_WRITE), write);
  }
}

export class FileInstancesCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    const rows = await this.db.query(QUERY, [this.options.filter ?? '.*'], { signal });
    fileInstancesSamples(rows, this.options.remove_prefix ?? '', out);
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: ['performance_schema.file_summary_by_instance'],
    families: [BYTES, OPS],
    labels: ['file_name', 'event_name', 'mode'],
  }),
  create: (ctx) => new FileInstancesCollector(ctx),
};
