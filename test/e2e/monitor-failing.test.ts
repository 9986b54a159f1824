/**
 * A monitor that cannot do its work, as a newcomer meets it: a wrong password. Its status
 * texts name every state and plan (no `state: plan:` with empty names).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { startAgent, type Agent } from '../helpers/agent.js';

let db: MariaDB;
let agent: Agent;

describe('a monitor with a wrong password', () => {
  before(async () => {
    db = await startMariaDB();
    await db.createUser('sonde', 'Right-pw-71', ['PROCESS, REPLICATION CLIENT ON *.*']);
    agent = await startAgent(`api:
  bind: {{API}}
sinks:
  noop: {}
monitors:
  - id: good
    socket: ${db.socket}
    username: sonde
    password: Right-pw-71
  - id: bad
    socket: ${db.socket}
    username: sonde
    password: wrong-pw
`);
  });
  after(async () => {
    await agent?.stop();
    await db?.stop();
  });

  it('names every state and plan in its status texts', async () => {
    const st = await agent.until('the plan change error', async () => {
      const s = (await agent.monitorsStatus()).bad ?? {};
      return s['level-change-plan']?.includes('error') ? s : undefined;
    });
    assert.match(
      st['level-change-plan'] ?? '',
      /^state:none plan:none -> state:active plan:default-mysql: error preparing new plan default-mysql: .*Access denied/,
    );
    for (const [key, text] of Object.entries(st)) {
      assert.doesNotMatch(text, /\bstate: |\bplan::|\bplan: ->|\bplan:$/, `empty name in ${key}: ${text}`);
      assert.ok(!text.includes('wrong-pw'), `password in ${key}`);
    }
  });
});
