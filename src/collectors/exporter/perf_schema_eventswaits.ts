/**
 * exporter.perf_schema.eventswaits — mysqld_exporter's `perf_schema.eventswaits` scraper
 * (off by default upstream).
 *
 * Every instrument of performance_schema.events_waits_summary_global_by_event_name: its wait
 * count and total wait time, labelled event_name.
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, family, upstreamHelp } from './common.js';
import { PFS_PREFIX, num, push, seconds, text } from './perf_schema_common.js';

export const DOMAIN = 'exporter.perf_schema.eventswaits';

export const QUERY =
  'SELECT EVENT_NAME, COUNT_STAR, SUM_TIMER_WAIT FROM performance_schema.events_waits_summary_global_by_event_name';

const WAITS = family(`${PFS_PREFIX}events_waits_total`, 'The total events waits by event name.', 'counter');
const SECONDS = family(
  `${PFS_PREFIX}events_waits_seconds_total`,
  'The total seconds of events waits by event name.',
  'counter',
);

/** Instrument rows → samples (pure; exported for recorded result sets). */
export function eventsWaitsSamples(rows: readonly Row[], out: MetricValue[]): void {
  for (const row of rows) {
    const labels = { event_name: text(row.EVENT_NAME) };
    push(out, WAITS, num(row.COUNT_STAR), labels);
    push(out, SECONDS, seconds(row.SUM_TIMER_WAIT), labels);
  }
}

export class EventsWaitsCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    eventsWaitsSamples(await this.db.query(QUERY, [], { signal }), out);
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: ['performance_schema.events_waits_summary_global_by_event_name'],
    families: [WAITS, SECONDS],
    labels: ['event_name'],
  }),
  create: (ctx) => new EventsWaitsCollector(ctx),
};
