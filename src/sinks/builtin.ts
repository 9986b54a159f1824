/**
 * The explicit list of built-in sinks (sinks.md §1). A new sink is one file and one line.
 */
import { SondeError } from '../core/errors.js';
import type { SinkRegistration } from '../core/sink.js';
import { chronosphereSinkRegistration } from './chronosphere.js';
import { logSinkRegistration } from './log.js';
import { noopSink } from './noop.js';
import { otlpSinkRegistration } from './otlp.js';
import { promPushgatewaySinkRegistration } from './prom-pushgateway.js';
import { SinkRegistry } from './registry.js';

/**
 * Spec sinks not built yet: registered so configs naming them validate, but building one
 * fails the monitor load with `sink <name> is not supported yet`.
 */
const PENDING: ReadonlyArray<{ name: string; description: string }> = [
  { name: 'datadog', description: 'Sends metrics to Datadog (API or DogStatsD)' },
  { name: 'signalfx', description: 'Sends metrics to SignalFx' },
];

function pending(name: string, description: string): SinkRegistration {
  return {
    name,
    description: `${description} (not supported yet)`,
    create: () => {
      throw new SondeError('NOT_SUPPORTED', `sink ${name} is not supported yet`);
    },
  };
}

/** A registry holding every built-in sink. */
export function builtinSinks(): SinkRegistry {
  const reg = new SinkRegistry();
  reg.register(logSinkRegistration());
  reg.register(noopSink);
  reg.register(chronosphereSinkRegistration());
  reg.register(otlpSinkRegistration());
  reg.register(promPushgatewaySinkRegistration());
  for (const p of PENDING) reg.register(pending(p.name, p.description));
  return reg;
}
