/**
 * Plan interpolation: each time a plan is activated for a monitor, every
 * domain option value is interpolated, `${ENV}` first, then `%{monitor.X}` from the monitor's
 * finalized config. Nothing else in a plan is interpolated.
 */
import type { FinalMonitorConfig } from '../core/config.js';
import type { DomainPlan, Level, Plan } from '../core/plan.js';
import { interpolateEnv, interpolateMonitor } from '../util/interpolate.js';

/**
 * A deep copy of `plan` whose option values are interpolated for `monitor`. Names, freqs,
 * metrics and error policies are copied unchanged.
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
        options[k] = interpolateMonitor(interpolateEnv(v, env), monitor);
      }
      collect[domain] = { metrics: [...dp.metrics], options, errors: { ...dp.errors } };
    }
    levels[name] = { name: level.name, freq: level.freq, freqMs: level.freqMs, collect };
  }
  return { name: plan.name, source: plan.source, levels };
}
