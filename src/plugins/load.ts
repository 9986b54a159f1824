/**
 * Loading the `plugins:` of the config: each entry is imported in order, its default export
 * must be a {@link SondePlugin}, its `register(api)` is awaited, and what it registered is
 * checked (shape, names free) before any of it is added to the registries. Any problem is a
 * {@link PluginError}: one line, `plugins: <entry>: <problem>`, which fails the boot.
 */
import { CollectError, type CollectorRegistration } from '../core/collector.js';
import { errorMessage, SondeError } from '../core/errors.js';
import { MetricType } from '../core/metrics.js';
import type { LoadedPlugin, PluginApi, SondePlugin } from '../core/plugin.js';
import type { SinkRegistration, SinkTranslator } from '../core/sink.js';
import type { CollectorRegistry } from '../collectors/registry.js';
import type { SinkRegistry } from '../sinks/registry.js';
import { sinkTranslators } from '../sinks/translators.js';
import { resolvePluginSpec, ResolveError } from './resolve.js';
import { collectorProblem, sinkProblem, translatorProblem } from './shapes.js';

/** A plugin that cannot be loaded: `plugins: <entry>: <problem>`. */
export class PluginError extends SondeError {
  /** The entry of `plugins:` as written. */
  readonly spec: string;
  constructor(spec: string, problem: string, options?: { cause?: unknown }) {
    super('CONFIG_INVALID', `plugins: ${spec === '' ? '""' : spec}: ${oneLine(problem)}`, options);
    this.name = 'PluginError';
    this.spec = spec;
  }
}

export interface LoadPluginsOptions {
  /** Relative paths are resolved here, and packages looked up from here: the config file's directory. */
  baseDir: string;
  collectors: CollectorRegistry;
  sinks: SinkRegistry;
  /** Sink metric translators; default the map the datadog and signalfx sinks read. */
  translators?: Map<string, SinkTranslator>;
  /** How long `register()` may take; default {@link REGISTER_TIMEOUT_MS}. */
  registerTimeoutMs?: number;
}

const oneLine = (s: string): string => s.replace(/\s*[\r\n]+\s*/g, ' ').trim();

/** What one plugin asked to add, not yet added. */
interface Pending {
  collectors: CollectorRegistration[];
  sinks: SinkRegistration[];
  translators: [string, SinkTranslator][];
  /** Shape problems, first one reported (kept even when the plugin catches the throw). */
  problems: string[];
}

/**
 * Load every plugin in order and add what each registers to `opts`' registries. Resolves to
 * what each plugin registered; rejects with the first {@link PluginError}. Plugins loaded
 * before the failing one stay registered (the boot fails anyway).
 */
export async function loadPlugins(
  specs: readonly string[],
  opts: LoadPluginsOptions,
): Promise<LoadedPlugin[]> {
  const owners = new Map<string, string>();
  const urls = new Map<string, string>();
  const loaded: LoadedPlugin[] = [];
  for (const spec of specs) {
    const url = resolveEntry(spec, opts.baseDir);
    const other = urls.get(url);
    if (other !== undefined) throw new PluginError(spec, `listed twice (also as ${other})`);
    urls.set(url, spec);
    const plugin = await importPlugin(spec, url);
    const pending = await runRegister(spec, plugin, opts.registerTimeoutMs ?? REGISTER_TIMEOUT_MS);
    checkNames(spec, pending, opts, owners);
    loaded.push(apply(spec, url, plugin, pending, opts, owners));
  }
  return loaded;
}

function resolveEntry(spec: string, baseDir: string): string {
  if (spec.trim() === '') throw new PluginError(spec, 'empty entry (a file path or a package name)');
  try {
    return resolvePluginSpec(spec, baseDir);
  } catch (err) {
    if (err instanceof ResolveError) throw new PluginError(spec, err.message);
    throw new PluginError(spec, `cannot resolve: ${errorMessage(err)}`, { cause: err });
  }
}

/** How long a plugin's `register()` may take before the boot fails naming it. */
export const REGISTER_TIMEOUT_MS = 10_000;

/** `register()`'s result, or a rejection when it has not settled within `ms`. */
async function withinRegisterTime(result: unknown, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not return within ${ms / 1000}s`)), ms);
  });
  try {
    await Promise.race([Promise.resolve(result), late]);
  } finally {
    clearTimeout(timer);
  }
}

const EXAMPLE = 'export default { name, register(api) { … } }';

/** Import the module and check its default export is a plugin. */
async function importPlugin(spec: string, url: string): Promise<SondePlugin> {
  let mod: { default?: unknown };
  try {
    mod = (await import(url)) as { default?: unknown };
  } catch (err) {
    throw new PluginError(spec, `cannot import: ${errorMessage(err)}`, { cause: err });
  }
  const plugin = mod.default;
  if (plugin === undefined) throw new PluginError(spec, `no default export (${EXAMPLE})`);
  if (typeof plugin === 'function') {
    throw new PluginError(spec, `default export is a function, not a plugin object (${EXAMPLE})`);
  }
  if (plugin === null || typeof plugin !== 'object') {
    throw new PluginError(spec, `default export is not a plugin object (${EXAMPLE})`);
  }
  const p = plugin as { name?: unknown; register?: unknown };
  if (typeof p.register !== 'function') {
    throw new PluginError(spec, `default export has no register(api) method (${EXAMPLE})`);
  }
  if (p.name !== undefined && typeof p.name !== 'string') {
    throw new PluginError(spec, 'default export: name is not a string');
  }
  return plugin as SondePlugin;
}

/** Call `register` with an API that records (and shape-checks) every registration. */
async function runRegister(spec: string, plugin: SondePlugin, registerTimeoutMs: number): Promise<Pending> {
  const pending: Pending = { collectors: [], sinks: [], translators: [], problems: [] };
  let open = true;
  const record = (problem: string | undefined): void => {
    if (!open) throw new Error(`plugin ${spec}: registrations are taken only while register() runs`);
    if (problem === undefined) return;
    pending.problems.push(problem);
    throw new Error(problem);
  };
  const api: PluginApi = {
    collector: (reg) => {
      record(collectorProblem(reg));
      pending.collectors.push(reg);
    },
    sink: (reg) => {
      record(sinkProblem(reg));
      pending.sinks.push(reg);
    },
    translator: (name, fn) => {
      record(translatorProblem(name, fn));
      pending.translators.push([name, fn]);
    },
    MetricType,
    CollectError,
  };
  try {
    await withinRegisterTime(plugin.register(api), registerTimeoutMs);
  } catch (err) {
    if (pending.problems.length === 0) throw new PluginError(spec, `register failed: ${errorMessage(err)}`);
  } finally {
    open = false;
  }
  const problem = pending.problems[0];
  if (problem !== undefined) throw new PluginError(spec, problem);
  if (pending.collectors.length + pending.sinks.length + pending.translators.length === 0) {
    throw new PluginError(spec, 'registers nothing (no collector, sink or translator)');
  }
  return pending;
}

/**
 * Every name free: not built in, not another plugin's, not twice in this one; or, for a
 * collector or sink registered with `replace: true`, taken already (the one it replaces).
 */
function checkNames(spec: string, p: Pending, opts: LoadPluginsOptions, owners: Map<string, string>): void {
  const translators = opts.translators ?? sinkTranslators;
  const taken = (kind: string, name: string, exists: boolean): string | undefined => {
    if (!exists) return undefined;
    return owners.get(`${kind}:${name}`) ?? 'built-in';
  };
  const seen = new Set<string>();
  const check = (kind: string, label: string, name: string, exists: boolean, replace = false): void => {
    if (seen.has(`${kind}:${name}`)) throw new PluginError(spec, `${label} registered twice`);
    seen.add(`${kind}:${name}`);
    if (replace) {
      if (!exists) throw new PluginError(spec, `${label}: replace is set but nothing is registered under it`);
      return;
    }
    const by = taken(kind, name, exists);
    if (by !== undefined) throw new PluginError(spec, `${label} already registered (by ${by})`);
  };
  for (const c of p.collectors) {
    const d = c.help.domain;
    check('collector', `collector for domain ${d}`, d, opts.collectors.has(d), c.replace === true);
  }
  for (const s of p.sinks)
    check('sink', `sink ${s.name}`, s.name, opts.sinks.has(s.name), s.replace === true);
  for (const [name] of p.translators) {
    check('translator', `sink translator ${name}`, name, translators.has(name));
  }
}

function apply(
  spec: string,
  url: string,
  plugin: SondePlugin,
  p: Pending,
  opts: LoadPluginsOptions,
  owners: Map<string, string>,
): LoadedPlugin {
  const translators = opts.translators ?? sinkTranslators;
  for (const c of p.collectors) {
    opts.collectors.register(c);
    owners.set(`collector:${c.help.domain}`, spec);
  }
  for (const s of p.sinks) {
    opts.sinks.register(s);
    owners.set(`sink:${s.name}`, spec);
  }
  for (const [name, fn] of p.translators) {
    translators.set(name, fn);
    owners.set(`translator:${name}`, spec);
  }
  return {
    spec,
    name: plugin.name ?? spec,
    url,
    collectors: p.collectors.map((c) => c.help.domain),
    sinks: p.sinks.map((s) => s.name),
    translators: p.translators.map(([name]) => name),
  };
}
