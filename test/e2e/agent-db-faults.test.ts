/**
 * Database faults under the running agent, with figures:
 * - the server killed for several seconds: the agent stays up, prints a bounded number of
 *   error lines (one per backoff step, not one per domain per second), and collects again
 *   within two intervals of the server's return;
 * - the server frozen (SIGSTOP): queries are abandoned at their deadlines, and the sockets
 *   the server holds for this agent stay within the pool (at most 3) plus one KILL attempt
 *   instead of piling up: a connection attempt that timed out is not followed by another
 *   at once.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { startAgent, type Agent, agentConfigHead } from '../helpers/agent.js';

const PASSWORD = 'Faults-42-pass';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Server-side TCP sockets on `port` by state (hex code from /proc/net/tcp and tcp6; not LISTEN). */
function socketStates(port: number): Map<string, number> {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const states = new Map<string, number>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      const local = cols[1] ?? '';
      const state = cols[3] ?? '';
      if (local.endsWith(`:${hex}`) && state !== '0A') states.set(state, (states.get(state) ?? 0) + 1); // 0A = LISTEN
    }
  }
  return states;
}

/** Server-side TCP sockets on `port` (not the listener). */
function serverSockets(port: number): number {
  let n = 0;
  for (const count of socketStates(port).values()) n += count;
  return n;
}

let db: MariaDB;
let agent: Agent;

/** ERROR lines on stderr so far. */
const errorLines = (): string[] =>
  agent
    .stderr()
    .split('\n')
    .filter((l) => l.includes('ERROR:'));

describe('agent under database faults', () => {
  before(async () => {
    db = await startMariaDB();
    await db.createUser('sonde', PASSWORD, ['PROCESS ON *.*', 'SELECT ON *.*']);
    agent = await startAgent(
      `${agentConfigHead(PASSWORD)}monitors:
  - id: m1
    hostname: 127.0.0.1:${db.port}
`,
      {
        files: {
          'plan.yaml': [
            'kpi:',
            '  freq: 1s',
            '  collect:',
            '    status.global:',
            '      metrics: [uptime, threads_connected]',
            '    var.global:',
            '      metrics: [max_connections]',
            '    innodb:',
            '      metrics: [lock_timeouts]',
            '',
          ].join('\n'),
        },
      },
    );
    await agent.until('collecting', async () => {
      const s = await agent.monitorsStatus();
      return s.m1?.['level-collect']?.startsWith('last collected') ? s : undefined;
    });
  });

  after(async () => {
    await agent?.stop();
    await db?.stop();
  });

  it('killed for 8 s: a few error lines, not one per domain per second, and collecting again within 2 s of its return', async () => {
    const linesBefore = errorLines().length;
    await db.kill();
    await sleep(8000);
    const during = errorLines().slice(linesBefore);
    // Three domains at 1 s for 8 s would be ~32 lines; one per backoff step (1, 2, 4 s) is ~4.
    assert.ok(
      during.length >= 1 && during.length <= 6,
      `${during.length} error lines:\n${during.join('\n')}`,
    );
    const st = await agent.monitorsStatus();
    assert.ok(st.m1?.['error:collect'] !== undefined, 'status shows the failing collections');

    await db.restart();
    const back = Date.now();
    await agent.until(
      'collecting again',
      async () => {
        const s = await agent.monitorsStatus();
        return s.m1?.['error:collect'] === undefined && s.m1?.['error:status.global'] === undefined
          ? s
          : undefined;
      },
      10_000,
    );
    const resumedMs = Date.now() - back;
    // Two intervals of the 1 s plan, plus the time the status poll itself takes.
    assert.ok(resumedMs <= 2500, `collection resumed ${resumedMs} ms after the server returned`);
    assert.equal((await agent.http('GET', '/status')).status, 200);
  });

  it('frozen for 15 s: abandoned queries do not pile up sockets on the server', async () => {
    await agent.until('collecting', async () => {
      const s = await agent.monitorsStatus();
      return s.m1?.['error:collect'] === undefined ? s : undefined;
    });
    const base = serverSockets(db.port);
    process.kill(db.pid, 'SIGSTOP');
    const baseStates = [...socketStates(db.port)];
    let most = base;
    let mostStates = baseStates;
    try {
      for (let i = 0; i < 15; i++) {
        await sleep(1000);
        const now = serverSockets(db.port);
        if (now > most) mostStates = [...socketStates(db.port)];
        most = Math.max(most, now);
      }
      assert.equal(
        (await agent.http('GET', '/status')).status,
        200,
        'the agent answers while the server is frozen',
      );
    } finally {
      process.kill(db.pid, 'SIGCONT');
    }
    // The pool's connections (at most 3: one was open before) plus one KILL attempt.
    const shown = (states: [string, number][]) => states.map(([k, v]) => `${k}:${v}`).join(' ');
    assert.ok(
      most <= base + 4,
      `server sockets: ${base} before (${shown(baseStates)}), up to ${most} while frozen (${shown(mostStates)})`,
    );
    await agent.until(
      'collecting after the freeze',
      async () => {
        const s = await agent.monitorsStatus();
        return s.m1?.['error:collect'] === undefined ? s : undefined;
      },
      30_000,
    );
  });
});
