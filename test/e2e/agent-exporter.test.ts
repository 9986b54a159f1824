/**
 * The mysqld_exporter emulation inside the running agent: a `dual` monitor serves /metrics
 * and still feeds its sinks; a `legacy` monitor only serves /metrics; `mysql_up` drops to 0
 * (HTTP 200) while the server is down and comes back.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { freePort, startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { startAgent, type Agent } from '../helpers/agent.js';

let db: MariaDB;
let agent: Agent;
let dualPort: number;
let legacyPort: number;

async function scrape(port: number): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  return { status: res.status, body: await res.text() };
}

function sample(body: string, name: string): number | undefined {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(body);
  return m ? Number(m[1]) : undefined;
}

describe('exporter emulation in the agent', () => {
  before(async () => {
    db = await startMariaDB();
    await db.createUser('sonde', 'exp-Secret-12', ['PROCESS, REPLICATION CLIENT ON *.*']);
    dualPort = await freePort();
    legacyPort = await freePort();
    agent = await startAgent(
      `api:
  bind: {{API}}
mysql:
  username: sonde
  password: exp-Secret-12
monitors:
  - id: dual
    socket: ${db.socket}
    plan: kpi.yaml
    plans:
      files: [kpi.yaml, prom.yaml]
    exporter:
      mode: dual
      plan: prom.yaml
      flags:
        web.listen-address: 127.0.0.1:${dualPort}
  - id: legacy
    hostname: 127.0.0.1:${db.port}
    plans:
      files: [prom.yaml]
    exporter:
      mode: legacy
      plan: prom.yaml
      flags:
        web.listen-address: 127.0.0.1:${legacyPort}
`,
      {
        files: {
          'kpi.yaml':
            'kpi:\n  freq: 1s\n  collect:\n    status.global:\n      metrics: [threads_connected]\n',
          'prom.yaml':
            'prom:\n  freq: 10s\n  collect:\n    status.global:\n      options:\n        all: "yes"\n    var.global:\n      options:\n        all: "yes"\n    innodb:\n      options:\n        all: enabled\n',
        },
      },
    );
  });

  after(async () => {
    await agent?.stop();
    await db?.stop();
  });

  it('serves mysqld_exporter metrics from a dual monitor, which keeps feeding its sinks', async () => {
    const r = await agent.until('dual exporter up', async () => {
      const s = await scrape(dualPort).catch(() => undefined);
      return s && sample(s.body, 'mysql_up') === 1 ? s : undefined;
    });
    assert.equal(r.status, 200);
    const [row] = await db.query('SELECT @@max_connections AS m');
    assert.equal(sample(r.body, 'mysql_global_variables_max_connections'), Number(row?.m));
    assert.match(r.body, /^# TYPE mysql_global_status_threads_connected untyped$/m);
    assert.match(r.body, /^mysql_version_info\{/m);
    await agent.until('dual log sink output', async () => agent.stdout().includes('# monitor:  dual'));
    const st = await agent.monitorsStatus();
    assert.equal(st.dual?.exporter, `listening on 127.0.0.1:${dualPort}`);
    assert.match(st.dual?.monitor ?? '', /^running since /);
  });

  it('runs only the exporter for a legacy monitor', async () => {
    const r = await agent.until('legacy exporter up', async () => {
      const s = await scrape(legacyPort).catch(() => undefined);
      return s && sample(s.body, 'mysql_up') === 1 ? s : undefined;
    });
    assert.ok(sample(r.body, 'mysql_global_status_uptime') !== undefined);
    const st = await agent.monitorsStatus();
    assert.equal(st.legacy?.monitor, 'running in exporter legacy mode');
    assert.equal(st.legacy?.['level-plan'], undefined, 'no level collector in legacy mode');
    assert.ok(!agent.stdout().includes('# monitor:  legacy'), 'legacy mode feeds no sink');
  });

  it('answers mysql_up 0 with HTTP 200 while the server is down, and 1 when it is back', async () => {
    await db.kill();
    const down = await agent.until('mysql_up 0', async () => {
      const s = await scrape(legacyPort);
      return sample(s.body, 'mysql_up') === 0 ? s : undefined;
    });
    assert.equal(down.status, 200);
    await db.restart();
    await agent.until(
      'mysql_up 1 again',
      async () => sample((await scrape(legacyPort)).body, 'mysql_up') === 1,
      30_000,
    );
    assert.ok(!agent.stdout().includes('exp-Secret-12') && !agent.stderr().includes('exp-Secret-12'));
  });
});
