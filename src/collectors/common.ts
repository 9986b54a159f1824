/**
 * Small helpers shared by collectors. Nothing here knows about a particular domain.
 */
import { CollectError } from '../core/collector.js';
import type { Row } from '../core/db.js';
import { errorMessage } from '../core/errors.js';
import type { DomainPlan, Plan } from '../core/plan.js';

/**
 * This domain's part of every level of the plan: level name → DomainPlan. A level that
 * does not list the domain is absent, so collect() for it returns nothing.
 */
export function levelPlans(plan: Plan, domain: string): Map<string, DomainPlan> {
  const out = new Map<string, DomainPlan>();
  for (const [name, level] of Object.entries(plan.levels)) {
    const dp = level.collect[domain];
    if (dp !== undefined) out.set(name, dp);
  }
  return out;
}

/** An option value as collectors compare it: trimmed, lowercase; '' when unset. */
export function option(dp: DomainPlan, name: string): string {
  return (dp.options[name] ?? '').trim().toLowerCase();
}

/**
 * A column of a row by name, ignoring case: servers differ in how they spell result
 * columns (`Variable_name` vs `VARIABLE_NAME`). Undefined when there is no such column.
 */
export function field(row: Row, name: string): string | null | undefined {
  if (name in row) return row[name];
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(row)) if (k.toLowerCase() === lower) return v;
  return undefined;
}

/** `?, ?, ?` for an IN list of n bound values. */
export function placeholders(n: number): string {
  return Array.from({ length: n }, () => '?').join(', ');
}

/**
 * Wrap a query failure as collection data (style.md habit 4): the engine applies the
 * plan's error policy from the errno.
 */
export function queryError(err: unknown): CollectError {
  if (err instanceof CollectError) return err;
  const errno = (err as { errno?: unknown } | null)?.errno;
  return new CollectError(
    errorMessage(err),
    typeof errno === 'number' ? { errno, cause: err } : { cause: err },
  );
}
