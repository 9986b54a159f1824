/**
 * `sonde --check` for one monitor: what starting it would do, once, without running it.
 * Build the connection from the config (my.cnf, password file, TLS files), connect and
 * ping, load the monitor's plans, then make and prepare every domain of every plan the
 * monitor can run — its plan, the plans of its plan-change states, and its exporter plan —
 * exactly as the engine prepares them (trial queries and sources included). Nothing is
 * collected, nothing is sent to sinks, no port is bound; the pool is closed afterwards.
 */
import type { FinalMonitorConfig } from '../core/config.js';
import { errorMessage } from '../core/errors.js';
import type { Plan } from '../core/plan.js';
import { Engine, type ActivePlan } from '../engine/engine.js';
import { applyCollectFlags, exporterBasePlan } from '../plan/exporter-plan.js';
import { awsTargetOf, type MonitorDeps } from './monitor.js';
import { planChangingEnabled } from './plan-changer.js';
import { exporterActivePlan } from '../exporter/scrape-reader.js';

/** How long connecting and each plan's preparation may take. */
export const CHECK_TIMEOUT_MS = 10_000;

export interface CheckResult {
  monitorId: string;
  /** '' when every step worked, else what failed, naming the step (and the domain). */
  error: string;
  /** The plans prepared (names), in order. */
  plans: string[];
}

type CheckDeps = Pick<
  MonitorDeps,
  | 'events'
  | 'help'
  | 'makeCollector'
  | 'buildConnection'
  | 'createDb'
  | 'loadPlans'
  | 'buildRuntime'
  | 'awsConfig'
>;

/** The plan names the monitor can run with: its plan ('' = the first), and each state's plan. */
function planNames(cfg: FinalMonitorConfig): string[] {
  const names = [cfg.plan ?? ''];
  const change = cfg.plans?.change;
  if (change !== undefined && planChangingEnabled(change))
    for (const state of Object.values(change)) {
      const name = (state as { plan?: string } | undefined)?.plan ?? '';
      if (name !== '' && !names.includes(name)) names.push(name);
    }
  return names;
}

/** Check one monitor; never throws. */
export async function checkMonitor(
  cfg: FinalMonitorConfig,
  deps: CheckDeps,
  timeoutMs = CHECK_TIMEOUT_MS,
): Promise<CheckResult> {
  const result: CheckResult = { monitorId: cfg.id, error: '', plans: [] };
  let step = 'connection';
  let close: (() => Promise<void>) | undefined;
  try {
    const spec = await deps.buildConnection(cfg);
    const db = deps.createDb(spec, {
      monitorId: cfg.id,
      reloadCredentials: () => deps.buildConnection(cfg, { reload: true }),
      onPasswordReloadError: () => undefined,
    });
    close = () => db.close();
    step = 'connect';
    await db.ping({ timeoutMs });
    step = 'plans';
    const lookup = await deps.loadPlans(cfg, db);
    const prepare = async (plan: Plan, active: ActivePlan, exporter: boolean): Promise<void> => {
      step = `plan ${plan.name}`;
      const ctx = { monitorId: cfg.id, db, events: deps.events, aws: awsTargetOf(cfg, deps.awsConfig) };
      const signal = AbortSignal.timeout(timeoutMs);
      const engine = await Engine.prepare(
        {
          monitorId: cfg.id,
          active,
          collectors: {
            make: (d) =>
              deps.makeCollector(d, exporter ? { ...ctx, exporterReading: { keepText: new Set() } } : ctx),
            help: (d) => deps.help(d),
          },
          events: deps.events,
        },
        signal,
      );
      await engine.close();
      result.plans.push(exporter ? `${plan.name} (exporter)` : plan.name);
    };
    for (const name of planNames(cfg)) {
      const plan = lookup(name);
      await prepare(plan, deps.buildRuntime(plan, cfg).active, false);
    }
    const ex = cfg.exporter;
    if (ex?.mode) {
      const plan = applyCollectFlags(exporterBasePlan(ex, lookup), ex.flags ?? {});
      await prepare(plan, exporterActivePlan(plan), true);
    }
  } catch (err) {
    result.error = `${step}: ${errorMessage(err)}`;
  } finally {
    await close?.().catch(() => undefined);
  }
  return result;
}
