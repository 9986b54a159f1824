/**
 * Replication as a DBA runs it: the agent watches a real MariaDB primary and replica, both
 * writing heartbeats. The replica runs its read-only plan and reports heartbeat lag; a
 * stalled SQL thread shows as growing lag; promoting the replica moves it to the active
 * plan; killing it moves it to the offline plan and back when it returns.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startReplicationPair, type ReplicationPair } from '../helpers/replication.js';
import { startAgent, type Agent } from '../helpers/agent.js';
import { HEARTBEAT_TABLE_DDL } from '../../src/heartbeat/table.js';

const PASSWORD = 'Repl-agent-pw-5';

let pair: ReplicationPair;
let agent: Agent;

/** repl.lag.current values the log sink printed for the replica since `from`. */
function replicaLags(from = 0): number[] {
  const out: number[] = [];
  for (const block of agent.stdout().slice(from).split('\n\n')) {
    if (!block.includes('# monitor:  replica')) continue;
    for (const m of block.matchAll(/^repl\.lag\.current = (-?\d+)/gm)) out.push(Number(m[1]));
  }
  return out;
}

describe('agent on a primary/replica pair', () => {
  before(async () => {
    pair = await startReplicationPair();
    const { primary } = pair;
    await primary.query('CREATE DATABASE blip');
    await primary.query(HEARTBEAT_TABLE_DDL.replace('heartbeat', 'blip.heartbeat'));
    await primary.createUser('sonde', PASSWORD, [
      'PROCESS, SLAVE MONITOR, BINLOG MONITOR ON *.*',
      'SELECT, INSERT, UPDATE, DELETE ON blip.*',
    ]);
    await pair.waitCaughtUp();
    agent = await startAgent(
      `api:
  bind: {{API}}
mysql:
  username: sonde
  password: ${PASSWORD}
heartbeat:
  freq: 1s
plans:
  files: [rw.yaml, ro.yaml, off.yaml]
  change:
    active:
      plan: rw.yaml
      after: 2s
    read-only:
      plan: ro.yaml
    offline:
      plan: off.yaml
      after: 1s
monitors:
  - id: primary
    hostname: 127.0.0.1:${pair.primary.port}
  - id: replica
    hostname: 127.0.0.1:${pair.replica.port}
`,
      {
        files: {
          'rw.yaml': 'rw:\n  freq: 1s\n  collect:\n    status.global:\n      metrics: [threads_connected]\n',
          'ro.yaml':
            'ro:\n  freq: 1s\n  collect:\n    repl:\n      metrics: [running]\n    repl.lag:\n      options:\n        writer: blip\n',
          'off.yaml': '',
        },
      },
    );
  });

  after(async () => {
    await agent?.stop();
    await pair?.stop();
  });

  it('runs the plan of each server state and writes heartbeats only where writable', async () => {
    const st = await agent.until('both plans active', async () => {
      const s = await agent.monitorsStatus();
      return s.primary?.['level-plan'] === 'rw.yaml' && s.replica?.['level-plan'] === 'ro.yaml'
        ? s
        : undefined;
    });
    assert.equal(st.primary?.['level-state'], 'active');
    assert.equal(st.replica?.['level-state'], 'read-only');
    assert.match(st.replica?.state ?? '', /^read-only /);
    const hb = await agent.until('writer states', async () => {
      const s = await agent.monitorsStatus();
      return /^(sleep|write)$/.test(s.primary?.['heartbeat-writer'] ?? '') &&
        s.replica?.['heartbeat-writer'] === 'init: MySQL is read-only, sleeping 20s'
        ? s
        : undefined;
    });
    assert.ok(hb);
  });

  it('reports replica lag near zero in steady state, from the primary heartbeat', async () => {
    const lags = await agent.until('three lag readings', async () => {
      const l = replicaLags();
      return l.length >= 3 ? l : undefined;
    });
    for (const l of lags.slice(-3)) assert.ok(l >= 0 && l < 1000, `steady lag ${l}`);
    assert.match(agent.stdout(), /repl\.lag\.current = \d+ \(meta: source=primary\)/);
    assert.match(agent.stdout(), /repl\.running = 1/);
    const st = await agent.monitorsStatus();
    assert.match(st.replica?.['heartbeat-reader'] ?? '', /^\d+ ms lag from primary \(\), next in \d/);
  });

  it('shows a stalled SQL thread as growing lag, never 0, and recovers', async () => {
    const mark = agent.stdout().length;
    await pair.stopSqlThread();
    const t0 = Date.now();
    const grown = await agent.until(
      'lag above 2 s',
      async () => {
        const l = replicaLags(mark);
        return l.some((x) => x >= 2000) ? l : undefined;
      },
      15_000,
    );
    const stalledFor = Date.now() - t0;
    const max = Math.max(...grown);
    // The reader counts late lag from when the next heartbeat was due: up to one
    // heartbeat (1 s) less than the stall, never more than the stall itself.
    assert.ok(max <= stalledFor + 200, `lag ${max} ms after ${stalledFor} ms stalled`);
    assert.ok(max >= stalledFor - 2200, `lag ${max} ms after ${stalledFor} ms stalled`);
    const afterFirstLate = grown.slice(grown.findIndex((x) => x > 500));
    assert.ok(
      afterFirstLate.every((x) => x > 0),
      'a stalled replica never reads 0 lag',
    );
    await pair.startSqlThread();
    const back = agent.stdout().length;
    await agent.until('lag back under 1 s', async () => replicaLags(back).some((x) => x < 1000), 15_000);
  });

  it('moves the promoted replica to the active plan within `after` plus one interval', async () => {
    await pair.replica.query('STOP SLAVE');
    await pair.replica.query('SET GLOBAL read_only = 0');
    const t0 = Date.now();
    const st = await agent.until('replica active', async () => {
      const s = await agent.monitorsStatus();
      return s.replica?.['level-state'] === 'active' ? s : undefined;
    });
    const took = Date.now() - t0;
    assert.equal(st.replica?.['level-plan'], 'rw.yaml');
    // after (2 s) + one 1 s check + activation; polled every 100 ms.
    assert.ok(took < 4000, `promotion applied after ${took} ms`);
  });

  it('moves a killed server to the offline plan and back when it returns', async () => {
    await pair.replica.kill();
    const down = await agent.until(
      'replica offline',
      async () => {
        const s = await agent.monitorsStatus();
        return s.replica?.['level-state'] === 'offline' ? s : undefined;
      },
      15_000,
    );
    assert.equal(down.replica?.['level-plan'], 'off.yaml');
    assert.match(down.replica?.state ?? '', /^offline off\.yaml /);
    assert.equal(down.primary?.['level-state'], 'active', 'the other monitor is unaffected');

    await pair.replica.restart();
    const up = await agent.until(
      'replica back online',
      async () => {
        const s = await agent.monitorsStatus();
        const state = s.replica?.['level-state'];
        return state === 'read-only' || state === 'active' ? s : undefined;
      },
      30_000,
    );
    assert.match(up.replica?.['level-plan'] ?? '', /^(ro|rw)\.yaml$/);
  });
});
