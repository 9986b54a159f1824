import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { UnsetVariableError, interpolateEnv, interpolateMonitor } from './interpolate.js';

describe('interpolateEnv (shell semantics)', () => {
  const env = { HOME: '/h', A: '1', B: '2', EMPTY: '' };
  it('replaces each token on its own and keeps surrounding text', () => {
    assert.equal(interpolateEnv('${HOME}/p.yaml', env), '/h/p.yaml');
    assert.equal(interpolateEnv('${FOO:-bar}', env), 'bar');
    assert.equal(interpolateEnv('x-${FOO:-bar}', env), 'x-bar');
    assert.equal(interpolateEnv('${A}-${B}', env), '1-2');
    assert.equal(interpolateEnv('${EMPTY}', env), '');
    assert.equal(interpolateEnv('${EMPTY:-d}', env), 'd');
  });
  it('refuses an unset variable without a default, naming it and the way to give a default', () => {
    assert.throws(() => interpolateEnv('x-${FOO}', env), {
      name: 'UnsetVariableError',
      message: 'environment variable FOO is not set (use ${FOO:-default} for a default)',
    });
    try {
      interpolateEnv('${A}${NOPE}', env);
    } catch (err) {
      assert.ok(err instanceof UnsetVariableError);
      assert.equal(err.variable, 'NOPE');
    }
  });
  it('gives the empty string for an explicitly empty default', () => {
    assert.equal(interpolateEnv('[${FOO:-}]', env), '[]');
  });
  it('does not read inherited object properties as variables', () => {
    assert.throws(() => interpolateEnv('${constructor}', env), UnsetVariableError);
  });
  it('leaves tokens with other characters literal', () => {
    assert.equal(interpolateEnv('${X:-http://h}', env), '${X:-http://h}');
  });
  it('inserts values literally', () => {
    assert.equal(interpolateEnv('${V}', { V: '$1 ${A}' }), '$1 ${A}');
  });
});

describe('interpolateMonitor', () => {
  const m = { id: 'db1', hostname: 'db1:3306', tags: { env: 'prod' }, meta: { foo: 'meta-foo' } };
  it('replaces fields, tags and meta independently', () => {
    assert.equal(interpolateMonitor('%{monitor.hostname}', m), 'db1:3306');
    assert.equal(interpolateMonitor('x-%{monitor.tags.env}-%{monitor.ID}', m), 'x-prod-db1');
    assert.equal(interpolateMonitor('%{monitor.meta.foo}', m), 'meta-foo');
    assert.equal(interpolateMonitor('%{monitor.meta.nope}', m), '');
    assert.equal(interpolateMonitor('%{monitor.unknown}', m), '');
    assert.equal(interpolateMonitor('plain', m), 'plain');
  });
});
