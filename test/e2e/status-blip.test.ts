/**
 * Status texts are a contract: a Blip user's scripts and alerts read `GET /status` and
 * `GET /status/monitors`. The agent watches a real MariaDB primary and replica (heartbeat
 * writers with a role, plan changing on, the replica's reader following that role), and each
 * key it shows is checked against the text Blip writes for it: Blip's shapes, Blip's
 * timestamps (Go's RFC 3339: `Z` in UTC), Blip's wording.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startReplicationPair, type ReplicationPair } from '../helpers/replication.js';
import { startAgent, type Agent } from '../helpers/agent.js';
import { HEARTBEAT_TABLE_DDL } from '../../src/heartbeat/table.js';

const PASSWORD = 'Status-blip-pw-3';
/** Blip's timestamp in a process running in UTC: RFC 3339, to the second, `Z`. */
const TS = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ';
/** A Go duration as Blip prints one: `1s`, `950ms`, `2.249204ms`, `1m0s`. */
const DUR = '(\\d+h)?(\\d+m)?\\d+(\\.\\d+)?(ns|µs|ms|s)';
const re = (pattern: string): RegExp => new RegExp(`^${pattern}$`);

let pair: ReplicationPair;
let agent: Agent;
type Status = Record<string, string>;
let server: Status;
let monitors: Record<string, Status>;

describe('status texts as Blip writes them (primary/replica pair)', { timeout: 120_000 }, () => {
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
  role: main
plans:
  files: [rw.yaml, ro.yaml]
  change:
    active:
      plan: rw.yaml
    read-only:
      plan: ro.yaml
monitors:
  - id: primary
    hostname: 127.0.0.1:${pair.primary.port}
  - id: replica
    hostname: 127.0.0.1:${pair.replica.port}
`,
      {
        env: { TZ: 'UTC' },
        files: {
          'rw.yaml': 'rw:\n  freq: 1s\n  collect:\n    status.global:\n      metrics: [threads_connected]\n',
          'ro.yaml':
            'ro:\n  freq: 1s\n  collect:\n    repl.lag:\n      options:\n        writer: blip\n        source-role: main\n',
        },
      },
    );
    // Steady state: both plans active, the replica reading lag, the primary writing.
    monitors = await agent.until(
      'both monitors collecting, the replica reading heartbeats',
      async () => {
        const s = await agent.monitorsStatus();
        const p = s.primary ?? {};
        const r = s.replica ?? {};
        return p['level-plan'] === 'rw.yaml' &&
          r['level-plan'] === 'ro.yaml' &&
          /lag from/.test(r['heartbeat-reader'] ?? '') &&
          /^last collected/.test(p['level-collect'] ?? '') &&
          /^last collected/.test(r['level-collect'] ?? '') &&
          // each heartbeat writer past its first insert (the replica's learns it is read-only)
          ![p, r].some((m) => (m['heartbeat-writer'] ?? 'first insert') === 'first insert')
          ? s
          : undefined;
      },
      60_000,
    );
    server = (await (await fetch(`${agent.base}/status`)).json()) as Status;
  });

  after(async () => {
    await agent?.stop();
    await pair?.stop();
  });

  const p = (): Status => monitors.primary ?? {};
  const r = (): Status => monitors.replica ?? {};

  it('started: an RFC 3339 time, Z in UTC', () => {
    assert.match(server.started ?? '', re(TS));
  });

  it('version: the version without v', () => {
    assert.match(server.version ?? '', /^\d+\.\d+\.\d+$/);
  });

  it('server: running since <ts>', () => {
    assert.match(server.server ?? '', re(`running since ${TS}`));
  });

  it('monitor-loader: <n> monitors started at <ts>', () => {
    assert.match(server['monitor-loader'] ?? '', re(`2 monitors started at ${TS}`));
  });

  it('monitors and uptime: whole numbers', () => {
    assert.equal(server.monitors, '2');
    assert.match(server.uptime ?? '', /^\d+$/);
  });

  it('monitor: running since <ts>', () => {
    for (const s of [p(), r()]) assert.match(s.monitor ?? '', re(`running since ${TS}`));
  });

  it('dsn: <user>:...@tcp(<host>)/?interpolateParams=true&parseTime=true', () => {
    assert.equal(
      p().dsn,
      `sonde:...@tcp(127.0.0.1:${pair.primary.port})/?interpolateParams=true&parseTime=true`,
    );
  });

  it('heartbeat-reader: <lag> ms lag from <src_id> (<source-role>), next in <dur>', () => {
    assert.match(r()['heartbeat-reader'] ?? '', re(`\\d+ ms lag from primary \\(main\\), next in ${DUR}`));
    assert.equal(r()['error:heartbeat-reader'], undefined);
  });

  it('heartbeat-writer: sleep or write on the primary; init: MySQL is read-only, sleeping 20s on the replica', () => {
    assert.match(p()['heartbeat-writer'] ?? '', /^(sleep|write)$/);
    assert.equal(r()['heartbeat-writer'], 'init: MySQL is read-only, sleeping 20s');
  });

  it('state: <state> <plan> <RFC 3339 time>; the state found at first contact has no plan, as in Blip', () => {
    assert.match(p().state ?? '', re(`active (rw\\.yaml)? ${TS}`));
    assert.match(r().state ?? '', re(`read-only (ro\\.yaml)? ${TS}`));
    assert.equal(p()['state-pending'], undefined);
  });

  it('plan-changer: one of the texts Blip writes', () => {
    for (const s of [p(), r()])
      assert.match(
        s['plan-changer'] ?? '',
        /^(running|checking HA standby|checking MySQL read-only|calling LevelCollector\.ChangePlan: \S+ \S*)$/,
      );
  });

  it('level-state, level-plan, engine-plan: the state and the plan', () => {
    assert.deepEqual(
      [p()['level-state'], p()['level-plan'], p()['engine-plan']],
      ['active', 'rw.yaml', 'rw.yaml'],
    );
    assert.deepEqual(
      [r()['level-state'], r()['level-plan'], r()['engine-plan']],
      ['read-only', 'ro.yaml', 'ro.yaml'],
    );
  });

  it('level-collector: idle; started collecting <plan>/<level> at <ts>', () => {
    assert.match(p()['level-collector'] ?? '', re(`idle; started collecting rw\\.yaml/rw at ${TS}`));
  });

  it('level-collect: <plan>/<level>: collecting | sending | last collected and sent metrics for <plan>/<level> at <ts> in <dur>', () => {
    assert.match(
      p()['level-collect'] ?? '',
      re(
        `(rw\\.yaml/rw: (collecting|sending)|last collected and sent metrics for rw\\.yaml/rw at ${TS} in ${DUR})`,
      ),
    );
  });

  it('level-sinks: idle or <plan>/<level>/<n>: sending to <sink>', () => {
    assert.match(p()['level-sinks'] ?? '', /^(idle|rw\.yaml\/rw\/\d+: sending to log)$/);
  });

  it('engine-collect: <plan>/<level>/<n>: collecting … done: <d> started, <r> domains <v> values collected, <dur> runtime, <e> error', () => {
    assert.match(
      p()['engine-collect'] ?? '',
      re(
        `rw\\.yaml/rw/\\d+: (collecting|receiving metrics, \\d+ collectors running|logging errors|done: \\d+ started, \\d+ domains \\d+ values collected, ${DUR} runtime, \\d+ error)`,
      ),
    );
  });

  it('no error: keys in a healthy steady state', () => {
    for (const s of [p(), r()])
      assert.deepEqual(
        Object.keys(s).filter((k) => k.startsWith('error:')),
        [],
      );
  });
});
