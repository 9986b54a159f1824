import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FinalMonitorConfig } from '../core/config.js';
import { ConnectionSpec } from '../core/db.js';
import { StatusRegistry } from '../status/registry.js';
import { FakeClock } from '../util/fake-clock.fixture.js';
import { FakeDb, gauge, RecordingEvents, RecordingSink, Scripted, twoLevels } from './centre.fixture.js';
import { Monitor, type MonitorDeps } from './monitor.js';

const spec = () =>
  new ConnectionSpec({
    username: 'mon',
    password: 'secret-pw',
    host: '127.0.0.1',
    port: 3306,
    connectTimeoutMs: 1000,
    redactedDsn: 'mon:...@tcp(127.0.0.1:3306)/',
  });

/** A monitor wired to doubles: `failConnections` makes the first N buildConnection calls fail. */
function setup(cfg: Partial<FinalMonitorConfig> = {}, failConnections = 0, down = { now: false }) {
  const clock = new FakeClock();
  const status = new StatusRegistry();
  const events = new RecordingEvents();
  const sink = new RecordingSink();
  const dbs: FakeDb[] = [];
  const plans = { p: twoLevels('p'), ro: twoLevels('ro') };
  let connects = 0;
  const deps: MonitorDeps = {
    events,
    help: () => undefined,
    makeCollector: (d) =>
      new Scripted(d, async (call) => {
        if (down.now) throw new Error('connect ECONNREFUSED 127.0.0.1:3306');
        return { values: [gauge(d, call)] };
      }),
    buildConnection: async () => {
      connects++;
      if (connects <= failConnections) throw new Error('cannot read password-file: no such file');
      return spec();
    },
    createDb: () => {
      const db = new FakeDb();
      dbs.push(db);
      return db;
    },
    loadPlans: async () => (name) => (name === 'ro' ? plans.ro.plan : plans.p.plan),
    buildRuntime: (plan) => (plan.name === 'ro' ? plans.ro.runtime : plans.p.runtime),
    clock,
  };
  const config = { id: 'm1', plan: 'p', ...cfg } as FinalMonitorConfig;
  const monitor = new Monitor(config, [sink], status.monitor('m1'), deps);
  const st = () => status.monitorStatus('m1') ?? {};
  return { clock, monitor, st, events, sink, dbs };
}

describe('Monitor', () => {
  it('starts its parts, collects into its sinks, and on stop closes everything and keeps its status', async () => {
    const { clock, monitor, st, sink, dbs, events } = setup();
    monitor.start();
    await clock.advance(1000);
    assert.match(st().monitor ?? '', /^running since /);
    assert.equal(st().dsn, 'mon:...@tcp(127.0.0.1:3306)/');
    assert.equal(st()['level-plan'], 'p');
    assert.deepEqual(
      sink.got.map((m) => [m.interval, m.level]),
      [
        [1, 'slow'],
        [2, 'fast'],
      ],
    );
    await monitor.stop();
    assert.match(st().monitor ?? '', /^stopped at /);
    assert.equal(dbs[0]?.closed, true);
    assert.equal(clock.pending, 0, 'no timer left after stop');
    const sent = sink.got.length;
    await clock.advance(5000);
    assert.equal(sink.got.length, sent);
    assert.ok(events.lines.includes('monitor-stopped: m1'));
    assert.ok(!JSON.stringify(st()).includes('secret-pw'));
  });

  it('retries a failed startup with backoff, showing why, then runs', async () => {
    const { clock, monitor, st } = setup({}, 2);
    monitor.start();
    await clock.advance(0);
    assert.equal(st()['error:monitor'], 'error: cannot read password-file: no such file');
    assert.equal(
      st().monitor,
      'error making DB/DSN, sleep and retry: cannot read password-file: no such file',
    );
    await clock.advance(2000); // two backoff steps: at most 750 ms, then 1125 ms
    assert.equal(st()['error:monitor'], undefined);
    assert.match(st().monitor ?? '', /^running since /);
    await monitor.stop();
  });

  it('follows the server state with the plan changer: read-only plan, then back to the active plan after `after`', async () => {
    const { clock, monitor, st, dbs } = setup({
      plans: { change: { 'read-only': { plan: 'ro' }, active: { plan: 'p', after: '2s' } } },
    });
    monitor.start();
    await clock.advance(0); // first check: the server's state applies at once
    const db = dbs[0];
    assert.ok(db !== undefined);
    assert.equal(st()['level-state'], 'active');
    assert.equal(st()['level-plan'], 'p');
    db.readOnly = true;
    await clock.advance(1000); // seen once: pending
    assert.match(st()['state-pending'] ?? '', /^read-only ro /);
    await clock.advance(1000); // no `after` for read-only: applied at the next check
    assert.equal(st()['level-state'], 'read-only');
    assert.equal(st()['level-plan'], 'ro');
    db.readOnly = false;
    await clock.advance(2000); // pending, 1 s of the 2 s `after`
    assert.equal(st()['level-state'], 'read-only');
    await clock.advance(1000);
    assert.equal(st()['level-state'], 'active');
    assert.equal(st()['level-plan'], 'p');
    await monitor.stop();
  });

  it('can be started again after a stop', async () => {
    const { clock, monitor, st, dbs } = setup();
    monitor.start();
    await clock.advance(0);
    await monitor.stop();
    monitor.start();
    await clock.advance(0);
    assert.match(st().monitor ?? '', /^running since /);
    assert.equal(dbs.length, 2);
    assert.throws(() => monitor.start(), /already running/);
    await monitor.stop();
  });

  it('prints at most one error line per backoff step while it keeps failing, and at once again after a clean collection', async () => {
    const down = { now: false };
    const { clock, monitor, events } = setup({}, 0, down);
    monitor.start();
    await clock.advance(1000);
    down.now = true;
    const errorLines = () => events.lines.filter((l) => /^(collector-error|engine-collect-error)/.test(l));
    await clock.advance(30_000);
    // 30 collections, each with 1 or 2 failing domains and a summary: about 75 lines without the gate.
    const during = errorLines();
    assert.ok(during.length >= 3 && during.length <= 6, `${during.length} lines: ${during.join(' | ')}`);
    assert.match(during[1] ?? '', /\(\d+ more errors held back since \S+\)$/);
    down.now = false;
    await clock.advance(1000);
    down.now = true;
    await clock.advance(1000);
    assert.equal(
      errorLines().length,
      during.length + 1,
      'the first error after a clean collection prints at once',
    );
    await monitor.stop();
  });
});
