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
 * - Spreading: a monitor's schedule after s = 0 is shifted by a phase φ taken from the
 *   monitor's id (`levelPhases`), so a fleet of monitors activated together does not run its
 *   slower levels in the same second. Everything is still due at s = 0; afterwards level L is
 *   due when s − φ is a multiple of its period. φ is a multiple of the fastest level's period,
 *   so the fastest level keeps its ticks; and since the schedule after s = 0 is the unshifted
 *   one moved by φ, leveling-up and the union levels hold exactly as without it. With φ = 0
 *   (no phases given) it is Blip's arithmetic.
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
 * union for uneven freqs), or undefined when no level is due. `phases` (from `levelPhases`,
 * one per sorted level) shift the levels after s = 0; without them every level is due at
 * the multiples of its period.
 */
export function levelForTick(
  sorted: SortedLevel[],
  s: number,
  phases?: readonly number[],
): TickSelection | undefined {
  const due: SortedLevel[] = [];
  for (let i = sorted.length - 1; i >= 0; i--) {
    const l = sorted[i]!;
    if (!Number.isFinite(l.periodS)) continue;
    if (s === 0 || s % l.periodS === (phases?.[i] ?? 0)) due.push(l);
  }
  if (due.length === 0) return undefined;
  return select(sorted, due);
}

/**
 * A stable, well-mixed 32-bit number from a monitor id: FNV-1a, then MurmurHash3's final mix
 * (FNV-1a alone leaves the low bits of ids that differ in their last characters alike).
 * Deliberately not the shard hash (monitor/shard.ts): with the same bits, every monitor of
 * one shard could land on the same phase.
 */
function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (const b of new TextEncoder().encode(text)) h = Math.imul(h ^ b, 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Each sorted level's phase for the monitor `seed` (its id): φ mod the level's period, with
 * φ = (fastest period) × hash(seed) for every level alike. So the fastest level (and every
 * level whose period equals it) has phase 0 and keeps its ticks, a slower level lands on one
 * of its period's slots of the fastest period's length (a 60 s level with a 5 s fastest
 * level: one of 12), the same one whenever the monitor's plan is activated, and monitors with
 * different ids spread evenly over them. A level that is never due gets 0.
 */
export function levelPhases(sorted: SortedLevel[], seed: string): number[] {
  const live = sorted.map((l) => l.periodS).filter((p) => Number.isFinite(p));
  if (live.length === 0) return sorted.map(() => 0);
  const phi = BigInt(Math.min(...live)) * BigInt(hash32(seed));
  return sorted.map((l) => (Number.isFinite(l.periodS) ? Number(phi % BigInt(l.periodS)) : 0));
}

/** The freq facts the due-set search needs, sorted ascending by freq. */
type Timing = Pick<SortedLevel, 'freqMs' | 'freqNs' | 'periodS'>;

/**
 * The least common multiple of two periods, or Infinity beyond Number.MAX_SAFE_INTEGER:
 * a set of levels first due together at a tick that far away (2^53 s) is never due.
 */
function lcmPeriods(a: number, b: number): number {
  const m = (a / gcd(a, b)) * b;
  return m <= Number.MAX_SAFE_INTEGER ? m : Infinity;
}

/** True when some level of `set` (indexes into `live`, ascending) does not divide its highest. */
function needsUnion(live: Timing[], set: number[]): boolean {
  const high = live[set[set.length - 1] ?? 0];
  if (!high) return false;
  return set.some((i) => {
    const l = live[i]!;
    return l !== high && !(l.freqNs > 0 && high.freqNs % l.freqNs === 0);
  });
}

/**
 * Every set of levels that is due together at some tick, as indexes into the live levels
 * (those with a finite period), ascending. The set due at tick s is every level whose period
 * divides s, so each set is fixed by the lcm M of its periods. The search starts from each
 * level alone and adds one level at a time (M' = lcm(M, period)); each M found is the lcm of
 * its own set, so a repeated M is a repeated set and is skipped. That bounds the work by
 * (sets found) × (levels). Stops and returns undefined once more than `maxUnions` sets need
 * a union level.
 */
function dueIndexSets(live: Timing[], maxUnions: number): number[][] | undefined {
  const found: number[][] = [];
  const seen = new Set<number>();
  let unions = 0;
  const add = (m: number): boolean => {
    if (!Number.isFinite(m) || seen.has(m)) return true;
    seen.add(m);
    const set: number[] = [];
    for (let i = 0; i < live.length; i++) if (m % live[i]!.periodS === 0) set.push(i);
    found.push(set);
    if (needsUnion(live, set)) unions++;
    return unions <= maxUnions;
  };
  const lcms: number[] = [];
  for (const l of live) {
    if (!add(l.periodS)) return undefined;
    lcms.push(l.periodS);
  }
  // `found` and `lcms` grow together; every set is extended by every level once.
  for (let k = 0; k < found.length; k++) {
    const m = lcms[k]!;
    for (const l of live) {
      if (m % l.periodS === 0) continue;
      const next = lcmPeriods(m, l.periodS);
      const before = found.length;
      if (!add(next)) return undefined;
      if (found.length > before) lcms.push(next);
    }
  }
  return found;
}

/** Union levels a plan may need; a plan that needs more is refused when it is validated. */
export const MAX_UNION_LEVELS = 100;

/**
 * How many union levels a plan with these freqs (ms) needs, or undefined when it needs more
 * than MAX_UNION_LEVELS. Levels without a usable freq are ignored.
 */
export function unionLevelCount(freqsMs: number[]): number | undefined {
  const live = freqsMs
    .map((freqMs) => ({ freqMs, freqNs: Math.round(freqMs * 1e6), periodS: tickPeriodS(freqMs) }))
    .filter((l) => Number.isFinite(l.periodS))
    .sort((x, y) => x.freqMs - y.freqMs);
  const sets = dueIndexSets(live, MAX_UNION_LEVELS);
  return sets?.filter((set) => needsUnion(live, set)).length;
}

/** Every set of levels due together at some tick, highest first. */
function dueSets(sorted: SortedLevel[]): SortedLevel[][] {
  const live = sorted.filter((l) => Number.isFinite(l.periodS));
  const sets = dueIndexSets(live, MAX_UNION_LEVELS);
  if (!sets) {
    throw new Error(
      `levels whose freqs do not divide each other are due together in more than ${MAX_UNION_LEVELS} combinations`,
    );
  }
  return sets.map((set) => set.map((i) => live[i]!).sort((x, y) => y.freqMs - x.freqMs));
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
