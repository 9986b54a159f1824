import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from './errors.js';
import { readMonitorFiles } from './monitor-files.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sonde-monfiles-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('readMonitorFiles', () => {
  it('reads one monitor per file, or a monitors: list, in file order', async () => {
    await writeFile(join(dir, 'one.yaml'), 'id: db1\nhostname: db1:3306\ntags:\n  env: prod\n');
    await writeFile(
      join(dir, 'list.yaml'),
      'monitors:\n  - hostname: db2\n  - socket: /tmp/db3.sock\n    tls: {disable: true}\n',
    );
    await writeFile(join(dir, 'empty.yaml'), '');
    const ms = await readMonitorFiles(['one.yaml', 'empty.yaml', join(dir, 'list.yaml')], { cwd: dir });
    assert.deepEqual(ms, [
      { id: 'db1', hostname: 'db1:3306', tags: { env: 'prod' } },
      { hostname: 'db2' },
      { socket: '/tmp/db3.sock', tls: { disable: true } },
    ]);
  });

  it('fails on a missing file with the Go-style open error', async () => {
    await assert.rejects(readMonitorFiles(['missing.yaml'], { cwd: dir }), (err: unknown) => {
      return (
        err instanceof ConfigError &&
        err.message === 'monitor-loader.files: open missing.yaml: no such file or directory'
      );
    });
  });

  it('is strict about keys, naming the file, line and key', async () => {
    await writeFile(join(dir, 'typo.yaml'), 'id: db1\nhostnme: db1\n');
    await assert.rejects(readMonitorFiles(['typo.yaml'], { cwd: dir }), {
      message: 'typo.yaml: invalid YAML: line 2: unknown key hostnme (did you mean hostname?)',
    });
    await writeFile(
      join(dir, 'typo-list.yaml'),
      'monitors:\n  - id: a\n  - id: b\n    tls: {ca: x, ca: y}\nextra: 1\n',
    );
    await assert.rejects(readMonitorFiles(['typo-list.yaml'], { cwd: dir }), {
      message: 'typo-list.yaml: invalid YAML: line 4: duplicate key monitors[1].tls.ca',
    });
    await writeFile(join(dir, 'extra.yaml'), 'monitors: []\nextra: 1\n');
    await assert.rejects(readMonitorFiles(['extra.yaml'], { cwd: dir }), {
      message: 'extra.yaml: invalid YAML: line 2: unknown key extra',
    });
  });

  it('reports YAML syntax errors', async () => {
    await writeFile(join(dir, 'broken.yaml'), 'id: [db1\n');
    await assert.rejects(
      readMonitorFiles(['broken.yaml'], { cwd: dir }),
      /^ConfigError: broken\.yaml: invalid YAML: line \d+: /,
    );
  });
});
