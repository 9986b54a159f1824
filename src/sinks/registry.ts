/**
 * Sink registry: config name → factory. Monitors build their own set of sinks
 * from it; `--print-*`, config validation and GET /registered read its names.
 */
import type { Sink, SinkContext, SinkRegistration } from '../core/sink.js';
import { SondeError } from '../core/errors.js';

export class SinkRegistry {
  readonly #sinks = new Map<string, SinkRegistration>();

  /** Add a sink; a name can be registered only once. */
  register(reg: SinkRegistration): void {
    if (this.#sinks.has(reg.name)) throw new Error(`sink ${reg.name} already registered`);
    this.#sinks.set(reg.name, reg);
  }

  /** Registered names, sorted. */
  names(): string[] {
    return [...this.#sinks.keys()].sort();
  }

  has(name: string): boolean {
    return this.#sinks.has(name);
  }

  /** The registration (name, description, factory), if any. */
  get(name: string): SinkRegistration | undefined {
    return this.#sinks.get(name);
  }

  /**
   * Build one sink for one monitor. An unknown name fails the monitor load with
   * `sink <name> not registered` (SondeError CONFIG_INVALID); factory errors pass through.
   */
  create(name: string, ctx: SinkContext): Sink {
    const reg = this.#sinks.get(name);
    if (!reg) throw new SondeError('CONFIG_INVALID', `sink ${name} not registered`);
    return reg.create(ctx);
  }
}
