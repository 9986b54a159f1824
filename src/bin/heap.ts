/**
 * How V8 grows the old generation, set once before sonde boots.
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
