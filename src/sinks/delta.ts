/**
 * The delta decorator, used in front of the datadog sink's retry buffer:
 * cumulative counters become per-interval deltas, computed in collection order (before
 * Retry, which resends out of order).
 *
 * | value                                   | output                                         |
 * |-----------------------------------------|------------------------------------------------|
 * | cumulative counter, key seen first time | dropped (value remembered)                     |
 * | cumulative counter, seen before         | delta counter: current − previous, or the raw   |
 * |                                         | current value when that is negative (a reset)   |
 * | anything else                           | unchanged                                      |
 *
 * Where sonde differs from Blip: the series key includes the domain and separates every
 * field with NUL (Blip concatenates name and group values, so `db=ab,tbl=c` and
 * `db=a,tbl=bc` collide), and `interval` is copied into the new `Metrics` (Blip leaves it 0).
 */
import type { Metrics, MetricValue } from '../core/metrics.js';
import { MetricType } from '../core/metrics.js';
import type { Records } from '../core/records.js';
import type { Sink } from '../core/sink.js';

/**
 * The series key: domain, name, then each group key and value in ascending key order, all
 * joined by NUL. MySQL names and identifiers cannot contain NUL, so no two series share a
 * key (a `k=v` join would let `a=b`+`c` meet `a`+`b=c`).
 */
export function deltaKey(domain: string, v: MetricValue): string {
  const parts = [domain, v.name];
  if (v.group) {
    for (const k of Object.keys(v.group).sort()) parts.push(k, v.group[k] ?? '');
  }
  return parts.join('\0');
}

/** Cumulative-to-delta state of one sink of one monitor (lives as long as the sink). */
export class DeltaState {
  readonly #last = new Map<string, number>();

  /** Number of series remembered. */
  get size(): number {
    return this.#last.size;
  }

  /**
   * Convert `m`: the same object when no domain holds a cumulative counter, otherwise a new
   * `Metrics` (begin, end, monitorId, plan, level, state and interval copied) where domains
   * with counters get a new list and the others keep theirs.
   */
  convert(m: Metrics): Metrics {
    let out: Metrics | undefined;
    for (const [domain, values] of Object.entries(m.values)) {
      if (!values.some((v) => v.type === MetricType.CumulativeCounter)) continue;
      out ??= { ...m, values: { ...m.values } };
      const list: MetricValue[] = [];
      for (const v of values) {
        if (v.type !== MetricType.CumulativeCounter) {
          list.push(v);
          continue;
        }
        const key = deltaKey(domain, v);
        const prev = this.#last.get(key);
        this.#last.set(key, v.value);
        if (prev === undefined) continue; // first sample: nothing to subtract from
        const d = v.value - prev;
        list.push({ ...v, type: MetricType.DeltaCounter, value: d >= 0 ? d : v.value });
      }
      out.values[domain] = list;
    }
    return out ?? m;
  }
}

/** The decorator: converts, then hands the result to the inner (retry-wrapped) sink. */
export class DeltaSink implements Sink {
  readonly name: string;
  readonly state = new DeltaState();
  readonly #inner: Sink;
  /** Records pass through unchanged when the inner sink takes them. */
  readonly sendRecords?: (records: Records, signal?: AbortSignal) => Promise<void>;

  constructor(inner: Sink) {
    // Delta state must see each collection once and in order: never stack two of them.
    if (inner instanceof DeltaSink) throw new Error('delta sink cannot wrap another delta sink');
    this.#inner = inner;
    this.name = inner.name;
    const records = inner.sendRecords?.bind(inner);
    if (records !== undefined) this.sendRecords = records;
  }

  send(m: Metrics, signal?: AbortSignal): Promise<void> {
    return this.#inner.send(this.state.convert(m), signal);
  }

  async close(): Promise<void> {
    await this.#inner.close?.();
  }
}

/** Wrap `inner` (the retry-wrapped datadog sink); `name` is the inner sink's. */
export function withDelta(inner: Sink): DeltaSink {
  return new DeltaSink(inner);
}
