/**
 * Running one `exporter.*` collector over a recorded result set (a FakeDb) the way the engine
 * does: prepare with the given options, then one collection. Shared by the scrapers' tests.
 */
import type { CollectResult, CollectorRegistration } from '../../core/collector.js';
import type { Db } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { PROM_HELP_META } from '../../core/upstream.js';
import { collectOnce } from './recorded.fixture.js';

/** Prepare `reg`'s collector on `db` with `options` and collect once. */
export async function scrapeWith(
  reg: CollectorRegistration,
  db: Db,
  options: Record<string, string> = {},
): Promise<CollectResult> {
  return (await collectOnce(reg, db, options)).res;
}

/** Samples as exposition-like lines, `name{k="v",…} value`, labels in the order given. */
export function lines(values: readonly MetricValue[]): string[] {
  return values.map((v) => {
    const labels = Object.entries(v.group ?? {}).map(([k, x]) => `${k}="${x}"`);
    return `${v.name}${labels.length > 0 ? `{${labels.join(',')}}` : ''} ${v.value}`;
  });
}

/** Each sample's family name → its HELP (one entry per family). */
export function helps(values: readonly MetricValue[]): Map<string, string> {
  return new Map(values.map((v) => [v.name, v.meta?.[PROM_HELP_META] ?? '']));
}
