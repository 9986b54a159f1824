/**
 * What the performance_schema and sys scrapers share: the family prefix, picosecond timers
 * and the reading of numeric columns.
 *
 * Counters and timers are read as numbers; a column that is NULL or not a number is left out
 * (its sample is missing, never 0), and the rest of the row is still served.
 */
import type { MetricValue } from '../../core/metrics.js';
import { parseGoFloat, sample, type Family } from './common.js';

/** Prefix of every performance_schema family. */
export const PFS_PREFIX = 'mysql_perf_schema_';

/** performance_schema timers count picoseconds. */
export const PICOSECONDS = 1e12;

/** A numeric column, or undefined when it is NULL, empty or no number. */
export function num(text: string | null | undefined): number | undefined {
  if (text === null || text === undefined) return undefined;
  const n = parseGoFloat(text.trim());
  return n === undefined || Number.isNaN(n) ? undefined : n;
}

/** A picosecond timer column in seconds, or undefined. */
export function seconds(text: string | null | undefined): number | undefined {
  const n = num(text);
  return n === undefined ? undefined : n / PICOSECONDS;
}

/** Push one sample unless its value is missing. */
export function push(
  out: MetricValue[],
  f: Family,
  value: number | undefined,
  labels?: Record<string, string>,
): void {
  if (value !== undefined) out.push(sample(f, value, labels));
}

/** A text column as a label value (NULL → empty, as an unset label). */
export function text(value: string | null | undefined): string {
  return value ?? '';
}
