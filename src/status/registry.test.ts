import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BUILT_STATUS_LINE, importLine, keptBytes } from '../util/kept-bytes.fixture.js';
import { StatusRegistry } from './registry.js';

describe('StatusRegistry', () => {
  it('shows every value on one line, however it was set', () => {
    const r = new StatusRegistry();
    r.serverWriter.set('server-key', 'line one\nline two');
    r.setComputed('computed', () => 'bell\u0007, tab\tkept');
    const w = r.monitor('db1');
    w.set('error', "Table 'x\r\ny' doesn't exist\u001b[31m");
    w.set('plain', 'ok');
    r.setMonitorComputed('summary', (own) => `error is ${own['error'] ?? '-'}\n`);
    assert.deepEqual(r.server(), { computed: 'bell\\x07, tab\tkept', 'server-key': 'line one\\nline two' });
    const db1 = {
      error: "Table 'x\\r\\ny' doesn't exist\\e[31m",
      plain: 'ok',
      summary: "error is Table 'x\\r\\ny' doesn't exist\\e[31m\\n",
    };
    assert.deepEqual(r.monitors(), { db1 });
    assert.deepEqual(r.monitorStatus('db1'), db1);
  });

  it('lists monitors and keys sorted, drops a deleted key and an unloaded monitor', () => {
    const r = new StatusRegistry();
    r.monitor('b').set('z', '1');
    r.monitor('b').set('a', '2');
    r.register('a');
    r.monitor('b').set('gone', '3');
    r.monitor('b').delete('gone');
    assert.deepEqual(Object.keys(r.monitors()), ['a', 'b']);
    assert.deepEqual(Object.keys(r.monitorStatus('b') ?? {}), ['a', 'z']);
    r.removeMonitor('b');
    assert.equal(r.monitorStatus('b'), undefined);
    assert.deepEqual(r.monitors(), { a: {} });
  });

  it('keeps values set from built text flat: a third of the heap such text takes as built', async () => {
    // 1,000 monitors with 20 status lines each, built as the engine builds them; the
    // baseline keeps the same strings in plain maps, as the registry did when the escaping
    // moved to the read (the regression of 1,000 monitors in docs/performance.md).
    const setup = [
      importLine(['StatusRegistry'], './registry.js', import.meta.url),
      'const registry = new StatusRegistry();',
      'const plain = new Map();',
      "const key = (i) => 'domain:d' + (i % 20);",
    ].join('\n');
    const r = await keptBytes(setup, BUILT_STATUS_LINE, {
      plain:
        "(s, i) => { const id = 'm' + Math.floor(i / 20); if (!plain.has(id)) plain.set(id, new Map()); plain.get(id).set(key(i), s); }",
      registry: "(s, i) => registry.monitor('m' + Math.floor(i / 20)).set(key(i), s)",
    });
    assert.ok(
      r.registry < r.plain * 0.6,
      `registry ${r.registry.toFixed(0)} bytes per value, plain maps ${r.plain.toFixed(0)}`,
    );
  });
});
