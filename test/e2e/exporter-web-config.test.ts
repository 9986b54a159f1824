/**
 * The exporter behind a web configuration file, scraped by a real Prometheus over HTTPS:
 * basic auth (right password, wrong password, none), client certificates
 * (RequireAndVerifyClientCert: signed by the client CA, none, self-signed), and a
 * comma-separated listen address list. The same web configuration file is given to the real
 * mysqld_exporter 0.14, which Prometheus scrapes with the same settings: the format is the
 * one mysqld_exporter users already have.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { builtinCollectors } from '../../src/collectors/builtin.js';
import type { ExporterHandle } from '../../src/core/exporter.js';
import { NO_EVENTS } from '../../src/core/events.js';
import { type PooledDb } from '../../src/db/pool.js';
import { startExporter } from '../../src/exporter/server.js';
import { createScrapeReader, type ScrapeReader } from '../../src/exporter/scrape-reader.js';
import { defaultPlan } from '../../src/plan/defaults.js';
import { runSonde, writeConfig } from '../helpers/agent.js';
import { freePort, type MariaDB, rootDb, startMariaDB } from '../helpers/mariadb.js';
import { makeClientCert, makeTlsFiles, type TlsFiles } from '../helpers/tls.js';
import {
  httpGet,
  rootSocketDsn,
  startMysqldExporter,
  startPrometheusJobs,
  waitFor,
  type Peer,
  type PrometheusPeer,
} from './exporter-peers.js';

const PASSWORD = 'scrape-pw';

let server: MariaDB;
let db: PooledDb;
let tls: TlsFiles;
let basicSonde: ExporterHandle;
let mtlsSonde: ExporterHandle;
let real: Peer;
let prometheus: PrometheusPeer;
const readers: ScrapeReader[] = [];
const status = new Map<string, string>();

/** The web config file with TLS and basic auth: only keys mysqld_exporter 0.14 also knows. */
function basicAuthYaml(hash: string): string {
  return [
    'tls_server_config:',
    '  cert_file: server.pem',
    '  key_file: server-key.pem',
    '  min_version: TLS12',
    '  max_version: TLS13',
    '  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384]',
    '  prefer_server_cipher_suites: true',
    '  curve_preferences: [X25519, CurveP256]',
    'http_server_config:',
    '  http2: true',
    '  headers:',
    '    X-Frame-Options: deny',
    '    X-Content-Type-Options: nosniff',
    'basic_auth_users:',
    `  prometheus: ${hash}`,
    '',
  ].join('\n');
}

const MTLS_YAML = [
  'tls_server_config:',
  '  cert_file: server.pem',
  '  key_file: server-key.pem',
  '  client_auth_type: RequireAndVerifyClientCert',
  '  client_ca_file: ca.pem',
  '',
].join('\n');

/** One Prometheus job scraping `target` over HTTPS with these extra lines. */
function job(name: string, target: string, extra: string[]): string {
  return [
    `  - job_name: ${name}`,
    '    scheme: https',
    '    static_configs:',
    `      - targets: ['${target}']`,
    '    tls_config:',
    `      ca_file: ${tls.ca}`,
    ...extra,
  ].join('\n');
}

const auth = (password: string): string[] => [
  '    basic_auth:',
  '      username: prometheus',
  `      password: ${password}`,
];

/** One HTTPS GET trusting the test CA: status and headers. */
function get(
  address: string,
  authorization?: string,
): Promise<{ status: number; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `https://${address}/metrics`,
      {
        ca: readFileSync(tls.ca),
        headers: authorization !== undefined ? { authorization } : {},
        agent: false,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

interface Target {
  labels: Record<string, string>;
  health: string;
  lastError: string;
}

describe('exporter web config file, scraped by a real Prometheus', { timeout: 180_000 }, () => {
  before(async () => {
    server = await startMariaDB();
    db = rootDb(server.socket);
    const plan = defaultPlan('default-exporter');
    assert.ok(plan !== undefined);
    tls = makeTlsFiles();
    makeClientCert(tls, 'scraper', ['DNS:scraper.example']);
    makeClientCert(tls, 'rogue', ['DNS:scraper.example'], { selfSigned: true });
    const basicFile = join(tls.dir, 'web-basic.yml');
    writeFileSync(basicFile, basicAuthYaml(bcrypt.hashSync(PASSWORD, 10)));
    const mtlsFile = join(tls.dir, 'web-mtls.yml');
    writeFileSync(mtlsFile, MTLS_YAML);
    const common = {
      path: '/metrics',
      status: { set: (k: string, v: string) => status.set(k, v), delete: (k: string) => status.delete(k) },
      events: NO_EVENTS,
    };
    const reader = (): ScrapeReader => {
      const r = createScrapeReader({ monitorId: 'db1', db, plan, collectors: builtinCollectors() });
      readers.push(r);
      return r;
    };
    basicSonde = await startExporter({
      ...common,
      monitorId: 'db1',
      listen: '127.0.0.1:0,127.0.0.1:0',
      webConfigFile: basicFile,
      source: reader(),
    });
    mtlsSonde = await startExporter({
      ...common,
      monitorId: 'db2',
      listen: '127.0.0.1:0',
      webConfigFile: mtlsFile,
      source: reader(),
    });
    real = await startMysqldExporter(rootSocketDsn(server.socket), undefined, { webConfigFile: basicFile });
    const [a0, a1] = basicSonde.addresses;
    const clientCert = (name: string): string[] => [
      `      cert_file: ${join(tls.dir, `${name}.pem`)}`,
      `      key_file: ${join(tls.dir, `${name}-key.pem`)}`,
    ];
    prometheus = await startPrometheusJobs([
      job('basic-ok', a0 ?? '', auth(PASSWORD)),
      job('basic-ok-second-address', a1 ?? '', auth(PASSWORD)),
      job('basic-wrong', a0 ?? '', auth('not-it')),
      job('basic-none', a0 ?? '', []),
      job('mtls-ok', mtlsSonde.address, clientCert('scraper')),
      job('mtls-none', mtlsSonde.address, []),
      job('mtls-self-signed', mtlsSonde.address, clientCert('rogue')),
      job('real-basic-ok', real.address, auth(PASSWORD)),
      job('real-basic-wrong', real.address, auth('not-it')),
    ]);
  });

  after(async () => {
    await prometheus?.stop();
    await real?.stop();
    await basicSonde?.close();
    await mtlsSonde?.close();
    for (const r of readers) await r.close();
    await db?.close();
    await server?.stop();
    if (tls !== undefined) rmSync(tls.dir, { recursive: true, force: true });
  });

  it('lists both listen addresses in the status', () => {
    assert.equal(status.get('exporter'), `listening on ${mtlsSonde.address}`);
    assert.equal(basicSonde.addresses.length, 2);
  });

  it('answers 401 with WWW-Authenticate: Basic without credentials or with a wrong password, like mysqld_exporter', async () => {
    const wrong = `Basic ${Buffer.from('prometheus:nope').toString('base64')}`;
    const right = `Basic ${Buffer.from(`prometheus:${PASSWORD}`).toString('base64')}`;
    for (const address of [basicSonde.address, real.address]) {
      const none = await get(address);
      assert.equal(none.status, 401, address);
      assert.equal(none.headers['www-authenticate'], 'Basic', address);
      assert.equal((await get(address, wrong)).status, 401, address);
      const ok = await get(address, right);
      assert.equal(ok.status, 200, address);
      assert.equal(ok.headers['x-frame-options'], 'deny', address);
    }
  });

  it('is scraped over HTTPS: up and mysql_up where the credentials are right, 401 or a refused handshake otherwise', async () => {
    const p = prometheus;
    const targets = await waitFor(
      'every target scraped',
      async () => {
        const r = await httpGet(`http://${p.address}/api/v1/targets`);
        const list = (JSON.parse(r.body) as { data: { activeTargets: Target[] } }).data.activeTargets;
        return list.length === 9 && list.every((t) => t.health !== 'unknown') ? list : undefined;
      },
      60_000,
    );
    const byJob = new Map(targets.map((t) => [t.labels.job ?? '', t]));
    for (const name of ['basic-ok', 'basic-ok-second-address', 'mtls-ok', 'real-basic-ok'])
      assert.equal(byJob.get(name)?.health, 'up', `${name}: ${byJob.get(name)?.lastError ?? ''}`);
    for (const name of ['basic-wrong', 'basic-none', 'real-basic-wrong']) {
      assert.equal(byJob.get(name)?.health, 'down', name);
      assert.match(byJob.get(name)?.lastError ?? '', /401 Unauthorized/, name);
    }
    for (const name of ['mtls-none', 'mtls-self-signed']) {
      assert.equal(byJob.get(name)?.health, 'down', name);
      assert.notEqual(byJob.get(name)?.lastError, '', name);
    }
    for (const name of ['basic-ok', 'basic-ok-second-address', 'mtls-ok', 'real-basic-ok']) {
      const up = await waitFor(`mysql_up of ${name}`, async () => {
        const res = await p.query(`mysql_up{job="${name}"}`);
        return res.length === 1 ? res : undefined;
      });
      assert.equal(up[0]?.value[1], '1', name);
    }
    const none = await p.query('mysql_up{job=~"basic-wrong|basic-none|mtls-none|mtls-self-signed"}');
    assert.deepEqual(none, []);
  });
});

describe('exporter web config file boot errors', () => {
  it('refuses to boot with one line naming the monitor, the flag, the file and the key', async () => {
    const port = await freePort();
    const [dir, path] = writeConfig(
      [
        'api:',
        '  disable: true',
        'monitors:',
        `  - id: m1`,
        `    hostname: 127.0.0.1:${await freePort()}`,
        '    username: sonde',
        '    exporter:',
        '      mode: dual',
        '      flags:',
        `        web.listen-address: 127.0.0.1:${port}`,
        '        web.config.file: web.yml',
        '',
      ].join('\n'),
    );
    const hash = bcrypt.hashSync('pw', 4);
    const cases: [string, string][] = [
      [
        `basic_auth_users:\n  alice: ${hash}\nhttp_server_config:\n  http3: true\n`,
        'http_server_config.http3: unknown key',
      ],
      ['basic_auth_users:\n  alice: hunter2\n', 'basic_auth_users.alice: not a bcrypt hash'],
      [
        'tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n',
        'tls_server_config.cert_file: cannot read c.pem: ENOENT',
      ],
    ];
    try {
      for (const [text, want] of cases) {
        writeFileSync(join(dir, 'web.yml'), text);
        const res = await runSonde(['--config', path], { cwd: dir });
        assert.equal(res.code, 1, res.stderr);
        const line = res.stderr.split('\n').find((l) => l.includes('web.config.file')) ?? '';
        assert.ok(line.includes(`monitor m1: exporter.flags.web.config.file: web.yml: ${want}`), res.stderr);
        if (text.includes('hunter2'))
          assert.ok(!res.stderr.includes('hunter2'), 'the bad hash is not printed');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
