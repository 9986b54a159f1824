/**
 * Error policies, applied by the engine and nowhere else. A collector reports a typed
 * CollectError; the policy that governs it is the one the error names (`policy`), else the
 * one whose declared errnos (in the collector's help) include the error's MySQL errno.
 * The plan's `errors:` map then says what to do with it (default `report,drop,retry`):
 * report every time, report once, or ignore; drop the values or emit them as zero; retry
 * next time or stop the domain until the plan is activated again.
 *
 * An `unsupported` error (the server cannot serve the domain) is reported once and stops
 * the domain, unless it names a policy the plan sets: then that policy decides. A `quiet`
 * error is never reported; only the metric part of its policy (drop or zero) applies. A
 * `partial` error (part of the domain cannot be read until the server changes) is reported
 * once and kept as the domain's status line while it lasts, unless the plan sets its policy.
 */
import type { CollectorHelp, CollectResult } from '../core/collector.js';
import type { MetricValue } from '../core/metrics.js';
import { MetricType } from '../core/metrics.js';
import type { Plan } from '../core/plan.js';
import { parsePolicy } from '../plan/policy.js';

/** What a policy remembers across runs of one prepared plan. */
export class PolicyMemory {
  /** domains stopped by a `stop` policy or as unsupported */
  readonly #stopped = new Set<string>();
  /** `<domain>\0<policy>` already reported once */
  readonly #reported = new Set<string>();

  stopped(domain: string): boolean {
    return this.#stopped.has(domain);
  }

  stop(domain: string): void {
    this.#stopped.add(domain);
  }

  /** True the first time a domain's policy is seen. */
  first(domain: string, policy: string): boolean {
    const key = `${domain}\0${policy}`;
    if (this.#reported.has(key)) return false;
    this.#reported.add(key);
    return true;
  }
}

/** The values to keep and the error text to report ('' = none) after the policy. */
export interface Applied {
  values: MetricValue[];
  error: string;
  /** A partial error's text, kept as the domain's status line while it lasts. */
  partial?: string;
}

/** Apply the governing policy to one domain's result (see the file comment). */
export function applyPolicy(
  memory: PolicyMemory,
  plan: Plan,
  w: { domain: string; level: string },
  result: CollectResult,
  help: CollectorHelp | undefined,
  debug: (text: string) => void,
): Applied {
  const err = result.error;
  if (err === undefined) return { values: result.values, error: '' };
  const dp = plan.levels[w.level]?.collect[w.domain];
  const named = err.policy !== undefined && dp?.errors[err.policy] !== undefined;
  if (err.unsupported && !named) {
    memory.stop(w.domain);
    return { values: result.values, error: err.message };
  }
  if (err.partial && !named) {
    const first = memory.first(w.domain, `partial\0${err.message}`);
    return { values: result.values, error: first ? err.message : '', partial: err.message };
  }
  const name =
    err.policy ??
    (err.errno === undefined
      ? undefined
      : help?.errors.find((e) => e.errnos?.includes(err.errno ?? -1))?.name);
  // Not governed by a policy: reported every time, with whatever the collector kept.
  if (name === undefined) return { values: result.values, error: err.quiet ? '' : err.message };

  const policy = parsePolicy(dp?.errors[name] ?? '');
  if (policy.retry === 'stop' && !err.quiet) memory.stop(w.domain);
  let values = result.values;
  if (policy.metric === 'zero') {
    const zero =
      err.zero ??
      (dp?.metrics ?? []).map((m): MetricValue => ({
        name: m.toLowerCase(),
        value: 0,
        type: MetricType.Gauge,
      }));
    values = [...values, ...zero];
  }
  if (err.quiet) return { values, error: '' };
  const report =
    policy.report === 'report' || (policy.report === 'report-once' && memory.first(w.domain, name));
  if (!report) debug(`${w.domain}: ${name} error ignored by policy: ${err.message}`);
  return { values, error: report ? err.message : '' };
}
