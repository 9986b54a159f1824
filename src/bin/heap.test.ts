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
