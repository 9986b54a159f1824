/**
 * Sink registry: config name → factory. Monitors build their own set of sinks
 * from it; `--print-*`, config validation and GET /registered read its names.
 * A registration may import its implementation the first time a monitor uses it (`load`).
 */
import type { Sink, SinkContext, SinkRegistration } from '../core/sink.js';
import { SondeError } from '../core/errors.js';

/** A sink whose implementation is imported when a monitor first builds one. */
export interface LazySinkRegistration {
  name: string;
  description: string;
  /** The sink carries records as well as metrics (as its implementation's registration says). */
  records?: boolean;
  load(): Promise<SinkRegistration>;
}

export class SinkRegistry {
  readonly #sinks = new Map<string, SinkRegistration | LazySinkRegistration>();

  /**
   * Add a sink. A name registered twice is an error, unless the second registration asks
   * to `replace` the first (and then the name must be registered already).
   */
  register(reg: SinkRegistration | LazySinkRegistration): void {
    const replace = 'replace' in reg && reg.replace === true;
    if (this.#sinks.has(reg.name) && !replace)
      throw new Error(`sink ${reg.name} already registered (set replace: true to replace it)`);
    if (!this.#sinks.has(reg.name) && replace)
      throw new Error(`sink ${reg.name}: replace is set but no sink is registered under that name`);
    this.#sinks.set(reg.name, reg);
  }

  /** Registered names, sorted. */
  names(): string[] {
    return [...this.#sinks.keys()].sort();
  }

  has(name: string): boolean {
    return this.#sinks.has(name);
  }

  /** The registration (name, description, factory or loader), if any. */
  get(name: string): SinkRegistration | LazySinkRegistration | undefined {
    return this.#sinks.get(name);
  }

  /**
   * Build one sink for one monitor, importing its implementation first if needed. An unknown
   * name fails the monitor load with `sink <name> not registered` (SondeError
   * CONFIG_INVALID); factory errors (bad options) pass through.
   */
  async create(name: string, ctx: SinkContext): Promise<Sink> {
    const reg = this.#sinks.get(name);
    if (!reg) throw new SondeError('CONFIG_INVALID', `sink ${name} not registered`);
    const real = 'create' in reg ? reg : await reg.load();
    const sink = real.create(ctx);
    // A sink is given records exactly when its registration says it takes them.
    const declared = real.records === true;
    if (declared !== (typeof sink.sendRecords === 'function'))
      throw new Error(
        `sink ${name}: its registration ${declared ? 'declares records but the sink has no sendRecords' : 'does not declare records but the sink has sendRecords'}`,
      );
    return sink;
  }
}
