/**
 * monitoring/grafana: the dashboards are what scripts/gen-dashboards.mjs writes, parse,
 * query only through the `${datasource}` variable, select by the job and instance variables
 * (never a fixed instance), and every PromQL expression in them passes promtool's parser.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { stringify } from 'yaml';
import {
  PROMTOOL,
  ROOT,
  allRules,
  dashboard,
  dashboardExprs,
  dashboardFiles,
  metricNames,
  withoutGrafanaVariables,
} from './files.js';

const DS = { type: 'prometheus', uid: '${datasource}' };

/** Run `promtool check rules` on the expressions, each wrapped in a throwaway recording rule. */
function checkExprs(exprs: readonly string[]): { status: number | null; out: string } {
  const dir = mkdtempSync(join(tmpdir(), 'sonde-dashboards-'));
  try {
    const path = join(dir, 'exprs.yaml');
    const rules = exprs.map((expr, i) => ({
      record: `dashboard:expr_${i}`,
      expr: withoutGrafanaVariables(expr),
    }));
    writeFileSync(path, stringify({ groups: [{ name: 'dashboard-exprs', rules }] }));
    const r = spawnSync(PROMTOOL, ['check', 'rules', path], { encoding: 'utf8', timeout: 60_000 });
    return { status: r.status, out: `${r.stdout}${r.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every `datasource` value anywhere in a JSON tree. */
function datasources(node: unknown, out: unknown[] = []): unknown[] {
  if (Array.isArray(node)) for (const x of node) datasources(x, out);
  else if (node !== null && typeof node === 'object')
    for (const [k, v] of Object.entries(node)) {
      if (k === 'datasource') out.push(v);
      datasources(v, out);
    }
  return out;
}

describe('monitoring/grafana dashboards', () => {
  const files = dashboardFiles();

  it('are the four dashboards scripts/gen-dashboards.mjs writes', () => {
    assert.deepEqual(
      files.map((f) => basename(f)),
      ['mysql-innodb.json', 'mysql-overview.json', 'mysql-replication.json', 'mysql-tables.json'],
    );
    const r = spawnSync(process.execPath, [join(ROOT, 'scripts/gen-dashboards.mjs'), '--check'], {
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
  });

  it('have a prometheus datasource variable and job/instance variables, and query only through them', () => {
    for (const f of files) {
      const d = dashboard(f);
      const vars = new Map(d.templating.list.map((v) => [v.name, v]));
      assert.equal(vars.get('datasource')?.type, 'datasource', f);
      assert.equal(vars.get('datasource')?.query, 'prometheus', f);
      for (const name of ['job', 'instance']) {
        assert.equal(vars.get(name)?.type, 'query', `${f}: ${name}`);
        assert.deepEqual(vars.get(name)?.datasource, DS, `${f}: ${name}`);
      }
      const all = datasources(d);
      assert.ok(all.length > d.panels.length, f);
      for (const ds of all) assert.deepEqual(ds, DS, `${f}: a datasource other than \${datasource}`);
    }
  });

  it('select every panel query by $job and $instance, never a fixed instance', () => {
    for (const f of files) {
      const d = dashboard(f);
      for (const p of d.panels) {
        assert.ok((p.targets ?? []).length > 0, `${f}: ${p.title} has no query`);
        for (const t of p.targets ?? []) {
          assert.match(t.expr, /job=~"\$job", instance=~"\$instance"/, `${f}: ${p.title}`);
          assert.doesNotMatch(t.expr, /instance=~?"(?!\$instance")/, `${f}: ${p.title}`);
        }
      }
    }
  });

  it('hold only expressions promtool parses', () => {
    const exprs = files.flatMap((f) => dashboardExprs(dashboard(f)));
    assert.ok(exprs.length > 100, `${exprs.length} expressions`);
    const r = checkExprs(exprs);
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, new RegExp(`SUCCESS: ${exprs.length} rules found`));
  });

  it('the expression check fails on a broken expression (the harness can fail)', () => {
    const r = checkExprs(['rate(mysql_global_status_queries{job=~"$job"}[$__rate_interval]']);
    assert.notEqual(r.status, 0, r.out);
  });

  it('read recording rule names only where a recording rule writes them', () => {
    const recorded = new Set(allRules().flatMap((r) => (r.record === undefined ? [] : [r.record])));
    for (const f of files)
      for (const e of dashboardExprs(dashboard(f)))
        for (const name of metricNames(e))
          if (name.includes(':')) assert.ok(recorded.has(name), `${basename(f)} reads ${name}`);
  });
});
