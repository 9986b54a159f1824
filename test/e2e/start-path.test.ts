/**
 * What the built agent loads to start: with one monitor on the default plan and no TLS
 * anywhere, Node's `tls`, `https` and `zlib` stay unloaded through the first collection
 * (each costs memory and start time; they load on the first TLS connection, HTTPS listener
 * or gzip answer). Read from `process.moduleLoadList` of the running bundle, written by a
 * preloaded module when the agent exits.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { startAgent } from '../helpers/agent.js';

const PASSWORD = 'start-path-Pw-3';

/** A module for `--import` that writes Node's loaded built-in modules to `file` at exit. */
function recorder(file: string): string {
  const js =
    `import{writeFileSync}from'node:fs';process.on('exit',()=>writeFileSync(${JSON.stringify(file)},` +
    `process.moduleLoadList.join('\\n')));`;
  return `--import=data:text/javascript,${encodeURIComponent(js)}`;
}

describe('the start path of the bundle', { timeout: 120_000 }, () => {
  let db: MariaDB;
  let dir: string;
  before(async () => {
    db = await startMariaDB();
    await db.createUser('sonde', PASSWORD, ['PROCESS, REPLICATION CLIENT ON *.*']);
    dir = mkdtempSync(join(tmpdir(), 'sonde-start-path-'));
  });
  after(async () => {
    await db?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('loads neither tls, https nor zlib for a plain monitor, through its first collection', async () => {
    const file = join(dir, 'modules.txt');
    const agent = await startAgent(
      `api:\n  bind: {{API}}\nsinks:\n  noop: {}\nmonitors:\n  - id: db1\n    socket: ${db.socket}\n` +
        `    username: sonde\n    password: ${PASSWORD}\n`,
      { env: { NODE_OPTIONS: recorder(file) } },
    );
    try {
      await agent.until('the first collection', async () =>
        ((await agent.monitorsStatus()).db1?.['level-collect'] ?? '').startsWith('last collected and sent'),
      );
    } finally {
      assert.equal(await agent.stop(), 0);
    }
    const loaded = new Set(
      readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('NativeModule '))
        .map((l) => l.slice('NativeModule '.length)),
    );
    // The list is the real one: the modules every start needs are in it.
    for (const needed of ['net', 'http', 'crypto']) assert.ok(loaded.has(needed), `${needed} loaded`);
    for (const lazy of ['tls', 'https', 'zlib']) assert.ok(!loaded.has(lazy), `${lazy} not loaded at start`);
  });
});
