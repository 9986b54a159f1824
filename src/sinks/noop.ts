/**
 * The `noop` sink: discards everything, always succeeds, ignores options.
 */
import type { Sink, SinkRegistration } from '../core/sink.js';

/** A sink that drops every `Metrics` it is given. */
export function createNoopSink(): Sink {
  return {
    name: 'noop',
    send: async () => undefined,
  };
}

export const noopSink: SinkRegistration = {
  name: 'noop',
  description: 'Discards all metrics (for testing)',
  create: () => createNoopSink(),
};
