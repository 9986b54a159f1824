/**
 * mysqld_exporter's `POST /-/reload` on sonde's exporter, and SIGHUP: the monitor reads its
 * my.cnf again. A broken my.cnf or a missing TLS file keeps the running connection: the
 * reload is answered 500 with the error, logged, and the endpoint keeps serving. Changed
 * credentials are used by new connections without a restart; a server address changed in
 * the file restarts the monitor on the new server. A GET is refused (state changes only by
 * POST).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
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

  it('a broken my.cnf or a missing TLS file keeps the running connection and the endpoint', async () => {
    await agent.until('the first server served', async () =>
      (await servedPort()) === server.port ? true : undefined,
    );
    const file = join(agent.dir, 'my.cnf');
    for (const [broken, error] of [
      [`${cnf(other)}tls = sometimes\n`, /tls=sometimes is not allowed/],
      [`${cnf(other)}ssl-ca = ${join(agent.dir, 'gone-ca.pem')}\n`, /cannot read tls\.ca: .*gone-ca\.pem/],
      ['[client\n', /line 1: invalid section header/],
    ] as const) {
      writeFileSync(file, broken);
      const r = await httpRequest('POST', `http://127.0.0.1:${port}/-/reload`, '');
      assert.equal(r.status, 500);
      assert.match(r.body, error);
      assert.match(
        r.body,
        /^reload failed: POST \/-\/reload: the connection settings cannot be read, the running ones are kept/,
      );
      assert.equal(await servedPort(), server.port, 'still serving the first server');
    }
    // SIGHUP with the broken file: the same.
    agent.proc.kill('SIGHUP');
    await agent.until('the SIGHUP reload refused', async () =>
      /monitor-reload-error.*SIGHUP: the connection settings cannot be read/s.test(
        agent.stderr() + agent.stdout(),
      )
        ? true
        : undefined,
    );
    assert.equal(await servedPort(), server.port, 'still serving after SIGHUP');
    assert.equal(agent.proc.exitCode, null);
    // New credentials on the same server: used without a restart.
    await server.query(`ALTER USER 'exporter'@'%' IDENTIFIED BY 'reload-Other-4'`);
    writeFileSync(file, cnf(server).replace(PASSWORD, 'reload-Other-4'));
    const ok = await httpRequest('POST', `http://127.0.0.1:${port}/-/reload`, '');
    assert.deepEqual([ok.status, ok.body], [200, 'ok']);
    await server.query('KILL USER exporter');
    assert.equal(await servedPort(), server.port, 'served with the new password');
    await server.query(`ALTER USER 'exporter'@'%' IDENTIFIED BY '${PASSWORD}'`);
    writeFileSync(file, cnf(server));
    rmSync(join(agent.dir, 'gone-ca.pem'), { force: true });
  });

  it('restarts the monitor with the server my.cnf names now', async () => {
    await agent.until('the first server served', async () =>
      (await servedPort()) === server.port ? true : undefined,
    );
    writeFileSync(join(agent.dir, 'my.cnf'), cnf(other));
    assert.equal(await servedPort(), server.port, 'a changed file alone changes nothing');
    assert.equal((await httpGet(`http://127.0.0.1:${port}/-/reload`)).status, 405, 'GET changes nothing');
    const r = await httpRequest('POST', `http://127.0.0.1:${port}/-/reload`, '');
    assert.deepEqual([r.status, r.body], [200, 'ok']);
    await agent.until(
      'the other server served',
      async () => ((await servedPort()) === other.port ? true : undefined),
      30_000,
    );
    assert.ok(!agent.stdout().includes(PASSWORD) && !agent.stderr().includes(PASSWORD));
  });
});
