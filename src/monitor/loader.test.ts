import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Config, FinalMonitorConfig, MonitorConfig } from '../core/config.js';
import { SondeError } from '../core/errors.js';
import { NO_EVENTS } from '../core/events.js';
import type { Sink } from '../core/sink.js';
import { StatusRegistry } from '../status/registry.js';
import { Loader } from './loader.js';
import type { LoadedMonitor, LoaderDeps } from './loader.js';
import { shardOfId } from './shard.js';
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
function setup(monitors: MonitorConfig[], stopLoss = '', extra: Partial<LoaderDeps> = {}) {
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
    ...extra,
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

describe('monitor loader: shard', () => {
  /** Ids with a known shard among 3: `inShard1` hash into shard 1, `others` into 0 or 2. */
  const ids = Array.from({ length: 30 }, (_, k) => `db${k}`);
  const inShard1 = ids.filter((id) => shardOfId(id, 3) === 1);
  const others = ids.filter((id) => shardOfId(id, 3) !== 1);

  function sharded(list: string[], stopLoss = '') {
    const events: string[] = [];
    const t = setup(
      list.map((id) => mon(id)),
      stopLoss,
      {
        shard: { index: 1, count: 3 },
        events: { ...NO_EVENTS, info: (e, _id, msg) => events.push(`${e} ${msg ?? ''}`) },
      },
    );
    return { ...t, events };
  }

  it('loads and starts only the monitors of its shard, says how many it kept, shows the shard', async () => {
    assert.ok(inShard1.length > 0 && others.length > 0);
    const t = sharded(ids);
    await t.loader.load({ boot: true });
    await t.loader.startAll();
    assert.deepEqual(Object.keys(t.loader.monitors()), [...inShard1].sort());
    assert.deepEqual(t.made.map((m) => m.id).sort(), [...inShard1].sort());
    assert.ok(t.made.every((m) => m.running));
    for (const id of others) assert.equal(t.status.monitorStatus(id), undefined, id);
    assert.ok(t.events.includes(`monitors-shard shard 1/3 kept ${inShard1.length} of 30 monitors`));
    assert.equal(t.loader.shardSummary, `shard 1/3 kept ${inShard1.length} of 30 monitors`);
    assert.equal(t.status.server()['shard'], '1/3');
    assert.equal(t.status.server()['monitors'], String(inShard1.length));
  });

  it('applies the shard again on reload: new monitors of other shards are not loaded', async () => {
    const t = sharded(ids.slice(0, 10));
    await t.loader.load({ boot: true });
    await t.loader.startAll();
    t.config.monitors = ids.map((id) => mon(id));
    await t.loader.reload();
    assert.deepEqual(Object.keys(t.loader.monitors()), [...inShard1].sort());
  });

  it("counts stop-loss on the agent's own shard", async () => {
    // Losing every monitor of other shards loses nothing here: the reload goes through.
    const t = sharded(ids, '1');
    await t.loader.load({ boot: true });
    t.config.monitors = inShard1.map((id) => mon(id));
    await t.loader.reload();
    assert.equal(t.loader.size, inShard1.length);
    // Losing two of its own is more than 1.
    t.config.monitors = inShard1.slice(2).map((id) => mon(id));
    await assert.rejects(
      t.loader.reload(),
      (err: unknown) => err instanceof SondeError && err.code === 'STOP_LOSS',
    );
    assert.equal(t.loader.size, inShard1.length);
  });

  it('shows no shard and keeps everything when not sharded', async () => {
    const t = setup(ids.map((id) => mon(id)));
    await t.loader.load({ boot: true });
    assert.equal(t.loader.size, 30);
    assert.equal(t.loader.shardSummary, undefined);
    assert.equal(t.status.server()['shard'], undefined);
  });
});

describe('monitor loader: RDS discovery', () => {
  /** A loader whose RDS source answers `list` (editable), for regions `regions`. */
  function rds(list: MonitorConfig[], stopLoss = '', regions = ['us-east-1']) {
    const asked: unknown[] = [];
    const src = { list, fail: '' };
    const t = setup([], stopLoss, {
      readRdsMonitors: async (aws) => {
        asked.push(aws);
        if (src.fail !== '') throw new Error(src.fail);
        return src.list.map((m) => ({ ...m }));
      },
    });
    t.config['monitor-loader'] = { ...t.config['monitor-loader'], aws: { regions, engines: ['mysql'] } };
    return { ...t, src, asked };
  }
  const inst = (id: string): MonitorConfig => ({
    id,
    hostname: `${id}.x.us-east-1.rds.amazonaws.com:3306`,
    aws: { region: 'us-east-1' },
  });

  it('loads the instances found, with the section handed over whole', async () => {
    const t = rds([inst('db1'), inst('db2')]);
    await t.loader.load({ boot: true });
    assert.deepEqual(Object.keys(t.loader.monitors()), ['db1', 'db2']);
    assert.deepEqual(t.asked, [{ regions: ['us-east-1'], engines: ['mysql'] }]);
    assert.equal(t.current('db1')?.config.aws?.region, 'us-east-1');
  });

  it('adds and removes monitors as the instance list changes; unchanged ones keep running', async () => {
    const t = rds([inst('db1'), inst('db2')]);
    await t.loader.load({ boot: true });
    await t.loader.startAll();
    const db1 = t.current('db1');
    t.src.list = [inst('db1'), inst('db3')];
    await t.loader.reload();
    assert.deepEqual(Object.keys(t.loader.monitors()), ['db1', 'db3']);
    assert.equal(t.current('db1'), db1);
    assert.deepEqual([db1?.starts, db1?.stops], [1, 0]);
    assert.equal(t.current('db2')?.running, false);
    assert.equal(t.current('db3')?.running, true);
    assert.match(t.status.server()['monitor-loader'] ?? '', /started at/);
  });

  it('applies stop-loss to monitors lost from RDS', async () => {
    const t = rds([inst('db1'), inst('db2'), inst('db3'), inst('db4')], '50%');
    await t.loader.load({ boot: true });
    t.src.list = [inst('db1')];
    await assert.rejects(t.loader.reload(), (err: unknown) => {
      assert.ok(err instanceof SondeError && err.code === 'STOP_LOSS');
      assert.equal(err.message, 'before: 4; now: 1; lost 75.000000% > limit 50.000000%');
      return true;
    });
    assert.equal(t.loader.size, 4);
    t.src.list = [inst('db1'), inst('db2')];
    await t.loader.reload();
    assert.deepEqual(Object.keys(t.loader.monitors()), ['db1', 'db2']);
  });

  it('fails the load on a discovery error and changes nothing', async () => {
    const t = rds([inst('db1')]);
    await t.loader.load({ boot: true });
    t.src.fail = 'monitor-loader.aws.regions: us-east-1: DescribeDBInstances: AccessDenied: denied';
    await assert.rejects(t.loader.reload(), (err: unknown) => {
      assert.ok(err instanceof SondeError && err.code === 'RELOAD_FAILED');
      assert.equal(err.message, t.src.fail);
      return true;
    });
    assert.deepEqual(Object.keys(t.loader.monitors()), ['db1']);
  });

  it('refuses regions when no RDS source is wired, and skips local auto-detection when RDS found monitors', async () => {
    const t = setup([]);
    t.config['monitor-loader'] = { aws: { regions: ['us-east-1'] } };
    await assert.rejects(
      t.loader.load({ boot: true }),
      /monitor-loader.aws.regions: RDS discovery is not available/,
    );
    let detected = 0;
    const v = setup([], '', {
      readRdsMonitors: async () => [inst('db1')],
      autoDetect: async () => {
        detected++;
        return mon('localhost');
      },
    });
    v.config['monitor-loader'] = { aws: { regions: ['us-east-1'] } };
    await v.loader.load({ boot: true });
    assert.deepEqual([Object.keys(v.loader.monitors()), detected], [['db1'], 0]);
  });
});
