import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Limiter, NestedLimiter } from '../engine/limiter.js';
import { EXPORTER_LOG_SLOW_FILTER, NO_QUERY_LIMIT_MS, exporterSettings } from './flags.js';

describe('exporterSettings', () => {
  it("mysqld_exporter's defaults: lock_wait_timeout 2, no slow-log filter, plan deadlines, 2 collectors, 0.25 s", () => {
    assert.deepEqual(exporterSettings({}), {
      session: { lock_wait_timeout: 2 },
      queryTimeoutMs: undefined,
      maxCollectors: 2,
      timeoutOffsetS: 0.25,
    });
  });
  it('maps each flag', () => {
    assert.deepEqual(
      exporterSettings({
        'exporter.lock_wait_timeout': '7',
        'exporter.log_slow_filter': 'TRUE',
        'exporter.query_timeout': '3',
        'exporter.max_open_connections': '1',
        'timeout-offset': '1.5',
      }),
      {
        session: { lock_wait_timeout: 7, log_slow_filter: EXPORTER_LOG_SLOW_FILTER },
        queryTimeoutMs: 3000,
        maxCollectors: 1,
        timeoutOffsetS: 1.5,
      },
    );
  });
  it('query_timeout=0 given: no limit of its own (the scrape deadline only); absent: the plan deadlines', () => {
    assert.equal(exporterSettings({ 'exporter.query_timeout': '0' }).queryTimeoutMs, NO_QUERY_LIMIT_MS);
    assert.equal(exporterSettings({ 'exporter.query_timeout': ' 0 ' }).queryTimeoutMs, NO_QUERY_LIMIT_MS);
    assert.equal(exporterSettings({}).queryTimeoutMs, undefined);
  });
  it('enable_lock_wait_timeout=false asks for the server global value; more than 2 collectors is 2', () => {
    const s = exporterSettings({
      'exporter.enable_lock_wait_timeout': 'false',
      'exporter.max_open_connections': '10',
    });
    assert.deepEqual(s.session, { lock_wait_timeout: null });
    assert.equal(s.maxCollectors, 2);
  });
});

describe('NestedLimiter', () => {
  it('needs a slot of its own cap and of the shared limiter', async () => {
    const shared = new Limiter(2);
    const nested = new NestedLimiter(1, shared);
    const a = await nested.acquire();
    assert.equal(nested.tryAcquire(), undefined, 'own cap of 1 is full');
    assert.equal(shared.used, 1);
    a();
    const others = [shared.tryAcquire(), shared.tryAcquire()];
    assert.equal(nested.tryAcquire(), undefined, 'the shared limiter is full now');
    assert.equal(nested.used, 0, 'a refused try gives its own slot back');
    for (const o of others) o?.();
    const b = nested.tryAcquire();
    assert.ok(b);
    assert.equal(shared.used, 1);
    b?.();
    assert.equal(shared.used, 0);
  });
  it('a wait given up on the shared limiter gives its own slot back', async () => {
    const shared = new Limiter(1);
    const hold = shared.tryAcquire();
    const nested = new NestedLimiter(1, shared);
    const ac = new AbortController();
    const waiting = nested.acquire(ac.signal);
    ac.abort(new Error('gave up'));
    await assert.rejects(waiting, /gave up/);
    assert.equal(nested.used, 0);
    hold?.();
  });
});
