import { describe, it } from 'node:test';
import { sinkContext } from './receivers.fixture.js';
import assert from 'node:assert/strict';
import { SondeError } from '../core/errors.js';
import { BUILTIN_SINKS, builtinSinks } from './builtin.js';
import { logSinkRegistration } from './log.js';
import { SinkRegistry } from './registry.js';

describe('sink registry', () => {
  it('lists the built-in names sorted', () => {
    assert.deepEqual(builtinSinks().names(), [
      'chronosphere',
      'datadog',
      'log',
      'noop',
      'otlp',
      'prom-pushgateway',
      'signalfx',
    ]);
  });

  it('builds log and noop sinks', async () => {
    const reg = builtinSinks();
    assert.equal((await reg.create('log', sinkContext('log'))).name, 'log');
    assert.equal((await reg.create('noop', sinkContext('noop'))).name, 'noop');
    assert.equal(reg.has('log'), true);
    assert.equal(reg.get('noop')?.name, 'noop');
  });

  it('builds the network sinks wrapped in Retry, named after themselves', async () => {
    const reg = builtinSinks();
    for (const name of ['chronosphere', 'otlp', 'prom-pushgateway']) {
      const sink = await reg.create(name, sinkContext(name, { 'send-timeout': '1s' }));
      assert.equal(sink.name, name);
      assert.equal(sink.constructor.name, 'RetrySink', name);
    }
  });

  it('fails an unknown name with `sink <name> not registered`', async () => {
    const reg = builtinSinks();
    assert.equal(reg.has('retry'), false);
    await assert.rejects(
      reg.create('retry', sinkContext('retry')),
      (err: unknown) =>
        err instanceof SondeError &&
        err.code === 'CONFIG_INVALID' &&
        err.message === 'sink retry not registered',
    );
  });

  it('builds datadog and signalfx, whose own option checks run at monitor load', async () => {
    const reg = builtinSinks();
    await assert.rejects(reg.create('datadog', sinkContext('datadog')), {
      message: 'datadog sink requires either api-key-auth or api-key-auth-file',
    });
    await assert.rejects(reg.create('signalfx', sinkContext('signalfx')), {
      message: 'signalfx sink requires either auth-token or auth-token-file',
    });
  });

  it('refuses to register a name twice, unless the second asks to replace the first', async () => {
    const reg = new SinkRegistry();
    reg.register(logSinkRegistration());
    assert.throws(
      () => reg.register(logSinkRegistration()),
      /^Error: sink log already registered \(set replace: true to replace it\)$/,
    );
    const mine = { ...logSinkRegistration(), description: 'mine', replace: true };
    reg.register(mine);
    assert.equal(reg.get('log'), mine);
    assert.throws(
      () => reg.register({ ...mine, name: 'lgo' }),
      /^Error: sink lgo: replace is set but no sink is registered under that name$/,
    );
    assert.deepEqual(reg.names(), ['log']);
  });

  it('lists each built-in sink with the name and description of the implementation it loads', async () => {
    for (const lazy of BUILTIN_SINKS) {
      const reg = await lazy.load();
      assert.deepEqual([reg.name, reg.description], [lazy.name, lazy.description]);
    }
  });
});
