import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LevelState } from '../core/plan.js';
import { StatusRegistry } from '../status/registry.js';
import { PlanChanger, planChangingEnabled } from './plan-changer.js';

/** Drive the plan changer with a scripted sequence of observed states. */
async function drive(
  script: (LevelState | Error)[],
  change: ConstructorParameters<typeof PlanChanger>[0]['change'],
  monitorPlan = '',
) {
  const calls: string[] = [];
  const events: string[] = [];
  const status = new StatusRegistry();
  const ac = new AbortController();
  let i = 0;
  const pch = new PlanChanger({
    monitorId: 'm',
    status: status.monitor('m'),
    events: {
      info: (e, _m, msg) => events.push(`${e} ${msg ?? ''}`),
      error: () => undefined,
      debug: () => undefined,
    },
    target: {
      changePlan: async (state, plan) => void calls.push(`plan ${state} ${plan}`),
      pause: () => void calls.push('pause'),
    },
    change,
    monitorPlan,
    checkMs: 5,
    offlineCapMs: 5,
    observe: async () => {
      const next = script[Math.min(i, script.length - 1)];
      i++;
      if (i >= script.length) ac.abort();
      if (next instanceof Error) throw next;
      return next ?? 'active';
    },
  });
  await pch.run(ac.signal);
  return { calls, events, status: status.monitorStatus('m') ?? {} };
}

describe('PlanChanger', () => {
  it('is enabled only when a state has a plan', () => {
    assert.equal(planChangingEnabled(undefined), false);
    assert.equal(planChangingEnabled({ active: { after: '1s' } }), false);
    assert.equal(planChangingEnabled({ 'read-only': { plan: 'ro.yaml' } }), true);
  });

  it('applies the first reachable state at once, then later states after their pending check', async () => {
    const r = await drive(['active', 'active', 'read-only', 'read-only', 'read-only'], {
      active: { plan: 'rw.yaml' },
      'read-only': { plan: 'ro.yaml' },
    });
    assert.deepEqual(r.calls, ['plan active rw.yaml', 'plan read-only ro.yaml']);
    assert.ok(r.events.includes('state-change-begin read-only'));
    assert.equal(r.events.filter((e) => e.startsWith('state-change-end')).length, 2);
    assert.match(r.status.state ?? '', /^read-only ro\.yaml \d{4}-/);
    assert.equal(r.status['state-pending'], undefined);
    assert.equal(r.status['plan-changer'], 'not running');
  });

  it('aborts a pending change when the old state comes back', async () => {
    const r = await drive(['active', 'read-only', 'active', 'active'], {
      active: { plan: 'rw.yaml' },
      'read-only': { plan: 'ro.yaml', after: '1h' },
    });
    assert.deepEqual(r.calls, ['plan active rw.yaml']);
    assert.ok(r.events.includes('state-change-abort active'));
  });

  it('waits for `after` before applying a new state', async () => {
    const r = await drive(['active', ...Array<LevelState>(8).fill('read-only')], {
      active: { plan: 'rw.yaml' },
      'read-only': { plan: 'ro.yaml', after: '1h' },
    });
    assert.deepEqual(r.calls, ['plan active rw.yaml']);
    assert.match(r.status['state-pending'] ?? '', /^read-only ro\.yaml /);
  });

  it('goes offline when the state query fails: pauses without an offline plan, and reports the error', async () => {
    const down = new Error('connect ECONNREFUSED');
    const r = await drive(['active', down, down, down], { active: { plan: 'rw.yaml' } });
    assert.deepEqual(r.calls, ['plan active rw.yaml', 'pause']);
    assert.equal(r.status['error:plan-changer'], 'connect ECONNREFUSED');
    assert.match(r.status.state ?? '', /^offline {2}\d{4}-/);
  });

  it('uses an offline plan when one is set, and the monitor plan for states without one', async () => {
    const down = new Error('gone');
    const r = await drive(
      ['read-only', down, down, 'read-only', 'read-only'],
      { offline: { plan: 'default-none' } },
      'main.yaml',
    );
    assert.deepEqual(r.calls, [
      'plan read-only main.yaml',
      'plan offline default-none',
      'plan read-only main.yaml',
    ]);
  });

  it('does nothing while the server has never been reachable', async () => {
    const down = new Error('never up');
    const r = await drive([down, down, down], { active: { plan: 'rw.yaml' } });
    assert.deepEqual(r.calls, []);
    assert.equal(r.status.state, 'offline  0001-01-01T00:00:00+00:00');
  });
});
