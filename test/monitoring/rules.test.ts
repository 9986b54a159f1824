/**
 * monitoring/prometheus: every rules file passes `promtool check rules`, every promtool unit
 * test file under monitoring/tests passes `promtool test rules`, and those files hold, for
 * every alert, a case where it fires and one where it does not.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parse } from 'yaml';
import {
  ROOT,
  PROMTOOL,
  RULES_DIR,
  TESTS_DIR,
  allRules,
  metricNames,
  ruleFiles,
  ruleGroups,
  ruleTestFiles,
  type Rule,
} from './files.js';

function promtool(args: string[], cwd: string): { status: number | null; out: string } {
  const r = spawnSync(PROMTOOL, args, { cwd, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

interface AlertCase {
  alertname: string;
  exp_alerts?: unknown[];
}
interface UnitTestFile {
  rule_files: string[];
  group_eval_order?: string[];
  tests: Array<{ alert_rule_test?: AlertCase[] }>;
}

const unitTests = (): Array<[string, UnitTestFile]> =>
  ruleTestFiles().map((f) => [f, parse(readFileSync(f, 'utf8')) as UnitTestFile]);

/**
 * mysqld_exporter's mixin (its alerts and recording rules files), recorded as data: each
 * rule's name, kind, expression (as YAML reads it) and `for:`.
 */
interface MixinRule {
  kind: 'alert' | 'record';
  expr: string;
  for?: string;
}
const MIXIN = JSON.parse(readFileSync(join(ROOT, 'test/monitoring/mixin-rules.json'), 'utf8')) as Record<
  string,
  MixinRule
>;

describe('monitoring/prometheus rules', () => {
  it('every rules file passes promtool check rules', () => {
    const files = ruleFiles();
    assert.deepEqual(
      files.map((f) => basename(f)),
      ['alerts.yaml', 'galera-alerts.yaml', 'recording-rules.yaml'],
    );
    for (const f of files) {
      const r = promtool(['check', 'rules', f], RULES_DIR);
      assert.equal(r.status, 0, r.out);
      assert.match(r.out, /SUCCESS: \d+ rules found/);
      assert.doesNotMatch(r.out, /WARNING|FAILED/);
    }
  });

  it('every promtool unit test file passes', () => {
    const files = ruleTestFiles();
    assert.ok(files.length >= 5, files.join(', '));
    for (const f of files) {
      const r = promtool(['test', 'rules', basename(f)], TESTS_DIR);
      assert.equal(r.status, 0, `${basename(f)}:\n${r.out}`);
      assert.match(r.out, /SUCCESS/);
    }
  });

  it('promtool test rules fails when an expected alert does not come (the harness can fail)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sonde-promtool-'));
    try {
      const path = join(dir, 'wrong.test.yaml');
      writeFileSync(
        path,
        `rule_files: [${join(RULES_DIR, 'alerts.yaml')}, ${join(RULES_DIR, 'recording-rules.yaml')}]
tests:
  - interval: 1m
    input_series:
      - series: 'mysql_up{instance="db1",job="mysql"}'
        values: '1x10'
    alert_rule_test:
      - eval_time: 5m
        alertname: MySQLDown
        exp_alerts:
          - exp_labels: { severity: critical, instance: db1, job: mysql }
`,
      );
      const r = promtool(['test', 'rules', path], dir);
      assert.notEqual(r.status, 0, r.out);
      assert.match(r.out, /FAILED/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('tests every alert both firing and not firing', () => {
    const alerts = allRules().flatMap((r) => (r.alert === undefined ? [] : [r.alert]));
    const fires = new Set<string>();
    const silent = new Set<string>();
    for (const [, t] of unitTests())
      for (const test of t.tests)
        for (const c of test.alert_rule_test ?? [])
          ((c.exp_alerts ?? []).length > 0 ? fires : silent).add(c.alertname);
    for (const a of alerts) {
      assert.ok(fires.has(a), `no promtool case where ${a} fires`);
      assert.ok(silent.has(a), `no promtool case where ${a} stays silent`);
    }
    assert.deepEqual(
      [...fires].filter((a) => !alerts.includes(a)),
      [],
      'cases for alerts that do not exist',
    );
  });

  it('orders the groups in every unit test file (recording rules first), so results do not vary', () => {
    for (const [f, t] of unitTests()) {
      const groups = t.rule_files.flatMap((r) => ruleGroups(join(TESTS_DIR, r)).map((g) => g.name));
      if (groups.length < 2) continue;
      assert.deepEqual(t.group_eval_order, groups, `${basename(f)}: group_eval_order`);
      assert.equal(groups[0], 'mysql-recording');
    }
  });

  it("has every rule of the mixin under its name, with the mixin's expression and for:", () => {
    const rules = allRules() as Array<Rule & { for?: string }>;
    assert.equal(Object.keys(MIXIN).length, 11);
    for (const [name, m] of Object.entries(MIXIN)) {
      const found = rules.filter((r) => (m.kind === 'alert' ? r.alert : r.record) === name);
      assert.equal(found.length, 1, `${name}: one rule of that name`);
      const r = found[0] as Rule & { for?: string };
      assert.equal(r.expr.trim(), m.expr, `${name}: expr`);
      assert.equal(r.for, m.for, `${name}: for`);
    }
  });

  it('reads recording rule names (level:metric:ops) only where a recording rule writes them', () => {
    const rules = allRules();
    const recorded = new Set(rules.flatMap((r) => (r.record === undefined ? [] : [r.record])));
    for (const r of rules)
      for (const name of metricNames(r.expr))
        if (name.includes(':')) assert.ok(recorded.has(name), `${r.alert ?? r.record} reads ${name}`);
  });
});

describe('metricNames (the PromQL name reader the monitoring tests use)', () => {
  it('finds the metrics and skips functions, labels, ranges, keywords and numbers', () => {
    assert.deepEqual(
      metricNames(
        'sum without (command) (rate(a_total{command=~"commit|rollback", x="b_total"}[5m])) / on (instance) group_left ' +
          'max by (job) (instance:c:ratio offset 1h) > bool 1e3 and topk(5, d) unless e[5m:1m]',
      ),
      ['a_total', 'd', 'e', 'instance:c:ratio'],
    );
    assert.deepEqual(metricNames('vector(1) + time()'), []);
  });
});
