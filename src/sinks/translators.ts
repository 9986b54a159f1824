/**
 * Sink metric translators: a registry name → function mapping a domain and
 * a metric name to the full metric name the datadog and signalfx sinks send (replacing
 * `<domain>.<name>`; `metric-prefix` still applies afterwards). Like Blip, sonde ships no
 * built-in translators; `metric-translator: <name>` must name a registered one (plugins
 * register them: docs/plugins.md).
 *
 * (The Prometheus translators of the exporter, chronosphere and prom-pushgateway are a
 * separate, built-in set in src/prom/.)
 */

import type { SinkTranslator } from '../core/sink.js';
import { MAX_SECRET_FILE_BYTES, readRegularTextSync } from '../util/read-file.js';

/** Full metric name for (domain, metric), e.g. `('status.global', 'queries')` → `mysql.queries`. */
export type { SinkTranslator };

/** Registered translators; empty unless a plugin (or other code) registers one. */
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

/** The naming settings datadog and signalfx share. */
export interface NamingConfig {
  prefix: string;
  translator?: SinkTranslator;
}

/**
 * Apply `metric-translator` or `metric-prefix` to `cfg`; false when `key` is neither (the
 * caller handles its own options). An empty prefix is an error, as in Blip.
 */
export function namingOption(
  sink: string,
  cfg: NamingConfig,
  key: string,
  value: string,
  translators: ReadonlyMap<string, SinkTranslator> = sinkTranslators,
): boolean {
  if (key === 'metric-translator') {
    cfg.translator = makeSinkTranslator(value, translators);
    return true;
  }
  if (key === 'metric-prefix') {
    if (value === '') {
      throw new Error(`${sink} sink metric-prefix is empty string; value required when option is specified`);
    }
    cfg.prefix = value;
    return true;
  }
  return false;
}

/** A key or token file's content, trimmed (Blip keeps a trailing newline; sonde trims). */
export function readSecretFile(path: string): string {
  return readRegularTextSync(path, { maxBytes: MAX_SECRET_FILE_BYTES }).trim();
}
