/**
 * exporter.perf_schema.memory_events — mysqld_exporter's `perf_schema.memory_events` scraper
 * (off by default upstream).
 *
 * Every memory instrument of performance_schema.memory_summary_global_by_event_name that has
 * allocated at least once: bytes allocated and freed (counters) and bytes in use (a gauge,
 * which can be negative when memory allocated before the instrument was on is freed),
 * labelled event_name with `remove_prefix` taken off its start when it starts with it.
 * The table exists from MySQL 5.7 and MariaDB 10.5.
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, family, upstreamHelp } from './common.js';
import { PFS_PREFIX, num, push, text } from './perf_schema_common.js';

export const DOMAIN = 'exporter.perf_schema.memory_events';

export const QUERY = [
  'SELECT EVENT_NAME, SUM_NUMBER_OF_BYTES_ALLOC, SUM_NUMBER_OF_BYTES_FREE, CURRENT_NUMBER_OF_BYTES_USED',
  'FROM performance_schema.memory_summary_global_by_event_name',
  'WHERE COUNT_ALLOC > 0',
].join('\n');

const ALLOC = family(
  `${PFS_PREFIX}memory_events_alloc_bytes_total`,
  'The total number of bytes allocated by events.',
  'counter',
);
const FREE = family(
  `${PFS_PREFIX}memory_events_free_bytes_total`,
  'The total number of bytes freed by events.',
  'counter',
);
const USED = family(
  `${PFS_PREFIX}memory_events_used_bytes`,
  'The number of bytes currently allocated by events.',
  'gauge',
);

/** Instrument rows → samples, `removePrefix` taken off the names (pure; exported for recorded result sets). */
export function memoryEventsSamples(rows: readonly Row[], removePrefix: string, out: MetricValue[]): void {
  for (const row of rows) {
    let eventName = text(row.EVENT_NAME);
    if (removePrefix !== '' && eventName.startsWith(removePrefix))
      eventName = eventName.slice(removePrefix.length);
    const labels = { event_name: eventName };
    push(out, ALLOC, num(row.SUM_NUMBER_OF_BYTES_ALLOC), labels);
    push(out, FREE, num(row.SUM_NUMBER_OF_BYTES_FREE), labels);
    push(out, USED, num(row.CURRENT_NUMBER_OF_BYTES_USED), labels);
  }
}

export class MemoryEventsCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    const rows = await this.db.query(QUERY, [], { signal });
    memoryEventsSamples(rows, this.options.remove_prefix ?? '', out);
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: ['performance_schema.memory_summary_global_by_event_name'],
    families: [ALLOC, FREE, USED],
    labels: ['event_name'],
  }),
  create: (ctx) => new MemoryEventsCollector(ctx),
};
