/**
 * Status registry behind GET /status and GET /status/monitors (keys: core/status-keys.ts,
 * documented in docs/api.md). Flat string maps; a monitor's map is dropped entirely on unload.
 * Every value is shown on one line: control characters in it (a server's error message, a
 * table name) are escaped when the status is read. Values are set at every collection of
 * every monitor and read when someone asks, so the escaping waits for the read. Keys and
 * values are kept flat (see flatten()): a line built from parts would keep its parts, three
 * times the memory.
 */
import type { StatusReader, StatusWriter } from '../core/status.js';
import { flatten, oneLine } from '../util/text.js';

/** The keys of `m` sorted, each value on one line. */
function sorted(m: Map<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of [...m.keys()].sort()) out[k] = oneLine(m.get(k) ?? '');
  return out;
}

export class StatusRegistry implements StatusReader {
  readonly #server = new Map<string, string>();
  readonly #monitors = new Map<string, Map<string, string>>();
  /** Computed keys (e.g. uptime) evaluated on each read. */
  readonly #computed = new Map<string, () => string>();
  /** Computed monitor keys, from the monitor's other keys, evaluated on each read. */
  readonly #monitorComputed = new Map<string, (status: Record<string, string>) => string>();

  /** Writer for server keys. */
  readonly serverWriter: StatusWriter = {
    set: (k, v) => void this.#server.set(k, flatten(v)),
    delete: (k) => void this.#server.delete(k),
  };

  setComputed(key: string, fn: () => string): void {
    this.#computed.set(key, fn);
  }

  /** A key every monitor shows, computed from its other keys on each read. */
  setMonitorComputed(key: string, fn: (status: Record<string, string>) => string): void {
    this.#monitorComputed.set(key, fn);
  }

  /** A monitor's keys with the computed ones, sorted. */
  #withComputed(m: Map<string, string>): Record<string, string> {
    if (this.#monitorComputed.size === 0) return sorted(m);
    const own = sorted(m);
    const all = new Map(m);
    for (const [k, fn] of this.#monitorComputed) all.set(k, fn(own));
    return sorted(all);
  }

  /** Writer for one monitor's keys (the map is created on first write). */
  monitor(id: string): StatusWriter {
    return {
      set: (k, v) => {
        let m = this.#monitors.get(id);
        if (!m) {
          m = new Map();
          this.#monitors.set(id, m);
        }
        m.set(m.has(k) ? k : flatten(k), flatten(v));
      },
      delete: (k) => void this.#monitors.get(id)?.delete(k),
    };
  }

  /** Make sure a loaded monitor is listed even before it sets a key. */
  register(id: string): void {
    if (!this.#monitors.has(id)) this.#monitors.set(id, new Map());
  }

  /** Delete every key of a monitor (unload). */
  removeMonitor(id: string): void {
    this.#monitors.delete(id);
  }

  server(): Record<string, string> {
    const m = new Map(this.#server);
    for (const [k, fn] of this.#computed) m.set(k, fn());
    return sorted(m);
  }

  monitors(): Record<string, Record<string, string>> {
    const out: Record<string, Record<string, string>> = {};
    for (const id of [...this.#monitors.keys()].sort())
      out[id] = this.#withComputed(this.#monitors.get(id) ?? new Map<string, string>());
    return out;
  }

  /** One monitor's current status (tests, debugging). */
  monitorStatus(id: string): Record<string, string> | undefined {
    const m = this.#monitors.get(id);
    return m ? this.#withComputed(m) : undefined;
  }
}
