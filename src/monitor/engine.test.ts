import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Collector, CollectorHelp, CollectResult } from '../core/collector.js';
import { CollectError } from '../core/collector.js';
import { MetricType } from '../core/metrics.js';
import type { Plan } from '../core/plan.js';
import { StatusRegistry } from '../status/registry.js';
import type { ActivePlan } from './engine.js';
import { Engine } from './engine.js';

/** A scripted collector: sonde's own Collector interface, no database involved. */
class Scripted implements Collector {
  calls = 0;
  running = 0;
  maxRunning = 0;
  constructor(
    readonly domain: string,
    readonly script: (call: number, signal: AbortSignal) => Promise<CollectResult>,
  ) {}
  async prepare(): Promise<void> {}
  async collect(_level: string, signal: AbortSignal): Promise<CollectResult> {
    this.calls++;
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    try {
      return await this.script(this.calls, signal);
    } finally {
      this.running--;
    }
  }
}

const value = (name: string, v: number) => ({ name, value: v, type: MetricType.Gauge });
const waitAbort = (signal: AbortSignal): Promise<CollectResult> =>
  new Promise((_res, rej) =>
    signal.addEventListener('abort', () => rej(signal.reason as Error), { once: true }),
  );
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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

async function setup(p: Plan, collectors: Scripted[], limits?: [number, number]) {
  const status = new StatusRegistry();
  const events: string[] = [];
  const byDomain = new Map(collectors.map((c) => [c.domain, c]));
  const engine = await Engine.prepare(
    {
      monitorId: 'm1',
      status: status.monitor('m1'),
      events: {
        info: (e) => events.push(e),
        error: (e, _id, msg) => events.push(`${e}: ${msg}`),
        debug: () => undefined,
      },
      help: (d) => (d === 'repl' ? HELP : undefined),
    },
    limits ? active(p, ...limits) : active(p),
    (d) => {
      const c = byDomain.get(d);
      if (!c) throw new Error(`no collector ${d}`);
      return c;
    },
    new AbortController().signal,
  );
  const collect = (n: number) =>
    engine.collect(
      n,
      'l',
      Object.keys(p.levels.l?.collect ?? {}).map((domain) => ({ domain, level: 'l' })),
      new Date(),
      'active',
    );
  return { engine, status, events, collect };
}

describe('Engine', () => {
  it('keeps a failing domain from affecting the others and reports it', async () => {
    const ok = new Scripted('status.global', async () => ({ values: [value('queries', 5)] }));
    const bad = new Scripted('innodb', async () => {
      throw new Error('boom');
    });
    const { status, events, collect } = await setup(plan({ 'status.global': {}, innodb: {} }), [ok, bad]);
    const [m] = await collect(1);
    assert.deepEqual(m?.values, { 'status.global': [value('queries', 5)] });
    const st = status.monitorStatus('m1') ?? {};
    assert.match(st['error:innodb'] ?? '', /^at \S+: p\/l\/1\/innodb: boom$/);
    assert.equal(st['error:collect'], 'p/l/1: partial success: 1 metrics collected, 1 errors');
    assert.ok(events.includes('collector-error: p/l/1/innodb: boom'));
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

  it('cancels a domain at its deadline', async () => {
    const slow = new Scripted('innodb', (_c, signal) => waitAbort(signal));
    const { status, collect } = await setup(plan({ innodb: {} }), [slow], [300, 100]);
    const t0 = Date.now();
    await collect(1);
    assert.ok(Date.now() - t0 < 1000);
    assert.match(status.monitorStatus('m1')?.['error:innodb'] ?? '', /timeout after 100ms/);
  });

  it('runs at most two collectors at once', async () => {
    let now = 0;
    let max = 0;
    const mk = (d: string) =>
      new Scripted(d, async () => {
        now++;
        max = Math.max(max, now);
        await sleep(30);
        now--;
        return { values: [value(d, 1)] };
      });
    const cs = ['a', 'b', 'c', 'd'].map(mk);
    const { collect } = await setup(plan({ a: {}, b: {}, c: {}, d: {} }), cs);
    const [m] = await collect(1);
    assert.equal(max, 2);
    assert.equal(Object.keys(m?.values ?? {}).length, 4);
  });

  it('hands late values over with the next batch under their own interval', async () => {
    const late = new Scripted('size.table', async (call) => {
      if (call === 1) await sleep(150);
      return { values: [value('bytes', call)] };
    });
    const { collect } = await setup(plan({ 'size.table': {} }), [late], [50, 400]);
    const first = await collect(1);
    assert.equal(first.length, 1);
    assert.deepEqual(first[0]?.values, {});
    await sleep(200);
    const second = await collect(2);
    assert.deepEqual(
      second.map((m) => [m.interval, m.values['size.table']?.[0]?.value]),
      [
        [1, 1],
        [2, 2],
      ],
    );
  });

  it('never overlaps a domain with its previous run: the old run is cancelled and fenced', async () => {
    const c = new Scripted('innodb', async (call, signal) => {
      if (call === 1) return waitAbort(signal);
      return { values: [value('x', call)] };
    });
    const { events, collect } = await setup(plan({ innodb: {} }), [c], [20, 5000]);
    await collect(1); // engine stops waiting at EMR, the run goes on
    const [m] = (await collect(2)).slice(-1);
    assert.equal(c.maxRunning, 1);
    assert.deepEqual(m?.values.innodb, [value('x', 2)]);
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
      const [m] = await collect(1);
      assert.deepEqual(m?.values, {});
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
      const [m] = await collect(1);
      assert.deepEqual(m?.values.repl, [{ name: 'running', value: 0, type: MetricType.Gauge }]);
    });

    it('stop stops collecting the domain for this activation', async () => {
      const c = denied();
      const { collect } = await setup(plan({ repl: { 'access-denied': 'report,drop,stop' } }), [c]);
      await collect(1);
      await collect(2);
      assert.equal(c.calls, 1);
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
