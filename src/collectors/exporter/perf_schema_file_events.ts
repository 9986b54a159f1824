/**
 * exporter.perf_schema.file_events — mysqld_exporter's `perf_schema.file_events` scraper
 * (off by default upstream).
 *
 * Every file instrument of performance_schema.file_summary_by_event_name: operation counts,
 * times and bytes, labelled event_name and mode (`read`, `write`, `misc`; misc operations
 * move no bytes, so they have no bytes sample).
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, family, upstreamHelp } from './common.js';
import { PFS_PREFIX, num, push, seconds, text } from './perf_schema_common.js';

export const DOMAIN = 'exporter.perf_schema.file_events';

export const QUERY = [
  'SELECT EVENT_NAME,',
  '  COUNT_READ, SUM_TIMER_READ, SUM_NUMBER_OF_BYTES_READ,',
  '  COUNT_WRITE, SUM_TIMER_WRITE, SUM_NUMBER_OF_BYTES_WRITE,',
  '  COUNT_MISC, SUM_TIMER_MISC',
  'FROM performance_schema.file_summary_by_event_name',
].join('\n');

const EVENTS = family(
  `${PFS_PREFIX}file_events_total`,
  'The total file events by event name/mode.',
  'counter',
);
const SECONDS = family(
  `${PFS_PREFIX}file_events_seconds_total`,
  'The total seconds of file events by event name/mode.',
  'counter',
);
const BYTES = family(
  `${PFS_PREFIX}file_events_bytes_total`,
  'The total bytes of file events by event name/mode.',
  'counter',
);

/** mode → its count, timer and bytes columns. */
const MODES = [
  ['read', 'COUNT_READ', 'SUM_TIMER_READ', 'SUM_NUMBER_OF_BYTES_READ'],
  ['write', 'COUNT_WRITE', 'SUM_TIMER_WRITE', 'SUM_NUMBER_OF_BYTES_WRITE'],
  ['misc', 'COUNT_MISC', 'SUM_TIMER_MISC', undefined],
] as const;

/** File instrument rows → samples (pure; exported for recorded result sets). */
export function fileEventsSamples(rows: readonly Row[], out: MetricValue[]): void {
  for (const row of rows) {
    const eventName = text(row.EVENT_NAME);
    for (const [mode, count, timer, bytes] of MODES) {
      const labels = { event_name: eventName, mode };
      push(out, EVENTS, num(row[count]), labels);
      push(out, SECONDS, seconds(row[timer]), labels);
      if (bytes !== undefined) push(out, BYTES, num(row[bytes]), labels);
    }
  }
}

export class FileEventsCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    fileEventsSamples(await this.db.query(QUERY, [], { signal }), out);
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: ['performance_schema.file_summary_by_event_name'],
    families: [EVENTS, SECONDS, BYTES],
    labels: ['event_name', 'mode'],
  }),
  create: (ctx) => new FileEventsCollector(ctx),
};
