/**
 * The level schedule of an activated plan: leveling-up (the "mod rule"
 * merge), which level a 1-second tick collects, and the time limits derived from freqs.
 *
 * How a tick picks its work, in a few lines:
 * - Level L is due at tick s (whole seconds since activation) when s·1s is a multiple of
 *   L's freq, i.e. when s is a multiple of L's *period* = freq / gcd(freq, 1s) seconds.
 *   That is Blip's arithmetic: `500ms` is due every tick, `1500ms` at 0, 3, 6, `2.5s` at 0, 5, 10.
 * - Leveling-up copies every lower level whose freq divides a level's freq into it, so with
 *   divisible freqs the highest due level alone holds everything due.
 * - When uneven freqs make several levels due without that (5s/20s/30s at s=60, 5s/7s at
 *   35), sonde collects the union of all due levels' domains under the highest due level's
 *   name (sonde's choice). Collectors read their settings by level name, so such a union is
 *   given its own *union level* (key `<highest>+<other>…`) in `schedulePlan`, which is the
 *   plan to hand to Collector.prepare.
 */
import type { DomainPlan, Level, Plan } from '../core/plan.js';

const NS_PER_S = 1_000_000_000;

/** A level after sorting and leveling-up. */
export interface SortedLevel extends Level {
  /** Merged domains: the level's own, then those of every lower level whose freq divides it. */
  collect: Record<string, DomainPlan>;
  /** The level's domains as written (before merging). */
  own: Record<string, DomainPlan>;
  /** Freq in whole nanoseconds (Go's duration unit; the mod rule works on it). */
  freqNs: number;
  /** The level is due at ticks s that are multiples of this many seconds (Infinity: never). */
  periodS: number;
}

/** What one tick collects. */
export interface TickSelection {
  /** The highest due level: the level name reported with the metrics. */
  level: string;
  /**
   * The level whose settings the collectors use this tick: `level`, or a union level of
   * `schedulePlan` when due levels do not divide each other.
   */
  key: string;
  /** The domains to collect with their merged metrics, options and errors. Do not mutate. */
  collect: Record<string, DomainPlan>;
  /** Names of all due levels, highest first. */
  due: string[];
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

function cloneDomain(dp: DomainPlan): DomainPlan {
  // Missing maps are treated as empty (Blip crashes on them).
  return {
    metrics: [...(dp.metrics ?? [])],
    options: { ...(dp.options ?? {}) },
    errors: { ...(dp.errors ?? {}) },
  };
}

function cloneCollect(collect: Record<string, DomainPlan>): Record<string, DomainPlan> {
  const out: Record<string, DomainPlan> = {};
  for (const [d, dp] of Object.entries(collect)) out[d] = cloneDomain(dp);
  return out;
}

/**
 * Merge `from` into `into` (mutating it): a missing domain is added; metrics are appended
 * (the target's first, so a repeated metric is kept twice, as in Blip); options and errors
 * only for keys the target lacks.
 */
function mergeInto(into: Record<string, DomainPlan>, from: Record<string, DomainPlan>): void {
  for (const [d, dp] of Object.entries(from)) {
    const have = into[d];
    if (!have) {
      into[d] = cloneDomain(dp);
      continue;
    }
    have.metrics.push(...(dp.metrics ?? []));
    for (const [k, v] of Object.entries(dp.options ?? {})) if (!(k in have.options)) have.options[k] = v;
    for (const [k, v] of Object.entries(dp.errors ?? {})) if (!(k in have.errors)) have.errors[k] = v;
  }
}

/** Seconds between ticks at which a freq is due (see the file comment); Infinity if never. */
export function tickPeriodS(freqMs: number): number {
  const ns = Math.round(freqMs * 1e6);
  if (!(ns > 0)) return Infinity;
  return ns / gcd(ns, NS_PER_S);
}

/**
 * Sort a plan's levels ascending by freq and level them up: for each level H,
 * from the highest down, every lower level L with `freq(H) mod freq(L) == 0` has its
 * *original* domains merged into H. The plan is not modified.
 */
export function sortLevels(plan: Plan): SortedLevel[] {
  const levels = Object.values(plan.levels).sort((a, b) => a.freqMs - b.freqMs);
  const sorted = levels.map((l): SortedLevel => ({
    name: l.name,
    freq: l.freq,
    freqMs: l.freqMs,
    freqNs: Math.round(l.freqMs * 1e6),
    periodS: tickPeriodS(l.freqMs),
    own: cloneCollect(l.collect),
    collect: cloneCollect(l.collect),
  }));
  for (let h = sorted.length - 1; h >= 0; h--) {
    const high = sorted[h]!;
    for (let l = h - 1; l >= 0; l--) {
      const low = sorted[l]!;
      if (low.freqNs > 0 && high.freqNs % low.freqNs === 0) mergeInto(high.collect, low.own);
    }
  }
  return sorted;
}

/** True when `low`'s domains were merged into `high` by the mod rule. */
function divides(low: SortedLevel, high: SortedLevel): boolean {
  return low === high || (low.freqNs > 0 && high.freqNs % low.freqNs === 0);
}

/** Union of the due levels' own domains, highest first (the same merge as leveling-up). */
function unionCollect(due: SortedLevel[]): Record<string, DomainPlan> {
  const out: Record<string, DomainPlan> = {};
  for (const l of due) mergeInto(out, l.own);
  return out;
}

/** Key of the union level for a due set (highest first) whose levels do not all divide the highest. */
function unionKey(sorted: SortedLevel[], due: SortedLevel[]): string {
  const high = due[0]!;
  let key = [high.name, ...due.filter((l) => !divides(l, high)).map((l) => l.name)].join('+');
  while (sorted.some((l) => l.name === key)) key += '+';
  return key;
}

function select(sorted: SortedLevel[], due: SortedLevel[]): TickSelection {
  const high = due[0]!;
  const names = due.map((l) => l.name);
  if (due.every((l) => divides(l, high))) {
    return { level: high.name, key: high.name, collect: high.collect, due: names };
  }
  return { level: high.name, key: unionKey(sorted, due), collect: unionCollect(due), due: names };
}

/**
 * What tick `s` (0, 1, 2, … seconds since activation) collects (with sonde's
 * union for uneven freqs), or undefined when no level is due.
 */
export function levelForTick(sorted: SortedLevel[], s: number): TickSelection | undefined {
  const due: SortedLevel[] = [];
  for (let i = sorted.length - 1; i >= 0; i--) {
    const l = sorted[i]!;
    if (Number.isFinite(l.periodS) && s % l.periodS === 0) due.push(l);
  }
  if (due.length === 0) return undefined;
  return select(sorted, due);
}

function lcm(a: bigint, b: bigint): bigint {
  let x = a;
  let y = b;
  while (y !== 0n) [x, y] = [y, x % y];
  return (a / x) * b;
}

/**
 * Every set of levels that is due together at some tick, highest first. A set is due at
 * s = lcm of its periods together with every level whose period divides that lcm, so the
 * possible sets are the closures of level subsets; they are found by joining closures.
 */
function dueSets(sorted: SortedLevel[]): SortedLevel[][] {
  const live = sorted.filter((l) => Number.isFinite(l.periodS));
  const closure = (idx: Set<number>): number[] => {
    let m = 1n;
    for (const i of idx) m = lcm(m, BigInt(live[i]!.periodS));
    return live.map((l, i) => (m % BigInt(l.periodS) === 0n ? i : -1)).filter((i) => i >= 0);
  };
  const found = new Map<string, number[]>();
  const queue: number[][] = [];
  const add = (set: number[]): void => {
    const k = set.join(',');
    if (found.has(k)) return;
    found.set(k, set);
    queue.push(set);
  };
  live.forEach((_l, i) => add(closure(new Set([i]))));
  while (queue.length > 0) {
    const a = queue.shift()!;
    for (const b of [...found.values()]) add(closure(new Set([...a, ...b])));
  }
  return [...found.values()].map((set) => set.map((i) => live[i]!).sort((x, y) => y.freqMs - x.freqMs));
}

/**
 * The plan to hand to Collector.prepare: the leveled-up levels under their own names, plus
 * one union level (see TickSelection.key) for every set of due levels that leveling-up does
 * not cover. With freqs that divide each other there are no union levels.
 */
export function schedulePlan(plan: Plan, sorted: SortedLevel[] = sortLevels(plan)): Plan {
  const levels: Record<string, Level> = {};
  for (const l of sorted)
    levels[l.name] = { name: l.name, freq: l.freq, freqMs: l.freqMs, collect: l.collect };
  for (const due of dueSets(sorted)) {
    const sel = select(sorted, due);
    if (sel.key === sel.level || levels[sel.key]) continue;
    const high = due[0]!;
    levels[sel.key] = { name: sel.key, freq: high.freq, freqMs: high.freqMs, collect: sel.collect };
  }
  return { name: plan.name, source: plan.source, levels };
}

/**
 * Warnings for levels whose freq is not a whole number of seconds (sonde's choice: keep Blip's
 * arithmetic, but say so), e.g. `level fast: freq 500ms is not a whole number of seconds;
 * it is collected every 1s`.
 */
export function freqWarnings(sorted: SortedLevel[]): string[] {
  return sorted
    .filter((l) => l.freqNs > 0 && l.freqNs % NS_PER_S !== 0)
    .map(
      (l) =>
        `level ${l.name}: freq ${l.freq} is not a whole number of seconds; it is collected every ${l.periodS}s`,
    );
}

/** Engine max runtime: minFreq − min(10 % of minFreq, 1 s); 0 without levels. */
export function engineMaxRuntimeMs(sorted: SortedLevel[]): number {
  const first = sorted[0];
  if (!first) return 0;
  const f = first.freqMs;
  return f - Math.min(f / 10, 1000);
}

/** Smallest freq (ms) of a level whose merged collect contains `domain`, or undefined. */
export function domainFreqMs(sorted: SortedLevel[], domain: string): number | undefined {
  return sorted.find((l) => domain in l.collect)?.freqMs;
}

/** Collector max runtime: domainFreq − min(20 % of domainFreq, 2 s); undefined if not collected. */
export function collectorMaxRuntimeMs(sorted: SortedLevel[], domain: string): number | undefined {
  const f = domainFreqMs(sorted, domain);
  if (f === undefined) return undefined;
  return f - Math.min(f / 5, 2000);
}
