/**
 * The monitoring/ folder as the tests read it: rule files, promtool test files, dashboards,
 * every PromQL expression in them, and the metric names those expressions read.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';

/** Repository root (this file runs from dist/test/monitoring). */
export const ROOT = resolve(import.meta.dirname, '../../..');
export const MONITORING = join(ROOT, 'monitoring');
export const RULES_DIR = join(MONITORING, 'prometheus');
export const TESTS_DIR = join(MONITORING, 'tests');
export const DASHBOARDS_DIR = join(MONITORING, 'grafana');
export const PROMTOOL = '/usr/bin/promtool';

export interface Rule {
  alert?: string;
  record?: string;
  expr: string;
}
export interface RuleGroup {
  name: string;
  rules: Rule[];
}

const files = (dir: string, suffix: string): string[] =>
  readdirSync(dir)
    .filter((f) => f.endsWith(suffix))
    .sort()
    .map((f) => join(dir, f));

export const ruleFiles = (): string[] => files(RULES_DIR, '.yaml');
export const ruleTestFiles = (): string[] => files(TESTS_DIR, '.test.yaml');
export const dashboardFiles = (): string[] => files(DASHBOARDS_DIR, '.json');

export function ruleGroups(path: string): RuleGroup[] {
  return (parse(readFileSync(path, 'utf8')) as { groups: RuleGroup[] }).groups;
}

export const allRules = (): Rule[] => ruleFiles().flatMap((f) => ruleGroups(f).flatMap((g) => g.rules));

/** A Grafana dashboard, as far as the tests read it. */
export interface Dashboard {
  title: string;
  templating: { list: Array<{ name: string; type: string; query?: unknown; datasource?: unknown }> };
  panels: Array<{
    title: string;
    datasource?: unknown;
    targets?: Array<{ expr: string; datasource?: unknown }>;
  }>;
}

export function dashboard(path: string): Dashboard {
  return JSON.parse(readFileSync(path, 'utf8')) as Dashboard;
}

/** Every panel query of a dashboard, and the template variables' label_values() queries. */
export function dashboardExprs(d: Dashboard): string[] {
  const out = d.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
  for (const v of d.templating.list) {
    const q = v.query as { query?: string } | undefined;
    const m = q?.query === undefined ? null : /^label_values\((.+),\s*\w+\)$/.exec(q.query);
    if (m?.[1] !== undefined) out.push(m[1]);
  }
  return out;
}

/** Grafana's variables replaced by values PromQL accepts, for offline checks. */
export function withoutGrafanaVariables(expr: string): string {
  return expr
    .replaceAll('$__rate_interval', '5m')
    .replaceAll('$__interval', '1m')
    .replace(/\$\{?(\w+)\}?/g, '.+');
}

const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'offset',
  'bool',
  'inf',
  'nan',
  'group_left',
  'group_right',
]);

/**
 * The metric names a PromQL expression reads: identifiers outside strings, label matchers,
 * ranges and label lists (`by (...)`, `on (...)`, …) that are not function or aggregation
 * calls, keywords or parts of numbers and durations.
 */
export function metricNames(expr: string): string[] {
  const s = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const out = new Set<string>();
  for (const m of s.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const name = m[0];
    const at = m.index;
    if (at > 0 && /[0-9.]/.test(s[at - 1] ?? '')) continue; // 5m, 1e3
    if (/^\s*\(/.test(s.slice(at + name.length))) continue; // rate(, sum(
    if (KEYWORDS.has(name.toLowerCase())) continue;
    out.add(name);
  }
  return [...out].sort();
}
