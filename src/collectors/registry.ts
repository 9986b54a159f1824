/**
 * The collector registry (one collector per domain): domain name → help + factory. The built-in
 * list lives in builtin.ts; this class only stores and looks up.
 *
 * A registration either has its factory at hand (`create`) or imports it on first use
 * (`load`): then `make()` returns a collector that imports the implementation in its first
 * `prepare()`, which every reader of the engine calls before `collect()`.
 */
import type { Plan } from '../core/plan.js';
import type {
  Collector,
  CollectorContext,
  CollectorHelp,
  CollectorRegistration,
  CollectResult,
} from '../core/collector.js';

/** A domain whose implementation is imported the first time one of its collectors prepares. */
export interface LazyCollectorRegistration {
  help: CollectorHelp;
  load(): Promise<CollectorRegistration>;
}

/** What the registry holds per domain. */
export type RegistryEntry = CollectorRegistration | LazyCollectorRegistration;

export class CollectorRegistry {
  readonly #entries = new Map<string, RegistryEntry>();

  /**
   * Add a domain. A domain registered twice is an error, unless the second registration
   * asks to `replace` the first (and then the domain must be registered already).
   */
  register(reg: RegistryEntry): void {
    const domain = reg.help.domain;
    if (domain === '') throw new Error('collector help has no domain');
    const replace = 'replace' in reg && reg.replace === true;
    if (this.#entries.has(domain) && !replace)
      throw new Error(`collector for domain ${domain} already registered (set replace: true to replace it)`);
    if (!this.#entries.has(domain) && replace)
      throw new Error(`collector for domain ${domain}: replace is set but no collector is registered for it`);
    this.#entries.set(domain, reg);
  }

  /** True when the domain is registered. */
  has(domain: string): boolean {
    return this.#entries.has(domain);
  }

  /** The registration of a domain, or undefined. */
  get(domain: string): RegistryEntry | undefined {
    return this.#entries.get(domain);
  }

  /** Static help of a domain; throws for an unknown domain (check has() first). */
  help(domain: string): CollectorHelp {
    return this.#must(domain).help;
  }

  /** Registered domain names, sorted. */
  domains(): string[] {
    return [...this.#entries.keys()].sort();
  }

  /** A new collector instance for one monitor; throws for an unknown domain. */
  make(domain: string, ctx: CollectorContext): Collector {
    const reg = this.#must(domain);
    return 'create' in reg ? reg.create(ctx) : new LazyCollector(domain, reg, ctx);
  }

  #must(domain: string): RegistryEntry {
    const reg = this.#entries.get(domain);
    if (reg === undefined) throw new Error(`collector for domain ${domain} not registered`);
    return reg;
  }
}

/** A collector whose implementation is imported, then made, by its first prepare(). */
class LazyCollector implements Collector {
  readonly domain: string;
  readonly #reg: LazyCollectorRegistration;
  readonly #ctx: CollectorContext;
  #real: Collector | undefined;

  constructor(domain: string, reg: LazyCollectorRegistration, ctx: CollectorContext) {
    this.domain = domain;
    this.#reg = reg;
    this.#ctx = ctx;
  }

  async prepare(plan: Plan, signal: AbortSignal): Promise<void> {
    this.#real ??= (await this.#reg.load()).create(this.#ctx);
    await this.#real.prepare(plan, signal);
  }

  async collect(level: string, signal: AbortSignal): Promise<CollectResult> {
    if (this.#real === undefined) throw new Error(`collector for domain ${this.domain} not prepared`);
    return this.#real.collect(level, signal);
  }

  async close(): Promise<void> {
    await this.#real?.close?.();
  }
}
