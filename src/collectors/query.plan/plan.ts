/**
 * A plan as it may leave sonde, and its hash. Every string of the plan goes through the
 * obfuscator (conditions such as `attached_condition: "t.v = 'x'"` carry the statement's
 * literals); numbers are the optimizer's estimates, not the statement's values, and stay.
 * The hash covers the plan's shape only (tables, access types, keys, join order and kind):
 * estimates (rows, costs, filtered, sizes) and strings that are conditions change from one
 * run to the next without the plan changing, so they are left out of it.
 */
import { obfuscateSql } from '../../sql/obfuscate.js';

export type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

/** Keys whose values are estimates or run details, not the plan's shape. */
const ESTIMATE =
  /(^|_)(rows|cost|costs|filtered|r_.*|loops|time|buffer_size|data_read_per_join|prefix_cost|eval_cost|read_cost|query_cost|cost_info)$/i;
/** Keys whose strings are expressions holding the statement's values. */
const EXPRESSION = /(condition|ref|expression|having|where|index_condition|pushed|range)/i;

/** The plan with every string obfuscated (keys kept). */
export function obfuscatePlan(plan: Json, raw: boolean): Json {
  if (typeof plan === 'string') return raw ? plan : obfuscateSql(plan);
  if (Array.isArray(plan)) return plan.map((p) => obfuscatePlan(p, raw));
  if (plan !== null && typeof plan === 'object') {
    const out: { [k: string]: Json } = {};
    for (const [k, v] of Object.entries(plan)) out[k] = obfuscatePlan(v, raw);
    return out;
  }
  return plan;
}

/** The plan's shape: estimates, run details and expressions dropped. */
export function planShape(plan: Json): Json {
  if (Array.isArray(plan)) return plan.map(planShape);
  if (plan !== null && typeof plan === 'object') {
    const out: { [k: string]: Json } = {};
    for (const k of Object.keys(plan).sort()) {
      const v = plan[k];
      if (v === undefined || ESTIMATE.test(k)) continue;
      if (typeof v === 'number') continue;
      if (typeof v === 'string' && EXPRESSION.test(k)) continue;
      out[k] = planShape(v);
    }
    return out;
  }
  return plan;
}

/** SHA-256 of the plan's shape, hex. */
export function planHash(plan: Json): string {
  return process
    .getBuiltinModule('node:crypto')
    .createHash('sha256')
    .update(JSON.stringify(planShape(plan)))
    .digest('hex');
}

/** Read a JSON plan; undefined when it is not JSON. */
export function parsePlan(text: string): Json | undefined {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return undefined;
  }
}
