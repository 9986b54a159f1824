/**
 * A listener address already in use ends sonde with one line naming the flag or key that
 * sets it, as mysqld_exporter ends: the API (`api.bind`) and the probe listener
 * (`probe.bind`) at boot, a monitor's exporter (`exporter.flags.web.listen-address`, or
 * `--web.listen-address` on mysqld_exporter's command line) once the monitor starts it. The
 * process stops instead of retrying forever. An embedding program that passes
 * `onListenFailure` is told the same line when the API's or probe's address is taken
 * between its boot (which checked it) and its start.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { runSonde, writeConfig } from '../helpers/agent.js';
import { createAgent } from '../../src/index.js';

const PASSWORD = 'Busy-port-55';
let db: MariaDB;
let holder: Server;
let busy = 0;

/** The one stderr line: `<date> <time> server.<Boot|Run> failed: <message>`; returns the message. */
function oneLine(stderr: string, what: 'Boot' | 'Run'): string {
  const lines = stderr.split('\n').filter((l) => l !== '');
  assert.equal(lines.length, 1, `expected one stderr line, got:\n${stderr}`);
  const m = new RegExp(`^\\d{4}/\\d\\d/\\d\\d \\d\\d:\\d\\d:\\d\\d server\\.${what} failed: (.*)$`).exec(
    lines[0] ?? '',
  );
  assert.ok(m, lines[0]);
  return m[1] ?? '';
}

describe('a listener address in use', () => {
  before(async () => {
    db = await startMariaDB();
    await db.createUser('sonde', PASSWORD, ['PROCESS, REPLICATION CLIENT ON *.*']);
    holder = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', () => r()));
    busy = (holder.address() as { port: number }).port;
  });
  after(async () => {
    holder?.close();
    await db?.stop();
  });

  it("ends sonde with one line naming exporter.flags.web.listen-address for a monitor's exporter", async () => {
    const [dir, path] = writeConfig(`api:
  bind: 127.0.0.1:0
sinks:
  noop: {}
monitors:
  - id: db1
    socket: ${db.socket}
    username: sonde
    password: ${PASSWORD}
    exporter:
      mode: dual
      flags:
        web.listen-address: 127.0.0.1:${busy}
`);
    const r = await runSonde(['--config', path], { cwd: dir });
    assert.equal(r.code, 1, r.stderr);
    assert.equal(
      oneLine(r.stderr, 'Run'),
      `exporter.flags.web.listen-address: listen EADDRINUSE: address already in use 127.0.0.1:${busy} (monitor db1)`,
    );
  });

  it("names --web.listen-address on mysqld_exporter's command line", async () => {
    const [dir] = writeConfig('');
    const cnf = join(dir, 'my.cnf');
    writeFileSync(cnf, `[client]\nuser=sonde\npassword=${PASSWORD}\nsocket=${db.socket}\n`);
    const r = await runSonde(['--config.my-cnf', cnf, `--web.listen-address=127.0.0.1:${busy}`], {
      cwd: dir,
    });
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      oneLine(r.stderr, 'Run'),
      new RegExp(
        `^--web\\.listen-address: listen EADDRINUSE: address already in use 127\\.0\\.0\\.1:${busy} \\(monitor `,
      ),
    );
  });

  it('names api.bind and probe.bind at boot', async () => {
    const [dir, path] = writeConfig(
      `monitor-loader:\n  local:\n    disable-auto: true\napi:\n  bind: 127.0.0.1:${busy}\nmonitors: []\n`,
    );
    const api = await runSonde(['--config', path], { cwd: dir });
    assert.equal(api.code, 1);
    assert.match(oneLine(api.stderr, 'Boot'), /^api\.bind: listen EADDRINUSE: .*:\d+$/);
    const [dir2, path2] = writeConfig(
      `monitor-loader:\n  local:\n    disable-auto: true\napi:\n  bind: 127.0.0.1:0\nprobe:\n  bind: 127.0.0.1:${busy}\nmonitors: []\n`,
    );
    const probe = await runSonde(['--config', path2], { cwd: dir2 });
    assert.equal(probe.code, 1);
    assert.match(oneLine(probe.stderr, 'Boot'), /^probe\.bind: listen EADDRINUSE: /);
  });

  it('reports api.bind and probe.bind taken between the boot and the start, with onListenFailure', async () => {
    for (const key of ['api.bind', 'probe.bind'] as const) {
      const ports = await Promise.all([freePort(), freePort()]);
      const [apiPort, probePort] = ports;
      const failures: string[] = [];
      const agent = createAgent({
        config: {
          api: { bind: `127.0.0.1:${apiPort}` },
          probe: { bind: `127.0.0.1:${probePort}` },
          'monitor-loader': { local: { 'disable-auto': true } },
          monitors: [],
        },
        onListenFailure: (m) => failures.push(m),
      });
      await agent.boot(); // checks both addresses are free
      const taker = createServer();
      const port = key === 'api.bind' ? apiPort : probePort;
      await new Promise<void>((r) => taker.listen(port, '127.0.0.1', () => r()));
      try {
        await agent.start();
        const deadline = Date.now() + 10_000;
        while (failures.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        assert.deepEqual(failures, [`${key}: listen EADDRINUSE: address already in use 127.0.0.1:${port}`]);
      } finally {
        await agent.stop();
        taker.close();
      }
    }
  });
});
