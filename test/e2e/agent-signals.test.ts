/**
 * Signals in the running agent: SIGHUP reads the config file again and reloads the monitors
 * from it and their files (as `POST /monitors/reload` does), keeps the running config and
 * monitors when the new files are bad, and says which changed keys only a restart applies;
 * SIGTERM stops with an info line, not an error.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
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
    assert.match(
      agent.stdout(),
      /\[server-reload\s*\] \[\] SIGHUP: monitors reloaded from \S+sonde\.yaml \(2 loaded\)/,
    );

    writeFileSync(join(agent.dir, 'more.yaml'), 'monitors:\n  - id: [not, a, string]\n');
    agent.proc.kill('SIGHUP');
    await agent.until('the reload error', async () => agent.stderr().includes('SIGHUP: reload failed'));
    assert.match(
      agent.stderr(),
      /\[server-reload-error\s*\] \[\] ERROR: SIGHUP: reload failed, the running config and monitors are kept: /,
    );
    assert.deepEqual(await loadedIds(), ['one', 'two']);
    assert.equal(agent.proc.exitCode, null, 'still running');
    writeFileSync(join(agent.dir, 'more.yaml'), monitors(['one', 'two']));
  });

  it('SIGHUP reads the config file again: its monitors load, a bad file is refused naming the key, listeners wait for a restart', async () => {
    const file = join(agent.dir, 'sonde.yaml');
    const original = readFileSync(file, 'utf8');
    writeFileSync(file, `${original}${monitors(['three'])}`);
    agent.proc.kill('SIGHUP');
    await agent.until('monitor three loaded', async () => (await loadedIds()).includes('three'));
    assert.deepEqual(await loadedIds(), ['one', 'three', 'two']);
    const config = await agent.json<{ monitors?: { id: string }[] }>('/config?json');
    assert.deepEqual(
      (config.monitors ?? []).map((m) => m.id),
      ['three'],
      'GET /config shows the config the monitors run on',
    );

    writeFileSync(file, `${original}no-such-key: 1\n`);
    const errorsBefore = agent.stderr().length;
    agent.proc.kill('SIGHUP');
    await agent.until('the config error', async () =>
      agent.stderr().slice(errorsBefore).includes('SIGHUP: '),
    );
    const line = agent.stderr().slice(errorsBefore);
    assert.match(line, /\[server-reload-error\s*\] \[\] ERROR: SIGHUP: .*sonde\.yaml.*no-such-key/);
    assert.match(line, /the running config and monitors are kept/);
    assert.deepEqual(await loadedIds(), ['one', 'three', 'two'], 'nothing changed');

    writeFileSync(file, original.replace(/bind: \S+/, 'bind: 127.0.0.1:1'));
    agent.proc.kill('SIGHUP');
    await agent.until('monitor three removed', async () => !(await loadedIds()).includes('three'));
    assert.match(agent.stdout(), /SIGHUP: api changed: only a restart applies them/);
    assert.equal((await agent.http('GET', '/status')).status, 200, 'the API still answers where it was');
  });

  it('SIGTERM stops with an info line and exit code 0', async () => {
    const code = await agent.stop('SIGTERM');
    assert.equal(code, 0);
    assert.match(agent.stdout(), /\[server-stopped\s*\] \[\] caught SIGTERM, stopping/);
    assert.doesNotMatch(agent.stderr(), /ERROR: caught/);
  });
});
