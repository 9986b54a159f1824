import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
/** This module's built file, for the child processes to import. */
const heap = new URL('./heap.js', import.meta.url).href;

describe('tuneHeapGrowth', () => {
  it('sets a flag this Node knows: V8 says nothing (it warns on stderr for an unknown one)', async () => {
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

describe('collectGarbage and compiled code', () => {
  // 3,000 functions compiled and called once, as a start's code is; the bytecode V8 holds is
  // read before and after a full collection.
  const setup = [
    "const v8 = await import('node:v8');",
    'const bytecode = () => v8.getHeapCodeStatistics().bytecode_and_metadata_size;',
    "let src = '';",
    'for (let i = 0; i < 3000; i++) src += `function f${i}(a) { let s = 0; for (let j = 0; j < a; j++) s += j * ${i}; return s + ${i}; }\\n`;',
    "src += 'globalThis.fns = [' + Array.from({ length: 3000 }, (_, i) => 'f' + i).join(',') + '];';",
    '(0, eval)(src);',
    'let sum = 0;',
    'for (const f of globalThis.fns) sum += f(3);',
  ];
  const childGc = "(await import('node:vm')).runInNewContext('gc')";

  async function measure(lines: string[], flags: string[] = []): Promise<Record<string, number>> {
    const { stdout, stderr } = await run(process.execPath, [
      ...flags,
      '--input-type=module',
      '-e',
      lines.join('\n'),
    ]);
    assert.equal(stderr, '');
    return JSON.parse(stdout) as Record<string, number>;
  }

  it('drops the bytecode of functions that are not running; they still run, and later collections keep it', async () => {
    const r = await measure([
      ...setup,
      `const m = await import(${JSON.stringify(heap)});`,
      'const before = bytecode();',
      'm.collectGarbage();',
      'const flushed = bytecode();',
      'let again = 0;',
      'for (const f of globalThis.fns) again += f(3);',
      'const recompiled = bytecode();',
      `const gc = ${childGc};`,
      "gc({ type: 'major', execution: 'sync' });",
      'console.log(JSON.stringify({ before, flushed, recompiled, kept: bytecode(), sum, again }));',
    ]);
    assert.ok(r.before! > 1_000_000, `bytecode before: ${r.before}`);
    assert.ok(r.flushed! < r.before! / 4, `before ${r.before}, after the collection ${r.flushed}`);
    assert.equal(r.again, r.sum);
    // Called again, the 3,000 functions compile again (the top-level script, run once, does not).
    assert.ok(r.recompiled! > r.flushed! + 300_000, `flushed ${r.flushed}, compiled again ${r.recompiled}`);
    // The flags were put back: a plain full collection afterwards leaves the bytecode alone.
    assert.ok(r.kept! > r.recompiled! * 0.9, `after a later collection: ${r.kept} of ${r.recompiled}`);
  });

  it('leaves a suspended generator and a waiting async function able to go on', async () => {
    const r = await measure([
      `const m = await import(${JSON.stringify(heap)});`,
      'function* gen(n) { let s = 0; for (let i = 0; i < n; i++) { s += i; yield s; } return s; }',
      'async function loop(n) {',
      '  let s = 0;',
      '  for (let i = 0; i < n; i++) s += await new Promise((r) => setTimeout(() => r(i), 5));',
      '  return s;',
      '}',
      'const g = gen(10); g.next(); g.next();',
      'const waiting = loop(20);',
      'await new Promise((r) => setTimeout(r, 30));',
      'm.collectGarbage();',
      'const rest = [...g];',
      'console.log(JSON.stringify({ rest: rest.join(), loop: await waiting }));',
    ]);
    // Both were paused mid-way when their code could have been dropped, and finish as usual.
    assert.deepEqual(r, { rest: '3,6,10,15,21,28,36,45', loop: 190 });
  });

  it('keeps the bytecode in a plain full collection: the drop above is the flags’ doing', async () => {
    const r = await measure(
      [
        ...setup,
        'const before = bytecode();',
        `const gc = ${childGc};`,
        "gc({ type: 'major', execution: 'sync' });",
        'console.log(JSON.stringify({ before, after: bytecode() }));',
      ],
      ['--expose-gc'],
    );
    assert.ok(r.after! > r.before! * 0.8, `before ${r.before}, after ${r.after}`);
  });

  it('leaves a flag given on the command line as it was', async () => {
    const r = await measure(
      [
        ...setup,
        `const m = await import(${JSON.stringify(heap)});`,
        'm.collectGarbage();',
        'for (const f of globalThis.fns) f(3);',
        'const recompiled = bytecode();',
        `const gc = ${childGc};`,
        "gc({ type: 'major', execution: 'sync' });",
        'console.log(JSON.stringify({ recompiled, after: bytecode() }));',
      ],
      ['--stress-flush-code'],
    );
    // Given by the user, stress flushing stays on after the settling collection.
    assert.ok(r.after! < r.recompiled! / 4, `recompiled ${r.recompiled}, after ${r.after}`);
  });
});
