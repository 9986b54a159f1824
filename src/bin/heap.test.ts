import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

describe('tuneHeapGrowth', () => {
  it('sets a flag this Node knows: V8 says nothing (it warns on stderr for an unknown one)', async () => {
    const heap = new URL('./heap.js', import.meta.url).href;
    const script = `const m = await import(${JSON.stringify(heap)}); m.tuneHeapGrowth(); console.log('set');`;
    const { stdout, stderr } = await run(process.execPath, ['--input-type=module', '-e', script]);
    assert.equal(stdout, 'set\n');
    assert.equal(stderr, '');
  });

  it('would show an unknown flag: the check above can fail', async () => {
    const script = "(await import('node:v8')).setFlagsFromString('--no-such-heap-flag'); console.log('set');";
    const { stderr } = await run(process.execPath, ['--input-type=module', '-e', script]);
    assert.match(stderr, /unrecognized flag --no-such-heap-flag/);
  });
});

describe('collectGarbage', () => {
  it('runs a full collection in a Node started without --expose-gc: dropped objects are freed', async () => {
    const heap = new URL('./heap.js', import.meta.url).href;
    // About 40 MB of objects that survive into the old generation, then dropped: only a full
    // collection frees them.
    const script = [
      `const m = await import(${JSON.stringify(heap)});`,
      'let keep = Array.from({ length: 400000 }, (_, i) => ({ i, s: `x${i}`, a: [i, i + 1] }));',
      'await new Promise((r) => setTimeout(r, 50));',
      'const before = process.memoryUsage().heapUsed;',
      'keep = undefined;',
      'const ran = m.collectGarbage();',
      'const after = process.memoryUsage().heapUsed;',
      'console.log(JSON.stringify({ ran, freedMB: (before - after) / 1e6, gcGlobal: typeof globalThis.gc }));',
    ].join('\n');
    const { stdout, stderr } = await run(process.execPath, ['--input-type=module', '-e', script]);
    assert.equal(stderr, '');
    const r = JSON.parse(stdout) as { ran: boolean; freedMB: number; gcGlobal: string };
    assert.equal(r.ran, true);
    assert.ok(r.freedMB > 20, `freed ${r.freedMB} MB`);
    // The collector is taken from a fresh context: sonde's own global gains no `gc`.
    assert.equal(r.gcGlobal, 'undefined');
  });
});
