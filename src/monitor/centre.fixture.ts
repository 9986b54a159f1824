/**
 * Doubles for the tests of the level collector and the monitor: a Db at the contract level,
 * scripted collectors, a recording sink and a two-level plan runtime. No database, no
 * real timers: tests drive a FakeClock.
 */
import type { CollectResult, Collector } from '../core/collector.js';
import type { Db, QueryOptions, Row, ServerInfo } from '../core/db.js';
import type { Events } from '../core/events.js';
import { MetricType, type Metrics, type MetricValue } from '../core/metrics.js';
import type { Plan } from '../core/plan.js';
import type { Sink } from '../core/sink.js';
import type { PlanRuntime } from './level-collector.js';

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

export const gauge = (name: string, value: number): MetricValue => ({ name, value, type: MetricType.Gauge });

/** A collector whose collect() is the given script; counts calls and how many run at once. */
export class Scripted implements Collector {
  calls = 0;
  running = 0;
  maxRunning = 0;
  closed = false;
  constructor(
    readonly domain: string,
    readonly script: (call: number, signal: AbortSignal) => Promise<CollectResult> = async (call) => ({
      values: [gauge(domain, call)],
    }),
  ) {}
  async prepare(): Promise<void> {}
  async collect(_level: string, signal: AbortSignal): Promise<CollectResult> {
    this.calls++;
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    try {
      return await this.script(this.calls, signal);
    } finally {
      this.running--;
    }
  }
  async close(): Promise<void> {
    this.closed = true;
  }
}

/** Rejects with the signal's reason when it aborts. */
export const untilAborted = (signal: AbortSignal): Promise<CollectResult> =>
  new Promise((_res, rej) =>
    signal.addEventListener('abort', () => rej(signal.reason as Error), { once: true }),
  );

export class RecordingSink implements Sink {
  readonly name = 'rec';
  readonly got: Metrics[] = [];
  async send(m: Metrics): Promise<void> {
    this.got.push(m);
  }
}

export class RecordingEvents implements Events {
  readonly lines: string[] = [];
  info(event: string, _monitorId?: string, msg?: string): void {
    this.lines.push(`${event}${msg === undefined ? '' : `: ${msg}`}`);
  }
  error(event: string, _monitorId: string, msg: string): void {
    this.lines.push(`${event}: ${msg}`);
  }
  debug(): void {}
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
