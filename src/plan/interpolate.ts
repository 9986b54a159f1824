/**
 * Plan interpolation: each time a plan is activated for a monitor, every
 * domain option value is interpolated, `${ENV}` first, then `%{monitor.X}` from the monitor's
 * finalized config. Nothing else in a plan is interpolated.
 */
import type { FinalMonitorConfig } from '../core/config.js';
import type { DomainPlan, Level, Plan } from '../core/plan.js';
import { UnsetVariableError, interpolateEnv, interpolateMonitor } from '../util/interpolate.js';
import { PlanError } from './parse.js';

/** `${ENV}` of one option value; an unset variable is a PlanError naming the plan and key. */
function envValue(v: string, env: NodeJS.ProcessEnv, where: string): string {
  try {
    return interpolateEnv(v, env);
  } catch (err) {
    if (!(err instanceof UnsetVariableError)) throw err;
    throw new PlanError(`invalid plan: ${where}: ${err.message}`, { cause: err });
  }
}

/**
 * A deep copy of `plan` whose option values are interpolated for `monitor`. Names, freqs,
 * metrics and error policies are copied unchanged. A `${NAME}` whose variable is not set
 * throws a PlanError (validatePlans reports the same at load); `%{monitor.*}` never fails.
 */
export function interpolatePlan(
  plan: Plan,
  monitor: FinalMonitorConfig,
  env: NodeJS.ProcessEnv = process.env,
): Plan {
  const levels: Record<string, Level> = {};
  for (const [name, level] of Object.entries(plan.levels)) {
    const collect: Record<string, DomainPlan> = {};
    for (const [domain, dp] of Object.entries(level.collect)) {
      const options: Record<string, string> = {};
      for (const [k, v] of Object.entries(dp.options)) {
        options[k] = interpolateMonitor(
          envValue(v, env, `${plan.name}: at ${name}/${domain}: key options.${k}`),
          monitor,
        );
      }
      collect[domain] = { metrics: [...dp.metrics], options, errors: { ...dp.errors } };
    }
    levels[name] = { name: level.name, freq: level.freq, freqMs: level.freqMs, collect };
  }
  return { name: plan.name, source: plan.source, levels };
}
