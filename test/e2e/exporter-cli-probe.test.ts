/**
 * mysqld_exporter's multi-target mode on the command line's own listener, through the real
 * sonde binary and two throwaway MariaDB servers: `/probe?target=host:port` with the
 * `[client]` credentials or those of the section `auth_module` names (`client.<x>` over
 * `[client]`, any other name alone), `/metrics?target=`, a child section taking its password
 * from MYSQLD_EXPORTER_PASSWORD, the refusals, and `--probe.allowed-targets`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSondeCli, type CliExporter } from '../helpers/exporter-cli.js';
import { freePort, startMariaDB, type MariaDB } from '../helpers/mariadb.js';

const ENV_PASSWORD = 'env-Secret-8';

let a: MariaDB;
let b: MariaDB;
let dir: string;
let sonde: CliExporter;

const up = (body: string) => /^mysql_up (\d)$/m.exec(body)?.[1];
const port = (body: string) => /^mysql_global_variables_port (\d+)$/m.exec(body)?.[1];

describe("mysqld_exporter's /probe on the command line's listener", { timeout: 120_000 }, () => {
  before(async () => {
    [a, b] = await Promise.all([startMariaDB(), startMariaDB()]);
    await a.createUser('exporter', ENV_PASSWORD, ['PROCESS ON *.*']);
    // On b only: the users of the other sections.
    await b.createUser('other', 'other-Pw-1', ['PROCESS ON *.*']);
    await b.createUser('third', 'third-Pw-2', ['PROCESS ON *.*']);
    await b.createUser('envu', ENV_PASSWORD, ['PROCESS ON *.*']);
    dir = mkdtempSync(join(tmpdir(), 'sonde-cli-probe-'));
    const cnf = join(dir, 'my.cnf');
    writeFileSync(
      cnf,
      [
        '[client]',
        'user = exporter',
        'host = 127.0.0.1',
        `port = ${a.port}`,
        '[client.servers]',
        'user = other',
        'password = other-Pw-1',
        '[client.envpw]',
        'user = envu',
        '[servers]',
        'user = third',
        'password = third-Pw-2',
        '',
      ].join('\n'),
    );
    const address = `127.0.0.1:${await freePort()}`;
    sonde = await startSondeCli(['--config.my-cnf', cnf, `--web.listen-address=${address}`], address, {
      env: { MYSQLD_EXPORTER_PASSWORD: ENV_PASSWORD },
    });
  });
  after(async () => {
    await sonde?.stop();
    await Promise.all([a?.stop(), b?.stop()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('/metrics scrapes its own server; /metrics?target= and /probe?target= the target', async () => {
    const own = await sonde.get('/metrics');
    assert.deepEqual([up(own.body), port(own.body)], ['1', String(a.port)]);
    const probed = await sonde.get(`/probe?target=127.0.0.1:${a.port}`);
    assert.deepEqual([probed.status, up(probed.body), port(probed.body)], [200, '1', String(a.port)]);
    // [client]'s user does not exist on b: the target is b, the credentials [client]'s.
    const other = await sonde.get(`/probe?target=127.0.0.1:${b.port}`);
    assert.deepEqual([other.status, up(other.body)], [200, '0']);
    const viaMetrics = await sonde.get(`/metrics?target=127.0.0.1:${a.port}&collect[]=global_variables`);
    assert.deepEqual([up(viaMetrics.body), port(viaMetrics.body)], ['1', String(a.port)]);
    assert.match(viaMetrics.body, /^# TYPE process_cpu_seconds_total counter$/m);
  });

  it('auth_module names the section: client.<x> over [client], any other name alone', async () => {
    const t = `127.0.0.1:${b.port}`;
    const servers = await sonde.get(`/probe?target=${t}&auth_module=client.servers`);
    assert.deepEqual([up(servers.body), port(servers.body)], ['1', String(b.port)]);
    const alone = await sonde.get(`/probe?target=${t}&auth_module=servers`);
    assert.deepEqual([up(alone.body), port(alone.body)], ['1', String(b.port)]);
    // [client.envpw] has no password: [client] has none either, so MYSQLD_EXPORTER_PASSWORD.
    const env = await sonde.get(`/probe?target=${t}&auth_module=client.envpw`);
    assert.equal(up(env.body), '1');
  });

  it('refuses what names nothing, before connecting', async () => {
    assert.deepEqual(await sonde.get('/probe'), { status: 400, body: 'target is required\n' });
    const bad = await sonde.get('/probe?target=nohost');
    assert.equal(bad.status, 400);
    assert.match(bad.body, /invalid target "nohost": want host:port or unix:\/\/<path>/);
    const none = await sonde.get(`/probe?target=127.0.0.1:${b.port}&auth_module=nosuch`);
    assert.equal(none.status, 400);
    assert.match(none.body, /auth_module nosuch: no \[nosuch\] section in /);
    assert.ok(!`${sonde.stdout()}${sonde.stderr()}`.includes(ENV_PASSWORD));
  });

  it("/-/reload's outcome in mysqld_exporter's reload gauges", async () => {
    const reload = () => fetch(`http://${sonde.address}/-/reload`, { method: 'POST' });
    const gauge = async () =>
      /^mysqld_exporter_config_last_reload_successful (\d)$/m.exec((await sonde.get('/metrics')).body)?.[1];
    assert.equal(await gauge(), '1');
    const cnf = join(dir, 'my.cnf');
    const good = readFileSync(cnf, 'utf8');
    writeFileSync(cnf, `${good}[client]\ntls = sometimes\n`);
    assert.equal((await reload()).status, 500);
    assert.equal(await gauge(), '0');
    writeFileSync(cnf, good);
    assert.equal((await reload()).status, 200);
    assert.equal(await gauge(), '1');
  });

  it('--probe.allowed-targets restricts the targets to the hosts and networks it lists', async () => {
    const address = `127.0.0.1:${await freePort()}`;
    const cnf = join(dir, 'my.cnf');
    const limited = await startSondeCli(
      [
        '--config.my-cnf',
        cnf,
        `--web.listen-address=${address}`,
        `--probe.allowed-targets=127.0.0.1:${a.port}`,
      ],
      address,
      { env: { MYSQLD_EXPORTER_PASSWORD: ENV_PASSWORD } },
    );
    try {
      const ok = await limited.get(`/probe?target=127.0.0.1:${a.port}`);
      assert.deepEqual([ok.status, up(ok.body)], [200, '1']);
      const refused = await limited.get(`/probe?target=127.0.0.1:${b.port}&auth_module=client.servers`);
      assert.equal(refused.status, 403);
      assert.equal(refused.body, `target "127.0.0.1:${b.port}" is not allowed (--probe.allowed-targets)\n`);
      assert.equal((await limited.get(`/metrics?target=127.0.0.1:${b.port}`)).status, 403);
    } finally {
      await limited.stop();
    }
    const netAddr = `127.0.0.1:${await freePort()}`;
    const byNet = await startSondeCli(
      [
        '--config.my-cnf',
        cnf,
        `--web.listen-address=${netAddr}`,
        '--probe.allowed-targets=10.0.0.0/8,::1/128',
      ],
      netAddr,
      { env: { MYSQLD_EXPORTER_PASSWORD: ENV_PASSWORD } },
    );
    try {
      assert.equal((await byNet.get(`/probe?target=127.0.0.1:${a.port}`)).status, 403);
      assert.equal(
        (await byNet.get(`/probe?target=localhost:${a.port}`)).status,
        403,
        'a name is not resolved',
      );
    } finally {
      await byNet.stop();
    }
  });
});
