import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlanError, parsePlan } from './parse.js';
import { PlanStore, printPlans } from './store.js';
import { testHelp } from './help-fixture.js';

const planYaml = (freq: string, metric = 'queries'): string =>
  `lvl:\n  freq: ${freq}\n  collect:\n    status.global:\n      metrics: [${metric}]\n`;

let dir: string;
let a: string;
let b: string;
let own: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'sonde-plan-store-'));
  mkdirSync(join(dir, 'shared'));
  a = join(dir, 'shared', 'a.yaml');
  b = join(dir, 'shared', 'b.yaml');
  own = join(dir, 'own.yaml');
  writeFileSync(a, planYaml('5s', 'a'));
  writeFileSync(b, planYaml('10s', 'b'));
  writeFileSync(own, planYaml('1s', 'own'));
  writeFileSync(
    join(dir, 'invalid.yaml'),
    'l:\n  freq: 1s\n  collect:\n    status.global:\n      options: {all: maybe}\n',
  );
});

after(() => {
  rmSync(dir, { recursive: true, force: true });
});

function thrown(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof PlanError);
    return err.message;
  }
  assert.fail('no error');
}

async function rejected(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof PlanError, String(err));
    return err.message;
  }
  assert.fail('no error');
}

void describe('PlanStore.loadShared', () => {
  void it('loads the built-in plans when no shared plan is configured', async () => {
    const store = new PlanStore();
    await store.loadShared({}, testHelp);
    assert.deepEqual(
      store.sharedPlans().map((p) => [p.name, p.source]),
      [
        ['default-mysql', 'sonde'],
        ['default-exporter', 'sonde'],
        ['default-none', 'sonde'],
      ],
    );
  });

  void it('loads nothing with disable-default-plans', async () => {
    const store = new PlanStore();
    await store.loadShared({ plans: { 'disable-default-plans': true } }, testHelp);
    assert.deepEqual(store.sharedPlans(), []);
    assert.equal(
      thrown(() => store.lookup('m1', [], '')),
      'no plans loaded for monitor m1',
    );
  });

  void it('loads shared plan files instead of the defaults, in listed then lexical order', async () => {
    const store = new PlanStore();
    await store.loadShared({ plans: { files: [own, join(dir, 'shared', '*.yaml')] } }, testHelp);
    assert.deepEqual(
      store.sharedPlans().map((p) => p.name),
      [own, a, b],
    );
    assert.equal(
      thrown(() => store.lookup('m1', [], 'default-mysql')),
      'monitor m1 has no plan named default-mysql',
    );
  });

  void it('fails on a listed file that does not exist, and on invalid plans', async () => {
    const missing = join(dir, 'missing.yaml');
    assert.equal(
      await rejected(new PlanStore().loadShared({ plans: { files: [missing] } }, testHelp)),
      `plan file ${missing} does not exist: correct or remove it in plans.files`,
    );
    assert.equal(
      await rejected(
        new PlanStore().loadShared({ plans: { files: [a, join(dir, 'invalid.yaml')] } }, testHelp),
      ),
      `1 plan validation errors:\ninvalid plan: ${join(dir, 'invalid.yaml')}: line 5: at l/status.global: invalid value for option all: maybe (run 'sonde --print-domains' to list collectors and options)`,
    );
  });

  void it('needs a connection when plans.table is set', async () => {
    assert.equal(
      await rejected(new PlanStore().loadShared({ plans: { table: 'plans' } }, testHelp)),
      'Table set but Monitor is nil',
    );
  });
});

void describe('PlanStore.monitorPlans and lookup', () => {
  void it('uses the shared plans when the monitor has none, first plan by default', async () => {
    const store = new PlanStore();
    await store.loadShared({}, testHelp);
    const list = await store.monitorPlans({ id: 'm1' }, undefined, testHelp);
    assert.deepEqual(list, []);
    assert.equal(store.lookup('m1', list, '').name, 'default-mysql');
    assert.equal(store.lookup('m1', list, 'default-exporter').name, 'default-exporter');
    assert.deepEqual(store.lookup('m1', list, 'default-none').levels, {});
  });

  void it('turns inherited shared plan files into references, also for glob matches', async () => {
    const store = new PlanStore();
    const files = [own, join(dir, 'shared', '*.yaml')];
    await store.loadShared({ plans: { files } }, testHelp);
    const list = await store.monitorPlans({ id: 'm1', plans: { files } }, undefined, testHelp);
    assert.deepEqual(list, [{ name: own }, { name: a }, { name: b }]);
    const plan = store.lookup('m1', list, b);
    assert.deepEqual(plan, store.sharedPlans()[2]);
  });

  void it("reads the monitor's own files, which then shadow the shared plans", async () => {
    const store = new PlanStore();
    await store.loadShared({ plans: { files: [a] } }, testHelp);
    const list = await store.monitorPlans({ id: 'm2', plans: { files: [own, a] } }, undefined, testHelp);
    assert.deepEqual(
      list.map((e) => [e.name, e.plan === undefined ? 'ref' : 'own']),
      [
        [own, 'own'],
        [a, 'ref'],
      ],
    );
    assert.equal(store.lookup('m2', list, '').name, own);
    assert.equal(store.lookup('m2', list, a).levels.lvl?.collect['status.global']?.metrics[0], 'a');
    assert.equal(
      thrown(() => store.lookup('m2', list, b)),
      `monitor m2 has no plan named ${b}`,
    );
  });

  void it('validates the monitor plans it read', async () => {
    const store = new PlanStore();
    await store.loadShared({}, testHelp);
    const bad = join(dir, 'invalid.yaml');
    assert.match(
      await rejected(store.monitorPlans({ id: 'm3', plans: { files: [bad] } }, undefined, testHelp)),
      /^1 plan validation errors:\ninvalid plan: .*invalid\.yaml: line 5: at l\/status\.global: invalid value for option all: maybe/,
    );
  });

  void it('reports a reference to a shared plan that is not loaded', async () => {
    const store = new PlanStore();
    await store.loadShared({}, testHelp);
    assert.equal(
      thrown(() => store.lookup('m4', [{ name: 'gone.yaml' }], 'gone.yaml')),
      'monitor m4 uses shared plan gone.yaml but it was not loaded',
    );
  });

  void it('hands out deep copies', async () => {
    const store = new PlanStore();
    await store.loadShared({}, testHelp);
    const p = store.lookup('m1', [], 'default-mysql');
    p.levels.performance!.collect['status.global']!.metrics.length = 0;
    delete p.levels.sysvars;
    const again = store.lookup('m1', [], 'default-mysql');
    assert.equal(again.levels.performance?.collect['status.global']?.metrics.length, 26);
    assert.ok(again.levels.sysvars);
    const own1 = parsePlan('o', 'o', planYaml('1s'));
    const q = store.lookup('m1', [{ name: 'o', plan: own1 }], 'o');
    q.levels.lvl!.freq = '9s';
    assert.equal(own1.levels.lvl?.freq, '1s');
  });
});

void describe('printPlans', () => {
  void it('prints each plan as ---, # name, its levels as plan-file YAML, then a blank line', () => {
    const p = parsePlan(
      'p.yaml',
      'p.yaml',
      `slow:
  freq: 1m
  collect:
    size.database:
fast:
  freq: 5s
  collect:
    repl:
      metrics: [running]
      options: {report-not-a-replica: "no"}
      errors: {access-denied: "ignore,drop,retry"}
`,
    );
    const none = parsePlan('default-none', 'sonde', '');
    assert.equal(
      printPlans([p, none]),
      `---
# p.yaml
fast:
  freq: 5s
  collect:
    repl:
      metrics:
        - running
      options:
        report-not-a-replica: "no"
      errors:
        access-denied: ignore,drop,retry
slow:
  freq: 1m
  collect:
    size.database:

---
# default-none
{}

`,
    );
  });

  void it('prints something that reads back as the same plan', () => {
    const p = parsePlan('p', 'p', planYaml('5s'));
    const text = printPlans([p]).split('\n').slice(2).join('\n');
    assert.deepEqual(parsePlan('p', 'p', text), p);
  });
});
