/**
 * Running one `exporter.*` collector on recorded result sets: a FakeDb answers its queries,
 * the collector is prepared with a one-level plan carrying the given options and collected
 * once, the way the exporter runs it.
 */
import type { CollectResult, CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { FakeDb, NO_SIGNAL, planOf } from '../test-helpers.js';

export interface Run extends CollectResult {
  queries: { sql: string; params: readonly unknown[] }[];
}

/** Prepare and collect `reg` once against a server of `version` answering `answer`. */
export async function runScraper(
  reg: CollectorRegistration,
  version: string,
  answer: (sql: string, params: readonly unknown[]) => Row[],
  options: Record<string, string> = {},
  signal: AbortSignal = NO_SIGNAL,
): Promise<Run> {
  const db = new FakeDb(version, answer);
  const c = reg.create({ monitorId: 'm', db });
  await c.prepare(planOf({ prom: { [reg.help.domain]: { options } } }), NO_SIGNAL);
  const r = await c.collect('prom', signal);
  return { ...r, queries: db.queries };
}

/** Values as sorted `name{a="x",b="y"} value` lines (labels sorted by name). */
export function lines(values: readonly MetricValue[]): string[] {
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

export const MARIADB = '10.11.19-MariaDB-0+deb12u1';
export const MYSQL_8_0_27 = '8.0.27';
export const MYSQL_8_0_28 = '8.0.28';
