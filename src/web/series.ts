/**
 * A monitor's chart series for the web page (docs/ui.md): a fixed ring of time slots in
 * typed arrays, fed with each level collection's values.
 *
 * Time is cut into slots of `STEP_MS` (10 s); slot `b % slots` holds slot number `b`, so a
 * gap (a stopped monitor, a slow collection) simply leaves slots empty. A collection landing
 * in a slot overwrites the values it carries and keeps the others. Counters become rates per
 * second between two collections (none across a counter reset); `max_connections` is held
 * from its last read (it is a setting, read rarely). Missing values are NaN inside and
 * `null` in the answers, never 0.
 *
 * Memory: `(1 + series) × slots × 8` bytes: 13 × 360 × 8 = 37,440 bytes (36.6 KiB) per
 * monitor for one hour, plus a few hundred bytes of state. With 0 slots (history off) only
 * the latest values are kept.
 */
import type { Metrics, MetricValue } from '../core/metrics.js';
import { SERIES_NAMES, type SeriesName, type UiLatest, type UiSeries } from '../core/ui.js';

/** Width of one slot. */
export const STEP_MS = 10_000;
/** One hour of slots. */
export const HOUR_SLOTS = 3600_000 / STEP_MS;

const N = SERIES_NAMES.length;
const INDEX = new Map<SeriesName, number>(SERIES_NAMES.map((n, i) => [n, i]));

/** Bytes the ring of `slots` slots holds (times and values). */
export function ringBytes(slots: number): number {
  return (1 + N) * slots * 8;
}

/**
 * The status.global counters made into rates, and their series. Row operations come from
 * `Innodb_rows_*`; MariaDB 10.6 and later have none, so there they come from `Rows_read`
 * and `Handler_write`, `Handler_update`, `Handler_delete` (rows of every engine): the first
 * counter of the list that the collection carries.
 */
const RATES: readonly [SeriesName, readonly string[]][] = [
  ['qps', ['queries']],
  ['rows_read', ['innodb_rows_read', 'rows_read']],
  ['rows_inserted', ['innodb_rows_inserted', 'handler_write']],
  ['rows_updated', ['innodb_rows_updated', 'handler_update']],
  ['rows_deleted', ['innodb_rows_deleted', 'handler_delete']],
  ['slow_queries', ['slow_queries']],
  ['tmp_disk_tables', ['created_tmp_disk_tables']],
];
/** Counters kept for the hit ratio (its two deltas). */
const BP_REQUESTS = 'innodb_buffer_pool_read_requests';
const BP_READS = 'innodb_buffer_pool_reads';
const COUNTERS = [...RATES.flatMap(([, c]) => c), BP_REQUESTS, BP_READS];

/** The status.global values the series read. */
const STATUS_NAMES: ReadonlySet<string> = new Set([
  ...COUNTERS,
  'threads_connected',
  'innodb_buffer_pool_pages_dirty',
]);

/**
 * Each of `names` (lowercase) in one pass over `values` (a wide plan carries a thousand):
 * the first value without a group, or the largest when grouped; a name absent or never
 * finite is absent from the map.
 */
function pickAll(
  values: readonly MetricValue[] | undefined,
  names: ReadonlySet<string>,
): Map<string, number> {
  const out = new Map<string, number>();
  const ungrouped = new Set<string>();
  for (const v of values ?? []) {
    if (!Number.isFinite(v.value)) continue;
    const name = v.name.toLowerCase();
    if (!names.has(name) || ungrouped.has(name)) continue;
    if (v.group === undefined || Object.keys(v.group).length === 0) {
      out.set(name, v.value);
      ungrouped.add(name);
      continue;
    }
    const have = out.get(name);
    out.set(name, have === undefined ? v.value : Math.max(have, v.value));
  }
  return out;
}

/** `name` alone: {@link pickAll} of one name, NaN when absent. */
function pick(values: readonly MetricValue[] | undefined, name: string): number {
  return pickAll(values, new Set([name])).get(name) ?? NaN;
}

export class SeriesBuffer {
  readonly slots: number;
  /** Each slot's time (the latest collection written into it), NaN when empty. */
  readonly #t: Float64Array;
  /** `slots × N` values, slot-major. */
  readonly #v: Float64Array;
  /** The newest slot number written, or -Infinity. */
  #head = -Infinity;
  /** The latest value of each series, and when the last collection was added. */
  readonly #latest = new Float64Array(N).fill(NaN);
  #lastAt = NaN;
  /** Previous counter values and their times, for rates. */
  readonly #prev = new Map<string, { v: number; t: number }>();
  #maxConnections = NaN;
  /** The last `repl.lag.current` read was -1: no heartbeat to measure (not a replica). */
  #notReplica = false;

  constructor(slots: number = HOUR_SLOTS) {
    this.slots = Math.max(0, Math.floor(slots));
    this.#t = new Float64Array(this.slots).fill(NaN);
    this.#v = new Float64Array(this.slots * N).fill(NaN);
  }

  /** Whether the last lag read said there is nothing to measure (`repl.lag.current` -1). */
  get notReplica(): boolean {
    return this.#notReplica;
  }

  /** When the last collection started (epoch ms), or undefined before the first. */
  get lastAt(): number | undefined {
    return Number.isNaN(this.#lastAt) ? undefined : this.#lastAt;
  }

  /** Add one level collection (its values, at its start time). */
  add(m: Metrics): void {
    const t = m.begin.getTime();
    const point = this.#point(m, t);
    this.#lastAt = Number.isNaN(this.#lastAt) ? t : Math.max(this.#lastAt, t);
    for (let i = 0; i < N; i++) if (!Number.isNaN(point[i] ?? NaN)) this.#latest[i] = point[i] ?? NaN;
    if (this.slots > 0) this.#write(t, point);
  }

  /** The values of one collection, NaN where it carries none. */
  #point(m: Metrics, t: number): Float64Array {
    const point = new Float64Array(N).fill(NaN);
    const set = (name: SeriesName, v: number): void => void (point[INDEX.get(name) ?? 0] = v);
    const status = pickAll(m.values['status.global'], STATUS_NAMES);
    const deltas = new Map<string, { dv: number; dt: number }>();
    for (const c of COUNTERS) {
      const v = status.get(c);
      if (v === undefined) continue;
      const prev = this.#prev.get(c);
      this.#prev.set(c, { v, t });
      if (prev !== undefined && t > prev.t && v >= prev.v) deltas.set(c, { dv: v - prev.v, dt: t - prev.t });
    }
    for (const [name, counters] of RATES) {
      const d = counters.map((c) => deltas.get(c)).find((x) => x !== undefined);
      if (d !== undefined) set(name, (d.dv * 1000) / d.dt);
    }
    const req = deltas.get(BP_REQUESTS);
    const reads = deltas.get(BP_READS);
    if (req !== undefined && reads !== undefined && req.dv > 0)
      set('bp_hit', Math.max(0, 100 * (1 - reads.dv / req.dv)));
    set('connections', status.get('threads_connected') ?? NaN);
    set('bp_dirty', status.get('innodb_buffer_pool_pages_dirty') ?? NaN);
    const max = pick(m.values['var.global'], 'max_connections');
    if (!Number.isNaN(max)) this.#maxConnections = max;
    set('max_connections', this.#maxConnections);
    const lagMs = pick(m.values['repl.lag'], 'current');
    if (lagMs >= 0) set('repl_lag', lagMs / 1000);
    if (!Number.isNaN(lagMs)) this.#notReplica = lagMs < 0;
    return point;
  }

  #write(t: number, point: Float64Array): void {
    const b = Math.floor(t / STEP_MS);
    if (b <= this.#head - this.slots) return; // older than the window
    const i = b % this.slots;
    const held = this.#t[i] ?? NaN;
    if (Number.isNaN(held) || Math.floor(held / STEP_MS) !== b) {
      this.#v.fill(NaN, i * N, (i + 1) * N);
      this.#t[i] = t;
    } else this.#t[i] = Math.max(held, t);
    for (let k = 0; k < N; k++) {
      const v = point[k] ?? NaN;
      if (!Number.isNaN(v)) this.#v[i * N + k] = v;
    }
    if (b > this.#head) this.#head = b;
  }

  /** The latest value of each series (omitted when never measured). */
  latest(): UiLatest {
    const out: UiLatest = {};
    SERIES_NAMES.forEach((name, k) => {
      const v = this.#latest[k] ?? NaN;
      if (!Number.isNaN(v)) out[name] = v;
    });
    return out;
  }

  /** The points of the window, oldest first, empty slots left out. */
  snapshot(): UiSeries {
    const t: number[] = [];
    const values = Object.fromEntries(SERIES_NAMES.map((n) => [n, [] as (number | null)[]])) as Record<
      SeriesName,
      (number | null)[]
    >;
    const first = this.slots > 0 && Number.isFinite(this.#head) ? this.#head - this.slots + 1 : Infinity;
    for (let b = first; b <= this.#head; b++) {
      const i = b % this.slots;
      const at = this.#t[i] ?? NaN;
      if (Number.isNaN(at) || Math.floor(at / STEP_MS) !== b) continue;
      t.push(at);
      SERIES_NAMES.forEach((name, k) => {
        const v = this.#v[i * N + k] ?? NaN;
        values[name].push(Number.isNaN(v) ? null : v);
      });
    }
    return { stepS: STEP_MS / 1000, t, values };
  }
}
