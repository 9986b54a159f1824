import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FinalMonitorConfig } from '../core/config.js';
import type { Plan } from '../core/plan.js';
import { interpolatePlan } from './interpolate.js';

const monitor: FinalMonitorConfig = {
  id: 'db1',
  hostname: 'db1.local:3306',
  meta: { foo: 'meta-foo' },
  tags: { env: 'prod' },
};

function plan(): Plan {
  return {
    name: '${PLAN}',
    source: 'x.yaml',
    levels: {
      l: {
        name: 'l',
        freq: '5s',
        freqMs: 5000,
        collect: {
          'repl.lag': {
            metrics: ['%{monitor.id}'],
            options: {
              opt1: '%{monitor.meta.foo}',
              table: '${DB:-blip}.heartbeat',
              'source-id': '%{monitor.hostname}-${SUFFIX}',
              tag: 'x-%{monitor.tags.env}',
              plain: 'as-is',
            },
            errors: { 'access-denied': '${POLICY}' },
          },
        },
      },
    },
  };
}

void describe('interpolatePlan', () => {
  void it('interpolates option values: ${ENV} first, then %{monitor.X}', () => {
    const env = { SUFFIX: 's', PLAN: 'nope', POLICY: 'ignore' };
    const out = interpolatePlan(plan(), monitor, env);
    assert.deepEqual(out.levels.l?.collect['repl.lag']?.options, {
      opt1: 'meta-foo',
      table: 'blip.heartbeat',
      'source-id': 'db1.local:3306-s',
      tag: 'x-prod',
      plain: 'as-is',
    });
  });

  void it('lets an environment value name a monitor field', () => {
    const p = plan();
    p.levels.l!.collect['repl.lag']!.options = { v: '${WHICH}' };
    const out = interpolatePlan(p, monitor, { WHICH: '%{monitor.id}' });
    assert.equal(out.levels.l?.collect['repl.lag']?.options.v, 'db1');
  });

  void it('leaves names, freqs, metrics and errors alone and does not touch the input', () => {
    const p = plan();
    const out = interpolatePlan(p, monitor, { POLICY: 'ignore', PLAN: 'nope', SUFFIX: '' });
    assert.equal(out.name, '${PLAN}');
    assert.equal(out.levels.l?.freq, '5s');
    assert.deepEqual(out.levels.l?.collect['repl.lag']?.metrics, ['%{monitor.id}']);
    assert.deepEqual(out.levels.l?.collect['repl.lag']?.errors, { 'access-denied': '${POLICY}' });
    assert.equal(p.levels.l?.collect['repl.lag']?.options.opt1, '%{monitor.meta.foo}');
    out.levels.l.collect['repl.lag'].metrics.push('x');
    assert.deepEqual(p.levels.l?.collect['repl.lag']?.metrics, ['%{monitor.id}']);
  });

  void it('refuses an option naming an unset variable, with the plan, level, domain and key', () => {
    assert.throws(() => interpolatePlan(plan(), monitor, {}), {
      name: 'PlanError',
      message:
        'invalid plan: ${PLAN}: at l/repl.lag: key options.source-id: environment variable SUFFIX is not set (use ${SUFFIX:-default} for a default)',
    });
  });
});
