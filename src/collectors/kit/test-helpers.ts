/**
 * Test helpers for collectors: build plans in one line, and a fake row source (a Db that
 * answers from given rows) for flavor branches no local server can exercise (MySQL 8).
 */
import type { Db, QueryOptions, Row, ServerInfo } from '../../core/db.js';
import type { DomainPlan, Plan } from '../../core/plan.js';
import { parseServerVersion } from '../../db/flavor.js';

/** level name → domain → partial DomainPlan. Levels get freq 1s, 2s, … in the given order. */
export function planOf(levels: Record<string, Record<string, Partial<DomainPlan>>>): Plan {
  const plan: Plan = { name: 'test', source: 'test', levels: {} };
  let n = 0;
  for (const [name, collect] of Object.entries(levels)) {
    n++;
    const dps: Record<string, DomainPlan> = {};
    for (const [domain, dp] of Object.entries(collect)) {
      dps[domain] = { metrics: dp.metrics ?? [], options: dp.options ?? {}, errors: dp.errors ?? {} };
    }
    plan.levels[name] = { name, freq: `${n}s`, freqMs: n * 1000, collect: dps };
  }
  return plan;
}

/** A never-aborting signal for tests. */
export const NO_SIGNAL: AbortSignal = new AbortController().signal;

/** A Db answering every query from `answer`; records what was asked. */
export class FakeDb implements Db {
  readonly queries: { sql: string; params: readonly unknown[] }[] = [];
  readonly #info: ServerInfo;
  readonly #answer: (sql: string, params: readonly unknown[]) => Row[];

  constructor(version: string, answer: (sql: string, params: readonly unknown[]) => Row[]) {
    this.#info = parseServerVersion(version);
    this.#answer = answer;
  }

  async query(sql: string, params: readonly unknown[] = [], opts?: QueryOptions): Promise<Row[]> {
    opts?.signal?.throwIfAborted();
    this.queries.push({ sql, params });
    return this.#answer(sql, params);
  }

  async serverInfo(): Promise<ServerInfo> {
    return this.#info;
  }

  async ping(): Promise<void> {}
}
