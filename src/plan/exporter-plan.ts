/**
 * The exporter plan as mysqld_exporter's collector flags shape it. `collect.<scraper>`
 * switches one scraper's domain on (`true`) or off (`false`) in the plan's single level;
 * `collect.<scraper>.<option>` sets that domain's option. Without flags the plan is used as
 * it is. upstreamPlan() is mysqld_exporter's own default set, for its command line.
 */
import { errorMessage } from '../core/errors.js';
import type { DomainPlan, Plan } from '../core/plan.js';
import { UPSTREAM_SCRAPERS, scraperByName, subflagByName } from '../core/upstream.js';
import { defaultPlan } from './defaults.js';
import { PlanError } from './parse.js';
import { parseDuration } from '../util/duration.js';
import { parseGoBool } from '../util/text.js';

/** Options that make sonde's domains read what mysqld_exporter's scrapers read. */
const DOMAIN_OPTIONS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  'status.global': { all: 'yes' },
  'var.global': { all: 'yes' },
  innodb: { all: 'enabled' },
};

function domainPlan(domain: string): DomainPlan {
  return { metrics: [], options: { ...DOMAIN_OPTIONS[domain] }, errors: {} };
}

/** Go's strconv.ParseBool, as kingpin reads a bool flag (surrounding space ignored); undefined when it is none. */
export function flagBool(value: string): boolean | undefined {
  return parseGoBool(value.trim());
}

/** mysqld_exporter's default collectors in one 10s level named `prom`. */
export function upstreamPlan(name = 'mysqld-exporter'): Plan {
  const collect: Record<string, DomainPlan> = {};
  for (const s of UPSTREAM_SCRAPERS) if (s.enabled) collect[s.domain] = domainPlan(s.domain);
  return {
    name,
    source: 'sonde',
    levels: { prom: { name: 'prom', freq: '10s', freqMs: parseDuration('10s'), collect } },
  };
}

/**
 * `plan` with the collector flags applied (a copy; `plan` is not changed). The plan must
 * have one level (checked by the caller). Flags that are no collector flag are left to the
 * exporter; invalid ones were refused when the config was loaded.
 */
export function applyCollectFlags(plan: Plan, flags: Readonly<Record<string, string>>): Plan {
  const entries = Object.entries(flags).filter(([k]) => k.startsWith('collect.'));
  if (entries.length === 0) return plan;
  const [levelName, level] = Object.entries(plan.levels)[0] ?? [];
  if (levelName === undefined || level === undefined) return plan;
  const collect: Record<string, DomainPlan> = {};
  for (const [d, dp] of Object.entries(level.collect)) collect[d] = { ...dp, options: { ...dp.options } };
  for (const [flag, value] of entries) {
    const s = scraperByName(flag.slice('collect.'.length));
    if (s === undefined) continue;
    if (flagBool(value) === true) collect[s.domain] ??= domainPlan(s.domain);
    else delete collect[s.domain];
  }
  for (const [flag, value] of entries) {
    const found = subflagByName(flag);
    if (found === undefined) continue;
    const dp = collect[found[0].domain];
    if (dp !== undefined) dp.options[found[1].option] = value;
  }
  return { ...plan, levels: { [levelName]: { ...level, collect } } };
}

/** The exporter's plan when the user names none and gives no collector flag. */
export const DEFAULT_EXPORTER_PLAN = 'default-exporter';

/**
 * The plan the exporter starts from: `exporter.plan` when set; else, when collector flags
 * are given, mysqld_exporter's own default set (flags mean mysqld_exporter's semantics, as
 * on its command line); else `default-exporter` (Blip's): the monitor's plan of that name
 * when it has one, else the built-in one, whatever plan files the monitor loads. A named
 * plan that cannot be found is a PlanError naming `exporter.plan`.
 */
export function exporterBasePlan(
  ex: { plan?: string | undefined; flags?: Readonly<Record<string, string>> | undefined },
  lookup: (name: string) => Plan,
): Plan {
  if (ex.plan !== undefined && ex.plan !== '') {
    try {
      return lookup(ex.plan);
    } catch (err) {
      throw new PlanError(
        `exporter.plan ${ex.plan}: ${errorMessage(err)}; set exporter.plan to a plan the monitor loads (plans.files), or leave it unset for the built-in ${DEFAULT_EXPORTER_PLAN}`,
      );
    }
  }
  const flagged = Object.keys(ex.flags ?? {}).some((k) => k.startsWith('collect.'));
  if (flagged) return upstreamPlan();
  try {
    return lookup(DEFAULT_EXPORTER_PLAN);
  } catch (err) {
    const builtin = defaultPlan(DEFAULT_EXPORTER_PLAN);
    if (builtin === undefined) throw err;
    return builtin;
  }
}
