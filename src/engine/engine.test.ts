import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CollectorHelp } from '../core/collector.js';
import { CollectError } from '../core/collector.js';
import { MetricType } from '../core/metrics.js';
import type { Plan } from '../core/plan.js';
import { StatusRegistry } from '../status/registry.js';
import { sleepOn } from '../util/clock.js';
import { FakeClock, settle } from '../util/fake-clock.fixture.js';
import type { ActivePlan, DomainOutcome, RunResult } from './engine.js';
import { Engine, timestampText } from './engine.js';
import { formatTimestamp } from '../util/time.js';
import { Limiter } from './limiter.js';
import { gauge as value, Scripted, untilAborted as waitAbort } from './scripted.fixture.js';

function plan(domains: Record<string, Record<string, string>>, metrics: string[] = []): Plan {
  const collect: Plan['levels'][string]['collect'] = {};
  for (const [d, errors] of Object.entries(domains)) collect[d] = { metrics, options: {}, errors };
  return { name: 'p', source: 'test', levels: { l: { name: 'l', freq: '1s', freqMs: 1000, collect } } };
}

function active(p: Plan, emrMs = 900, cmrMs = 800): ActivePlan {
  const domains = Object.keys(p.levels.l?.collect ?? {});
  return {
    plan: p,
    emrMs,
    cmrMs: new Map(domains.map((d) => [d, cmrMs])),
    domainFreqMs: new Map(domains.map((d) => [d, 1000])),
  };
}

const HELP: CollectorHelp = {
  domain: 'repl',
  description: '',
  sources: [],
  options: [],
  errors: [{ name: 'access-denied', description: '', errnos: [1227] }],
  groups: [],
  meta: [],
  metrics: [],
};

interface Setup {
  engine: Engine;
  status: StatusRegistry;
  events: string[];
  clock: FakeClock;
  late: DomainOutcome[];
  /** Start interval `n` now; the result promise settles as the clock moves. */
  start: (n: number) => Promise<RunResult>;
  /** Start interval `n` and move the clock until it returns (at most EMR). */
  collect: (n: number) => Promise<RunResult>;
}

async function setup(
  p: Plan,
  collectors: Scripted[],
  limits?: [number, number],
  limiter?: Limiter,
  staggerMs?: number,
): Promise<Setup> {
  const status = new StatusRegistry();
  const events: string[] = [];
  const clock = new FakeClock();
  const late: DomainOutcome[] = [];
  const byDomain = new Map(collectors.map((c) => [c.domain, c]));
  const act = limits ? active(p, ...limits) : active(p);
  const engine = await Engine.prepare(
    {
      monitorId: 'm1',
      active: act,
      status: status.monitor('m1'),
      events: {
        info: (e) => events.push(e),
        error: (e, _id, msg) => events.push(`${e}: ${msg}`),
        debug: () => undefined,
      },
      collectors: {
        help: (d) => (d === 'repl' ? HELP : undefined),
        make: (d) => {
          const c = byDomain.get(d);
          if (!c) throw new Error(`no collector ${d}`);
          return c;
        },
      },
      clock,
      ...(limiter === undefined ? {} : { limiter }),
      ...(staggerMs === undefined ? {} : { staggerMs }),
    },
    new AbortController().signal,
  );
  const work = Object.keys(p.levels.l?.collect ?? {}).map((domain) => ({ domain, level: 'l' }));
  const start = (n: number) =>
    engine.run({
      interval: n,
      level: 'l',
      work,
      start: clock.now(),
      waitMs: act.emrMs,
      onLate: (o) => late.push(o),
    });
  const collect = async (n: number) => {
    const run = start(n);
    await clock.advance(act.emrMs);
    return run;
  };
  return { engine, status, events, clock, late, start, collect };
}

const valuesOf = (r: RunResult) =>
  Object.fromEntries(r.outcomes.filter((o) => o.values.length > 0).map((o) => [o.domain, o.values]));

describe('Engine', () => {
  it('keeps a failing domain from affecting the others and reports it', async () => {
    const ok = new Scripted('status.global', async () => ({ values: [value('queries', 5)] }));
    const bad = new Scripted('innodb', async () => {
      throw new Error('boom');
    });
    const { status, events, collect } = await setup(plan({ 'status.global': {}, innodb: {} }), [ok, bad]);
    const r = await collect(1);
    assert.deepEqual(valuesOf(r), { 'status.global': [value('queries', 5)] });
    const st = status.monitorStatus('m1') ?? {};
    assert.match(st['error:innodb'] ?? '', /^at \S+: p\/l\/1\/innodb: boom$/);
    assert.equal(st['error:collect'], 'p/l/1: partial success: 1 metrics collected, 1 errors');
    assert.ok(events.includes('collector-error: p/l/1/innodb: boom'));
  });

  it("records each domain's last run as domain:<domain>", async () => {
    const ok = new Scripted('status.global', async () => ({
      values: [value('queries', 5), value('uptime', 9)],
    }));
    const bad = new Scripted('innodb', async () => ({ values: [], error: new CollectError('boom') }));
    const { engine, status, collect } = await setup(plan({ 'status.global': {}, innodb: {} }), [ok, bad]);
    await collect(1);
    const st = status.monitorStatus('m1') ?? {};
    assert.match(st['domain:status.global'] ?? '', /^ok at \S+ in \S+: 2 metrics$/);
    assert.match(st['domain:innodb'] ?? '', /^failed at \S+ in \S+: boom$/);
    assert.deepEqual([...engine.records()].map(([d, r]) => [d, r.ok, r.metrics, r.error]).sort(), [
      ['innodb', false, 0, 'boom'],
      ['status.global', true, 2, ''],
    ]);
  });

  it('clears error keys after an error-free collection', async () => {
    const flaky = new Scripted('innodb', async (call) => {
      if (call === 1) throw new Error('down');
      return { values: [value('x', 1)] };
    });
    const { status, collect } = await setup(plan({ innodb: {} }), [flaky]);
    await collect(1);
    assert.equal(
      status.monitorStatus('m1')?.['error:collect'],
      'p/l/1: failed: zero metrics collected, 1 errors',
    );
    await collect(2);
    const st = status.monitorStatus('m1') ?? {};
    assert.equal(st['error:innodb'], undefined);
    assert.equal(st['error:collect'], undefined);
    assert.match(
      st['engine-collect'] ?? '',
      /^p\/l\/2: done: 1 started, 1 domains 1 values collected, \S+ runtime, 0 error$/,
    );
  });

  it("cancels a domain at its deadline, on the engine's clock", async () => {
    const slow = new Scripted('innodb', (_c, signal) => waitAbort(signal));
    const { status, clock, start } = await setup(plan({ innodb: {} }), [slow], [300, 100]);
    const run = start(1);
    await clock.advance(99);
    assert.equal(slow.running, 1);
    await clock.advance(1);
    assert.equal(slow.running, 0);
    await clock.advance(200);
    await run;
    assert.match(status.monitorStatus('m1')?.['error:innodb'] ?? '', /timeout after 100ms/);
  });

  it('runs at most two collectors at once, and the cap is shared by the engines of a monitor', async () => {
    let now = 0;
    let max = 0;
    const gates: (() => void)[] = [];
    const mk = (d: string) =>
      new Scripted(d, async () => {
        now++;
        max = Math.max(max, now);
        await new Promise<void>((r) => gates.push(r));
        now--;
        return { values: [value(d, 1)] };
      });
    const limiter = new Limiter();
    const one = await setup(plan({ a: {}, b: {}, c: {} }), ['a', 'b', 'c'].map(mk), undefined, limiter);
    const two = await setup(plan({ d: {}, e: {} }), ['d', 'e'].map(mk), undefined, limiter);
    const runs = [one.start(1), two.start(1)];
    for (let i = 0; i < 5; i++) {
      await settle();
      assert.ok(now <= 2);
      gates.shift()?.();
    }
    const [r1, r2] = await Promise.all(runs);
    assert.equal(max, 2);
    assert.equal((r1?.outcomes.length ?? 0) + (r2?.outcomes.length ?? 0), 5);
  });

  it('staggered: quick domains run one after another, a slow one lets the next start beside it', async () => {
    /** Run a, b and c (a taking `aMs`) with a 100 ms stagger: start times after t0, most at once. */
    const run = async (aMs: number) => {
      const at: { clock?: FakeClock } = {};
      let running = 0;
      let most = 0;
      const started: Record<string, number> = {};
      const mk = (d: string, ms: number) =>
        new Scripted(d, async () => {
          started[d] = at.clock?.now() ?? -1;
          running++;
          most = Math.max(most, running);
          // A quick domain still yields (as a query would), so overlapping ones would show.
          if (ms > 0 && at.clock !== undefined) await sleepOn(at.clock, ms);
          else await new Promise((r) => setImmediate(r));
          running--;
          return { values: [value(d, 1)] };
        });
      const s = await setup(
        plan({ a: {}, b: {}, c: {} }),
        [mk('a', aMs), mk('b', 0), mk('c', 0)],
        undefined,
        undefined,
        100,
      );
      at.clock = s.clock;
      const t0 = s.clock.now();
      const r = await s.collect(1);
      assert.equal(r.outcomes.length, 3);
      const after = Object.fromEntries(Object.entries(started).map(([d, t]) => [d, t - t0]));
      return { most, after };
    };
    assert.deepEqual(
      await run(0),
      { most: 1, after: { a: 0, b: 0, c: 0 } },
      'quick: never overlap, none waited',
    );
    assert.deepEqual(
      await run(300),
      { most: 2, after: { a: 0, b: 100, c: 100 } },
      'a slow domain: the next start beside it after the stagger',
    );
  });

  it('skips the domains that could not start before the run stopped waiting', async () => {
    const mk = (d: string) => new Scripted(d, (_c, signal) => waitAbort(signal));
    const cs = ['a', 'b', 'c'].map(mk);
    const { clock, start } = await setup(plan({ a: {}, b: {}, c: {} }), cs, [50, 400]);
    const run = start(1);
    await clock.advance(50);
    const r = await run;
    assert.equal(r.started, 2);
    assert.deepEqual(
      cs.map((c) => c.calls),
      [1, 1, 0],
    );
    await clock.advance(400); // the two started ones reach their deadline
  });

  it('hands values that come after the run returned to onLate, within the deadline', async () => {
    let open: () => void = () => undefined;
    const gate = new Promise<void>((r) => (open = r));
    const c = new Scripted('size.table', async (call) => {
      if (call === 1) await gate;
      return { values: [value('bytes', call)] };
    });
    const { clock, late, start } = await setup(plan({ 'size.table': {} }), [c], [50, 400]);
    const run = start(1);
    await clock.advance(50);
    const r = await run;
    assert.deepEqual(r.outcomes, []);
    open();
    await clock.advance(100);
    assert.deepEqual(
      late.map((o) => [o.domain, o.values]),
      [['size.table', [value('bytes', 1)]]],
    );
  });

  it('never overlaps a domain with its previous run: the old run is cancelled and fenced', async () => {
    const c = new Scripted('innodb', async (call, signal) => {
      if (call === 1) return waitAbort(signal);
      return { values: [value('x', call)] };
    });
    const { events, collect } = await setup(plan({ innodb: {} }), [c], [20, 5000]);
    await collect(1); // the run stops waiting at EMR, the domain goes on
    const r = await collect(2);
    assert.equal(c.maxRunning, 1);
    assert.deepEqual(valuesOf(r).innodb, [value('x', 2)]);
    assert.ok(events.some((e) => e.startsWith('collector-fault: p/l/2/innodb')));
  });

  it('reports an unsupported domain once and stops collecting it, keeping its status', async () => {
    const c = new Scripted('query.response-time', async () => ({
      values: [],
      error: new CollectError('query.response-time: not supported on mariadb 10.11.9: no histogram table', {
        unsupported: true,
      }),
    }));
    const ok = new Scripted('status.global', async () => ({ values: [value('queries', 1)] }));
    const { status, events, collect } = await setup(
      plan({ 'query.response-time': {}, 'status.global': {} }),
      [c, ok],
    );
    await collect(1);
    await collect(2);
    assert.equal(c.calls, 1);
    assert.equal(ok.calls, 2);
    assert.equal(events.filter((e) => e.startsWith('collector-error')).length, 1);
    assert.match(status.monitorStatus('m1')?.['error:query.response-time'] ?? '', /not supported on mariadb/);
  });

  it('reports a partial error once and keeps it as the status line while it lasts, collecting the rest', async () => {
    let missing = true;
    const c = new Scripted('lock.wait', async () => ({
      values: [value('waits', 0)],
      ...(missing
        ? {
            error: new CollectError('metadata-lock waits not read: performance_schema is disabled', {
              policy: 'metadata-locks',
              partial: true,
            }),
          }
        : {}),
    }));
    const { engine, status, events, collect } = await setup(plan({ 'lock.wait': {} }), [c]);
    const lines: string[] = [];
    for (let n = 1; n <= 3; n++) {
      const r = await collect(n);
      assert.deepEqual(valuesOf(r)['lock.wait'], [value('waits', 0)], `run ${n}`);
      lines.push(status.monitorStatus('m1')?.['error:lock.wait'] ?? '');
    }
    assert.match(
      lines[0]!,
      /^at \S+: p\/l\/1\/lock\.wait: metadata-lock waits not read: performance_schema is disabled$/,
    );
    assert.deepEqual(lines, [lines[0], lines[0], lines[0]]);
    assert.equal(events.filter((e) => e.startsWith('collector-error')).length, 1);
    assert.equal(c.calls, 3);
    assert.equal(engine.records().get('lock.wait')?.ok, true);
    assert.equal(status.monitorStatus('m1')?.['error:collect'], undefined);
    // Once the collector no longer returns it (the server was fixed), the line goes.
    missing = false;
    await collect(4);
    assert.equal(status.monitorStatus('m1')?.['error:lock.wait'], undefined);
  });

  it('lets a policy the plan names govern a partial error', async () => {
    const c = new Scripted('lock.wait', async () => ({
      values: [value('waits', 0)],
      error: new CollectError('metadata-lock waits not read', { policy: 'metadata-locks', partial: true }),
    }));
    const { status, events, collect } = await setup(plan({ 'lock.wait': { 'metadata-locks': 'ignore' } }), [
      c,
    ]);
    await collect(1);
    await collect(2);
    assert.equal(status.monitorStatus('m1')?.['error:lock.wait'], undefined);
    assert.equal(events.filter((e) => e.startsWith('collector-error')).length, 0);
  });

  describe('error policies', () => {
    const denied = () =>
      new Scripted('repl', async () => {
        throw Object.assign(new Error('Access denied; you need the REPLICATION CLIENT privilege'), {
          errno: 1227,
        });
      });

    it('ignore,drop leaves no trace', async () => {
      const { status, collect } = await setup(plan({ repl: { 'access-denied': 'ignore,drop,retry' } }), [
        denied(),
      ]);
      const r = await collect(1);
      assert.deepEqual(valuesOf(r), {});
      assert.equal(status.monitorStatus('m1')?.['error:repl'], undefined);
      assert.equal(status.monitorStatus('m1')?.['error:collect'], undefined);
    });

    it('report-once reports only the first time', async () => {
      const { events, collect } = await setup(plan({ repl: { 'access-denied': 'report-once' } }), [denied()]);
      await collect(1);
      await collect(2);
      assert.equal(events.filter((e) => e.startsWith('collector-error')).length, 1);
    });

    it('zero emits the plan metrics with value 0', async () => {
      const { collect } = await setup(plan({ repl: { 'access-denied': 'ignore,zero' } }, ['running']), [
        denied(),
      ]);
      const r = await collect(1);
      assert.deepEqual(valuesOf(r).repl, [{ name: 'running', value: 0, type: MetricType.Gauge }]);
    });

    it('zero emits the values the error carries when it names its policy', async () => {
      const c = new Scripted('repl', async () => ({
        values: [],
        error: new CollectError('no table', { policy: 'access-denied', zero: [value('lag', 0)] }),
      }));
      const { collect } = await setup(plan({ repl: { 'access-denied': 'ignore,zero' } }, ['running']), [c]);
      const r = await collect(1);
      assert.deepEqual(valuesOf(r).repl, [value('lag', 0)]);
    });

    it('stop stops collecting the domain for this activation', async () => {
      const c = denied();
      const { collect } = await setup(plan({ repl: { 'access-denied': 'report,drop,stop' } }), [c]);
      await collect(1);
      await collect(2);
      assert.equal(c.calls, 1);
    });

    it('lets a policy the plan names govern an unsupported error instead of stopping the domain', async () => {
      const c = new Scripted('repl', async () => ({
        values: [],
        error: new CollectError('repl: not supported here', {
          unsupported: true,
          policy: 'access-denied',
          zero: [value('lag', 0)],
        }),
      }));
      const { events, collect } = await setup(plan({ repl: { 'access-denied': 'ignore,zero,retry' } }), [c]);
      const r1 = await collect(1);
      const r2 = await collect(2);
      assert.equal(c.calls, 2);
      assert.deepEqual([valuesOf(r1).repl, valuesOf(r2).repl], [[value('lag', 0)], [value('lag', 0)]]);
      assert.equal(events.filter((e) => e.startsWith('collector-error')).length, 0);
    });

    it('applies only drop or zero to a quiet error: never reported, never stops, not a failure', async () => {
      const c = new Scripted('wait.io.table', async () => ({
        values: [],
        error: new CollectError('truncate worked again', {
          policy: 'truncate-timeout',
          zero: [value('count_insert', 0)],
          quiet: true,
        }),
      }));
      const { engine, events, collect } = await setup(
        plan({ 'wait.io.table': { 'truncate-timeout': 'report,zero,stop' } }),
        [c],
      );
      const r = await collect(1);
      await collect(2);
      assert.deepEqual(valuesOf(r)['wait.io.table'], [value('count_insert', 0)]);
      assert.equal(c.calls, 2);
      assert.equal(events.filter((e) => e.startsWith('collector-error')).length, 0);
      assert.equal(engine.records().get('wait.io.table')?.ok, true);
    });

    it('maps a MySQL errno to the policy the collector declares, with the zero values the error carries', async () => {
      const c = new Scripted('repl', async () => ({
        values: [],
        error: new CollectError('Access denied', { errno: 1227, zero: [value('running', 0)] }),
      }));
      const { status, collect } = await setup(plan({ repl: { 'access-denied': 'ignore,zero' } }), [c]);
      const r = await collect(1);
      assert.deepEqual(valuesOf(r).repl, [value('running', 0)]);
      assert.equal(status.monitorStatus('m1')?.['error:repl'], undefined);
    });

    it('an error without a policy is reported every time', async () => {
      const c = new Scripted('repl', async () => ({ values: [], error: new CollectError('odd') }));
      const { events, collect } = await setup(plan({ repl: {} }), [c]);
      await collect(1);
      await collect(2);
      assert.equal(events.filter((e) => e.startsWith('collector-error')).length, 2);
    });
  });
});

describe('Engine: panics and late values', () => {
  it('a collector that throws a TypeError gives collector-panic; the other domains and later runs go on', async () => {
    const ok = new Scripted('status.global', async (call) => ({ values: [value('queries', call)] }));
    const buggy = new Scripted('innodb', async (call) => {
      if (call === 1) {
        const rows: { v?: { n: number } }[] = [{}];
        return { values: [value('n', (rows[0]?.v as { n: number }).n)] }; // reads n of undefined
      }
      return { values: [value('n', call)] };
    });
    const { engine, status, events, collect } = await setup(plan({ 'status.global': {}, innodb: {} }), [
      ok,
      buggy,
    ]);
    const r1 = await collect(1);
    assert.deepEqual(valuesOf(r1), { 'status.global': [value('queries', 1)] });
    const panics = events.filter((e) => e.startsWith('collector-panic: '));
    assert.equal(panics.length, 1);
    assert.match(
      panics[0] ?? '',
      /^collector-panic: p\/l\/1\/innodb: TypeError: Cannot read properties of undefined \(reading 'n'\)$/,
    );
    assert.ok(!events.some((e) => e.startsWith('collector-error')), 'a panic is not also a collector-error');
    assert.ok(events.includes('engine-collect-error: p/l/1: partial success: 1 metrics collected, 1 errors'));
    const st = status.monitorStatus('m1') ?? {};
    assert.match(st['error:innodb'] ?? '', /^at \S+: p\/l\/1\/innodb: TypeError: Cannot read properties/);
    assert.equal(engine.records().get('innodb')?.ok, false);
    const r2 = await collect(2);
    assert.deepEqual(valuesOf(r2), { 'status.global': [value('queries', 2)], innodb: [value('n', 2)] });
    assert.equal(status.monitorStatus('m1')?.['error:innodb'], undefined);
  });

  it('a thrown non-Error value and a result without values are panics too; a plain Error is not', async () => {
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the non-Error is the point
    const str = new Scripted('a', () => Promise.reject('just a string'));
    const none = new Scripted('b', async () => undefined as unknown as { values: [] });
    const plain = new Scripted('c', async () => {
      throw new Error('Lost connection to server during query');
    });
    const { events, collect } = await setup(plan({ a: {}, b: {}, c: {} }), [str, none, plain]);
    await collect(1);
    assert.deepEqual(events.filter((e) => /^collector-(panic|error)/.test(e)).sort(), [
      'collector-error: p/l/1/c: Lost connection to server during query',
      'collector-panic: p/l/1/a: non-error value thrown: "just a string"',
      'collector-panic: p/l/1/b: TypeError: b: collect() returned no { values } result',
    ]);
  });

  it('drops late values with drop-metrics-flush, naming the domain, when the run takes no late values', async () => {
    let open: () => void = () => undefined;
    const gate = new Promise<void>((r) => (open = r));
    const slow = new Scripted('size.table', async () => {
      await gate;
      return { values: [value('bytes', 1)] };
    });
    const { engine, clock, events } = await setup(plan({ 'size.table': {} }), [slow], [50, 400]);
    const run = engine.run({
      interval: 1,
      level: 'l',
      work: [{ domain: 'size.table', level: 'l' }],
      start: clock.now(),
      waitMs: 50,
    });
    await clock.advance(50);
    assert.deepEqual((await run).outcomes, []);
    open();
    await clock.advance(10);
    assert.deepEqual(
      events.filter((e) => e.startsWith('drop-metrics')),
      ['drop-metrics-flush: p/l/1/size.table: dropping 1 late values: the run takes no late values'],
    );
  });
});

describe('timestampText', () => {
  it('gives formatTimestamp() of the instant, within a second and across seconds', () => {
    const base = Date.UTC(2026, 2, 29, 0, 59, 58, 0);
    const instants = [0, 1, 999, 1000, 1001, 1999, 2000, 500, 3_600_000, 3_600_999, -1, 86_400_000 * 200];
    for (const d of [...instants, ...instants.reverse()])
      assert.equal(timestampText(base + d), formatTimestamp(new Date(base + d)), String(d));
  });
});
