/**
 * The plugin contract. A plugin is an ES module listed under `plugins:` in the config file
 * whose default export is a {@link SondePlugin}: an object with a `register(api)` method. At
 * boot, before any plan is read, sonde imports each module in the listed order and calls
 * `register` once; the plugin adds collectors, sinks and sink metric translators through the
 * {@link PluginApi}, with exactly the registration types the built-in ones use. Every
 * registration is checked (shape, and a name not taken by a built-in or another plugin); a
 * problem fails the boot with one line naming the module.
 *
 * The API also hands over the two run-time values a plugin needs (metric type codes and the
 * collection error class), so a plugin file needs no run-time import of sonde.
 */
import type { CollectError, CollectorRegistration } from './collector.js';
import type { MetricType } from './metrics.js';
import type { SinkRegistration, SinkTranslator } from './sink.js';

/** What `register` receives. Call its methods during `register` only (also across awaits). */
export interface PluginApi {
  /** Add a metric domain: `help` (its domain, options, metrics…) and `create` (one per monitor). */
  collector(reg: CollectorRegistration): void;
  /** Add a sink: its config name, a description and `create` (one per monitor). */
  sink(reg: SinkRegistration): void;
  /** Add a sink metric translator, named by the datadog and signalfx `metric-translator` option. */
  translator(name: string, fn: SinkTranslator): void;
  /** The metric type codes (`MetricType.Gauge`, …) for the values a collector returns. */
  readonly MetricType: typeof MetricType;
  /** The error class a collector returns (or throws) to name an error policy of its help. */
  readonly CollectError: typeof CollectError;
}

/** The default export of a plugin module. */
export interface SondePlugin {
  /** Shown in sonde's boot log; the module's path or package name when absent. */
  name?: string;
  /** Register the plugin's collectors, sinks and translators; may be async. */
  register(api: PluginApi): void | Promise<void>;
}

/** What one plugin registered, as sonde reports it after loading. */
export interface LoadedPlugin {
  /** The entry of `plugins:` as written. */
  spec: string;
  /** `SondePlugin.name`, else `spec`. */
  name: string;
  /** The file URL the module was imported from. */
  url: string;
  collectors: string[];
  sinks: string[];
  translators: string[];
}
