/**
 * The plan of mysqld_exporter's default collectors as sonde's exporter runs it: every
 * scraper mysqld_exporter enables by default that sonde has a collector for, switched on by
 * its `--collect.*` flag.
 */
import type { CollectorRegistry } from '../src/collectors/registry.js';
import type { Plan } from '../src/core/plan.js';
import { UPSTREAM_SCRAPERS } from '../src/core/upstream.js';
import { applyCollectFlags, upstreamPlan } from '../src/plan/exporter-plan.js';

export function defaultCollectorsPlan(registry: CollectorRegistry): Plan {
  const flags: Record<string, string> = {};
  for (const s of UPSTREAM_SCRAPERS)
    if (s.enabled) flags[`collect.${s.name}`] = String(registry.has(s.domain));
  return applyCollectFlags(upstreamPlan(), flags);
}
