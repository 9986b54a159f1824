/**
 * Doubles for the tests of the level collector and the monitor: a Db at the contract level,
 * scripted collectors, a recording sink and a two-level plan runtime. No database, no
 * real timers: tests drive a FakeClock.
 */
import type { Db, QueryOptions, Row, ServerInfo } from '../core/db.js';
import type { Metrics } from '../core/metrics.js';
import type { Plan } from '../core/plan.js';
import type { Sink } from '../core/sink.js';
import type { PlanRuntime } from './level-collector.js';

export { gauge, RecordingEvents, Scripted, untilAborted } from '../engine/scripted.fixture.js';

export class FakeDb implements Db {
  up = true;
  readOnly = false;
  pings = 0;
  closed = false;
  async query(sql: string, _p?: readonly unknown[], opts?: QueryOptions): Promise<Row[]> {
    opts?.signal?.throwIfAborted();
    if (!this.up) throw new Error('connect ECONNREFUSED');
    if (sql.includes('read_only')) return [{ ro: this.readOnly ? '1' : '0' }];
    return [];
  }
  async serverInfo(): Promise<ServerInfo> {
    return { flavor: 'mariadb', version: [10, 11, 9], versionString: '10.11.9-MariaDB' };
  }
  async ping(): Promise<void> {
    this.pings++;
    if (!this.up) throw new Error('connect ECONNREFUSED');
  }
  async close(): Promise<void> {
    this.closed = true;
  }
}

export class RecordingSink implements Sink {
  readonly name = 'rec';
  readonly got: Metrics[] = [];
  async send(m: Metrics): Promise<void> {
    this.got.push(m);
  }
}

/**
 * Plan `p` with levels `fast` (1 s, domain `a`) and `slow` (2 s, domains `a` and `b`):
 * even seconds collect `slow`, odd ones `fast`. `emrMs`/`cmrMs` are the run's wait and
 * every domain's deadline.
 */
export function twoLevels(name = 'p', emrMs = 900, cmrMs = 800): { plan: Plan; runtime: PlanRuntime } {
  const dp = { metrics: [], options: {}, errors: {} };
  const plan: Plan = {
    name,
    source: 'test',
    levels: {
      fast: { name: 'fast', freq: '1s', freqMs: 1000, collect: { a: dp } },
      slow: { name: 'slow', freq: '2s', freqMs: 2000, collect: { a: dp, b: dp } },
    },
  };
  const runtime: PlanRuntime = {
    active: {
      plan,
      emrMs,
      cmrMs: new Map([
        ['a', cmrMs],
        ['b', cmrMs],
      ]),
      domainFreqMs: new Map([
        ['a', 1000],
        ['b', 2000],
      ]),
    },
    due: (s) =>
      s % 2 === 0
        ? { level: 'slow', work: ['a', 'b'].map((domain) => ({ domain, level: 'slow' })) }
        : { level: 'fast', work: [{ domain: 'a', level: 'fast' }] },
  };
  return { plan, runtime };
}

/** `[interval, level, {domain: values}]` of each Metrics record a sink got. */
export function summary(got: readonly Metrics[]): [number, string, Record<string, number[]>][] {
  return got.map((m) => [
    m.interval,
    m.level,
    Object.fromEntries(Object.entries(m.values).map(([d, vs]) => [d, vs.map((v) => v.value)])),
  ]);
}
