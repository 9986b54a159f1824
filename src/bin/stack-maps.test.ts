import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A fresh Node without source-map support runs a compiled module that throws (tsc wrote
 * it with its map beside it) and prints the stack, with or without the mapping installed.
 */
async function stackOf(install: boolean): Promise<string> {
  const maps = new URL('./stack-maps.js', import.meta.url).href;
  const shard = new URL('../monitor/shard.js', import.meta.url).href;
  const script = [
    install ? `(await import(${JSON.stringify(maps)})).installStackMaps();` : '',
    `const { parseShard } = await import(${JSON.stringify(shard)});`,
    `try { parseShard('x/y', '--shard', () => 0); } catch (err) { console.log(err.stack); }`,
  ].join('\n');
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script]);
  return stdout;
}

describe('stack maps', () => {
  it('names the TypeScript file, line and column of a frame whose file has a map', async () => {
    const stack = await stackOf(true);
    const lines = stack.trimEnd().split('\n');
    assert.match(lines[0] ?? '', /^Error: invalid --shard "x\/y": /, 'the header as V8 writes it');
    const frame = lines.find((l) => l.includes('parseShard'));
    assert.match(frame ?? '', /^ {4}at parseShard \(\/.*\/src\/monitor\/shard\.ts:\d+:\d+\)$/, stack);
    // The script given with -e has no file, and so no map: its frame is V8's own text.
    assert.ok(
      lines.some((l) => /^ {4}at .*\[eval1\]:\d+:\d+\)?$/.test(l)),
      stack,
    );
  });

  it('without it the same frame names the compiled file: the check above can fail', async () => {
    const stack = await stackOf(false);
    const frame = stack.split('\n').find((l) => l.includes('parseShard'));
    assert.match(frame ?? '', /dist\/src\/monitor\/shard\.js:\d+:\d+\)$/, stack);
  });
});
