import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { UPSTREAM_SCRAPERS } from '../core/upstream.js';
import { defaultPlan } from './defaults.js';
import type { Plan } from '../core/plan.js';
import { applyCollectFlags, exporterBasePlan, flagBool, upstreamPlan } from './exporter-plan.js';
import { PlanError } from './parse.js';

const domainsOf = (p: ReturnType<typeof upstreamPlan>) => Object.keys(p.levels.prom?.collect ?? {}).sort();

describe('the exporter plan and mysqld_exporter collector flags', () => {
  it("upstreamPlan() is mysqld_exporter's default set in one 10s level", () => {
    const p = upstreamPlan();
    assert.equal(p.levels.prom?.freqMs, 10_000);
    assert.deepEqual(domainsOf(p), [
      'exporter.info_schema.innodb_cmp',
      'exporter.info_schema.innodb_cmpmem',
      'exporter.info_schema.query_response_time',
      'exporter.slave_status',
      'status.global',
      'var.global',
    ]);
    assert.deepEqual(p.levels.prom?.collect['status.global']?.options, { all: 'yes' });
    assert.equal(UPSTREAM_SCRAPERS.filter((s) => s.enabled).length, 6);
  });

  it('switches scrapers on and off and sets sub-flag options, without changing the given plan', () => {
    const base = upstreamPlan();
    const p = applyCollectFlags(base, {
      'collect.slave_status': 'false',
      'collect.info_schema.innodb_metrics': 'true',
      'collect.info_schema.processlist': '1',
      'collect.info_schema.processlist.min_time': '5',
      'collect.heartbeat.database': 'hb', // its scraper is off: no domain, no option
      'web.listen-address': ':9104',
    });
    assert.ok(!domainsOf(p).includes('exporter.slave_status'));
    assert.deepEqual(p.levels.prom?.collect.innodb?.options, { all: 'enabled' });
    assert.deepEqual(p.levels.prom?.collect['exporter.info_schema.processlist']?.options, { min_time: '5' });
    assert.ok(!domainsOf(p).includes('exporter.heartbeat'));
    assert.ok(domainsOf(base).includes('exporter.slave_status'), 'the base plan is unchanged');
    assert.equal(base.levels.prom?.collect['exporter.info_schema.processlist'], undefined);
  });

  it('keeps a plan without collector flags as it is, options of listed domains included', () => {
    const base = defaultPlan('default-exporter');
    assert.ok(base !== undefined);
    assert.equal(applyCollectFlags(base, { 'web.telemetry-path': '/m' }), base);
    const p = applyCollectFlags(base, { 'collect.global_status': 'true' });
    assert.deepEqual(p.levels.prom?.collect['status.global'], base.levels.prom?.collect['status.global']);
  });

  it('starts from exporter.plan, else from mysqld_exporter defaults when collector flags are given, else default-exporter', () => {
    const asked: string[] = [];
    const lookup = (name: string) => {
      asked.push(name);
      return { name, source: 'test', levels: {} };
    };
    assert.equal(
      exporterBasePlan({ plan: 'mine', flags: { 'collect.slave_status': 'true' } }, lookup).name,
      'mine',
    );
    assert.equal(
      exporterBasePlan({ flags: { 'collect.slave_status': 'false' } }, lookup).name,
      'mysqld-exporter',
    );
    assert.equal(
      exporterBasePlan({ plan: '', flags: { 'web.telemetry-path': '/m' } }, lookup).name,
      'default-exporter',
    );
    assert.deepEqual(asked, ['mine', 'default-exporter']);
  });

  it('falls back to the built-in default-exporter when the monitor loads other plans only', () => {
    const onlyGood = (name: string): Plan => {
      if (name === 'good.yaml') return { name, source: 'test', levels: {} };
      throw new PlanError(`monitor db1 has no plan named ${name}`);
    };
    const base = exporterBasePlan({}, onlyGood);
    assert.equal(base.name, 'default-exporter');
    assert.deepEqual(Object.keys(base.levels.prom?.collect ?? {}).sort(), [
      'innodb',
      'status.global',
      'var.global',
    ]);
    assert.equal(exporterBasePlan({ plan: 'good.yaml' }, onlyGood).name, 'good.yaml');
  });

  it('names exporter.plan when the plan it names is missing', () => {
    const none = (name: string): Plan => {
      throw new PlanError(`monitor db1 has no plan named ${name}`);
    };
    assert.throws(() => exporterBasePlan({ plan: 'nosuch.yaml' }, none), {
      message:
        'exporter.plan nosuch.yaml: monitor db1 has no plan named nosuch.yaml; set exporter.plan to a plan the monitor loads (plans.files), or leave it unset for the built-in default-exporter',
    });
  });

  it("reads bools as Go's ParseBool does", () => {
    for (const t of ['1', 't', 'T', 'true', 'TRUE', ' true ']) assert.equal(flagBool(t), true, t);
    for (const f of ['0', 'f', 'F', 'false', 'False']) assert.equal(flagBool(f), false, f);
    for (const x of ['', 'yes', 'on', '2']) assert.equal(flagBool(x), undefined, x);
  });
});
