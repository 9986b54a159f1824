import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Config, FinalMonitorConfig, MonitorConfig } from '../core/config.js';
import { SondeError } from '../core/errors.js';
import { NO_EVENTS } from '../core/events.js';
import type { Sink } from '../core/sink.js';
import { StatusRegistry } from '../status/registry.js';
import { Loader } from './loader.js';
import type { LoadedMonitor } from './loader.js';
import type { MonitorDeps } from './monitor.js';

/** A monitor that only records what the loader does to it. */
class FakeMonitor implements LoadedMonitor {
  readonly id: string;
  running = false;
  dsn = '';
  starts = 0;
  stops = 0;
  constructor(readonly config: FinalMonitorConfig) {
    this.id = config.id;
  }
  start(): void {
    if (this.running) throw new Error('already running');
    this.running = true;
    this.starts++;
  }
  async stop(): Promise<void> {
    this.running = false;
    this.stops++;
  }
}

class FakeSink implements Sink {
  closed = 0;
  constructor(readonly name: string) {}
  async send(): Promise<void> {}
  async close(): Promise<void> {
    this.closed++;
  }
}

/** A loader over an editable monitor list, with every monitor and sink it made kept. */
function setup(monitors: MonitorConfig[], stopLoss = '') {
  const config: Config = { monitors, 'monitor-loader': { 'stop-loss': stopLoss } };
  const made: FakeMonitor[] = [];
  const sinks: FakeSink[] = [];
  const status = new StatusRegistry();
  let failSinksFor = '';
  const loader = new Loader({
    config,
    events: NO_EVENTS,
    status,
    finalize: (ms) => ms.map((m) => ({ ...m, id: m.id ?? m.hostname ?? '' })),
    validate: () => undefined,
    equal: (a, b) => JSON.stringify(a) === JSON.stringify(b),
    readMonitorFiles: async () => [],
    autoDetect: async () => undefined,
    makeSinks: (m) => {
      if (m.id === failSinksFor) throw new Error('sink nope not registered');
      const sink = new FakeSink(`log-${m.id}`);
      sinks.push(sink);
      return [sink];
    },
    monitorDeps: {} as MonitorDeps,
    makeMonitor: (cfg) => {
      const m = new FakeMonitor(cfg);
      made.push(m);
      return m;
    },
    sleep: async () => undefined,
  });
  /** The monitor made last for `id`: the loaded one, or the last one unloaded. */
  const current = (id: string): FakeMonitor | undefined => made.filter((m) => m.id === id).at(-1);
  return {
    config,
    loader,
    made,
    sinks,
    status,
    current,
    failSinks: (id: string) => (failSinksFor = id),
  };
}

const mon = (id: string, hostname = `${id}:3306`): MonitorConfig => ({ id, hostname });

/** Boot the loader on a, b, c and start them all. */
async function booted(stopLoss = '') {
  const t = setup([mon('a'), mon('b'), mon('c')], stopLoss);
  await t.loader.load({ boot: true });
  await t.loader.startAll();
  return t;
}

describe('monitor loader: reload', () => {
  it('starts new monitors, unloads removed ones, replaces changed ones and leaves the rest alone', async () => {
    const t = await booted();
    const [a, b, c] = t.made;
    t.config.monitors = [mon('a'), mon('b', 'b-new:3306'), mon('d')];
    await t.loader.reload();

    assert.deepEqual(Object.keys(t.loader.monitors()), ['a', 'b', 'd']);
    // a: the same monitor, never stopped or started again.
    assert.equal(t.current('a'), a);
    assert.deepEqual([a?.starts, a?.stops, a?.running], [1, 0, true]);
    // b: the old one stopped, a new one with the new config started.
    assert.deepEqual([b?.stops, b?.running], [1, false]);
    const newB = t.current('b');
    assert.notEqual(newB, b);
    assert.equal(newB?.config.hostname, 'b-new:3306');
    assert.equal(newB?.running, true);
    // c: stopped, its sink closed and its status dropped.
    assert.deepEqual([c?.stops, c?.running], [1, false]);
    assert.equal(t.sinks.find((s) => s.name === 'log-c')?.closed, 1);
    assert.equal(t.status.monitorStatus('c'), undefined);
    // d: new and started.
    assert.equal(t.current('d')?.running, true);
    assert.equal(t.status.server()['monitors'], '3');
    assert.match(t.status.server()['monitor-loader'] ?? '', /^2 monitors started at /);
  });

  it('keeps a monitor stopped through the API stopped across a reload', async () => {
    const t = await booted();
    await t.loader.stop('a');
    await t.loader.reload();
    const a = t.current('a');
    assert.equal(a, t.made[0]);
    assert.deepEqual([a?.running, a?.starts], [false, 1]);
  });

  it('changes nothing when a new monitor cannot be built, and says why', async () => {
    const t = await booted();
    t.config.monitors = [mon('a'), mon('e')];
    t.failSinks('e');
    await assert.rejects(t.loader.reload(), (err: unknown) => {
      assert.ok(err instanceof SondeError);
      assert.equal(err.code, 'RELOAD_FAILED');
      assert.match(err.message, /^monitor e: sink nope not registered$/);
      return true;
    });
    assert.deepEqual(Object.keys(t.loader.monitors()), ['a', 'b', 'c']);
    assert.ok(t.made.slice(0, 3).every((m) => m.running && m.stops === 0));
  });
});

describe('monitor loader: stop-loss', () => {
  it('refuses a reload losing more than the percent limit and leaves everything as it was', async () => {
    const t = await booted('50%');
    const before = t.status.server();
    t.config.monitors = [mon('a')];
    await assert.rejects(t.loader.reload(), (err: unknown) => {
      assert.ok(err instanceof SondeError);
      assert.equal(err.code, 'STOP_LOSS');
      assert.equal(err.message, 'before: 3; now: 1; lost 66.666667% > limit 50.000000%');
      return true;
    });
    assert.deepEqual(Object.keys(t.loader.monitors()), ['a', 'b', 'c']);
    assert.equal(t.made.length, 3);
    assert.ok(t.made.every((m) => m.running && m.stops === 0));
    assert.ok(t.sinks.every((s) => s.closed === 0));
    assert.equal(t.status.server()['monitors'], before['monitors']);
  });

  it('lets a reload through at the percent limit', async () => {
    const t = setup([mon('a'), mon('b'), mon('c'), mon('d')], '50%');
    await t.loader.load({ boot: true });
    t.config.monitors = [mon('a'), mon('b')];
    await t.loader.reload();
    assert.deepEqual(Object.keys(t.loader.monitors()), ['a', 'b']);
  });

  it('refuses a reload losing more than the count limit and allows one losing exactly that many', async () => {
    const t = await booted('1');
    t.config.monitors = [mon('a')];
    await assert.rejects(t.loader.reload(), {
      code: 'STOP_LOSS',
      message: 'before: 3; now: 1; lost 2 > limit 1',
    });
    assert.deepEqual(Object.keys(t.loader.monitors()), ['a', 'b', 'c']);
    t.config.monitors = [mon('a'), mon('b')];
    await t.loader.reload();
    assert.deepEqual(Object.keys(t.loader.monitors()), ['a', 'b']);
  });
});

describe('monitor loader: listing', () => {
  it('lists a monitor with its redacted DSN from the moment it is loaded, before it starts', async () => {
    const t = setup([
      mon('a', 'db-a:3307'),
      { id: 's', socket: '/run/mysqld.sock', username: 'mon', password: 'pw-secret' },
    ]);
    await t.loader.load({ boot: true });
    assert.deepEqual(t.loader.monitors(), {
      a: 'tcp(db-a:3307)/?interpolateParams=true&parseTime=true',
      s: 'mon:...@unix(/run/mysqld.sock)/?interpolateParams=true&parseTime=true',
    });
    assert.equal(
      t.status.monitorStatus('s')?.['dsn'],
      'mon:...@unix(/run/mysqld.sock)/?interpolateParams=true&parseTime=true',
    );
    assert.ok(!JSON.stringify(t.loader.monitors()).includes('pw-secret'));
  });

  it('lists the DSN the monitor assembled once it has one', async () => {
    const t = setup([mon('a')]);
    await t.loader.load({ boot: true });
    t.current('a')!.dsn = 'u:...@tcp(a:3306)/?interpolateParams=true&parseTime=true&tls=a';
    assert.equal(t.loader.monitors()['a'], 'u:...@tcp(a:3306)/?interpolateParams=true&parseTime=true&tls=a');
  });
});
