/**
 * Turn a plan into what the level collector runs for one monitor: option values
 * interpolated, levels sorted and levelled up, union levels for uneven freqs, and the
 * time limits: the engine waits EMR = minFreq − min(10 % of minFreq, 1 s) for a run, and
 * each domain gets CMR = its freq − min(20 % of its freq, 2 s). The slower levels are spread
 * by the monitor's id (see levelPhases in plan/schedule.ts).
 */
import type { FinalMonitorConfig } from '../core/config.js';
import type { Plan } from '../core/plan.js';
import { interpolatePlan } from '../plan/interpolate.js';
import {
  collectorMaxRuntimeMs,
  domainFreqMs,
  engineMaxRuntimeMs,
  levelForTick,
  levelPhases,
  schedulePlan,
  sortLevels,
} from '../plan/schedule.js';
import type { PlanRuntime } from './level-collector.js';

export function buildRuntime(
  plan: Plan,
  monitor: FinalMonitorConfig,
  env: NodeJS.ProcessEnv = process.env,
): PlanRuntime {
  const interpolated = interpolatePlan(plan, monitor, env);
  const sorted = sortLevels(interpolated);
  const scheduled = schedulePlan(interpolated, sorted);
  // The slower levels fall on the slot of their period the monitor's id picks (spreading).
  const phases = levelPhases(sorted, monitor.id);
  const domains = new Set(sorted.flatMap((l) => Object.keys(l.collect)));
  const cmrMs = new Map<string, number>();
  const freqMs = new Map<string, number>();
  for (const d of domains) {
    cmrMs.set(d, collectorMaxRuntimeMs(sorted, d) ?? 0);
    freqMs.set(d, domainFreqMs(sorted, d) ?? 0);
  }
  return {
    active: { plan: scheduled, emrMs: engineMaxRuntimeMs(sorted), cmrMs, domainFreqMs: freqMs },
    due(s) {
      const sel = levelForTick(sorted, s, phases);
      if (!sel) return undefined;
      return {
        level: sel.level,
        work: Object.keys(sel.collect).map((domain) => ({ domain, level: sel.key })),
      };
    },
  };
}
