/**
 * A domain named by a built-in plan that this build has no collector for. Plan validation
 * rejects unknown domains in user plans, so this only stands in for domains of the default
 * plans; it reports once that the domain is unavailable and never touches the database.
 */
import type { Collector, CollectResult } from '../core/collector.js';
import { CollectError } from '../core/collector.js';

export function unavailableCollector(domain: string): Collector {
  return {
    domain,
    async prepare(): Promise<void> {},
    async collect(): Promise<CollectResult> {
      return {
        values: [],
        error: new CollectError(`${domain}: not available in sonde yet (no collector registered)`, {
          unsupported: true,
        }),
      };
    },
  };
}
