/**
 * The agent's probe listener secured like the exporter toolkit: `probe.web-config-file` with
 * TLS and a bcrypt basic-auth user. A real Prometheus discovers the monitors on `/targets`
 * and scrapes them through `/probe`, both over HTTPS with basic auth, and returns every
 * target's `mysql_up`; without credentials, or with a wrong password, the listener answers 401.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { freePort, startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { startAgent, type Agent } from '../helpers/agent.js';
import { makeTlsFiles, type TlsFiles } from '../helpers/tls.js';
import { startPrometheusJobs, waitFor, type PrometheusPeer } from './exporter-peers.js';

const PASSWORD = 'probe-tls-Secret-7';
const WEB_PASSWORD = 'scraper-pw-9';

let alpha: MariaDB;
let beta: MariaDB;
let agent: Agent;
let tls: TlsFiles;
let port: number;
let prometheus: PrometheusPeer | undefined;

/** GET over HTTPS trusting the test CA; `auth` as `user:password`. */
function get(path: string, auth?: string): Promise<{ status: number; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, ca: readFileSync(tls.ca), ...(auth === undefined ? {} : { auth }) },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('probe listener over TLS with basic auth', { timeout: 120_000 }, () => {
  before(async () => {
    [alpha, beta] = await Promise.all([startMariaDB(), startMariaDB()]);
    for (const db of [alpha, beta])
      await db.createUser('sonde', PASSWORD, ['PROCESS, REPLICATION CLIENT ON *.*']);
    tls = makeTlsFiles();
    const web = join(tls.dir, 'web.yml');
    writeFileSync(
      web,
      [
        'tls_server_config:',
        `  cert_file: ${tls.cert}`,
        `  key_file: ${tls.key}`,
        'basic_auth_users:',
        `  prometheus: ${bcrypt.hashSync(WEB_PASSWORD, 8)}`,
        '',
      ].join('\n'),
    );
    port = await freePort();
    agent = await startAgent(
      `api:
  bind: {{API}}
probe:
  bind: 127.0.0.1:${port}
  web-config-file: ${web}
mysql:
  username: sonde
  password: ${PASSWORD}
sinks:
  noop:
monitors:
  - id: alpha
    hostname: 127.0.0.1:${alpha.port}
  - id: beta
    hostname: 127.0.0.1:${beta.port}
`,
    );
    await agent.until(
      'probe listener up',
      async () => (await get('/targets', `prometheus:${WEB_PASSWORD}`)).status === 200,
    );
  });

  after(async () => {
    await prometheus?.stop();
    await agent?.stop();
    await Promise.all([alpha?.stop(), beta?.stop()]);
    if (tls !== undefined) rmSync(tls.dir, { recursive: true, force: true });
  });

  it('answers 401 with a Basic challenge without credentials or with a wrong password', async () => {
    for (const path of ['/targets', '/probe?target=alpha', '/metrics']) {
      const none = await get(path);
      assert.equal(none.status, 401, path);
      assert.match(String(none.headers['www-authenticate']), /^Basic/);
      assert.equal((await get(path, 'prometheus:wrong')).status, 401, path);
    }
  });

  it('is discovered over HTTPS and scraped through /probe by a real Prometheus: mysql_up of both targets', async () => {
    const secured = [
      `      basic_auth: {username: prometheus, password: ${WEB_PASSWORD}}`,
      `      tls_config: {ca_file: ${tls.ca}}`,
    ];
    prometheus = await startPrometheusJobs([
      [
        '  - job_name: mysql',
        '    metrics_path: /probe',
        '    scheme: https',
        `    basic_auth: {username: prometheus, password: ${WEB_PASSWORD}}`,
        `    tls_config: {ca_file: ${tls.ca}}`,
        '    http_sd_configs:',
        `      - url: https://127.0.0.1:${port}/targets`,
        '        refresh_interval: 1s',
        ...secured.map((l) => `  ${l}`),
        '    relabel_configs:',
        '      - source_labels: [__address__]',
        '        target_label: __param_target',
        '      - source_labels: [__param_target]',
        '        target_label: instance',
        '      - target_label: __address__',
        `        replacement: 127.0.0.1:${port}`,
      ].join('\n'),
    ]);
    const prom = prometheus;
    const up = await waitFor(
      'mysql_up of both targets',
      async () => {
        const r = await prom.query('mysql_up');
        return r.length === 2 ? r : undefined;
      },
      60_000,
    );
    assert.deepEqual(up.map((s) => [s.metric.instance, s.value[1]]).sort(), [
      ['alpha', '1'],
      ['beta', '1'],
    ]);
  });
});
