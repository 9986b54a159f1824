/**
 * `sonde --check` / `sonde check` against real servers: one line per monitor, OK or the
 * failing step with its cause (a wrong password, a server that does not answer, a domain
 * whose preparation refuses the plan), exit code 1 on any failure, and no port bound — it
 * runs next to an agent that holds the API port of the same config.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { runSonde, startAgent, type Agent } from '../helpers/agent.js';

const PASSWORD = 'check-Secret-5';
let server: MariaDB;
let agent: Agent;
let closedPort: number;

function config(monitors: string): string {
  return `api:
  bind: {{API}}
plans:
  files: [plan.yaml, bad.yaml]
sinks:
  noop:
monitors:
${monitors}`;
}

/** A plan the percona.response-time collector refuses when it prepares (no percentile listed). */
const BAD_PLAN = 'bad:\n  freq: 5s\n  collect:\n    percona.response-time: {}\n';

const PLAN =
  'kpi:\n  freq: 5s\n  collect:\n    status.global:\n      metrics: [threads_running]\n    innodb:\n      options:\n        all: enabled\n';

describe('sonde --check', { timeout: 60_000 }, () => {
  before(async () => {
    server = await startMariaDB();
    await server.createUser('sonde', PASSWORD, ['PROCESS, REPLICATION CLIENT ON *.*']);
    closedPort = await freePort();
    agent = await startAgent(
      config(
        `  - id: good\n    hostname: 127.0.0.1:${server.port}\n    username: sonde\n    password: ${PASSWORD}\n`,
      ),
      {
        files: { 'plan.yaml': PLAN, 'bad.yaml': BAD_PLAN },
      },
    );
  });

  after(async () => {
    await agent?.stop();
    await server?.stop();
  });

  it('prints one line per monitor, names the failing step and cause, exits 1, and binds nothing', async () => {
    const monitors = [
      `  - id: good\n    hostname: 127.0.0.1:${server.port}\n    username: sonde\n    password: ${PASSWORD}\n`,
      `  - id: bad-password\n    hostname: 127.0.0.1:${server.port}\n    username: sonde\n    password: wrong-one\n`,
      `  - id: no-server\n    hostname: 127.0.0.1:${closedPort}\n    username: sonde\n    password: ${PASSWORD}\n`,
      `  - id: bad-plan\n    hostname: 127.0.0.1:${server.port}\n    username: sonde\n    password: ${PASSWORD}\n    plan: bad.yaml\n`,
    ].join('');
    // The same API port as the running agent: --check must not try to bind it.
    const yaml = config(monitors).replace('{{API}}', agent.base.replace(/^https?:\/\//, ''));
    writeFileSync(join(agent.dir, 'check.yaml'), yaml);
    const r = await runSonde(['check', '--config', join(agent.dir, 'check.yaml')], { cwd: agent.dir });
    const lines = r.stdout.trim().split('\n');
    assert.equal(r.code, 1, r.stderr);
    assert.equal(lines.length, 5, r.stdout);
    assert.match(lines[0] ?? '', /^FAIL bad-password: connect: .*Access denied/);
    assert.equal(
      lines[1],
      "FAIL bad-plan: plan bad.yaml: while preparing bad.yaml/bad/percona.response-time: no percentile metrics specified, expected at least 1 like 'p99'",
    );
    assert.equal(lines[2], 'OK   good: plans plan.yaml');
    assert.match(lines[3] ?? '', /^FAIL no-server: connect: .*(ECONNREFUSED|connect)/);
    assert.equal(lines[4], '1 of 4 monitors OK');
    assert.ok(!r.stdout.includes('wrong-one') && !r.stdout.includes(PASSWORD), 'no password printed');
    assert.equal(agent.proc.exitCode, null, 'the running agent is untouched');
  });

  it('exits 0 when every monitor checks out (--check form)', async () => {
    const yaml = config(
      `  - id: good\n    hostname: 127.0.0.1:${server.port}\n    username: sonde\n    password: ${PASSWORD}\n`,
    ).replace('{{API}}', agent.base.replace(/^https?:\/\//, ''));
    writeFileSync(join(agent.dir, 'ok.yaml'), yaml);
    const r = await runSonde(['--check', '--config', join(agent.dir, 'ok.yaml')], { cwd: agent.dir });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(r.stdout.trim().split('\n'), ['OK   good: plans plan.yaml', '1 of 1 monitors OK']);
  });
});
