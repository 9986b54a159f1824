/**
 * A healthy demo looks healthy: the demo's database setup (least-privilege MariaDB account,
 * heartbeat table) and config, run by the real agent against a throwaway MariaDB, show no
 * `error:` status key after several collections and exporter scrapes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { freePort, startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { startAgent, type Agent } from '../helpers/agent.js';
import { DEMO_SERVER_ARGS, demoConfig, setupDemoDatabase } from '../helpers/demo.js';

let db: MariaDB;
let agent: Agent | undefined;
let exporterPort = 0;

describe('demo monitor on MariaDB', () => {
  before(async () => {
    db = await startMariaDB({ args: [...DEMO_SERVER_ARGS] });
    await setupDemoDatabase(db);
    exporterPort = await freePort();
    agent = await startAgent(
      demoConfig({ apiBind: '{{API}}', socket: db.socket, exporterListen: `127.0.0.1:${exporterPort}` }),
    );
  });
  after(async () => {
    await agent?.stop();
    await db?.stop();
  });

  it('shows no error key once every domain of the default plan has run', async () => {
    const a = agent!;
    // Every domain of the default plan's two frequent levels has a `domain:<name>` key once it ran.
    const domains = ['status.global', 'innodb', 'repl', 'repl.lag', 'var.global'];
    await a.until(
      'the first collections',
      async () => {
        const s = (await a.monitorsStatus())['demo'] ?? {};
        return domains.every((d) => s[`domain:${d}`] !== undefined);
      },
      60_000,
    );
    // Two exporter scrapes (the mysqld_exporter collectors run on each).
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`http://127.0.0.1:${exporterPort}/metrics`);
      assert.equal(res.status, 200);
      assert.match(await res.text(), /^mysql_up 1$/m);
    }
    // A few more heartbeat reads (every 3 s without a heartbeat to follow) and collections.
    const first = (await a.monitorsStatus())['demo']?.['level-collect'] ?? '';
    await a.until(
      'more collections',
      async () => {
        const s = (await a.monitorsStatus())['demo'] ?? {};
        return s['level-collect'] !== first;
      },
      30_000,
    );
    const status = (await a.monitorsStatus())['demo'] ?? {};
    const errors = Object.entries(status).filter(([k]) => k.startsWith('error:'));
    assert.deepEqual(errors, [], JSON.stringify(status, null, 1));
    // The demo writes its own heartbeat and follows no other: information, not an error.
    assert.match(status['heartbeat-reader'] ?? '', /^no heartbeat from another source in blip\.heartbeat /);
    for (const [k, v] of Object.entries(status)) assert.doesNotMatch(v, / {2}/, `double space in ${k}: ${v}`);
  });
});
