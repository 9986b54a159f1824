/**
 * How V8 grows the old generation, set once before sonde boots, and one full collection once
 * the start is over.
 *
 * By default V8 lets the old generation grow to several times what survived the last full
 * collection before it collects again. An agent holding many monitors allocates steadily
 * (rows, metric values, status texts) and keeps little, so that headroom is mostly garbage
 * held as resident memory: at 1,000 monitors RSS settled near 340–380 MiB with the default
 * and at 265 MiB with a growing factor of 1.5, for the same CPU (bench/scale.ts and
 * docs/performance.md). The factor is read at each collection, so setting it at run time
 * works (unlike the young generation's size, which the bin's `#!` line sets).
 */
import { setFlagsFromString } from 'node:v8';

/** The old generation grows to this percent above what survived before the next full collection. */
export const HEAP_GROWING_PERCENT = 50;

export function tuneHeapGrowth(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}

/**
 * How long after the start the heap is settled: the boot, the listeners and every monitor's
 * first collections are done by then on a loaded machine.
 */
export const SETTLE_AFTER_MS = 5000;

/**
 * V8 flags that make a full collection drop the compiled code (bytecode and baseline code) of
 * every function not running at that moment, set for the settling collection only. A function
 * compiles again from its source the next time it is called.
 */
const FLUSH_ALL_CODE = ['stress-flush-code', 'flush-baseline-code'];

/** Whether this process was started with `--<flag>` or `--no-<flag>` (then it is left as given). */
function flagGiven(flag: string): boolean {
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  return given.some(
    (a) =>
      a
        .replace(/_/g, '-')
        .replace(/^--no-/, '--')
        .split('=')[0] === `--${flag}`,
  );
}

/**
 * One full collection now, the start's compiled code dropped with it. Starting up allocates a
 * lot (module code, the config, the first connections) and then little: the young generation
 * stays at the size the start grew it to and the old generation keeps its start-up pages,
 * because V8 gives memory back only after a full collection, which a quiet agent may not need
 * for minutes. One forced collection lets V8 shrink both (with one monitor, 85 → 78 MiB of RSS
 * for about 20 ms of CPU once; docs/performance.md).
 *
 * Most of the code compiled by then ran once, at the start (the config's parsing and checks,
 * the boot, the first connections), and V8 would keep its bytecode until five full
 * collections had passed without a call, minutes or hours for a quiet agent. This collection
 * drops all of it: what runs again (a collection's code) compiles again once, about 2 MiB
 * of RSS less with one monitor. The flags are V8's, set for this one collection and put back.
 * False when this Node offers no collection to call.
 */
export function collectGarbage(): boolean {
  setFlagsFromString('--expose-gc');
  // node:vm is needed for this one call, 5 s after the start: loaded here, not at start.
  const gc: unknown = process.getBuiltinModule('node:vm').runInNewContext('gc');
  if (typeof gc !== 'function') return false;
  const flags = FLUSH_ALL_CODE.filter((f) => !flagGiven(f));
  for (const f of flags) setFlagsFromString(`--${f}`);
  try {
    (gc as (options: { type: 'major'; execution: 'sync' }) => void)({ type: 'major', execution: 'sync' });
  } finally {
    for (const f of flags) setFlagsFromString(`--no-${f}`);
  }
  return true;
}

/** collectGarbage once, SETTLE_AFTER_MS from now; the timer does not keep sonde running. */
export function settleHeapAfterStart(): void {
  setTimeout(collectGarbage, SETTLE_AFTER_MS).unref();
}
