/**
 * For collector tests that go through the real engine: prepare an engine for a plan and
 * collect a level as the level collector would, getting back a Metrics record.
 */
import type { Collector, CollectorHelp } from '../core/collector.js';
import type { Events } from '../core/events.js';
import { NO_EVENTS } from '../core/events.js';
import type { Metrics } from '../core/metrics.js';
import type { Plan } from '../core/plan.js';
import type { StatusWriter } from '../core/status.js';
import type { DomainWork } from './engine.js';
import { Engine } from './engine.js';

export interface EngineUnderTest {
  /** Collect `work` (default: every domain of `level`) as interval `n`; one Metrics record. */
  collect(n: number, level: string, work?: DomainWork[]): Promise<Metrics[]>;
  engine: Engine;
  close(): Promise<void>;
}

export interface EngineFixtureOptions {
  plan: Plan;
  make(domain: string): Collector;
  help?(domain: string): CollectorHelp | undefined;
  status?: StatusWriter;
  events?: Events;
  /** Collects each error event as `<event>: <message>` (instead of `events`). */
  errors?: string[];
  /** How long a run waits for its domains, ms (default 8000). */
  emrMs?: number;
  /** Every domain's deadline, ms (default 6000). */
  cmrMs?: number;
}

/** Prepare an engine for `plan` (every domain, as a plan activation does). */
export async function engineFor(opts: EngineFixtureOptions): Promise<EngineUnderTest> {
  const domains = [...new Set(Object.values(opts.plan.levels).flatMap((l) => Object.keys(l.collect)))];
  const engine = await Engine.prepare(
    {
      monitorId: 'm1',
      active: {
        plan: opts.plan,
        emrMs: opts.emrMs ?? 8000,
        cmrMs: new Map(domains.map((d) => [d, opts.cmrMs ?? 6000])),
        domainFreqMs: new Map(domains.map((d) => [d, 10_000])),
      },
      collectors: { make: (d) => opts.make(d), help: (d) => opts.help?.(d) },
      events: opts.events ?? (opts.errors === undefined ? NO_EVENTS : errorRecorder(opts.errors)),
      ...(opts.status === undefined ? {} : { status: opts.status }),
    },
    new AbortController().signal,
  );
  return {
    engine,
    close: () => engine.close(),
    async collect(n, level, work) {
      const all = Object.keys(opts.plan.levels[level]?.collect ?? {}).map((domain) => ({ domain, level }));
      const start = Date.now();
      const result = await engine.run({
        interval: n,
        level,
        work: work ?? all,
        start,
        waitMs: engine.active.emrMs,
      });
      const m: Metrics = {
        begin: new Date(start),
        end: new Date(),
        monitorId: 'm1',
        plan: opts.plan.name,
        level,
        interval: n,
        state: 'active',
        values: {},
      };
      for (const o of result.outcomes) if (o.values.length > 0) (m.values[o.domain] ??= []).push(...o.values);
      return [m];
    },
  };
}

/** Events that keep only error events, as `<event>: <message>`. */
export function errorRecorder(lines: string[]): Events {
  return {
    info: () => undefined,
    error: (event, _monitorId, message) => void lines.push(`${event}: ${message}`),
    debug: () => undefined,
  };
}
