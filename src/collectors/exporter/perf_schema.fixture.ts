/**
 * Running one `exporter.*` collector on recorded result sets: a FakeDb answers its queries,
 * the collector is prepared with a one-level plan carrying the given options and collected
 * once, the way the exporter runs it.
 */
import type { CollectResult, CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import { FakeDb, NO_SIGNAL } from '../kit/test-helpers.js';
import { collectOnce } from './recorded.fixture.js';

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
  const { res } = await collectOnce(reg, db, options, signal);
  return { ...res, queries: db.queries };
}

/** Values as sorted `name{a="x",b="y"} value` lines (labels sorted by name). */
export { render as lines } from './recorded.fixture.js';

export const MARIADB = '10.11.19-MariaDB-0+deb12u1';
export const MYSQL_8_0_27 = '8.0.27';
export const MYSQL_8_0_28 = '8.0.28';
