/**
 * The `noop` sink: discards everything, always succeeds, ignores options. It still says when
 * it last took a collection (its status key), like every sink.
 */
import type { Sink, SinkRegistration } from '../core/sink.js';
import type { StatusWriter } from '../core/status.js';
import { monitorKeyOf } from '../core/status-keys.js';
import { formatTimestampMs } from '../util/time.js';
import { valueCount } from './log.js';

/** A sink that drops every `Metrics` it is given (noting the last one in `status`, when given). */
export function createNoopSink(status?: StatusWriter): Sink {
  return {
    name: 'noop',
    send: async (metrics) => {
      status?.set(
        monitorKeyOf.sink('noop'),
        `last dropped ${valueCount(metrics)} metrics at ${formatTimestampMs(new Date())}`,
      );
    },
  };
}

export const noopSink: SinkRegistration = {
  name: 'noop',
  description: 'Discards all metrics (for testing)',
  create: (ctx) => createNoopSink(ctx.status),
};
