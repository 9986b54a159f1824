/**
 * Where plans come from and which one a monitor uses.
 *
 * - Shared plans are loaded once at boot: plan table rows (read through the connection of
 *   top-level `plans.monitor`), then plan files; the built-in plans only when neither gave
 *   a plan and `plans.disable-default-plans` is false.
 * - A monitor's plans are loaded each time it starts: its own plan table rows, then its
 *   `plans.files` (often inherited from the top level). A file that is already a shared plan
 *   is not re-read; the monitor's list holds a reference to the shared plan instead.
 * - Lookup picks from the monitor's list, or the shared list when the monitor has none, and
 *   hands out a deep copy the monitor may mutate.
 */
import { stringify } from 'yaml';
import type { CollectorHelp } from '../core/collector.js';
import type { Config, FinalMonitorConfig } from '../core/config.js';
import type { Db } from '../core/db.js';
import type { Plan } from '../core/plan.js';
import { defaultPlans } from './defaults.js';
import { expandPlanPattern, readPlanFile } from './files.js';
import { PlanError, validatePlans } from './parse.js';
import { readPlanTable } from './table.js';

/** The collectors' help by domain; undefined for an unknown domain. */
export type HelpLookup = (domain: string) => CollectorHelp | undefined;

/** One entry of a monitor's plan list. */
export interface PlanListEntry {
  name: string;
  /** The monitor's own plan; undefined when the entry refers to the shared plan `name`. */
  plan?: Plan;
}

/** What a PlanStore reports besides its plans. */
export interface PlanStoreOptions {
  /** A warning about a plan file: a key or a metric name it ignores (file, line, key). */
  warn?: (message: string) => void;
  /** Every registered domain, for "did you mean" in errors about an unknown one. */
  domains?: () => readonly string[];
}

/** Shared plans plus monitor plan loading and lookup. */
export class PlanStore {
  #shared: Plan[] = [];
  readonly #opts: PlanStoreOptions;

  constructor(opts: PlanStoreOptions = {}) {
    this.#opts = opts;
  }

  /** Read one plan file, its warnings to the store's `warn`. */
  #read(file: string, getHelp: HelpLookup): Promise<Plan> {
    return readPlanFile(file, { ...(this.#opts.warn ? { warn: this.#opts.warn } : {}), help: getHelp });
  }

  /** validatePlans with the registered domains for suggestions. */
  #validate(plans: Plan[], getHelp: HelpLookup): void {
    validatePlans(plans, getHelp, process.env, this.#opts.domains?.() ?? []);
  }

  /**
   * Load the shared plans from the server config (`plans.table`, `plans.files` and
   * `plans.disable-default-plans` at top level); replaces any earlier shared plans.
   * `tableDb` is the connection built from top-level `plans.monitor`, needed only when
   * `plans.table` is set. Throws PlanError (boot fails).
   */
  async loadShared(cfg: Config, getHelp: HelpLookup, tableDb?: Db): Promise<void> {
    const pc = cfg.plans ?? {};
    const plans: Plan[] = [];
    const table = pc.table ?? '';
    if (table !== '') {
      if (!tableDb) throw new PlanError('Table set but Monitor is nil');
      plans.push(...(await readPlanTable(tableDb, table)));
    }
    for (const pattern of pc.files ?? []) {
      for (const file of await expandPlanPattern(pattern)) plans.push(await this.#read(file, getHelp));
    }
    this.#validate(plans, getHelp);
    if (plans.length === 0 && pc['disable-default-plans'] !== true) plans.push(...defaultPlans());
    this.#shared = plans;
  }

  /**
   * Use `plans` as the shared plans (the embedding program's `loadPlans` hook) instead of
   * loading them: validated together like plan files; throws the validation error.
   */
  useShared(plans: Plan[], getHelp: HelpLookup): void {
    this.#validate(plans, getHelp);
    this.#shared = plans;
  }

  /** Deep copies of the shared plans in load order. */
  sharedPlans(): Plan[] {
    return structuredClone(this.#shared);
  }

  /**
   * Load monitor `m`'s plan list: its plan table rows for its id (read through
   * `db`, the monitor's own connection), then its plan files, where a file that is a shared
   * plan name becomes a reference. Newly read plans are validated together. Throws PlanError.
   */
  async monitorPlans(
    m: FinalMonitorConfig,
    db: Db | undefined,
    getHelp: HelpLookup,
  ): Promise<PlanListEntry[]> {
    const entries: PlanListEntry[] = [];
    const read: Plan[] = [];
    const table = m.plans?.table ?? '';
    if (table !== '') {
      if (!db)
        throw new PlanError(
          `monitor ${m.id}: plans.table ${table} is set but there is no connection to read it`,
        );
      for (const plan of await readPlanTable(db, table, m.id)) {
        entries.push({ name: plan.name, plan });
        read.push(plan);
      }
    }
    const isShared = (name: string): boolean => this.#shared.some((p) => p.name === name);
    for (const pattern of m.plans?.files ?? []) {
      if (isShared(pattern)) {
        entries.push({ name: pattern });
        continue;
      }
      for (const file of await expandPlanPattern(pattern)) {
        if (isShared(file)) {
          entries.push({ name: file });
          continue;
        }
        const plan = await this.#read(file, getHelp);
        entries.push({ name: plan.name, plan });
        read.push(plan);
      }
    }
    this.#validate(read, getHelp);
    return entries;
  }

  /**
   * The plan monitor `monitorId` uses: from `list` (its monitor plans)
   * when non-empty, else from the shared plans; `name` empty = the first plan. Returns a
   * deep copy. Throws PlanError `no plans loaded for monitor <M>`,
   * `monitor <M> has no plan named <N>` or `monitor <M> uses shared plan <N> but it was not loaded`.
   */
  lookup(monitorId: string, list: PlanListEntry[], name: string): Plan {
    const candidates: PlanListEntry[] =
      list.length > 0 ? list : this.#shared.map((p) => ({ name: p.name, plan: p }));
    if (candidates.length === 0) throw new PlanError(`no plans loaded for monitor ${monitorId}`);
    const entry = name === '' ? candidates[0] : candidates.find((e) => e.name === name);
    if (!entry) throw new PlanError(`monitor ${monitorId} has no plan named ${name}`);
    const plan = entry.plan ?? this.#shared.find((p) => p.name === entry.name);
    if (!plan)
      throw new PlanError(`monitor ${monitorId} uses shared plan ${entry.name} but it was not loaded`);
    return structuredClone(plan);
  }
}

/** A plan's levels in plan-file form, ascending freq; empty parts left out. */
function levelsDocument(plan: Plan): Record<string, unknown> {
  const doc: Record<string, unknown> = {};
  for (const level of Object.values(plan.levels).sort((a, b) => a.freqMs - b.freqMs)) {
    const collect: Record<string, unknown> = {};
    for (const [domain, dp] of Object.entries(level.collect)) {
      const body: Record<string, unknown> = {};
      if (dp.metrics.length > 0) body.metrics = dp.metrics;
      if (Object.keys(dp.options).length > 0) body.options = dp.options;
      if (Object.keys(dp.errors).length > 0) body.errors = dp.errors;
      collect[domain] = Object.keys(body).length > 0 ? body : null;
    }
    doc[level.name] = { freq: level.freq, collect };
  }
  return doc;
}

/**
 * The `--print-plans` text: per plan `---`, `# <plan name>`, the YAML of its
 * levels (in plan-file format, so it can be saved as a plan file; YAML 1.1 quoting so `yes`/`no`
 * stay strings for any reader), then a blank line.
 */
export function printPlans(plans: Plan[]): string {
  return plans
    .map(
      (plan) =>
        `---\n# ${plan.name}\n${stringify(levelsDocument(plan), { nullStr: '', version: '1.1' }).trimEnd()}\n\n`,
    )
    .join('');
}
