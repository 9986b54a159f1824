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
const COUNTERS = [...new Set([...RATES.flatMap(([, c]) => c), BP_REQUESTS, BP_READS])];

/** Distinct names a {@link NameIndex} remembers; past that, a name is looked up each time. */
const REMEMBERED_NAMES = 20_000;

/**
 * The position of a value's name among a few wanted names (lowercase), or -1. A collection
 * of a wide plan carries a thousand values whose names are the same strings every time, so
 * each distinct name is lowercased and looked up once per process, not once per value of
 * every collection of every monitor.
 */
class NameIndex {
  readonly names: readonly string[];
  readonly #wanted: ReadonlyMap<string, number>;
  readonly #seen = new Map<string, number>();

  constructor(names: readonly string[]) {
    this.names = names;
    this.#wanted = new Map(names.map((n, i) => [n, i]));
  }

  of(name: string): number {
    let k = this.#seen.get(name);
    if (k === undefined) {
      k = this.#wanted.get(name.toLowerCase()) ?? -1;
      if (this.#seen.size < REMEMBERED_NAMES) this.#seen.set(name, k);
    }
    return k;
  }
}

/** The status.global values the series read: the counters, then the two gauges. */
const STATUS = new NameIndex([...COUNTERS, 'threads_connected', 'innodb_buffer_pool_pages_dirty']);
const MAX_CONNECTIONS = new NameIndex(['max_connections']);
const LAG = new NameIndex(['current']);
const at = (index: NameIndex, name: string): number => index.names.indexOf(name);
const RATE_COUNTERS: readonly [number, readonly number[]][] = RATES.map(([series, counters]) => [
  SERIES_NAMES.indexOf(series),
  counters.map((c) => at(STATUS, c)),
]);
const C_BP_REQUESTS = at(STATUS, BP_REQUESTS);
const C_BP_READS = at(STATUS, BP_READS);
const C_CONNECTIONS = at(STATUS, 'threads_connected');
const C_BP_DIRTY = at(STATUS, 'innodb_buffer_pool_pages_dirty');
const S_CONNECTIONS = SERIES_NAMES.indexOf('connections');
const S_BP_DIRTY = SERIES_NAMES.indexOf('bp_dirty');
const S_BP_HIT = SERIES_NAMES.indexOf('bp_hit');
const S_MAX_CONNECTIONS = SERIES_NAMES.indexOf('max_connections');
const S_REPL_LAG = SERIES_NAMES.indexOf('repl_lag');

/**
 * Each name of `index` in one pass over `values`: the first finite value without a group,
 * or the largest finite one when grouped; NaN where none.
 */
function pickAll(values: readonly MetricValue[] | undefined, index: NameIndex): Float64Array {
  const out = new Float64Array(index.names.length).fill(NaN);
  if (values === undefined) return out;
  const ungrouped = new Uint8Array(index.names.length);
  for (const v of values) {
    const k = index.of(v.name);
    if (k < 0 || ungrouped[k] === 1 || !Number.isFinite(v.value)) continue;
    if (v.group === undefined || Object.keys(v.group).length === 0) {
      out[k] = v.value;
      ungrouped[k] = 1;
      continue;
    }
    const have = out[k] ?? NaN;
    out[k] = Number.isNaN(have) ? v.value : Math.max(have, v.value);
  }
  return out;
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
  /** Each counter's previous value and its time (NaN before the first), for rates. */
  readonly #prevV = new Float64Array(COUNTERS.length).fill(NaN);
  readonly #prevT = new Float64Array(COUNTERS.length).fill(NaN);
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
    const status = pickAll(m.values['status.global'], STATUS);
    // Each counter's increase over the time since its last read, NaN across a reset.
    const dv = new Float64Array(COUNTERS.length).fill(NaN);
    const dt = new Float64Array(COUNTERS.length).fill(NaN);
    for (let c = 0; c < COUNTERS.length; c++) {
      const v = status[c] ?? NaN;
      if (Number.isNaN(v)) continue;
      const prevV = this.#prevV[c] ?? NaN;
      const prevT = this.#prevT[c] ?? NaN;
      this.#prevV[c] = v;
      this.#prevT[c] = t;
      if (t > prevT && v >= prevV) {
        dv[c] = v - prevV;
        dt[c] = t - prevT;
      }
    }
    for (const [series, counters] of RATE_COUNTERS) {
      const c = counters.find((i) => !Number.isNaN(dv[i] ?? NaN));
      if (c !== undefined) point[series] = ((dv[c] ?? NaN) * 1000) / (dt[c] ?? NaN);
    }
    const req = dv[C_BP_REQUESTS] ?? NaN;
    const reads = dv[C_BP_READS] ?? NaN;
    if (req > 0 && !Number.isNaN(reads)) point[S_BP_HIT] = Math.max(0, 100 * (1 - reads / req));
    point[S_CONNECTIONS] = status[C_CONNECTIONS] ?? NaN;
    point[S_BP_DIRTY] = status[C_BP_DIRTY] ?? NaN;
    const max = pickAll(m.values['var.global'], MAX_CONNECTIONS)[0] ?? NaN;
    if (!Number.isNaN(max)) this.#maxConnections = max;
    point[S_MAX_CONNECTIONS] = this.#maxConnections;
    const lagMs = pickAll(m.values['repl.lag'], LAG)[0] ?? NaN;
    if (lagMs >= 0) point[S_REPL_LAG] = lagMs / 1000;
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
