import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StatusRegistry } from '../status/registry.js';
import { FakeClock } from '../util/fake-clock.fixture.js';
import {
  FakeDb,
  gauge,
  RecordingEvents,
  RecordingSink,
  Scripted,
  summary,
  twoLevels,
  untilAborted,
} from './centre.fixture.js';
import type { PlanRuntime } from './level-collector.js';
import { LevelCollector } from './level-collector.js';

function setup(collectors: Scripted[], runtime: PlanRuntime = twoLevels().runtime) {
  const clock = new FakeClock();
  const status = new StatusRegistry();
  const events = new RecordingEvents();
  const db = new FakeDb();
  const sink = new RecordingSink();
  const byDomain = new Map(collectors.map((c) => [c.domain, c]));
  const timing = { onTime: 0, late: 0 };
  const lco = new LevelCollector({
    monitorId: 'm1',
    status: status.monitor('m1'),
    events,
    db,
    sinks: [sink],
    help: () => undefined,
    makeCollector: (d) => {
      const c = byDomain.get(d);
      if (c === undefined) throw new Error(`no collector ${d}`);
      return c;
    },
    lookupPlan: async () => runtime.active.plan,
    buildRuntime: () => runtime,
    timing,
    clock,
  });
  const st = () => status.monitorStatus('m1') ?? {};
  return { clock, status, st, events, db, sink, lco, timing };
}

describe('LevelCollector', () => {
  it('collects the due level on each tick and sends one Metrics record per interval', async () => {
    const { clock, sink, lco, st, timing } = setup([new Scripted('a'), new Scripted('b')]);
    lco.start();
    await lco.changePlan('active', 'p');
    await clock.advance(2000);
    assert.deepEqual(summary(sink.got), [
      [1, 'slow', { a: [1], b: [1] }],
      [2, 'fast', { a: [2] }],
      [3, 'slow', { a: [3], b: [2] }],
    ]);
    assert.deepEqual(timing, { onTime: 3, late: 0 }, 'every collection started at its tick');
    assert.equal(st()['level-state'], 'active');
    assert.equal(st()['level-plan'], 'p');
    assert.match(st()['domain:b'] ?? '', /^ok at \S+ in 0s: 1 metrics$/);
    await lco.stop();
    assert.equal(clock.pending, 0, 'no timer left after stop');
  });

  it('never overlaps collections: ticks during a slow one are dropped but one, so the schedule shifts', async () => {
    let release: () => void = () => undefined;
    const a = new Scripted('a', async (call) => {
      if (call === 1) await new Promise<void>((r) => (release = r));
      return { values: [gauge('a', call)] };
    });
    const { runtime } = twoLevels('p', 5000, 5000);
    const { clock, sink, lco, timing } = setup([a, new Scripted('b')], runtime);
    lco.start();
    await lco.changePlan('active', 'p');
    await clock.advance(3500); // ticks at 1, 2 and 3 s arrive while interval 1 runs
    assert.equal(a.calls, 1);
    release();
    await clock.advance(0); // the one remembered tick runs at once
    assert.equal(a.maxRunning, 1);
    assert.deepEqual(timing, { onTime: 1, late: 1 }, 'the remembered tick started late');
    assert.deepEqual(
      summary(sink.got).map(([n, level]) => [n, level]),
      [
        [1, 'slow'],
        [2, 'fast'],
      ],
    );
    await lco.stop();
  });

  it('cancels a domain at its deadline and reports it, while the other domain is delivered', async () => {
    const { clock, sink, lco, st } = setup([
      new Scripted('a'),
      new Scripted('b', (_c, s) => untilAborted(s)),
    ]);
    lco.start();
    await lco.changePlan('active', 'p');
    await clock.advance(899);
    assert.match(st()['error:b'] ?? '', /p\/slow\/1\/b: timeout after 800ms$/);
    assert.deepEqual(summary(sink.got)[0], [1, 'slow', { a: [1] }]);
    await lco.stop();
  });

  it('sends values that came after their run with the next batch, under their own interval', async () => {
    let release: () => void = () => undefined;
    const b = new Scripted('b', async (call) => {
      if (call === 1) await new Promise<void>((r) => (release = r));
      return { values: [gauge('b', call)] };
    });
    const { runtime } = twoLevels('p', 300, 900);
    const { clock, sink, lco } = setup([new Scripted('a'), b], runtime);
    lco.start();
    await lco.changePlan('active', 'p');
    await clock.advance(500); // interval 1 went out at 300 ms without b
    release();
    await clock.advance(500); // interval 2 at 1 s carries b's late value
    assert.deepEqual(summary(sink.got), [
      [1, 'slow', { a: [1] }],
      [1, 'slow', { b: [1] }],
      [2, 'fast', { a: [2] }],
    ]);
    await lco.stop();
  });

  it('retries the plan preparation with backoff while MySQL is down, then collects', async () => {
    const { clock, sink, lco, st, db, events } = setup([new Scripted('a'), new Scripted('b')]);
    db.up = false;
    lco.start();
    const activation = lco.changePlan('active', 'p');
    await clock.advance(0);
    assert.equal(st()['error:engine-prepare'], 'while connecting to MySQL: connect ECONNREFUSED');
    assert.equal(sink.got.length, 0);
    db.up = true;
    await clock.advance(1000); // the first backoff step is at most 750 ms
    await activation;
    assert.equal(st()['error:engine-prepare'], undefined);
    assert.equal(st()['level-state'], 'active');
    assert.ok(sink.got.length >= 1);
    assert.ok(events.lines.includes('engine-prepare-error: while connecting to MySQL: connect ECONNREFUSED'));
    await lco.stop();
  });

  it('collects nothing while paused, and restarts the schedule at the first level on a new plan', async () => {
    const { clock, sink, lco } = setup([new Scripted('a'), new Scripted('b')]);
    lco.start();
    await lco.changePlan('active', 'p');
    lco.pause();
    await clock.advance(3000);
    assert.equal(sink.got.length, 1);
    await lco.changePlan('read-only', 'p');
    await clock.advance(0);
    assert.deepEqual(
      summary(sink.got).map(([n, level]) => [n, level]),
      [
        [1, 'slow'],
        [1, 'slow'],
      ],
    );
    assert.equal(sink.got[1]?.state, 'read-only');
    await lco.stop();
  });
});
