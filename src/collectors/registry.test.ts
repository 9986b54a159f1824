import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CollectorRegistration } from '../core/collector.js';
import { builtinCollectors } from './builtin.js';
import { CollectorRegistry } from './registry.js';
import { FakeDb } from './test-helpers.js';
import { SOURCE_STEPS, SOURCE_TABLE } from './sources.js';

const fake = (domain: string): CollectorRegistration => ({
  help: {
    domain,
    description: domain,
    sources: [],
    options: [],
    errors: [],
    groups: [],
    meta: [],
    metrics: [],
  },
  create: () => ({ domain, prepare: async () => undefined, collect: async () => ({ values: [] }) }),
});

void describe('CollectorRegistry', () => {
  void it('lists domains sorted and makes collectors by name', () => {
    const r = new CollectorRegistry();
    r.register(fake('zeta'));
    r.register(fake('alpha.beta'));
    assert.deepEqual(r.domains(), ['alpha.beta', 'zeta']);
    assert.equal(r.has('zeta'), true);
    assert.equal(r.has('nope'), false);
    assert.equal(r.get('nope'), undefined);
    assert.equal(r.help('zeta').domain, 'zeta');
    assert.equal(
      r.make('alpha.beta', { monitorId: 'm', db: new FakeDb('8.0.36', () => []) }).domain,
      'alpha.beta',
    );
  });

  void it('refuses a duplicate and an unknown domain', () => {
    const r = new CollectorRegistry();
    r.register(fake('x'));
    assert.throws(() => r.register(fake('x')), /collector for domain x already registered/);
    assert.throws(() => r.help('y'), /collector for domain y not registered/);
    assert.throws(
      () => r.make('y', { monitorId: 'm', db: new FakeDb('8.0.36', () => []) }),
      /collector for domain y not registered/,
    );
  });

  void it('holds the built-ins, each making a collector of its own domain', () => {
    const r = builtinCollectors();
    // Every domain of the source table (its other rows are shared steps).
    assert.deepEqual(
      r.domains(),
      Object.keys(SOURCE_TABLE)
        .filter((d) => !(d in SOURCE_STEPS))
        .sort(),
    );
    const db = new FakeDb('10.11.6-MariaDB', () => []);
    for (const d of r.domains()) {
      assert.equal(r.help(d).domain, d);
      assert.equal(r.make(d, { monitorId: 'm', db }).domain, d);
      for (const o of r.help(d).options) {
        assert.ok(
          o.values === undefined || o.default in o.values,
          `${d}.${o.name} default is an allowed value`,
        );
        assert.notEqual(o.description, '');
      }
    }
  });
});
