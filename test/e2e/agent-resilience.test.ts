/**
 * The database is killed under a running agent: the agent stays up, status shows the
 * error, and collection resumes by itself once the server is back. A monitor whose server
 * never answers does not hold up a healthy one.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startMariaDB, freePort, type MariaDB } from '../helpers/mariadb.js';
import { startAgent, type Agent, agentConfigHead } from '../helpers/agent.js';

const PASSWORD = 'Resil-77-pass';

let db: MariaDB;
let agent: Agent;

describe('agent resilience', () => {
  before(async () => {
    db = await startMariaDB();
    await db.createUser('sonde', PASSWORD, ['PROCESS ON *.*']);
    const deadPort = await freePort();
    agent = await startAgent(
      `${agentConfigHead(PASSWORD)}monitors:
  - id: live
    hostname: 127.0.0.1:${db.port}
  - id: dead
    hostname: 127.0.0.1:${deadPort}
`,
      {
        files: {
          'plan.yaml':
            'kpi:\n  freq: 1s\n  collect:\n    status.global:\n      metrics: [uptime, threads_connected]\n',
        },
      },
    );
  });

  after(async () => {
    await agent?.stop();
    await db?.stop();
  });

  it('keeps a healthy monitor collecting while another server is unreachable', async () => {
    const st = await agent.until('live collected, dead retrying', async () => {
      const s = await agent.monitorsStatus();
      return s.live?.['level-collect']?.startsWith('last collected') && s.dead?.['error:engine-prepare']
        ? s
        : undefined;
    });
    assert.match(
      st.dead?.['level-change-plan'] ?? '',
      /error preparing new plan plan\.yaml: while connecting to MySQL: .*\(retrying\)$/,
    );
    assert.match(st.dead?.monitor ?? '', /^running since /);
    assert.equal(st.dead?.['level-state'], undefined);
  });

  it('survives the database being killed and resumes when it returns', async () => {
    await db.kill();
    const down = await agent.until('collection errors reported', async () => {
      const s = await agent.monitorsStatus();
      return s.live?.['error:status.global'] ? s : undefined;
    });
    assert.match(down.live?.['error:status.global'] ?? '', /^at \S+: plan\.yaml\/kpi\/\d+\/status\.global: /);
    assert.match(down.live?.['error:collect'] ?? '', /failed: zero metrics collected, 1 errors$/);
    assert.equal((await agent.http('GET', '/status')).status, 200, 'agent still answers');

    await db.restart();
    const before = agent.stdout().length;
    const up = await agent.until(
      'collection resumed',
      async () => {
        const s = await agent.monitorsStatus();
        return s.live?.['error:status.global'] === undefined &&
          agent.stdout().slice(before).includes('status.global.uptime')
          ? s
          : undefined;
      },
      30_000,
    );
    assert.equal(up.live?.['error:collect'], undefined);
    assert.equal(agent.proc.exitCode, null, 'agent process still running');
    assert.ok(!agent.stdout().includes(PASSWORD) && !agent.stderr().includes(PASSWORD));
  });
});
