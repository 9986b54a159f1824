/**
 * The explicit list of built-in sinks: name and description here, the implementation imported
 * when a monitor first uses the sink (so protobufjs and snappyjs load only with the sinks
 * that send protobuf). A new sink is one file and one entry; registry.test.ts checks each
 * entry against its implementation's registration.
 */
import type { LazySinkRegistration } from './registry.js';
import { SinkRegistry } from './registry.js';

/** Every built-in sink, lazily. */
export const BUILTIN_SINKS: readonly LazySinkRegistration[] = [
  {
    name: 'log',
    records: true,
    description: 'Prints metrics to stdout (the default sink when none is configured)',
    load: async () => (await import('./log.js')).logSinkRegistration(),
  },
  {
    name: 'noop',
    description: 'Discards all metrics (for testing)',
    load: async () => (await import('./noop.js')).noopSink,
  },
  {
    name: 'chronosphere',
    description: 'Sends metrics to a Chronosphere collector (OpenMetrics protobuf, Snappy)',
    load: async () => (await import('./chronosphere.js')).chronosphereSinkRegistration(),
  },
  {
    name: 'otlp',
    records: true,
    description: 'Sends metrics to an OpenTelemetry collector or backend (OTLP/HTTP, protobuf)',
    load: async () => (await import('./otlp.js')).otlpSinkRegistration(),
  },
  {
    name: 'prom-pushgateway',
    description: 'Pushes metrics to a Prometheus Pushgateway (exporter metric names)',
    load: async () => (await import('./prom-pushgateway.js')).promPushgatewaySinkRegistration(),
  },
  {
    name: 'datadog',
    records: true,
    description: 'Sends metrics to Datadog (API or DogStatsD)',
    load: async () => (await import('./datadog.js')).datadogSinkRegistration(),
  },
  {
    name: 'signalfx',
    description: 'Sends metrics to SignalFx',
    load: async () => (await import('./signalfx.js')).signalfxSinkRegistration(),
  },
];

/** A registry holding every built-in sink; none of them is imported yet. */
export function builtinSinks(): SinkRegistry {
  const reg = new SinkRegistry();
  for (const sink of BUILTIN_SINKS) reg.register(sink);
  return reg;
}
