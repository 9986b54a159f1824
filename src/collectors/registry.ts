/**
 * The collector registry (one collector per domain): domain name → help + factory. The built-in
 * list lives in builtin.ts; this class only stores and looks up.
 */
import type { Collector, CollectorContext, CollectorHelp, CollectorRegistration } from '../core/collector.js';

export class CollectorRegistry {
  readonly #entries = new Map<string, CollectorRegistration>();

  /** Add a domain. Registering the same domain twice is a programming error. */
  register(reg: CollectorRegistration): void {
    const domain = reg.help.domain;
    if (domain === '') throw new Error('collector help has no domain');
    if (this.#entries.has(domain)) throw new Error(`collector for domain ${domain} already registered`);
    this.#entries.set(domain, reg);
  }

  /** True when the domain is registered. */
  has(domain: string): boolean {
    return this.#entries.has(domain);
  }

  /** The registration of a domain, or undefined. */
  get(domain: string): CollectorRegistration | undefined {
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
    return this.#must(domain).create(ctx);
  }

  #must(domain: string): CollectorRegistration {
    const reg = this.#entries.get(domain);
    if (reg === undefined) throw new Error(`collector for domain ${domain} not registered`);
    return reg;
  }
}
