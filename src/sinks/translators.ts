/**
 * Sink metric translators (sinks.md §10): a registry name → function mapping a domain and
 * a metric name to the full metric name the datadog and signalfx sinks send (replacing
 * `<domain>.<name>`; `metric-prefix` still applies afterwards). Like Blip, sonde ships no
 * built-in translators; `metric-translator: <name>` must name a registered one.
 *
 * (The Prometheus translators of the exporter, chronosphere and prom-pushgateway are a
 * separate, built-in set in src/prom/.)
 */

/** Full metric name for (domain, metric), e.g. `('status.global', 'queries')` → `mysql.queries`. */
export type SinkTranslator = (domain: string, metric: string) => string;

/** Registered translators; empty unless code registers one. */
export const sinkTranslators = new Map<string, SinkTranslator>();

/** Register a translator; a name can be registered only once. */
export function registerSinkTranslator(name: string, tr: SinkTranslator): void {
  if (sinkTranslators.has(name)) throw new Error(`sink translator ${name} already registered`);
  sinkTranslators.set(name, tr);
}

/** The translator named by a sink option, or `invalid domain translator: <name> (not registered)`. */
export function makeSinkTranslator(
  name: string,
  registry: ReadonlyMap<string, SinkTranslator> = sinkTranslators,
): SinkTranslator {
  const tr = registry.get(name);
  if (!tr) throw new Error(`invalid domain translator: ${name} (not registered)`);
  return tr;
}

/** `<domain>.<name>` or the translator's name, then the prefix. Shared by datadog and signalfx. */
export function sinkMetricName(
  domain: string,
  metric: string,
  tr: SinkTranslator | undefined,
  prefix: string,
): string {
  return prefix + (tr ? tr(domain, metric) : `${domain}.${metric}`);
}
