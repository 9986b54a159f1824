/**
 * Small helpers shared by collectors. Nothing here knows about a particular domain.
 */
import { CollectError } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import { errnoOf, errorMessage } from '../../core/errors.js';
import type { MetricType, MetricValue } from '../../core/metrics.js';
import { parseValue } from '../../db/values.js';
import type { DomainPlan, Plan } from '../../core/plan.js';

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

/** This domain's levels, each turned into ready-to-run state by `build` (which may throw). */
export function mapLevels<T>(plan: Plan, domain: string, build: (dp: DomainPlan) => T): Map<string, T> {
  const out = new Map<string, T>();
  for (const [name, dp] of levelPlans(plan, domain)) out.set(name, build(dp));
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

/**
 * `Variable_name`/`Value` rows (SHOW GLOBAL STATUS / VARIABLES) → values named in lowercase,
 * in row order. `wanted` filters by lowercase name; text that is no number is skipped.
 */
export function variableValues(
  rows: readonly Row[],
  typeOf: (name: string) => MetricType,
  wanted?: (name: string) => boolean,
): MetricValue[] {
  const values: MetricValue[] = [];
  for (const row of rows) {
    const name = (field(row, 'Variable_name') ?? '').toLowerCase();
    if (name === '' || (wanted !== undefined && !wanted(name))) continue;
    const value = parseValue(field(row, 'Value'));
    if (value !== undefined) values.push({ name, value, type: typeOf(name) });
  }
  return values;
}

/** `?, ?, ?` for an IN list of n bound values. */
export function placeholders(n: number): string {
  return Array.from({ length: n }, () => '?').join(', ');
}

/**
 * A query failure as collection data, keeping the server's errno so the engine can match it
 * against the domain's error policies. `what` prefixes the message (`<what> failed: …`);
 * `zero` are the values a `zero` policy emits when the errno maps to one.
 */
export function queryError(err: unknown, opts: { what?: string; zero?: MetricValue[] } = {}): CollectError {
  if (err instanceof CollectError && opts.what === undefined && opts.zero === undefined) return err;
  const errno = errnoOf(err);
  const message = opts.what === undefined ? errorMessage(err) : `${opts.what} failed: ${errorMessage(err)}`;
  return new CollectError(message, {
    cause: err,
    ...(errno === undefined ? {} : { errno }),
    ...(opts.zero === undefined ? {} : { zero: opts.zero }),
  });
}
