/**
 * The explicit list of built-in sinks. A new sink is one file and one line.
 */
import { chronosphereSinkRegistration } from './chronosphere.js';
import { datadogSinkRegistration } from './datadog.js';
import { logSinkRegistration } from './log.js';
import { noopSink } from './noop.js';
import { otlpSinkRegistration } from './otlp.js';
import { promPushgatewaySinkRegistration } from './prom-pushgateway.js';
import { SinkRegistry } from './registry.js';
import { signalfxSinkRegistration } from './signalfx.js';

/** A registry holding every built-in sink. */
export function builtinSinks(): SinkRegistry {
  const reg = new SinkRegistry();
  reg.register(logSinkRegistration());
  reg.register(noopSink);
  reg.register(chronosphereSinkRegistration());
  reg.register(otlpSinkRegistration());
  reg.register(promPushgatewaySinkRegistration());
  reg.register(datadogSinkRegistration());
  reg.register(signalfxSinkRegistration());
  return reg;
}
