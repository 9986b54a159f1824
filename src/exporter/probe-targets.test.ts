import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { httpCall } from '../../test/helpers/http-call.js';
import type { FinalMonitorConfig } from '../core/config.js';
import type { ConnectionSpec, Db } from '../core/db.js';
import { NO_EVENTS } from '../core/events.js';
import type { Plan } from '../core/plan.js';
import type { ProbeTargets } from '../core/probe.js';
import { buildConnection } from '../db/credentials.js';
import { createDb } from '../db/pool.js';
import { startProbe, type ProbeHandle } from './probe.js';
import { StatusRegistry } from '../status/registry.js';
import { FakeClock } from '../util/fake-clock.fixture.js';
import {
  FakeDb,
  RecordingEvents,
  RecordingSink,
  Scripted,
  gauge,
  twoLevels,
} from '../monitor/centre.fixture.js';
import { Monitor, type MonitorDeps } from '../monitor/monitor.js';
import { authModuleName, probeTargets } from './probe-targets.js';

// ---- refusals: real monitors (not started), real connection building, a counting server --

/** A TCP listener standing in for MySQL: it only counts the connections it accepts. */
let mysql: Server;
let mysqlPort = 0;
let accepted = 0;
let dir = '';
/** Pools made by the monitors' createDb: must stay 0 for every refusal. */
let poolsMade = 0;
let targets: ProbeTargets;
let probe: ProbeHandle;
let probePort = 0;
const monitors: Monitor[] = [];

function monitorDeps(): MonitorDeps {
  return {
    events: NO_EVENTS,
    help: () => undefined,
    makeCollector: () => {
      throw new Error('no collector in this test');
    },
    buildConnection: (cfg, o) => buildConnection(cfg, { ...o, cwd: dir }),
    createDb: (spec, o) => {
      poolsMade++;
      return createDb(spec, o);
    },
    loadPlans: async () => {
      throw new Error('not started in this test');
    },
    buildRuntime: () => {
      throw new Error('not started in this test');
    },
    exporter: {
      createSource: () => {
        throw new Error('no source in this test');
      },
      start: () => {
        throw new Error('no exporter in this test');
      },
    },
  };
}

function addMonitor(cfg: Partial<FinalMonitorConfig> & { id: string }): void {
  const status = new StatusRegistry();
  const config: FinalMonitorConfig = { username: 'sonde', password: 'own-Secret-1', ...cfg };
  monitors.push(new Monitor(config, [], status.monitor(cfg.id), monitorDeps()));
}

before(async () => {
  mysql = createServer((sock) => {
    accepted++;
    sock.destroy();
  });
  await new Promise<void>((resolve) => mysql.listen(0, '127.0.0.1', resolve));
  const addr = mysql.address();
  mysqlPort = addr !== null && typeof addr === 'object' ? addr.port : 0;
  dir = mkdtempSync(join(tmpdir(), 'sonde-probe-targets-'));
  writeFileSync(
    join(dir, 'my.cnf'),
    [
      '[client]',
      'password = base-Secret-2',
      '[client.good]',
      'user = prober',
      '[client.nouser]',
      'password = other-Secret-3',
      '',
    ].join('\n'),
  );
  addMonitor({ id: 'db1', hostname: `127.0.0.1:${mysqlPort}`, mycnf: 'my.cnf', tags: { env: 'prod' } });
  addMonitor({ id: 'db2', hostname: 'LOCALHOST' });
  addMonitor({ id: 'db3', hostname: `127.0.0.2:${mysqlPort}` });
  addMonitor({ id: 'db4', hostname: `127.0.0.2:${mysqlPort}`, username: 'other' });
  addMonitor({ id: 'db5', socket: '/run/mysqld/probe-test.sock' });
  targets = probeTargets({ monitors: () => monitors, cwd: dir });
  probe = await startProbe({ bind: '127.0.0.1:0', targets, events: NO_EVENTS });
  probePort = Number(probe.address.split(':')[1]);
});

after(async () => {
  await probe?.close();
  await new Promise<void>((resolve) => mysql?.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

describe('probe targets: what a request may name', () => {
  it('lists every monitor with its address as it connects: default port, socket, my.cnf', () => {
    assert.deepEqual(targets.list(), [
      { id: 'db1', address: `127.0.0.1:${mysqlPort}`, tags: { env: 'prod' } },
      { id: 'db2', address: 'LOCALHOST:3306', tags: {} },
      { id: 'db3', address: `127.0.0.2:${mysqlPort}`, tags: {} },
      { id: 'db4', address: `127.0.0.2:${mysqlPort}`, tags: {} },
      { id: 'db5', address: 'unix:///run/mysqld/probe-test.sock', tags: {} },
    ]);
  });

  it('reads auth_module like mysqld_exporter: client = none, client.<name> = <name>', () => {
    assert.equal(authModuleName(''), '');
    assert.equal(authModuleName('client'), '');
    assert.equal(authModuleName('client.good'), 'good');
    assert.equal(authModuleName('good'), 'good');
    assert.equal(authModuleName('client.'), undefined);
    assert.equal(authModuleName('a]b'), undefined);
    assert.equal(authModuleName(' good'), undefined);
  });

  /** Every request that names nothing configured: status and the exact one-line reason. */
  const refusals = (): [string, number, string][] => [
    ['/probe', 400, 'target is required'],
    ['/probe?target=db9', 400, 'invalid target "db9": want a monitor id or host:port'],
    ['/probe?target=10.9.9.9:3306', 404, 'unknown target "10.9.9.9:3306": no monitor has this id or address'],
    ['/probe?target=127.0.0.1:1', 404, 'unknown target "127.0.0.1:1": no monitor has this id or address'],
    [
      '/probe?target=127.0.0.1:99999',
      400,
      'invalid target "127.0.0.1:99999": want a monitor id or host:port',
    ],
    [
      '/probe?target=unix:///tmp/other.sock',
      404,
      'unknown target "unix:///tmp/other.sock": no monitor has this id or address',
    ],
    ['/probe?target=DB1', 400, 'invalid target "DB1": want a monitor id or host:port'],
    [
      `/probe?target=127.0.0.2:${mysqlPort}`,
      400,
      `target "127.0.0.2:${mysqlPort}" is the address of monitors db3, db4: use a monitor id`,
    ],
    ['/probe?target=db1&auth_module=nope', 400, 'auth_module nope: no [client.nope] section in my.cnf'],
    [
      '/probe?target=db1&auth_module=client.nope',
      400,
      'auth_module nope: no [client.nope] section in my.cnf',
    ],
    [
      '/probe?target=db1&auth_module=nouser',
      400,
      'auth_module nouser: [client.nouser] in my.cnf has no user',
    ],
    ['/probe?target=db1&auth_module=%5Bx', 400, 'invalid auth_module "[x"'],
    ['/probe?target=db2&auth_module=good', 400, 'auth_module good: monitor db2 has no mycnf'],
    [
      '/probe?target=db9:3306&auth_module=good',
      404,
      'unknown target "db9:3306": no monitor has this id or address',
    ],
  ];

  it('answers every request naming nothing configured with a 4xx and never connects', async () => {
    for (const [path, status, reason] of refusals()) {
      const r = await httpCall(probePort, path);
      assert.equal(r.status, status, path);
      assert.equal(r.body, `${reason}\n`, path);
      assert.doesNotMatch(r.body, /Secret/, 'no password in an answer');
    }
    assert.equal(poolsMade, 0, 'no pool was made');
    assert.equal(accepted, 0, 'nothing connected to the monitors’ address');
  });

  it('resolves ids and addresses (host case, default port, socket) to a monitor that is not running: 503, no connection', async () => {
    for (const [target, id] of [
      ['db1', 'db1'],
      [`127.0.0.1:${mysqlPort}`, 'db1'],
      ['localhost:3306', 'db2'],
      ['db3', 'db3'],
      ['unix:///run/mysqld/probe-test.sock', 'db5'],
    ]) {
      const r = await httpCall(probePort, `/probe?target=${encodeURIComponent(target ?? '')}`);
      assert.equal(r.status, 503, target);
      assert.equal(r.body, `monitor ${id} is not running\n`);
    }
    // A known auth module reads its credentials, then meets the same answer.
    const m = await httpCall(probePort, '/probe?target=db1&auth_module=client.good');
    assert.equal(m.status, 503);
    assert.equal(poolsMade, 0);
    assert.equal(accepted, 0);
  });
});

// ---- leases of a running monitor (doubles for the pool and the reader) ------------------

/** A monitor on doubles, started: records the pools and sources its probes get. */
function running(cfg: Partial<FinalMonitorConfig> = {}) {
  const clock = new FakeClock();
  const status = new StatusRegistry();
  const dbs: { spec: ConnectionSpec; db: FakeDb }[] = [];
  const sources: { db: Db; plan: Plan; closed: boolean }[] = [];
  const p = twoLevels('p');
  const custom: Plan = {
    name: 'mine',
    source: 'test',
    levels: {
      only: {
        name: 'only',
        freq: '5s',
        freqMs: 5000,
        collect: { 'status.global': { metrics: [], options: {}, errors: {} } },
      },
    },
  };
  const deps: MonitorDeps = {
    events: new RecordingEvents(),
    help: () => undefined,
    makeCollector: (d) => new Scripted(d, async (call) => ({ values: [gauge(d, call)] })),
    buildConnection: (c, o) => buildConnection(c, { ...o, cwd: dir }),
    createDb: (spec) => {
      const db = new FakeDb();
      dbs.push({ spec, db });
      return db;
    },
    loadPlans: async () => (name) => {
      if (name === 'mine') return custom;
      if (name === 'p' || name === '') return p.plan;
      throw new Error(`plan ${name} not found`);
    },
    buildRuntime: (plan) => ({ ...p.runtime, active: { ...p.runtime.active, plan } }),
    exporter: {
      createSource: (args) => {
        const s = { db: args.db, plan: args.plan, closed: false };
        sources.push(s);
        return {
          scrape: async () => ({ up: true, metrics: undefined, domains: [], error: '' }),
          serverInfo: async () => undefined,
          domains: () => Object.keys(Object.values(args.plan.levels)[0]?.collect ?? {}),
          close: async () => {
            s.closed = true;
          },
        };
      },
      start: async () => ({
        address: '127.0.0.1:0',
        addresses: ['127.0.0.1:0'],
        close: async () => undefined,
      }),
    },
    clock,
  };
  const config: FinalMonitorConfig = {
    id: 'm1',
    plan: 'p',
    hostname: '127.0.0.1:3306',
    username: 'sonde',
    password: 'own-Secret-1',
    mycnf: 'my.cnf',
    ...cfg,
  };
  const monitor = new Monitor(config, [new RecordingSink()], status.monitor('m1'), deps);
  return { monitor, dbs, sources, clock };
}

/** Wait (turns of the event loop, no timer) until the started monitor lends a probe source. */
async function untilRunning(monitor: Monitor): Promise<void> {
  let last: unknown;
  for (let i = 0; i < 10_000; i++) {
    try {
      const lease = await monitor.probe('');
      await lease.release();
      return;
    } catch (err) {
      last = err;
      await new Promise((r) => setImmediate(r));
    }
  }
  throw new Error(`monitor never lent a probe source: ${String(last)}`);
}

describe('probe leases of a running monitor', () => {
  it('lends its own pool with default-exporter, and a pool of the module’s user per auth_module probe', async () => {
    const { monitor, dbs, sources } = running();
    monitor.start();
    await untilRunning(monitor);
    assert.equal(dbs.length, 1, 'the monitor’s own pool only');
    const own = await monitor.probe('');
    assert.equal(sources.length, 1);
    assert.equal(sources[0]?.db, dbs[0]?.db, 'the monitor’s pool');
    assert.equal(sources[0]?.plan.name, 'default-exporter');
    assert.deepEqual(own.source.domains(), ['status.global', 'var.global', 'innodb']);
    assert.equal((await monitor.probe('')).source, own.source, 'one reader for every probe');

    const lease = await monitor.probe('good');
    assert.equal(dbs.length, 2);
    assert.equal(dbs[1]?.spec.username, 'prober');
    assert.equal(dbs[1]?.spec.password(), 'base-Secret-2', 'a key the section lacks comes from [client]');
    assert.equal(dbs[1]?.spec.port, 3306, 'the monitor’s address');
    assert.equal(sources[1]?.db, dbs[1]?.db);
    await lease.release();
    assert.equal(sources[1]?.closed, true);
    assert.equal(dbs[1]?.db.closed, true);
    assert.equal(dbs[0]?.db.closed, false, 'the monitor’s pool stays open');

    await monitor.stop();
    assert.equal(sources[0]?.closed, true, 'the probe reader closes with the monitor');
    await assert.rejects(monitor.probe(''), { message: 'monitor m1 is not running' });
  });

  it('probes with the monitor’s exporter plan and collect flags when it sets one', async () => {
    const { monitor, sources } = running({
      exporter: { plan: 'mine', flags: { 'collect.global_variables': 'true' } },
    });
    monitor.start();
    await untilRunning(monitor);
    const lease = await monitor.probe('');
    assert.equal(sources.at(-1)?.plan.name, 'mine');
    assert.deepEqual(lease.source.domains(), ['status.global', 'var.global']);
    await monitor.stop();
  });
});
