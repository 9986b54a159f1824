/**
 * Percentile metric names, shared by query.response-time and percona.response-time.
 *
 * A plan lists percentiles as metrics in any of three spellings, all meaning 0.999:
 * `p0.999` (a fraction), `p99.9` (a percentage), `p999` (digits read as a fraction:
 * 999 / 10^3). The reported name is `p` + the percentage with one decimal, with leading and
 * trailing zeros and the dot removed: 0.99 → `p99`, 0.999 → `p999`, 0.5 → `p50`.
 */

/** One wanted percentile. */
export interface Percentile {
  /** Reported metric name, e.g. `p999`. */
  name: string;
  /** The quantile as a fraction, 0 < q ≤ 1. */
  q: number;
}

/** A plain decimal number (no sign games, hex, Infinity or NaN). */
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * The quantile a plan metric names: strip blanks and leading `p`/`P`; f < 1 → f;
 * 1 ≤ f ≤ 100 → f/100; f > 100 → f / 10^(length of the number text) (Blip's rule, so
 * `p999` = 0.999 and `p9999` = 0.9999). Throws for text that is not a number.
 */
export function parsePercentile(text: string): number {
  const s = text.trim().replace(/^[pP]+/, '');
  if (!NUMBER.test(s)) throw new Error(`invalid percentile metric '${text}': '${s}' is not a number`);
  const f = Number.parseFloat(s);
  if (f < 1) return f;
  if (f <= 100) return f / 100;
  return f / 10 ** s.length;
}

/**
 * The metric name of a quantile: `p` + (q×100 with one decimal, zeros trimmed at both ends,
 * dot removed). Blip quirks kept: 0.9999 → `p100`, 0 → `p`.
 */
export function percentileName(q: number): string {
  const text = (q * 100)
    .toFixed(1)
    .replace(/^0+|0+$/g, '')
    .replace('.', '');
  return `p${text}`;
}

/**
 * A level's plan metrics as percentiles. Throws Blip's message for an empty list, and
 * (Blip accepts it) for a quantile outside 0 < q ≤ 1, which no histogram can answer.
 */
export function parsePercentiles(metrics: readonly string[]): Percentile[] {
  if (metrics.length === 0)
    throw new Error("no percentile metrics specified, expected at least 1 like 'p99'");
  return metrics.map((m) => {
    const q = parsePercentile(m);
    if (!(q > 0 && q <= 1))
      throw new Error(`invalid percentile metric '${m}': must be greater than 0 and at most 100%`);
    return { name: percentileName(q), q };
  });
}
