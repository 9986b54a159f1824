import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CollectorRegistration } from '../core/collector.js';
import { BUILTIN_HELP, LOADERS, builtinCollectors } from './builtin.js';
import { BUILTIN } from './implementations.js';
import { CollectorRegistry } from './registry.js';
import { FakeDb } from './kit/test-helpers.js';
import type { Plan } from '../core/plan.js';
import { SOURCE_STEPS, SOURCE_TABLE } from './kit/sources.js';

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

  void it('replaces a registered domain only when asked, and only one that exists', () => {
    const r = new CollectorRegistry();
    r.register(fake('x'));
    const mine = { ...fake('x'), replace: true };
    r.register(mine);
    assert.equal(r.get('x'), mine);
    assert.throws(
      () => r.register({ ...fake('y'), replace: true }),
      /^Error: collector for domain y: replace is set but no collector is registered for it$/,
    );
    assert.deepEqual(r.domains(), ['x']);
  });

  void it('refuses a duplicate and an unknown domain', () => {
    const r = new CollectorRegistry();
    r.register(fake('x'));
    assert.throws(
      () => r.register(fake('x')),
      /collector for domain x already registered \(set replace: true to replace it\)/,
    );
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

  void it('holds help.json equal to each implementation help (regenerate with scripts/gen-docs.mjs)', () => {
    const fromCode = JSON.parse(JSON.stringify(BUILTIN.map((r) => r.help))) as unknown;
    assert.deepEqual(
      BUILTIN_HELP,
      fromCode,
      'src/collectors/help.json is stale: run `npx tsc -p . && node scripts/gen-docs.mjs` and commit it',
    );
  });

  void it('loads each domain from its own implementation', async () => {
    assert.deepEqual(Object.keys(LOADERS).sort(), BUILTIN.map((r) => r.help.domain).sort());
    for (const reg of BUILTIN) {
      const load = LOADERS[reg.help.domain];
      assert.ok(load, reg.help.domain);
      assert.equal(await load(), reg, reg.help.domain);
    }
  });

  void it('imports a lazy domain in its first prepare, then collects through it', async () => {
    const calls: string[] = [];
    const real = fake('lazy.one');
    const r = new CollectorRegistry();
    r.register({
      help: real.help,
      load: async () => {
        calls.push('load');
        return {
          help: real.help,
          create: () => ({
            domain: 'lazy.one',
            prepare: async () => void calls.push('prepare'),
            collect: async () => ({ values: [{ name: 'x', value: 1, type: 3 }] }),
            close: async () => void calls.push('close'),
          }),
        };
      },
    });
    const c = r.make('lazy.one', { monitorId: 'm', db: new FakeDb('8.0.36', () => []) });
    assert.equal(c.domain, 'lazy.one');
    assert.deepEqual(calls, []);
    const signal = new AbortController().signal;
    await assert.rejects(c.collect('l', signal), /collector for domain lazy.one not prepared/);
    const plan: Plan = { name: 'p', source: 't', levels: {} };
    await c.prepare(plan, signal);
    await c.prepare(plan, signal);
    assert.deepEqual((await c.collect('l', signal)).values.length, 1);
    await c.close?.();
    assert.deepEqual(calls, ['load', 'prepare', 'prepare', 'close']);
  });
});
