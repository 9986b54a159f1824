import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Events } from '../core/events.js';
import { NO_EVENTS } from '../core/events.js';
import { MetricType } from '../core/metrics.js';
import type { Metrics } from '../core/metrics.js';
import type { Sink, SinkContext } from '../core/sink.js';
import { RETRY_DEFAULTS, createRetried, parseRetryOptions, retryErrorKey, withRetry } from './retry.js';
import type { RetryClock } from './retry.js';

/** A Metrics whose plan field names it, for readable traces. */
function mk(id: string): Metrics {
  return {
    begin: new Date(0),
    end: new Date(0),
    monitorId: 'db1',
    plan: id,
    level: 'l',
    interval: 1,
    state: 'active',
    values: { 'status.global': [{ name: 'queries', value: 1, type: MetricType.Gauge }] },
  };
}

interface Call {
  id: string;
  signal: AbortSignal | undefined;
  ok(): void;
  fail(msg: string): void;
}

/** An inner sink whose every send stays pending until the test settles it. */
class Scripted implements Sink {
  readonly name = 'fake';
  readonly calls: Call[] = [];
  #wake: (() => void) | undefined;

  send(metrics: Metrics, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.calls.push({ id: metrics.plan, signal, ok: resolve, fail: (msg) => reject(new Error(msg)) });
      this.#wake?.();
    });
  }

  /** The n-th call (0-based), waiting for it to happen. */
  async call(n: number): Promise<Call> {
    for (;;) {
      const c = this.calls[n];
      if (c) return c;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }
}

/**
 * Fake time: a sleep moves the clock and returns at once, or, while `hold` is set, waits for
 * `release()` (or the sink's close). `onSleep` sees every sleep as it starts.
 */
function fakeClock(): RetryClock & {
  t: number;
  sleeps: number[];
  hold: boolean;
  onSleep: (ms: number) => void;
  release(): void;
} {
  let pending: Array<() => void> = [];
  const c = {
    t: 0,
    sleeps: [] as number[],
    hold: false,
    onSleep: (_ms: number): void => undefined,
    now: () => c.t,
    sleep: (ms: number, signal: AbortSignal): Promise<void> => {
      c.sleeps.push(ms);
      c.onSleep(ms);
      return new Promise<void>((resolve) => {
        const done = (): void => {
          c.t += ms;
          resolve();
        };
        if (!c.hold || signal.aborted) return done();
        pending.push(done);
        signal.addEventListener('abort', done, { once: true });
      });
    },
    release: (): void => {
      const p = pending;
      pending = [];
      for (const f of p) f();
    },
  };
  return c;
}

/** Resolve once `cond` holds, checking after each turn of the event loop (at most 5 s). */
async function until(cond: () => boolean): Promise<void> {
  const end = Date.now() + 5000;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Backoff jitter source that always lands on the middle: every wait is exactly its base. */
const MIDDLE = (): number => 0.5;

class RecordEvents implements Events {
  readonly errors: string[] = [];
  info(): void {}
  error(event: string, monitorId: string, message: string): void {
    this.errors.push(`${event} [${monitorId}] ${message}`);
  }
  debug(): void {}
}

class RecordStatus {
  readonly map = new Map<string, string>();
  set(k: string, v: string): void {
    this.map.set(k, v);
  }
  delete(k: string): void {
    this.map.delete(k);
  }
}

describe('parseRetryOptions', () => {
  it('takes the defaults and passes every other key on', () => {
    const { config, rest } = parseRetryOptions({ 'api-key-auth': 'k', 'metric-prefix': 'p.' });
    assert.deepEqual(config, {
      bufferSize: 60,
      sendTimeoutMs: 5000,
      sendRetryWaitMs: 200,
      backoffCapMs: 30000,
    });
    assert.deepEqual(rest, { 'api-key-auth': 'k', 'metric-prefix': 'p.' });
  });

  it('reads and strips the three retry keys, and a send-retry-wait caps the backoff', () => {
    const { config, rest } = parseRetryOptions({
      'buffer-size': '7',
      'send-timeout': '1m30s',
      'send-retry-wait': '1.5s',
      url: 'x',
    });
    assert.deepEqual(config, {
      bufferSize: 7,
      sendTimeoutMs: 90000,
      sendRetryWaitMs: 1500,
      backoffCapMs: 1500,
    });
    assert.deepEqual(rest, { url: 'x' });
  });

  it('treats buffer-size 0 as the default 60', () => {
    assert.equal(parseRetryOptions({ 'buffer-size': '0' }).config.bufferSize, 60);
  });

  it('rejects a negative or non-integer buffer-size and a bad duration', () => {
    assert.throws(() => parseRetryOptions({ 'buffer-size': '-2' }), {
      message: 'invalid retry buffer-size: -2: must be greater than zero',
    });
    assert.throws(() => parseRetryOptions({ 'buffer-size': '1.5' }), {
      message: 'invalid retry buffer-size: 1.5: not an integer',
    });
    assert.throws(() => parseRetryOptions({ 'send-timeout': '5' }), {
      message: 'invalid retry send-timeout: time: missing unit in duration "5"',
    });
    assert.throws(() => parseRetryOptions({ 'send-retry-wait': 'soon' }), {
      message: 'invalid retry send-retry-wait: time: invalid duration "soon"',
    });
  });
});

describe('retry decorator', () => {
  it('keeps the inner name and the defaults', () => {
    const r = withRetry(new Scripted(), { monitorId: 'db1', events: NO_EVENTS });
    assert.equal(r.name, 'fake');
    assert.deepEqual(r.config, RETRY_DEFAULTS);
  });

  it('follows the reference trace with buffer-size 3: m1 pushed off, then m4, m3, m2', async () => {
    const inner = new Scripted();
    const events = new RecordEvents();
    const clock = fakeClock();
    const r = withRetry(inner, { monitorId: 'db1', events, clock, bufferSize: 3, random: MIDDLE });

    await r.send(mk('m1'));
    const c0 = await inner.call(0);
    assert.equal(c0.id, 'm1');
    // m1 is in flight: the next sends only push and return at once.
    await r.send(mk('m2'));
    await r.send(mk('m3'));
    await r.send(mk('m4'));
    assert.equal(r.buffered, 3); // [m2, m3, m4]: m1 fell off the bottom
    assert.equal(inner.calls.length, 1);

    c0.fail('boom');
    (await inner.call(1)).ok();
    (await inner.call(2)).ok();
    (await inner.call(3)).ok();
    await r.idle();

    assert.deepEqual(
      inner.calls.map((c) => c.id),
      ['m1', 'm4', 'm3', 'm2'],
    );
    assert.equal(r.buffered, 0);
    assert.deepEqual(events.errors, ['sink-send-error [db1] fake :boom']);
    // the first backoff step after the failure, then send-retry-wait between good sends
    assert.deepEqual(clock.sleeps, [500, 200, 200]);
  });

  it('follows the reference trace with buffer-size 4: m1 succeeds, removed from the bottom, then m3', async () => {
    const inner = new Scripted();
    const r = withRetry(inner, { monitorId: 'db1', events: NO_EVENTS, clock: fakeClock(), bufferSize: 4 });
    await r.send(mk('m1'));
    const c0 = await inner.call(0);
    await r.send(mk('m2'));
    await r.send(mk('m3'));
    assert.equal(r.buffered, 3); // [m1, m2, m3]
    c0.ok();
    const c1 = await inner.call(1);
    assert.equal(c1.id, 'm3');
    assert.equal(r.buffered, 2); // m1 removed from the bottom
    c1.ok();
    (await inner.call(2)).ok();
    await r.idle();
    assert.deepEqual(
      inner.calls.map((c) => c.id),
      ['m1', 'm3', 'm2'],
    );
    assert.equal(r.buffered, 0);
  });

  it('backs off 500 ms ×1.5 per failure up to the cap and logs one line per attempt, not per queued collection', async () => {
    const clock = fakeClock();
    const events = new RecordEvents();
    let attempts = 0;
    const failer: Sink = {
      name: 'fake',
      send: async () => {
        attempts++;
        throw new Error('down');
      },
    };
    const r = withRetry(failer, { monitorId: 'db1', events, clock, random: MIDDLE });
    // Collections keep arriving while the sink fails: one between every two attempts.
    let n = 0;
    const closed = new Promise<void>((resolve) => {
      clock.onSleep = () => {
        n++;
        if (n >= 14) void r.close().then(resolve);
        else void r.send(mk(`m${n + 1}`));
      };
    });
    await r.send(mk('m1'));
    await closed;
    assert.deepEqual(
      clock.sleeps,
      [500, 750, 1125, 1688, 2531, 3797, 5695, 8543, 12814, 19222, 28833, 30000, 30000, 30000],
    );
    assert.equal(attempts, 14);
    assert.equal(events.errors.length, attempts, 'one line per attempt');
    assert.ok(events.errors.every((e) => e === 'sink-send-error [db1] fake :down'));
  });

  it('starts the backoff over after a good send', async () => {
    const clock = fakeClock();
    const results = [false, false, true, false];
    const inner: Sink = {
      name: 'fake',
      send: async () => {
        if (results.shift() === false) throw new Error('down');
      },
    };
    const r = withRetry(inner, { monitorId: 'db1', events: NO_EVENTS, clock, random: MIDDLE, bufferSize: 5 });
    clock.onSleep = () => {
      if (clock.sleeps.length >= 4) clock.hold = true;
    };
    await r.send(mk('m1'));
    await r.send(mk('m2'));
    // m1 fails, waits 500; m2 fails, waits 750; succeeds, 200; m1 fails, waits 500 (held)
    await until(() => clock.sleeps.length === 4);
    assert.deepEqual(clock.sleeps.slice(0, 4), [500, 750, 200, 500]);
    await r.close();
  });

  it('gives the inner send the deadline and abandons it at send-timeout', async () => {
    const events = new RecordEvents();
    const seen: AbortSignal[] = [];
    // One honours the signal, one ignores it: neither may hold the loop past the deadline.
    const honours: Sink = {
      name: 'a',
      send: (_m, signal) =>
        new Promise((_resolve, reject) => {
          if (signal) seen.push(signal);
          signal?.addEventListener('abort', () => reject(signal.reason as Error));
        }),
    };
    const ignores: Sink = { name: 'b', send: () => new Promise(() => undefined) };
    for (const inner of [honours, ignores]) {
      const r = withRetry(inner, { monitorId: 'db1', events, sendTimeoutMs: 100, sendRetryWaitMs: 10 });
      const t0 = Date.now();
      await r.send(mk('m1'));
      await r.idle();
      const took = Date.now() - t0;
      assert.ok(took >= 90, `attempt ended after ${took} ms, before the deadline`);
      assert.ok(took < 5000, `attempt took ${took} ms`);
      assert.equal(r.buffered, 1, 'the entry stays for the next attempt');
      await r.close();
    }
    assert.equal(seen.length, 1);
    assert.equal(seen[0]?.aborted, true);
    assert.deepEqual(events.errors, [
      'sink-send-error [db1] a :send-timeout 100ms exceeded',
      'sink-send-error [db1] b :send-timeout 100ms exceeded',
    ]);
  });

  it('waits the backoff step of real time after a failure', async () => {
    const times: number[] = [];
    const inner: Sink = {
      name: 'x',
      send: async () => {
        times.push(Date.now());
        if (times.length === 1) throw new Error('once');
      },
    };
    const r = withRetry(inner, {
      monitorId: 'db1',
      events: NO_EVENTS,
      sendTimeoutMs: 10000,
      backoffCapMs: 60,
      random: MIDDLE,
    });
    await r.send(mk('m1'));
    await r.idle();
    await until(() => r.buffered === 0);
    await r.idle();
    assert.equal(times.length, 2);
    const gap = (times[1] ?? 0) - (times[0] ?? 0);
    assert.ok(gap >= 55, `gap ${gap} ms`);
  });

  it('counts what falls off a full buffer, shows it in status, and delivers the rest newest first on recovery', async () => {
    const clock = fakeClock();
    clock.hold = true;
    let up = false;
    const delivered: string[] = [];
    const inner: Sink = {
      name: 'x',
      send: async (m) => {
        if (!up) throw new Error('connection refused');
        delivered.push(m.plan);
      },
    };
    const events = new RecordEvents();
    const status = new RecordStatus();
    const r = withRetry(inner, { monitorId: 'db1', events, status, clock, bufferSize: 3, random: MIDDLE });
    await r.send(mk('m1'));
    await r.idle(); // m1 failed; the loop waits out its first backoff step
    for (const id of ['m2', 'm3', 'm4', 'm5']) await assert.doesNotReject(r.send(mk(id)));
    assert.equal(r.buffered, 3);
    assert.equal(r.dropped, 2, 'm1 and m2 fell off');
    assert.equal(events.errors.length, 1, 'queued collections log nothing while the loop backs off');
    clock.release();
    await until(() => events.errors.length === 2); // m5 failed
    await r.idle();
    assert.match(
      status.map.get(retryErrorKey('x')) ?? '',
      /^at \S+: x :connection refused \(3 buffered; 2 collections dropped since \S+\)$/,
    );
    assert.ok(events.errors.every((e) => e === 'sink-send-error [db1] x :connection refused'));

    up = true;
    await r.send(mk('m6')); // m3 falls off
    clock.hold = false;
    clock.release();
    await until(() => r.buffered === 0);
    assert.deepEqual(delivered, ['m6', 'm5', 'm4']);
    assert.equal(r.buffered, 0);
    assert.equal(r.dropped, 3);
    assert.equal(status.map.has(retryErrorKey('x')), false, 'error key removed after a success');
  });

  it('shows the drop count in the sink key after the inner text and keeps it after recovery', async () => {
    const status = new RecordStatus();
    let up = false;
    const ctx: SinkContext = {
      sinkName: 'x',
      monitorId: 'db1',
      options: { 'buffer-size': '1', 'send-retry-wait': '1ms' },
      tags: {},
      status,
      events: NO_EVENTS,
    };
    const r = createRetried(ctx, (c) => ({
      name: 'x',
      send: async () => {
        c.status.set('x', 'sending metrics');
        if (!up) throw new Error('down');
        c.status.set('x', 'last sent 1 metrics at T');
      },
    }));
    await r.send(mk('m1'));
    await r.idle();
    await r.send(mk('m2'));
    assert.match(status.map.get('x') ?? '', /^sending metrics; 1 collections dropped since \S+$/);
    up = true;
    await until(() => r.buffered === 0);
    assert.match(status.map.get('x') ?? '', /^last sent 1 metrics at T; 1 collections dropped since \S+$/);
    await r.close();
  });

  it('stops at close: the running send is aborted and later sends are dropped', async () => {
    const inner = new Scripted();
    let closed = false;
    const wrapped: Sink = {
      name: 'x',
      send: (m, s) => inner.send(m, s),
      close: async () => void (closed = true),
    };
    const r = withRetry(wrapped, { monitorId: 'db1', events: NO_EVENTS });
    await r.send(mk('m1'));
    const c0 = await inner.call(0);
    await r.close();
    assert.equal(c0.signal?.aborted, true);
    assert.equal(closed, true);
    await r.send(mk('m2'));
    assert.equal(inner.calls.length, 1);
    assert.equal(r.buffered, 0);
  });

  it('createRetried strips the retry keys before the inner sink sees them', () => {
    let seen: Record<string, string> = {};
    const ctx: SinkContext = {
      sinkName: 'x',
      monitorId: 'db1',
      options: { 'buffer-size': '2', 'send-timeout': '1s', 'send-retry-wait': '10ms', addr: 'a' },
      tags: {},
      status: new RecordStatus(),
      events: NO_EVENTS,
    };
    const r = createRetried(ctx, (c) => {
      seen = c.options;
      return new Scripted();
    });
    assert.deepEqual(seen, { addr: 'a' });
    assert.deepEqual(r.config, { bufferSize: 2, sendTimeoutMs: 1000, sendRetryWaitMs: 10, backoffCapMs: 10 });
  });
});
