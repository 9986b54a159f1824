/**
 * Helpers for the exporter.* tests on recorded result sets: run a collector once on a
 * FakeDb through prepare() and collect(), and print samples compactly.
 */
import type { Collector, CollectorRegistration, CollectResult } from '../../core/collector.js';
import type { MetricValue } from '../../core/metrics.js';
import type { Db } from '../../core/db.js';
import { NO_SIGNAL, planOf } from '../kit/test-helpers.js';

/** `name{k="v",…} value`, labels sorted by name, one line per sample, lines sorted. */
export function render(values: readonly MetricValue[]): string[] {
  return values
    .map((v) => {
      const labels = Object.entries(v.group ?? {})
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, x]) => `${k}="${x}"`)
        .join(',');
      return `${v.name}${labels === '' ? '' : `{${labels}}`} ${v.value}`;
    })
    .sort();
}

/**
 * The collector of `reg`, prepared for one level `l` with `options`, and its first collection
 * (under `signal`) — how the exporter runs a scraper. Every exporter.* test fixture uses it.
 */
export async function collectOnce(
  reg: CollectorRegistration,
  db: Db,
  options: Record<string, string> = {},
  signal: AbortSignal = NO_SIGNAL,
): Promise<{ c: Collector; res: CollectResult }> {
  const c = reg.create({ monitorId: 'm', db });
  await c.prepare(planOf({ l: { [reg.help.domain]: { options } } }), NO_SIGNAL);
  return { c, res: await c.collect('l', signal) };
}

/** A server error with its errno, as the driver throws it. */
export function dbError(errno: number, message: string): Error {
  return Object.assign(new Error(message), { errno });
}
