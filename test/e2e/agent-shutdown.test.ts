/**
 * Stopping the built agent while its database and its sink hang: SIGTERM ends the process
 * with code 0 within the stop deadline, and a second signal ends it at once.
 *
 * The database hangs because the test suspends mariadbd (SIGSTOP; always resumed before
 * the server is stopped); the sink hangs because its push gateway accepts requests and
 * never answers them.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { startAgent, type Agent, agentConfigHead } from '../helpers/agent.js';

const PASSWORD = 'Shutdown-41-pass';
const PLAN = 'kpi:\n  freq: 1s\n  collect:\n    status.global:\n      metrics: [uptime, threads_connected]\n';

let db: MariaDB;
let gateway: Server;
let gatewayPort = 0;
let suspended = false;

function suspend(): void {
  process.kill(db.pid, 'SIGSTOP');
  suspended = true;
}

function resume(): void {
  if (!suspended) return;
  process.kill(db.pid, 'SIGCONT');
  suspended = false;
}

/** An agent pushing every second to the silent gateway, once it has collected at least once. */
async function collectingAgent(): Promise<Agent> {
  const agent = await startAgent(
    `${agentConfigHead(PASSWORD)}monitors:
  - id: hang
    socket: ${db.socket}
    sinks:
      prom-pushgateway:
        addr: http://127.0.0.1:${gatewayPort}
`,
    { files: { 'plan.yaml': PLAN } },
  );
  await agent.until('a collection ran', async () => {
    const s = await agent.monitorsStatus();
    return s.hang?.['level-collect']?.includes('kpi') ? s : undefined;
  });
  return agent;
}

/** Send `signal` and resolve with the exit code and how long the exit took. */
async function exitAfter(
  agent: Agent,
  signals: NodeJS.Signals[],
): Promise<{ code: number | null; ms: number }> {
  const started = Date.now();
  const exited = agent.stop(signals[0]);
  for (const s of signals.slice(1)) {
    await new Promise((r) => setTimeout(r, 300));
    if (agent.proc.exitCode === null && agent.proc.signalCode === null) agent.proc.kill(s);
  }
  const code = await exited;
  return { code, ms: Date.now() - started };
}

describe('agent shutdown', () => {
  before(async () => {
    db = await startMariaDB();
    await db.createUser('sonde', PASSWORD, ['PROCESS ON *.*']);
    // Accepts every push and never answers it.
    gateway = createServer(() => undefined);
    await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', () => r()));
    const addr = gateway.address();
    gatewayPort = typeof addr === 'object' && addr !== null ? addr.port : 0;
  });

  after(async () => {
    resume();
    gateway?.closeAllConnections();
    await new Promise<void>((r) => (gateway ? gateway.close(() => r()) : r()));
    await db?.stop();
  });

  it('exits with code 0 within 12 s of SIGTERM while the database and the sink hang', async (t) => {
    const agent = await collectingAgent();
    suspend();
    try {
      // Let collections and pushes start against the hung peers.
      await new Promise((r) => setTimeout(r, 1500));
      const { code, ms } = await exitAfter(agent, ['SIGTERM']);
      t.diagnostic(
        `exit ${String(code)} after ${ms} ms; ${agent.stderr().trim().split('\n').slice(-1)[0] ?? ''}`,
      );
      assert.equal(code, 0, agent.stderr());
      assert.ok(ms < 12_000, `exited after ${ms} ms`);
      assert.match(agent.stdout(), /\[server-stopped\s*\] \[\] caught SIGTERM, stopping/);
      assert.doesNotMatch(agent.stderr(), /ERROR: caught/, 'a signal is a normal stop, not an error');
    } finally {
      resume();
    }
  });

  it('exits at once with code 0 on a second signal during a hung stop', async (t) => {
    const agent = await collectingAgent();
    suspend();
    try {
      await new Promise((r) => setTimeout(r, 1500));
      const { code, ms } = await exitAfter(agent, ['SIGTERM', 'SIGINT']);
      t.diagnostic(
        `exit ${String(code)} after ${ms} ms; ${agent.stderr().trim().split('\n').slice(-1)[0] ?? ''}`,
      );
      assert.equal(code, 0, agent.stderr());
      assert.ok(ms < 12_000, `exited after ${ms} ms`);
      const stderr = agent.stderr();
      assert.match(agent.stdout(), /caught SIGTERM, stopping/);
      // Either the second signal ended it, or the stop had already finished by itself.
      if (!/second signal, exiting now/.test(stderr)) assert.doesNotMatch(stderr, /graceful stop not done/);
    } finally {
      resume();
    }
  });
});
