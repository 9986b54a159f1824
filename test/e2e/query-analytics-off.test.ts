/**
 * Query analytics on a server that cannot serve it: MariaDB with performance_schema OFF
 * (its default). Each query analytics domain says, in one status line, what is missing and
 * how to fix it, and the monitor's metrics collection goes on.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { startAgent, type Agent } from '../helpers/agent.js';

const PASSWORD = 'Pw-qa-off-8c1-SECRET';
const PLAN = `all:
  freq: 1s
  collect:
    status.global:
      metrics: [queries]
    query.top: {}
    query.sample: {}
    stmt.schema: {}
`;

let db: MariaDB;
let agent: Agent;

describe('query analytics with performance_schema OFF, over the whole agent', { timeout: 60_000 }, () => {
  before(async () => {
    db = await startMariaDB({ args: ['--performance-schema=OFF'] });
    await db.createUser('sonde', PASSWORD, ['PROCESS ON *.*', 'SELECT ON performance_schema.*']);
    agent = await startAgent(
      `api:
  bind: {{API}}
mysql:
  username: sonde
  password: ${PASSWORD}
plans:
  files: [plan.yaml]
monitors:
  - id: alpha
    socket: ${db.socket}
`,
      { files: { 'plan.yaml': PLAN } },
    );
  });
  after(async () => {
    await agent?.stop();
    await db?.stop();
  });

  it('names the missing setting once per domain and keeps collecting metrics', async () => {
    const status = await agent.until('the three domains reported', async () => {
      const s = (await agent.monitorsStatus())['alpha'] ?? {};
      return s['error:query.top'] && s['error:query.sample'] && s['error:stmt.schema'] ? s : undefined;
    });
    for (const d of ['query.top', 'query.sample', 'stmt.schema'])
      assert.match(
        status[`error:${d}`] ?? '',
        new RegExp(
          `${d.replace('.', '\\.')}: not supported on mariadb [^:]+: performance_schema is disabled \\(set performance_schema=ON in my\\.cnf and restart the server\\)$`,
        ),
      );
    // Reported once: the domains stop; status.global goes on collecting.
    const before = (agent.stdout().match(/^status\.global\.queries = \d+/gm) ?? []).length;
    await agent.until('two more collections of status.global', async () => {
      const n = (agent.stdout().match(/^status\.global\.queries = \d+/gm) ?? []).length;
      return n >= before + 2 ? n : undefined;
    });
    const lines = agent
      .stderr()
      .split('\n')
      .filter((l) => l.includes('query.top: not supported'));
    assert.equal(lines.length, 1, lines.join('\n'));
  });
});
