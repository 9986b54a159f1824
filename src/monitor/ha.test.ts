import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FinalMonitorConfig } from '../core/config.js';
import { ConnectionSpec } from '../core/db.js';
import { ALWAYS_ACTIVE, type HighAvailability } from '../core/ha.js';
import { MonitorKey } from '../core/status-keys.js';
import { StatusRegistry } from '../status/registry.js';
import { aborted } from '../util/abort.js';
import { FakeClock } from '../util/fake-clock.fixture.js';
import { FakeDb, gauge, RecordingEvents, RecordingSink, Scripted, twoLevels } from './centre.fixture.js';
import { HaWatch } from './ha-watch.js';
import { LevelCollector } from './level-collector.js';
import { Monitor, type MonitorDeps } from './monitor.js';

/** An HA hook a test flips; `fail` makes it throw. */
class Flip implements HighAvailability {
  active = true;
  fail: Error | undefined;
  asked = 0;
  isActive(): boolean {
    this.asked++;
    if (this.fail) throw this.fail;
    return this.active;
  }
}

function watch(ha: HighAvailability) {
  const clock = new FakeClock();
  const status = new StatusRegistry();
  const events = new RecordingEvents();
  const changes: boolean[] = [];
  const w = new HaWatch({
    monitorId: 'm',
    ha,
    status: status.monitor('m'),
    events,
    onChange: (a) => void changes.push(a),
    clock,
  });
  return { w, clock, changes, events, st: () => status.monitorStatus('m') ?? {} };
}

describe('HaWatch', () => {
  it('asks at start and once a second, and reports only changes', async () => {
    const ha = new Flip();
    const { w, clock, changes, st } = watch(ha);
    const first = w.answer();
    assert.ok(first instanceof Promise, 'no answer before start');
    w.start();
    assert.equal(await first, true);
    assert.equal(w.answer(), true, 'a synchronous hook gives a synchronous answer');
    await clock.advance(3000);
    assert.equal(ha.asked, 4);
    ha.active = false;
    await clock.advance(1000);
    assert.deepEqual(changes, [true, false]);
    assert.match(st().ha ?? '', /^standby since \d{4}-/);
    w.stop();
    assert.equal(clock.pending, 0);
  });

  it('keeps the last answer while the hook fails, reporting once per run of failures', async () => {
    const ha = new Flip();
    const { w, clock, changes, events, st } = watch(ha);
    w.start();
    ha.fail = new Error('lease API unreachable');
    await clock.advance(3000);
    assert.deepEqual(changes, [true]);
    assert.equal(st()['error:ha'], 'lease API unreachable');
    assert.deepEqual(events.lines, ['ha-error: HA isActive failed, staying active: lease API unreachable']);
    ha.fail = undefined;
    await clock.advance(1000);
    assert.equal(st()['error:ha'], undefined);
    ha.fail = new Error('again');
    await clock.advance(1000);
    assert.equal(events.lines.length, 2, 'a new run of failures is reported again');
    w.stop();
  });

  it('counts a failure before the first answer, or an answer that is not a boolean, as standby', async () => {
    const bad: HighAvailability = { isActive: () => 'yes' as unknown as boolean };
    const { w, changes, st } = watch(bad);
    w.start();
    assert.equal(w.answer(), false);
    assert.deepEqual(changes, [false]);
    assert.equal(st()['error:ha'], 'isActive() answered string, not a boolean');
    w.stop();
  });

  it('takes a promised answer, and gives standby to a waiter when stopped before any answer', async () => {
    let resolve: (v: boolean) => void = () => undefined;
    const slow: HighAvailability = { isActive: () => new Promise<boolean>((r) => (resolve = r)) };
    const a = watch(slow);
    a.w.start();
    const pending = a.w.answer();
    resolve(true);
    assert.equal(await pending, true);
    const b = watch({ isActive: () => new Promise<boolean>(() => undefined) });
    b.w.start();
    const never = b.w.answer();
    b.w.stop();
    assert.equal(await never, false);
    a.w.stop();
  });
});

const spec = () =>
  new ConnectionSpec({
    username: 'mon',
    password: 'pw',
    host: '127.0.0.1',
    port: 3306,
    connectTimeoutMs: 1000,
    redactedDsn: 'mon:...@tcp(127.0.0.1:3306)/',
  });

/** A monitor on doubles with an HA hook and a heartbeat writer that records its runs. */
function monitor(ha: HighAvailability | undefined, cfg: Partial<FinalMonitorConfig> = {}) {
  const clock = new FakeClock();
  const status = new StatusRegistry();
  const events = new RecordingEvents();
  const sink = new RecordingSink();
  const plans = { p: twoLevels('p'), light: twoLevels('light') };
  const heartbeat = { running: 0, runs: 0 };
  const deps: MonitorDeps = {
    events,
    help: () => undefined,
    makeCollector: (d) => new Scripted(d, async (call) => ({ values: [gauge(d, call)] })),
    buildConnection: async () => spec(),
    createDb: () => new FakeDb(),
    loadPlans: async () => (name) => (name === 'light' ? plans.light.plan : plans.p.plan),
    buildRuntime: (plan) => (plan.name === 'light' ? plans.light.runtime : plans.p.runtime),
    heartbeatWriter: async ({ signal, status: st }) => {
      heartbeat.running++;
      heartbeat.runs++;
      await aborted(signal);
      heartbeat.running--;
      st.set(MonitorKey.heartbeatWriter, 'stopped');
    },
    clock,
    ...(ha === undefined ? {} : { ha }),
  };
  const config = { id: 'm1', plan: 'p', heartbeat: { freq: '1s' }, ...cfg } as FinalMonitorConfig;
  const m = new Monitor(config, [sink], status.monitor('m1'), deps);
  return { m, clock, sink, events, heartbeat, st: () => status.monitorStatus('m1') ?? {} };
}

describe('Monitor and the HA hook', () => {
  it('plan changing off: a standby monitor stays loaded, collects nothing and writes no heartbeat; active resumes', async () => {
    const ha = new Flip();
    ha.active = false;
    const { m, clock, sink, heartbeat, st, events } = monitor(ha);
    m.start();
    await clock.advance(3000);
    assert.match(st().monitor ?? '', /^running since /);
    assert.equal(st()['level-state'], 'standby');
    assert.match(st().ha ?? '', /^standby since /);
    assert.equal(sink.got.length, 0, 'no batch while standby');
    assert.equal(heartbeat.runs, 0, 'no heartbeat writer while standby');
    assert.equal(st()['heartbeat-writer'], 'standby: not writing');
    ha.active = true;
    await clock.advance(2000);
    assert.equal(st()['level-state'], 'active');
    assert.equal(st()['level-plan'], 'p');
    assert.ok(sink.got.length > 0, 'collecting once active');
    assert.equal(heartbeat.running, 1);
    assert.match(st().monitor ?? '', /^running since /, 'the heartbeat restart leaves `monitor` alone');
    ha.active = false;
    await clock.advance(1000);
    const sent = sink.got.length;
    await clock.advance(3000);
    assert.equal(sink.got.length, sent, 'no batch after going standby again');
    assert.equal(st()['level-state'], 'standby');
    assert.equal(heartbeat.running, 0);
    assert.equal(st()['heartbeat-writer'], 'standby: not writing');
    assert.ok(events.lines.includes('state-change-end: standby'));
    assert.ok(events.lines.includes('state-change-end: active'));
    await m.stop();
    assert.equal(clock.pending, 0, 'no timer left after stop');
  });

  it('plan changing on: the standby plan runs while standby, the active plan once active', async () => {
    const ha = new Flip();
    ha.active = false;
    const { m, clock, sink, st, heartbeat } = monitor(ha, {
      plans: { change: { standby: { plan: 'light' }, active: { plan: 'p' } } },
    });
    m.start();
    await clock.advance(2000);
    assert.equal(st()['level-state'], 'standby');
    assert.equal(st()['level-plan'], 'light');
    assert.ok(sink.got.length > 0 && sink.got.every((b) => b.plan === 'light'));
    assert.equal(heartbeat.runs, 0, 'a standby agent writes no heartbeat, even with a standby plan');
    ha.active = true;
    await clock.advance(3000);
    assert.equal(st()['level-state'], 'active');
    assert.equal(sink.got.at(-1)?.plan, 'p');
    assert.equal(heartbeat.running, 1);
    await m.stop();
  });

  it('always active: nothing asks, no `ha` key, the heartbeat writer runs from the start', async () => {
    const { m, clock, st, heartbeat } = monitor(ALWAYS_ACTIVE);
    m.start();
    await clock.advance(2000);
    assert.equal(st().ha, undefined);
    assert.equal(st()['level-state'], 'active');
    assert.equal(heartbeat.running, 1);
    await m.stop();
  });
});

describe('LevelCollector.pause(standby)', () => {
  it('cancels an activation in progress, so nothing collects behind the pause, and shows level state standby', async () => {
    const clock = new FakeClock();
    const status = new StatusRegistry();
    const sink = new RecordingSink();
    const { plan, runtime } = twoLevels('p');
    let release: () => void = () => undefined;
    const lco = new LevelCollector({
      monitorId: 'm1',
      status: status.monitor('m1'),
      events: new RecordingEvents(),
      db: new FakeDb(),
      sinks: [sink],
      help: () => undefined,
      makeCollector: (d) => new Scripted(d),
      lookupPlan: async () => {
        await new Promise<void>((r) => (release = r));
        return plan;
      },
      buildRuntime: () => runtime,
      clock,
    });
    lco.start();
    const activation = lco.changePlan('active', 'p');
    await clock.advance(0);
    lco.pause('standby');
    release();
    await activation;
    await clock.advance(3000);
    assert.equal(sink.got.length, 0);
    assert.equal(status.monitorStatus('m1')?.['level-state'], 'standby');
    assert.equal(lco.state, 'standby');
    await lco.stop();
  });
});
