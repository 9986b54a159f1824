/**
 * The sink contract.
 */
import type { Events } from './events.js';
import type { Metrics } from './metrics.js';
import type { StatusWriter } from './status.js';

export interface Sink {
  /** Lowercase name used in status keys and events. */
  readonly name: string;
  send(metrics: Metrics, signal?: AbortSignal): Promise<void>;
  close?(): Promise<void>;
}

export interface SinkContext {
  sinkName: string;
  monitorId: string;
  /** Option values, already interpolated. */
  options: Record<string, string>;
  /** The monitor's resolved tags. */
  tags: Record<string, string>;
  status: StatusWriter;
  events: Events;
  /** http.proxy, for sinks that make outbound HTTP requests */
  httpProxy?: string;
}

export interface SinkRegistration {
  name: string;
  description: string;
  /** Build the sink; throws with a clear message on bad options. */
  create(ctx: SinkContext): Sink;
}

/**
 * A sink metric translator: maps a domain and a metric name to the full metric name the
 * datadog and signalfx sinks send (their `metric-translator` option names one).
 */
export type SinkTranslator = (domain: string, metric: string) => string;
