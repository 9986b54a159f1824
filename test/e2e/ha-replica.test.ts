/**
 * The HA hook on a real primary/replica pair: a Monitor built with the real connection,
 * pool, collectors, plans and heartbeat writer, and an HA hook the test flips.
 *
 * - The replica's monitor has a plan per state, each collecting its own domain (standby:
 *   var.global, read-only: repl, active: status.global): standby runs the standby plan
 *   without asking MySQL for its state; active puts the read-only replica on its read-only
 *   plan.
 * - Without a standby plan, standby pauses collection and active resumes it.
 * - On the primary, a standby monitor writes no heartbeat; it writes once active.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FinalMonitorConfig } from '../../src/core/config.js';
import type { HighAvailability } from '../../src/core/ha.js';
import type { Metrics } from '../../src/core/metrics.js';
import type { Plan } from '../../src/core/plan.js';
import type { Sink } from '../../src/core/sink.js';
import { NO_EVENTS } from '../../src/core/events.js';
import { buildConnection } from '../../src/db/credentials.js';
import { builtinCollectors } from '../../src/collectors/builtin.js';
import { createDb } from '../../src/db/pool.js';
import { runHeartbeatWriter } from '../../src/heartbeat/writer.js';
import { HEARTBEAT_TABLE_DDL } from '../../src/heartbeat/table.js';
import { Monitor, type MonitorDeps } from '../../src/monitor/monitor.js';
import { buildRuntime } from '../../src/monitor/plan-runtime.js';
import { parsePlan } from '../../src/plan/parse.js';
import { StatusRegistry } from '../../src/status/registry.js';
import { startReplicationPair, type ReplicationPair } from '../helpers/replication.js';

const PASSWORD = 'Ha-test-pw-7';

/** Each plan collects a domain of its own, so a batch tells which plan made it. */
const PLAN_FILES: Record<string, string> = {
  'active.yaml': 'kpi:\n  freq: 1s\n  collect:\n    status.global:\n      metrics: [threads_connected]\n',
  'ro.yaml': 'kpi:\n  freq: 1s\n  collect:\n    repl:\n      metrics: [running]\n',
  'standby.yaml': 'kpi:\n  freq: 1s\n  collect:\n    var.global:\n      metrics: [max_connections]\n',
};
const PLANS: Plan[] = Object.entries(PLAN_FILES).map(([name, text]) => parsePlan(name, name, text));

/** An HA hook the test flips. */
class Switch implements HighAvailability {
  constructor(public active: boolean) {}
  isActive(): boolean {
    return this.active;
  }
}

class Batches implements Sink {
  readonly name = 'batches';
  readonly got: Metrics[] = [];
  async send(m: Metrics): Promise<void> {
    this.got.push(m);
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function until<T>(what: string, check: () => T | undefined | Promise<T | undefined>, ms = 20_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

let pair: ReplicationPair;
const monitors: Monitor[] = [];

/** A monitor on `port` with real deps, the given HA hook and config. */
function monitor(id: string, port: number, ha: HighAvailability, cfg: Partial<FinalMonitorConfig>) {
  const status = new StatusRegistry();
  const sink = new Batches();
  const collectors = builtinCollectors();
  const deps: MonitorDeps = {
    events: NO_EVENTS,
    help: (d) => (collectors.has(d) ? collectors.help(d) : undefined),
    makeCollector: (d, ctx) => collectors.make(d, ctx),
    buildConnection: (c, o) => buildConnection(c, o),
    createDb: (spec, o) => createDb(spec, o),
    loadPlans: async () => (name) => {
      const plan = PLANS.find((p) => p.name === name) ?? PLANS[0];
      if (plan === undefined) throw new Error(`no plan ${name}`);
      return structuredClone(plan);
    },
    buildRuntime: (plan, c) => buildRuntime(plan, c),
    heartbeatWriter: (args) => runHeartbeatWriter(args),
    ha,
    planCheckMs: 200,
    haCheckMs: 100,
  };
  const config = {
    id,
    hostname: `127.0.0.1:${port}`,
    username: 'sonde',
    password: PASSWORD,
    ...cfg,
  } as FinalMonitorConfig;
  const m = new Monitor(config, [sink], status.monitor(id), deps);
  monitors.push(m);
  const st = () => status.monitorStatus(id) ?? {};
  /** Batches since `from`, as `<plan>:<domains>`. */
  const made = (from = 0) =>
    sink.got.slice(from).map((b) => `${b.plan}:${Object.keys(b.values).sort().join(',')}`);
  return { m, st, sink, made };
}

describe('the HA hook on a real primary/replica pair', () => {
  before(async () => {
    pair = await startReplicationPair();
    const { primary, replica } = pair;
    await primary.query('CREATE DATABASE blip');
    await primary.query(HEARTBEAT_TABLE_DDL.replace('heartbeat (', 'blip.heartbeat ('));
    await primary.createUser('sonde', PASSWORD, [
      'PROCESS, SLAVE MONITOR, BINLOG MONITOR ON *.*',
      'SELECT, INSERT, UPDATE, DELETE ON blip.*',
    ]);
    await pair.waitCaughtUp();
    await replica.query('SET GLOBAL read_only = 1');
  });

  after(async () => {
    await Promise.all(monitors.map((m) => m.stop()));
    await pair?.stop();
  });

  it('standby runs the standby plan without asking MySQL; active moves the read-only replica to its read-only plan', async () => {
    const ha = new Switch(false);
    const r = monitor('replica', pair.replica.port, ha, {
      plans: {
        change: {
          standby: { plan: 'standby.yaml' },
          'read-only': { plan: 'ro.yaml' },
          active: { plan: 'active.yaml' },
        },
      },
    });
    r.m.start();
    await until('two standby batches', () => (r.made().length >= 2 ? true : undefined));
    assert.equal(r.st()['level-state'], 'standby');
    assert.equal(r.st()['level-plan'], 'standby.yaml');
    assert.match(r.st().state ?? '', /^standby /);
    assert.equal(r.st()['plan-changer'], 'checking HA standby', 'standby: the server is not asked');
    assert.match(r.st().ha ?? '', /^standby since /);
    assert.ok(
      r.made().every((b) => b === 'standby.yaml:var.global'),
      r.made().join(' '),
    );

    ha.active = true;
    await until('the read-only plan', () => (r.st()['level-state'] === 'read-only' ? true : undefined));
    const from = r.sink.got.length;
    await until('two read-only batches', () => (r.made(from).length >= 2 ? true : undefined));
    assert.equal(r.st()['level-plan'], 'ro.yaml');
    assert.ok(
      r.made(from).every((b) => b === 'ro.yaml:repl'),
      r.made(from).join(' '),
    );
    assert.match(r.st().ha ?? '', /^active since /);
    await r.m.stop();
  });

  it('without a standby plan, standby pauses collection and active resumes the read-only plan', async () => {
    const ha = new Switch(true);
    const r = monitor('replica-nostandby', pair.replica.port, ha, {
      plans: { change: { 'read-only': { plan: 'ro.yaml' }, active: { plan: 'active.yaml' } } },
    });
    r.m.start();
    await until('two read-only batches', () => (r.made().length >= 2 ? true : undefined));
    assert.equal(r.st()['level-state'], 'read-only');

    ha.active = false;
    await until('standby', () => (r.st()['level-state'] === 'standby' ? true : undefined));
    assert.match(r.st()['level-collector'] ?? '', /^paused at /);
    await sleep(1500); // a collection started before the pause may still deliver
    const paused = r.sink.got.length;
    await sleep(3000); // three ticks of the 1 s plan
    assert.equal(r.sink.got.length, paused, 'no batch while standby');

    ha.active = true;
    await until('collecting again', () => (r.made(paused).length >= 1 ? true : undefined));
    assert.equal(r.st()['level-state'], 'read-only');
    assert.ok(
      r.made(paused).every((b) => b === 'ro.yaml:repl'),
      r.made(paused).join(' '),
    );
    await r.m.stop();
  });

  it('a standby monitor on the primary writes no heartbeat; once active it writes (plan changing off)', async () => {
    const ha = new Switch(false);
    const p = monitor('hb-primary', pair.primary.port, ha, {
      plan: 'active.yaml',
      heartbeat: { freq: '1s', table: 'blip.heartbeat' },
    });
    const rows = async () =>
      pair.primary.query("SELECT CAST(ts AS CHAR) AS ts FROM blip.heartbeat WHERE src_id = 'hb-primary'");
    p.m.start();
    await until('standby', () => (p.st()['level-state'] === 'standby' ? true : undefined));
    assert.equal(p.st()['heartbeat-writer'], 'standby: not writing');
    await sleep(2500); // more than two heartbeat periods
    assert.deepEqual(await rows(), [], 'no heartbeat row while standby');
    assert.equal(p.sink.got.length, 0, 'no batch while standby');

    ha.active = true;
    await until('a heartbeat row', async () => ((await rows()).length === 1 ? true : undefined));
    await until('a batch of the active plan', () =>
      p.made().includes('active.yaml:status.global') ? true : undefined,
    );
    assert.equal(p.st()['level-state'], 'active');

    ha.active = false;
    await until('standby again', () =>
      p.st()['heartbeat-writer'] === 'standby: not writing' ? true : undefined,
    );
    const last = (await rows())[0]?.ts;
    await sleep(2500);
    assert.equal((await rows())[0]?.ts, last, 'the heartbeat is not updated while standby');
    await p.m.stop();
  });
});
