/**
 * mysqld_exporter's `POST /-/reload` on sonde's exporter: the monitor restarts and builds
 * its connection again from my.cnf, so a server address changed in the file is used without
 * restarting the agent (a changed password needs no reload: sonde reads the credentials
 * again by itself after an access-denied error). A GET is refused (state changes only by POST).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { startAgent, type Agent } from '../helpers/agent.js';
import { httpGet, httpRequest } from './exporter-peers.js';

const PASSWORD = 'reload-Secret-3';
let server: MariaDB;
let other: MariaDB;
let agent: Agent;
let port: number;

const cnf = (db: MariaDB) =>
  `[client]\nhost = 127.0.0.1\nport = ${db.port}\nuser = exporter\npassword = ${PASSWORD}\n`;
/** The `port` variable of the server the exporter reads (undefined while it cannot). */
const servedPort = async (): Promise<number | undefined> => {
  const body = (await httpGet(`http://127.0.0.1:${port}/metrics`).catch(() => ({ body: '' }))).body;
  const m = /^mysql_global_variables_port (\d+)$/m.exec(body);
  return m === null ? undefined : Number(m[1]);
};

describe('POST /-/reload on the exporter', { timeout: 60_000 }, () => {
  before(async () => {
    [server, other] = await Promise.all([startMariaDB(), startMariaDB()]);
    for (const db of [server, other])
      await db.createUser('exporter', PASSWORD, ['PROCESS, REPLICATION CLIENT ON *.*']);
    port = await freePort();
    agent = await startAgent(
      `api:
  bind: {{API}}
monitors:
  - id: db1
    mycnf: my.cnf
    exporter:
      mode: legacy
      flags:
        web.listen-address: 127.0.0.1:${port}
`,
      { files: { 'my.cnf': cnf(server) } },
    );
  });

  after(async () => {
    await agent?.stop();
    await Promise.all([server?.stop(), other?.stop()]);
  });

  it('restarts the monitor with the server my.cnf names now', async () => {
    await agent.until('the first server served', async () =>
      (await servedPort()) === server.port ? true : undefined,
    );
    writeFileSync(join(agent.dir, 'my.cnf'), cnf(other));
    assert.equal(await servedPort(), server.port, 'a changed file alone changes nothing');
    assert.equal((await httpGet(`http://127.0.0.1:${port}/-/reload`)).status, 405, 'GET changes nothing');
    const r = await httpRequest('POST', `http://127.0.0.1:${port}/-/reload`, '');
    assert.equal(r.status, 200);
    await agent.until(
      'the other server served',
      async () => ((await servedPort()) === other.port ? true : undefined),
      30_000,
    );
    assert.ok(!agent.stdout().includes(PASSWORD) && !agent.stderr().includes(PASSWORD));
  });
});
