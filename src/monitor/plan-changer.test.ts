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
  /** The `plan-changer` text at each call on the target. */
  const texts: string[] = [];
  const text = (): number => texts.push(status.monitorStatus('m')?.['plan-changer'] ?? '');
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
      changePlan: async (state, plan) => void (calls.push(`plan ${state} ${plan}`), text()),
      pause: () => void (calls.push('pause'), text()),
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
  return { calls, events, texts, status: status.monitorStatus('m') ?? {} };
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
    // Blip's texts: a pause is announced as a change to the empty plan.
    assert.deepEqual(r.texts, [
      'calling LevelCollector.ChangePlan: active rw.yaml',
      'calling LevelCollector.ChangePlan: offline ',
    ]);
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
    assert.equal(r.status.state, 'offline  0001-01-01T00:00:00Z');
  });
});

/** One check of driveHa: the HA hook's answer, and the server's state when it is asked. */
interface HaStep {
  /** A function: its promise is the answer (made when asked). */
  ha: boolean | Error | (() => Promise<boolean>);
  db?: LevelState | Error;
}

/**
 * Drive the plan changer with a scripted HA hook: step i answers the i-th check. Records the
 * target's calls, the events, the `plan-changer` text seen while the hook is asked, and how
 * many times the server was queried.
 */
async function driveHa(steps: HaStep[], change: ConstructorParameters<typeof PlanChanger>[0]['change']) {
  const calls: string[] = [];
  const events: string[] = [];
  const seenWhileAsking: string[] = [];
  const registry = new StatusRegistry();
  const status = registry.monitor('m');
  const ac = new AbortController();
  let i = 0;
  let queries = 0;
  const pch = new PlanChanger({
    monitorId: 'm',
    status,
    events: {
      info: (e, _m, msg) => events.push(`${e} ${msg ?? ''}`),
      error: () => undefined,
      debug: () => undefined,
    },
    target: {
      changePlan: async (state, plan) => void calls.push(`plan ${state} ${plan}`),
      pause: (state) => void calls.push(`pause ${state ?? ''}`.trim()),
    },
    change,
    monitorPlan: 'main.yaml',
    checkMs: 5,
    offlineCapMs: 5,
    isActive: () => {
      seenWhileAsking.push(registry.monitorStatus('m')?.['plan-changer'] ?? '');
      const step = steps[i];
      if (step === undefined) {
        ac.abort(); // every step was checked
        return true;
      }
      if (step.ha instanceof Error) throw step.ha;
      return typeof step.ha === 'function' ? step.ha() : step.ha;
    },
    observe: async () => {
      queries++;
      const next = steps[i]?.db ?? 'active';
      if (next instanceof Error) throw next;
      return next;
    },
  });
  const run = pch.run(ac.signal);
  // Move to the next step after each check: the step index advances once the state applied.
  const origSet = status.set.bind(status);
  status.set = (key, value) => {
    origSet(key, value);
    if (key === 'state') i++;
  };
  await run;
  return { calls, events, seenWhileAsking, queries, status: registry.monitorStatus('m') ?? {} };
}

describe('PlanChanger and the HA hook', () => {
  it('runs the standby plan while the HA hook says standby, without querying the server', async () => {
    const r = await driveHa(
      [{ ha: false }, { ha: false }, { ha: true }, { ha: true }, { ha: false }, { ha: false }],
      { standby: { plan: 'light.yaml' }, active: { plan: 'rw.yaml' } },
    );
    assert.deepEqual(r.calls, ['plan standby light.yaml', 'plan active rw.yaml', 'plan standby light.yaml']);
    assert.equal(r.queries, 2, 'the server is queried only at the two active checks');
    assert.deepEqual(
      r.events.filter((e) => e.startsWith('state-change')),
      [
        'state-change-end standby',
        'state-change-begin active',
        'state-change-end active',
        'state-change-begin standby',
        'state-change-end standby',
      ],
    );
    assert.ok(
      r.seenWhileAsking.slice(1).every((t) => t === 'checking HA standby'),
      r.seenWhileAsking.join(),
    );
    assert.match(r.status.state ?? '', /^standby light\.yaml \d{4}-/);
  });

  it('pauses with level state standby when no standby plan is set, and resumes the active plan', async () => {
    const r = await driveHa([{ ha: true }, { ha: false }, { ha: false }, { ha: true }, { ha: true }], {
      active: { plan: 'rw.yaml' },
    });
    assert.deepEqual(r.calls, ['plan active rw.yaml', 'pause standby', 'plan active rw.yaml']);
  });

  it('checks standby before the server: a standby agent with its server down stays standby', async () => {
    const down = new Error('connect ECONNREFUSED');
    const r = await driveHa(
      [
        { ha: true, db: 'read-only' },
        { ha: false, db: down },
        { ha: false, db: down },
      ],
      { 'read-only': { plan: 'ro.yaml' }, standby: { plan: 'light.yaml' } },
    );
    assert.deepEqual(r.calls, ['plan read-only ro.yaml', 'plan standby light.yaml']);
    assert.equal(r.queries, 1);
    assert.equal(r.status['error:plan-changer'], undefined);
  });

  it('waits for standby.after before applying standby', async () => {
    const r = await driveHa([{ ha: true }, ...Array<HaStep>(6).fill({ ha: false })], {
      active: { plan: 'rw.yaml' },
      standby: { plan: 'light.yaml', after: '1h' },
    });
    assert.deepEqual(r.calls, ['plan active rw.yaml']);
    assert.match(r.status['state-pending'] ?? '', /^standby light\.yaml /);
  });

  it('keeps the last answer when the hook throws or rejects, and takes a promised answer', async () => {
    const r = await driveHa(
      [
        { ha: async () => true },
        { ha: new Error('lease API down') },
        { ha: () => Promise.reject(new Error('timeout')) },
        { ha: true },
        { ha: async () => false },
        { ha: new Error('lease API down') },
        { ha: false },
      ],
      { active: { plan: 'rw.yaml' }, standby: { plan: 'light.yaml' } },
    );
    assert.deepEqual(r.calls, ['plan active rw.yaml', 'plan standby light.yaml']);
    assert.equal(r.events.filter((e) => e.startsWith('state-change-begin')).length, 1);
  });

  it('a hook that throws before any answer counts as standby', async () => {
    const r = await driveHa([{ ha: new Error('not elected yet') }, { ha: true }, { ha: true }], {
      active: { plan: 'rw.yaml' },
    });
    assert.deepEqual(r.calls, ['pause standby', 'plan active rw.yaml']);
  });
});
