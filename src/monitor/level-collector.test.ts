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
import type { Metrics } from '../core/metrics.js';
import type { Sink } from '../core/sink.js';
import type { LogRecord, Records } from '../core/records.js';
import type { PlanRuntime, TransformMetrics } from './level-collector.js';
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

  it('collects a level due every fifth tick on those ticks, across a pause and a new activation', async () => {
    const base = twoLevels('p').runtime;
    const runtime: PlanRuntime = {
      active: base.active,
      due: (s) => (s % 5 === 0 ? { level: 'slow', work: [{ domain: 'a', level: 'slow' }] } : undefined),
    };
    const { clock, sink, lco, timing } = setup([new Scripted('a'), new Scripted('b')], runtime);
    const t0 = clock.now();
    lco.start();
    await lco.changePlan('active', 'p');
    await clock.advance(12_300);
    lco.pause();
    await clock.advance(2000);
    await lco.changePlan('active', 'p'); // at 14.3 s: s = 0 at once, then on the 1 s grid of start()
    await clock.advance(10_000);
    assert.deepEqual(
      sink.got.map((m) => [m.interval, m.begin.getTime() - t0]),
      [
        [1, 0],
        [2, 5000],
        [3, 10_000],
        [1, 14_300],
        [2, 19_000],
        [3, 24_000],
      ],
    );
    assert.deepEqual(timing, { onTime: 6, late: 0 });
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

describe('LevelCollector: panics and dropped late values', () => {
  /** A sink that throws `bug()` on the sends listed in `failOn` (1-based), and records the others. */
  class BuggySink implements Sink {
    readonly got: Metrics[] = [];
    sends = 0;
    constructor(
      readonly name: string,
      readonly failOn: number[],
      readonly bug: () => unknown,
    ) {}
    async send(m: Metrics): Promise<void> {
      this.sends++;
      if (this.failOn.includes(this.sends)) throw this.bug();
      this.got.push(m);
    }
  }

  function withSinks(
    sinks: Sink[],
    statusBug?: (key: string) => boolean,
    transformMetrics?: TransformMetrics,
  ) {
    const clock = new FakeClock();
    const status = new StatusRegistry();
    const writer = status.monitor('m1');
    const events = new RecordingEvents();
    const runtime = twoLevels().runtime;
    const byDomain = new Map([new Scripted('a'), new Scripted('b')].map((c) => [c.domain, c]));
    const lco = new LevelCollector({
      monitorId: 'm1',
      status: {
        set: (key, value) => {
          if (statusBug?.(key) === true) throw new RangeError(`status bug at ${key}`);
          writer.set(key, value);
        },
        delete: (key) => writer.delete(key),
      },
      events,
      db: new FakeDb(),
      sinks,
      help: () => undefined,
      makeCollector: (d) => byDomain.get(d) ?? assert.fail(d),
      lookupPlan: async () => runtime.active.plan,
      buildRuntime: () => runtime,
      clock,
      ...(transformMetrics === undefined ? {} : { transformMetrics }),
    });
    return { clock, events, lco, st: () => status.monitorStatus('m1') ?? {} };
  }

  it('a sink that throws a TypeError gives lco-receiver-panic; the next batches are still delivered', async () => {
    const buggy = new BuggySink(
      'buggy',
      [1],
      () => new TypeError("Cannot read properties of undefined (reading 'tags')"),
    );
    const other = new RecordingSink();
    const { clock, events, lco, st } = withSinks([buggy, other]);
    lco.start();
    await lco.changePlan('active', 'p');
    await clock.advance(0);
    assert.equal(st()['error:buggy'], "TypeError: Cannot read properties of undefined (reading 'tags')");
    await clock.advance(2000);
    assert.deepEqual(
      events.lines.filter((l) => /^(lco-receiver-panic|sink-send-error)/.test(l)),
      ["lco-receiver-panic: buggy: TypeError: Cannot read properties of undefined (reading 'tags')"],
    );
    assert.deepEqual(
      summary(buggy.got).map(([n]) => n),
      [2, 3],
      'the buggy sink gets the batches after the one it threw on',
    );
    assert.deepEqual(
      summary(other.got).map(([n]) => n),
      [1, 2, 3],
      'the other sink gets every batch',
    );
    assert.equal(st()['error:buggy'], undefined, 'cleared by the next good send');
    await lco.stop();
  });

  it('a thrown string is a panic too; an ordinary send failure stays sink-send-error', async () => {
    const str = new BuggySink('odd', [1], () => 'bad state');
    const net = new BuggySink('net', [2], () =>
      Object.assign(new Error('connect ECONNREFUSED'), { syscall: 'connect' }),
    );
    const { clock, events, lco } = withSinks([str, net]);
    lco.start();
    await lco.changePlan('active', 'p');
    await clock.advance(1000);
    assert.deepEqual(
      events.lines.filter((l) => /^(lco-receiver-panic|sink-send-error)/.test(l)),
      [
        'lco-receiver-panic: odd: non-error value thrown: "bad state"',
        'sink-send-error: net :connect ECONNREFUSED',
      ],
    );
    await lco.stop();
  });

  it('a transformMetrics hook that throws a TypeError gives lco-receiver-panic; a plain Error stays lco-metrics-fault', async () => {
    const sink = new RecordingSink();
    let calls = 0;
    const transform: TransformMetrics = (batch) => {
      calls++;
      if (calls === 1) return (undefined as unknown as { x: Metrics[] }).x; // the bug
      if (calls === 2) throw new Error('label service down');
      return batch;
    };
    const { clock, events, lco } = withSinks([sink], undefined, transform);
    lco.start();
    await lco.changePlan('active', 'p');
    await clock.advance(2000);
    assert.deepEqual(
      events.lines.filter((l) => /^(lco-receiver-panic|lco-metrics-fault)/.test(l)),
      [
        "lco-receiver-panic: TransformMetrics: TypeError: Cannot read properties of undefined (reading 'x'), dropping metrics: p/slow/1",
        'lco-metrics-fault: TransformMetrics: label service down, dropping metrics: p/fast/2',
      ],
    );
    assert.deepEqual(
      summary(sink.got).map(([n]) => n),
      [3],
      'the next batch is delivered',
    );
    await lco.stop();
  });

  it('the worker survives anything else that throws in it, and goes on with the next batch', async () => {
    const sink = new RecordingSink();
    let failures = 1;
    const { clock, events, lco } = withSinks([sink], (key) => key === 'level-sinks' && failures-- > 0);
    lco.start();
    await lco.changePlan('active', 'p');
    await clock.advance(1000);
    assert.deepEqual(
      events.lines.filter((l) => l.startsWith('lco-receiver-panic')),
      ['lco-receiver-panic: p/slow: RangeError: status bug at level-sinks'],
    );
    assert.deepEqual(
      summary(sink.got).map(([n]) => n),
      [2],
      'the batch that hit the bug is lost; the next one is delivered',
    );
    await lco.stop();
  });

  it('the collect loop survives a bug in the schedule: lco-collect-panic, and the next tick collects', async () => {
    const { runtime } = twoLevels();
    let bugs = 1;
    const buggy = {
      active: runtime.active,
      due: (s: number) => {
        if (bugs-- > 0) throw new RangeError('no level for second ' + String(s));
        return runtime.due(s);
      },
    };
    const { clock, sink, lco, events } = setup([new Scripted('a'), new Scripted('b')], buggy);
    lco.start();
    await lco.changePlan('active', 'p');
    await clock.advance(1000);
    assert.deepEqual(
      events.lines.filter((l) => l.startsWith('lco-collect-panic')),
      ['lco-collect-panic: RangeError: no level for second 0'],
    );
    assert.deepEqual(
      summary(sink.got).map(([n, level]) => [n, level]),
      [[1, 'fast']],
    );
    await lco.stop();
  });

  it('late values of a slow collector are dropped with drop-metrics-flush when the plan changes before the next batch', async () => {
    let release: () => void = () => undefined;
    const b = new Scripted('b', async (call) => {
      if (call === 1) await new Promise<void>((r) => (release = r));
      return { values: [gauge('b', call)] };
    });
    const { runtime } = twoLevels('p', 300, 900);
    const { clock, sink, lco, events } = setup([new Scripted('a'), b], runtime);
    lco.start();
    await lco.changePlan('active', 'p');
    await clock.advance(500); // interval 1 went out at 300 ms without b
    release();
    await clock.advance(0); // b's value arrives late, waiting for the next batch
    await lco.changePlan('read-only', 'p'); // before the tick at 1 s: no next batch of this plan
    assert.deepEqual(
      events.lines.filter((l) => l.startsWith('drop-metrics')),
      ['drop-metrics-flush: p/slow/1/b: dropping 1 late values: the plan changed before the next batch'],
    );
    assert.ok(!sink.got.some((m) => m.values.b?.some((v) => v.value === 1)), 'the late value was not sent');
    await lco.stop();
  });

  it('late values still waiting when the collector stops are dropped with drop-metrics-flush', async () => {
    let release: () => void = () => undefined;
    const b = new Scripted('b', async (call) => {
      if (call === 1) await new Promise<void>((r) => (release = r));
      return { values: [gauge('b', call)] };
    });
    const { runtime } = twoLevels('p', 300, 900);
    const { clock, lco, events } = setup([new Scripted('a'), b], runtime);
    lco.start();
    await lco.changePlan('active', 'p');
    await clock.advance(500);
    release();
    await clock.advance(0);
    await lco.stop();
    assert.deepEqual(
      events.lines.filter((l) => l.startsWith('drop-metrics')),
      ['drop-metrics-flush: p/slow/1/b: dropping 1 late values: the level collector stopped'],
    );
  });
});

describe('LevelCollector records', () => {
  it('hands records to the sinks that take them, once per collection, and never to the others', async () => {
    const clock = new FakeClock();
    const status = new StatusRegistry();
    const events = new RecordingEvents();
    const plain = new RecordingSink();
    const got: Records[] = [];
    const withRecords: Sink = {
      name: 'rec',
      send: async () => undefined,
      sendRecords: async (r) => {
        got.push(r);
      },
    };
    let failOnce = true;
    const failing: Sink = {
      name: 'bad',
      send: async () => undefined,
      sendRecords: async () => {
        if (failOnce) {
          failOnce = false;
          throw new Error('intake down');
        }
      },
    };
    const rec = (n: number): LogRecord => ({ event: 'e', time: n, severity: 'info', attributes: { n } });
    const a = new Scripted('a', async (call) => ({ values: [gauge('a', call)], records: [rec(call)] }));
    const { runtime } = twoLevels();
    const lco = new LevelCollector({
      monitorId: 'm1',
      status: status.monitor('m1'),
      events,
      db: new FakeDb(),
      sinks: [plain, withRecords, failing],
      help: () => undefined,
      makeCollector: (d) => (d === 'a' ? a : new Scripted(d)),
      lookupPlan: async () => runtime.active.plan,
      buildRuntime: () => runtime,
      clock,
    });
    lco.start();
    await lco.changePlan('active', 'p');
    await clock.advance(1000);
    await lco.stop();
    assert.deepEqual(
      got.map((r) => [r.interval, r.level, r.records['a']?.map((x) => x.attributes['n'])]),
      [
        [1, 'slow', [1]],
        [2, 'fast', [2]],
      ],
    );
    // The plain sink got its metrics and nothing else.
    assert.equal(summary(plain.got).length, 2);
    assert.ok(
      events.lines.some((l) => /sink-send-error: bad :intake down/.test(l)),
      events.lines.join('\n'),
    );
  });
});
