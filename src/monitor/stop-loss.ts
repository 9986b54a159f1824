/**
 * Stop-loss: a reload that would lose too many monitors is refused. lost = before − after.
 * - `N`  blocks when lost > N
 * - `P%` blocks when lost × 100 / before > P
 * `''`, `0` and `0%` are off; nothing is checked when before = 0 or lost ≤ 0.
 */
import { checkStopLoss } from '../config/validate.js';

/** The blocking message, or undefined when the reload may go ahead. */
export function stopLossCheck(setting: string, before: number, after: number): string | undefined {
  if (setting === '') return undefined;
  const problem = checkStopLoss(setting);
  if (problem !== undefined) throw new Error(problem);
  const limit = Number.parseInt(setting, 10);
  if (limit === 0) return undefined;
  const lost = before - after;
  if (before === 0 || lost <= 0) return undefined;
  if (setting.endsWith('%')) {
    const pct = (lost * 100) / before;
    if (pct > limit)
      return `before: ${before}; now: ${after}; lost ${pct.toFixed(6)}% > limit ${limit.toFixed(6)}%`;
    return undefined;
  }
  if (lost > limit) return `before: ${before}; now: ${after}; lost ${lost} > limit ${limit}`;
  return undefined;
}
