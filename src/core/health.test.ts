import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { healthSummary, healthText, monitorHealth } from './health.js';

const running = { monitor: 'running since 2026-11-22T10:00:00+00:00' };

describe('monitor health', () => {
  it('is ok while the loop runs and nothing fails', () => {
    assert.deepEqual(monitorHealth(running), { state: 'running', why: '' });
    assert.equal(healthText(running), 'ok');
    assert.equal(healthText({ monitor: 'loading plans' }), 'starting');
    assert.equal(healthText({ monitor: 'stopped at 2026-11-22T10:00:00+00:00' }), 'stopped');
    assert.equal(monitorHealth(running, false).state, 'stopped');
  });

  it('is failing when the monitor cannot connect, though its loop says running', () => {
    const s = {
      ...running,
      'error:engine-prepare': "while connecting to MySQL: Access denied for user 'sonde'",
      'level-change-plan':
        "state:none plan:none -> state:active plan:default-mysql: error preparing new plan default-mysql: while connecting to MySQL: Access denied for user 'sonde' (retrying)",
    };
    assert.equal(
      healthText(s),
      "failing: cannot prepare its plan: while connecting to MySQL: Access denied for user 'sonde'",
    );
  });

  it('is failing while its start is retried, or when its last collection failed entirely', () => {
    assert.equal(
      healthText({ monitor: 'error loading plans, sleep and retry: x', 'error:monitor': 'error: x' }),
      'failing: x',
    );
    assert.equal(
      healthText({ ...running, 'error:collect': 'p/l/3: failed: zero metrics collected, 2 errors' }),
      'failing: last collection failed: p/l/3: failed: zero metrics collected, 2 errors',
    );
    assert.equal(
      healthText({ ...running, 'error:collect': 'p/l/3: partial success: 5 metrics collected, 1 errors' }),
      'ok',
      'a partial success is not a failing monitor (its error keys say what failed)',
    );
  });

  it('sums the monitors up for GET /status', () => {
    assert.equal(
      healthSummary({
        a: running,
        b: { ...running, 'error:engine-prepare': 'down' },
        c: { monitor: 'stopped at x' },
      }),
      '1 ok, 1 failing (b), 0 starting, 1 stopped',
    );
  });
});
