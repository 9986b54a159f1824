import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type MariaDB, rootDb, startMariaDB } from '../../test/helpers/mariadb.js';
import type { Db } from '../core/db.js';
import { type PooledDb } from '../db/pool.js';
import { PlanError } from './parse.js';
import { PlanStore } from './store.js';
import { PLAN_TABLE_TIMEOUT_MS, planTableIdent, planTableQuery, readPlanTable } from './table.js';
import { testHelp } from './help-fixture.js';

const DDL = (table: string, column = 'monitor_id'): string =>
  `CREATE TABLE ${table} (
     name VARCHAR(100) NOT NULL PRIMARY KEY,
     plan BLOB NOT NULL,
     ${column} VARCHAR(1000) NULL DEFAULT NULL
   ) ENGINE=InnoDB`;

const planYaml = (freq: string, domain = 'status.global'): string =>
  `lvl:\n  freq: ${freq}\n  collect:\n    ${domain}:\n      metrics: [queries]\n`;

let server: MariaDB;
let db: PooledDb;
/** Every query the plan code ran, with its options. */
const seen: { sql: string; params: readonly unknown[] | undefined; timeoutMs: number | undefined }[] = [];
let recording: Db;

async function rejection(p: Promise<unknown>): Promise<PlanError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof PlanError, `not a PlanError: ${String(err)}`);
    return err;
  }
  assert.fail('no error');
}

before(async () => {
  server = await startMariaDB();
  db = rootDb(server.socket);
  // Sonde's own Db, recording what it is asked (the queries still go to MariaDB).
  recording = {
    query: (sql, params, opts) => {
      seen.push({ sql, params, timeoutMs: opts?.timeoutMs });
      return db.query(sql, params, opts);
    },
    serverInfo: (opts) => db.serverInfo(opts),
    ping: (opts) => db.ping(opts),
  };
  await server.query('CREATE DATABASE blip');
  await server.query(DDL('blip.plans'));
  const rows: [string, string, string | null][] = [
    ['b-shared', planYaml('10s'), null],
    ['a-shared', planYaml('5s'), null],
    ['empty-id', planYaml('1m'), ''],
    ['db1-z', planYaml('20s'), 'db1'],
    ['db1-a', planYaml('30s'), 'db1'],
    ['db2-only', planYaml('1s'), 'db2'],
  ];
  for (const r of rows)
    await server.query('INSERT INTO blip.plans (name, plan, monitor_id) VALUES (?, ?, ?)', r);
  await server.query('CREATE DATABASE `my-db`');
  await server.query(DDL('`my-db`.`my-plans`'));
  await server.query("INSERT INTO `my-db`.`my-plans` VALUES ('x', ?, NULL)", [planYaml('2s')]);
  // a table shaped after Blip's code rather than its docs
  await server.query(DDL('blip.legacy', 'monitorId'));
  await server.query("INSERT INTO blip.legacy VALUES ('old-shared', ?, NULL), ('old-db1', ?, 'db1')", [
    planYaml('3s'),
    planYaml('4s'),
  ]);
  await server.query(DDL('blip.broken'));
  await server.query("INSERT INTO blip.broken VALUES ('bad', 'kpi: [1,', NULL)");
  await server.query(DDL('blip.invalid'));
  await server.query("INSERT INTO blip.invalid VALUES ('inv', ?, NULL)", [planYaml('5s', 'no.such')]);
});

after(async () => {
  await db?.close();
  await server?.stop();
});

void describe('plan table queries', () => {
  void it('quotes the table, defaulting the database to blip', () => {
    assert.equal(planTableIdent('plans'), '`blip`.`plans`');
    assert.equal(planTableIdent('db.plans'), '`db`.`plans`');
    assert.equal(planTableIdent('my-db.a`b'), '`my-db`.`a``b`');
  });

  void it('reads name, plan and monitor_id in name order', () => {
    assert.equal(
      planTableQuery('plans', false),
      'SELECT name, plan, monitor_id FROM `blip`.`plans` ORDER BY name ASC',
    );
    assert.equal(
      planTableQuery('x.plans', true),
      'SELECT name, plan, monitor_id FROM `x`.`plans` WHERE `monitor_id` = ? ORDER BY name ASC',
    );
    assert.equal(
      planTableQuery('x.plans', true, 'monitorId'),
      'SELECT name, plan, `monitorId` AS monitor_id FROM `x`.`plans` WHERE `monitorId` = ? ORDER BY name ASC',
    );
  });
});

void describe('readPlanTable (real MariaDB)', () => {
  void it('reads the shared plans (monitor_id NULL or empty) in name order, with a 5 s timeout', async () => {
    seen.length = 0;
    const plans = await readPlanTable(recording, 'plans');
    assert.deepEqual(
      plans.map((p) => [p.name, p.source, p.levels.lvl?.freq]),
      [
        ['a-shared', 'plans', '5s'],
        ['b-shared', 'plans', '10s'],
        ['empty-id', 'plans', '1m'],
      ],
    );
    assert.deepEqual(plans[0]?.levels.lvl?.collect, {
      'status.global': { metrics: ['queries'], options: {}, errors: {} },
    });
    assert.deepEqual(seen, [
      { sql: planTableQuery('plans', false), params: [], timeoutMs: PLAN_TABLE_TIMEOUT_MS },
    ]);
    assert.equal(PLAN_TABLE_TIMEOUT_MS, 5000);
  });

  void it("reads a monitor's own rows by its id", async () => {
    const plans = await readPlanTable(db, 'blip.plans', 'db1');
    assert.deepEqual(
      plans.map((p) => [p.name, p.levels.lvl?.freq]),
      [
        ['db1-a', '30s'],
        ['db1-z', '20s'],
      ],
    );
    assert.deepEqual(await readPlanTable(db, 'blip.plans', 'nobody'), []);
  });

  void it('reads a table in another database whose names need quoting', async () => {
    const plans = await readPlanTable(db, 'my-db.my-plans');
    assert.deepEqual(
      plans.map((p) => [p.name, p.source]),
      [['x', 'my-db.my-plans']],
    );
  });

  void it('falls back to the column monitorId when monitor_id does not exist', async () => {
    seen.length = 0;
    assert.deepEqual(
      (await readPlanTable(recording, 'legacy')).map((p) => p.name),
      ['old-shared'],
    );
    assert.deepEqual(
      seen.map((q) => q.sql),
      [planTableQuery('legacy', false), planTableQuery('legacy', false, 'monitorId')],
    );
    assert.deepEqual(
      (await readPlanTable(db, 'legacy', 'db1')).map((p) => [p.name, p.levels.lvl?.freq]),
      [['old-db1', '4s']],
    );
  });

  void it('fails the load when the table cannot be read', async () => {
    const err = await rejection(readPlanTable(db, 'blip.nope'));
    assert.match(err.message, /^cannot read plan table blip\.nope: .*Table 'blip\.nope' doesn't exist/);
  });

  void it('fails the load on a row that is not YAML', async () => {
    const err = await rejection(readPlanTable(db, 'broken'));
    assert.match(err.message, /^cannot decode YAML in plan table broken, plan bad: Flow sequence/);
  });
});

void describe('PlanStore with a plan table (real MariaDB)', () => {
  void it('loads shared table plans instead of the defaults', async () => {
    const store = new PlanStore();
    await store.loadShared({ plans: { table: 'plans', monitor: { hostname: 'x' } } }, testHelp, db);
    assert.deepEqual(
      store.sharedPlans().map((p) => p.name),
      ['a-shared', 'b-shared', 'empty-id'],
    );
    assert.equal(store.lookup('db9', [], '').name, 'a-shared');
  });

  void it('validates table plans at load', async () => {
    const err = await rejection(new PlanStore().loadShared({ plans: { table: 'invalid' } }, testHelp, db));
    assert.equal(
      err.message,
      "1 plan validation errors:\ninvalid plan: inv: line 4: at lvl/no.such: invalid domain: no.such: no such domain (run 'sonde --print-domains' to list collectors and options)",
    );
  });

  void it("gives a monitor its table rows before its files, through the monitor's connection", async () => {
    const store = new PlanStore();
    await store.loadShared({}, testHelp);
    const list = await store.monitorPlans({ id: 'db1', plans: { table: 'blip.plans' } }, db, testHelp);
    assert.deepEqual(
      list.map((e) => [e.name, e.plan?.source]),
      [
        ['db1-a', 'blip.plans'],
        ['db1-z', 'blip.plans'],
      ],
    );
    assert.equal(store.lookup('db1', list, '').name, 'db1-a');
    assert.equal(store.lookup('db1', list, 'db1-z').levels.lvl?.freq, '20s');
    assert.throws(() => store.lookup('db1', list, 'default-mysql'), {
      message: 'monitor db1 has no plan named default-mysql',
    });
  });

  void it('fails a monitor table read without a connection or with a bad table', async () => {
    const store = new PlanStore();
    await rejection(store.monitorPlans({ id: 'db1', plans: { table: 'plans' } }, undefined, testHelp));
    const err = await rejection(
      store.monitorPlans({ id: 'db1', plans: { table: 'blip.nope' } }, db, testHelp),
    );
    assert.match(err.message, /^cannot read plan table blip\.nope: /);
  });
});
