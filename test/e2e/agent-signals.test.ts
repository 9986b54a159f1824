/**
 * Signals in the running agent: SIGHUP reloads the monitors from their files (as
 * `POST /monitors/reload` does) and keeps the running ones when the new files are bad;
 * SIGTERM stops with an info line, not an error.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { startAgent, type Agent } from '../helpers/agent.js';

let server: MariaDB;
let agent: Agent;

const monitors = (ids: string[]) =>
  `monitors:\n${ids.map((id) => `  - id: ${id}\n    socket: ${server.socket}\n    username: root\n`).join('')}`;

async function loadedIds(): Promise<string[]> {
  const r = await agent.json<Record<string, unknown>>('/monitors');
  return Object.keys(r).sort();
}

describe('signals', { timeout: 60_000 }, () => {
  before(async () => {
    server = await startMariaDB();
    agent = await startAgent(
      `api:
  bind: {{API}}
monitor-loader:
  files: [more.yaml]
sinks:
  noop:
`,
      { files: { 'more.yaml': monitors(['one']) } },
    );
    await agent.until('monitor one loaded', async () => (await loadedIds()).includes('one'));
  });

  after(async () => {
    await agent?.stop();
    await server?.stop();
  });

  it('SIGHUP reloads the monitor files; a bad file keeps the running monitors and says why', async () => {
    writeFileSync(join(agent.dir, 'more.yaml'), monitors(['one', 'two']));
    agent.proc.kill('SIGHUP');
    await agent.until('monitor two loaded', async () => (await loadedIds()).includes('two'));
    assert.match(agent.stdout(), /\[server-reload\s*\] \[\] SIGHUP: monitors reloaded \(2 loaded\)/);

    writeFileSync(join(agent.dir, 'more.yaml'), 'monitors:\n  - id: [not, a, string]\n');
    agent.proc.kill('SIGHUP');
    await agent.until('the reload error', async () => agent.stderr().includes('SIGHUP: reload failed'));
    assert.match(
      agent.stderr(),
      /\[server-reload-error\s*\] \[\] ERROR: SIGHUP: reload failed, the running monitors are kept: /,
    );
    assert.deepEqual(await loadedIds(), ['one', 'two']);
    assert.equal(agent.proc.exitCode, null, 'still running');
  });

  it('SIGTERM stops with an info line and exit code 0', async () => {
    const code = await agent.stop('SIGTERM');
    assert.equal(code, 0);
    assert.match(agent.stdout(), /\[server-stopped\s*\] \[\] caught SIGTERM, stopping/);
    assert.doesNotMatch(agent.stderr(), /ERROR: caught/);
  });
});
