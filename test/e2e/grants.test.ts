/**
 * The documented least privileges are enough: an account created on MariaDB with exactly the
 * statements docs/grants.md gives for the default plan runs every domain of that plan without
 * an access-denied error. The plan is the default plan's domains without its error policies,
 * so a missing privilege shows as `error:<domain>` instead of being ignored. The control: the
 * `REPLICATION CLIENT` grant the demo used to give is not enough for `repl` on MariaDB 10.5+.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { startAgent, type Agent, type MonitorsStatus } from '../helpers/agent.js';
import {
  DEMO_SERVER_ARGS,
  HEARTBEAT_BLOCK,
  MARIADB_DEFAULT_PLAN_BLOCK,
  documentedStatements,
  grantsDoc,
} from '../helpers/demo.js';

/** Every domain of the built-in `default-mysql` plan, with no error policy, all in one level. */
const PLAN = `all:
  freq: 1s
  collect:
    status.global:
      metrics: [threads_running]
    innodb:
      metrics: [trx_active_transactions]
    repl:
      metrics: [running]
    repl.lag: {}
    size.database: {}
    size.table: {}
    size.binlog: {}
    var.global:
      metrics: [max_connections]
`;
const DOMAINS = [
  'status.global',
  'innodb',
  'repl',
  'repl.lag',
  'size.database',
  'size.table',
  'size.binlog',
  'var.global',
];

let db: MariaDB;

/** Run the agent as `user` with PLAN until every domain ran twice; returns the monitor's status. */
async function runPlanAs(
  user: string,
  password: string,
): Promise<{ status: Record<string, string>; stderr: string }> {
  const agent: Agent = await startAgent(
    `api:
  bind: {{API}}
mysql:
  username: ${user}
  password: ${password}
plans:
  files: [plan.yaml]
monitors:
  - id: m
    hostname: 127.0.0.1:${db.port}
`,
    { files: { 'plan.yaml': PLAN } },
  );
  try {
    const seen = new Map<string, Set<string>>();
    const status = await agent.until(
      'every domain ran twice',
      async () => {
        const s: MonitorsStatus[string] = (await agent.monitorsStatus())['m'] ?? {};
        for (const d of DOMAINS) {
          const v = s[`domain:${d}`];
          if (v !== undefined) seen.set(d, (seen.get(d) ?? new Set()).add(v));
        }
        return DOMAINS.every((d) => (seen.get(d)?.size ?? 0) >= 2) ? s : undefined;
      },
      60_000,
    );
    return { status, stderr: agent.stderr() };
  } finally {
    await agent.stop();
  }
}

describe('documented MariaDB grants', () => {
  before(async () => {
    db = await startMariaDB({ args: [...DEMO_SERVER_ARGS] });
  });
  after(async () => {
    await db?.stop();
  });

  it('the documented statements are the ones a DBA would run', () => {
    const doc = grantsDoc();
    assert.deepEqual(documentedStatements(doc, MARIADB_DEFAULT_PLAN_BLOCK, 'pw'), [
      "CREATE USER 'sonde'@'%' IDENTIFIED BY 'pw' WITH MAX_USER_CONNECTIONS 10",
      "GRANT PROCESS, BINLOG MONITOR, SLAVE MONITOR ON *.* TO 'sonde'@'%'",
    ]);
    assert.deepEqual(documentedStatements(doc, HEARTBEAT_BLOCK, 'pw'), [
      "GRANT SELECT, INSERT, UPDATE, DELETE ON blip.heartbeat TO 'sonde'@'%'",
    ]);
  });

  it('a user with exactly the default-plan grants runs every domain without access denied', async () => {
    for (const st of documentedStatements(grantsDoc(), MARIADB_DEFAULT_PLAN_BLOCK, 'grants-Pw-1'))
      await db.query(st);
    const { status, stderr } = await runPlanAs('sonde', 'grants-Pw-1');
    const errors = Object.entries(status).filter(([k]) => k.startsWith('error:'));
    assert.deepEqual(errors, [], JSON.stringify(status, null, 1));
    for (const d of DOMAINS)
      assert.match(status[`domain:${d}`] ?? '', /^ok /, `${d}: ${status[`domain:${d}`]}`);
    assert.doesNotMatch(JSON.stringify(status) + stderr, /denied/i);
    // No heartbeat table here: the reader says so as information.
    assert.match(
      status['heartbeat-reader'] ?? '',
      /^no heartbeat table blip\.heartbeat readable by this account/,
    );
  });

  it('REPLICATION CLIENT alone is not enough for repl on MariaDB (the check can fail)', async () => {
    await db.createUser('old', 'grants-Pw-2', ['PROCESS, REPLICATION CLIENT ON *.*']);
    const { status } = await runPlanAs('old', 'grants-Pw-2');
    assert.match(status['error:repl'] ?? '', /denied|1227/i, JSON.stringify(status, null, 1));
  });
});
