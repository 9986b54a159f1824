/**
 * Doubles for tests that drive the engine: scripted collectors and an event recorder. No
 * database involved.
 */
import type { CollectResult, Collector } from '../core/collector.js';
import type { Events } from '../core/events.js';
import { MetricType, type MetricValue } from '../core/metrics.js';

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
