import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { type Row } from '../../core/db.js';
import { MetricType } from '../../core/metrics.js';
import { type PooledDb } from '../../db/pool.js';
import { type MariaDB, rootDb, startMariaDB } from '../../../test/helpers/mariadb.js';
import { FakeDb, NO_SIGNAL, planOf } from '../kit/test-helpers.js';
import { HAVE_SSL_SQL, TLS_CHANNEL_SQL, TlsCollector, checkTlsMetrics, help, tlsValue } from './index.js';

const enabled = (value: number) => ({ name: 'enabled', value, type: MetricType.Bool });
const mysqlError = (errno: number, message: string) => Object.assign(new Error(message), { errno });

/** A MySQL-flavored FakeDb: have_ssl answers or throws, tls_channel_status answers or throws. */
function fake(version: string, haveSsl: string | Error, channel: Row[] | Error): FakeDb {
  return new FakeDb(version, (sql) => {
    const answer = sql === HAVE_SSL_SQL ? haveSsl : sql === TLS_CHANNEL_SQL ? channel : new Error(sql);
    if (answer instanceof Error) throw answer;
    return typeof answer === 'string' ? [{ '@@have_ssl': answer }] : answer;
  });
}

async function prepared(db: FakeDb): Promise<TlsCollector> {
  const c = new TlsCollector({ monitorId: 'm', db });
  await c.prepare(planOf({ l: { tls: { metrics: ['enabled'] } } }), NO_SIGNAL);
  return c;
}

const UNKNOWN_VAR = mysqlError(1193, "Unknown system variable 'have_ssl'");
const NO_TABLE = mysqlError(1146, "Table 'performance_schema.tls_channel_status' doesn't exist");

void describe('tls from given rows', () => {
  void it('maps have_ssl YES to 1, DISABLED/NO and oddities to 0', () => {
    assert.deepEqual(tlsValue('have_ssl', [{ '@@have_ssl': 'YES' }]), enabled(1));
    assert.deepEqual(tlsValue('have_ssl', [{ '@@have_ssl': 'DISABLED' }]), enabled(0));
    assert.deepEqual(tlsValue('have_ssl', [{ '@@have_ssl': 'NO' }]), enabled(0));
    assert.deepEqual(tlsValue('have_ssl', [{ '@@have_ssl': 'maybe' }]), enabled(0));
    assert.deepEqual(tlsValue('have_ssl', [{ '@@have_ssl': null }]), enabled(0));
  });

  void it('maps the tls_channel_status Enabled property Yes to 1, else 0, no row to nothing', () => {
    assert.deepEqual(tlsValue('tls_channel_status', [{ VALUE: 'Yes' }]), enabled(1));
    assert.deepEqual(tlsValue('tls_channel_status', [{ VALUE: 'No' }]), enabled(0));
    assert.equal(tlsValue('tls_channel_status', []), undefined);
  });

  void it('accepts exactly one metric, enabled', () => {
    checkTlsMetrics(['enabled']);
    for (const bad of [[], ['enabled', 'enabled'], ['on']]) {
      assert.throws(() => checkTlsMetrics(bad), /tls collects exactly: enabled/, JSON.stringify(bad));
    }
  });

  void it('declares no options and one bool', () => {
    assert.deepEqual(help.options, []);
    assert.deepEqual(
      help.metrics.map((m) => [m.name, m.type]),
      [['enabled', MetricType.Bool]],
    );
  });
});

void describe('tls on MySQL (recorded answers)', () => {
  void it('MySQL 5.7 and 8.0 read @@have_ssl', async () => {
    for (const [version, text, value] of [
      ['5.7.44-log', 'YES', 1],
      ['8.0.36', 'DISABLED', 0],
    ] as const) {
      const db = fake(version, text, NO_TABLE);
      const c = await prepared(db);
      assert.deepEqual(await c.collect('l', NO_SIGNAL), { values: [enabled(value)] }, version);
      assert.deepEqual(
        db.queries.map((q) => q.sql),
        [HAVE_SSL_SQL],
      );
    }
  });

  void it('MySQL 8.4 and 9.x read only performance_schema.tls_channel_status', async () => {
    for (const version of ['8.4.3', '9.1.0']) {
      const db = fake(version, UNKNOWN_VAR, [{ VALUE: 'Yes' }]);
      const c = await prepared(db);
      assert.equal(c.source(), 'tls_channel_status');
      assert.deepEqual(await c.collect('l', NO_SIGNAL), { values: [enabled(1)] });
      assert.deepEqual(
        db.queries.map((q) => q.sql),
        [TLS_CHANNEL_SQL],
      );
    }
  });

  void it('falls back to the P_S table for good when have_ssl is unknown (1193)', async () => {
    const db = fake('8.3.0', UNKNOWN_VAR, [{ VALUE: 'No' }]);
    const c = await prepared(db);
    assert.equal(c.source(), 'have_ssl');
    assert.deepEqual(await c.collect('l', NO_SIGNAL), { values: [enabled(0)] });
    assert.deepEqual(await c.collect('l', NO_SIGNAL), { values: [enabled(0)] });
    assert.equal(c.source(), 'tls_channel_status');
    assert.deepEqual(
      db.queries.map((q) => q.sql),
      [HAVE_SSL_SQL, TLS_CHANNEL_SQL, TLS_CHANNEL_SQL],
    );
  });

  void it('is unsupported when the P_S table has no mysql_main row (performance_schema off)', async () => {
    const c = await prepared(fake('8.4.3', UNKNOWN_VAR, []));
    const res = await c.collect('l', NO_SIGNAL);
    assert.deepEqual(res.values, []);
    assert.equal(res.error?.unsupported, true);
    assert.equal(
      res.error?.message,
      "tls: not supported on mysql 8.4.3: performance_schema.tls_channel_status has no 'Enabled' row for channel mysql_main (is performance_schema on?)",
    );
  });

  void it('is unsupported when neither source exists (unknown version)', async () => {
    const db = fake('devel', UNKNOWN_VAR, NO_TABLE);
    const c = await prepared(db);
    const res = await c.collect('l', NO_SIGNAL);
    assert.equal(res.error?.unsupported, true);
    assert.equal(
      res.error?.message,
      'tls: not supported on mysql 0.0.0: neither @@have_ssl nor performance_schema.tls_channel_status exists',
    );
    // Said once per collector life: later calls give the same error without asking again.
    await c.collect('l', NO_SIGNAL);
    assert.equal(db.queries.length, 2);
  });

  void it('other errors are `tls.enabled failed: <err>` every time, errno kept', async () => {
    const db = fake('8.0.36', mysqlError(2013, 'Lost connection to server during query'), NO_TABLE);
    const c = await prepared(db);
    for (let i = 0; i < 2; i++) {
      const res = await c.collect('l', NO_SIGNAL);
      assert.deepEqual(res.values, []);
      assert.equal(res.error?.message, 'tls.enabled failed: Lost connection to server during query');
      assert.equal(res.error?.errno, 2013);
      assert.equal(res.error?.unsupported, false);
    }
    assert.equal(c.source(), 'have_ssl');
  });
});

/** A self-signed CA and a server certificate signed by it, made with openssl. */
function makeCerts(dir: string): { ca: string; cert: string; key: string } {
  const ca = join(dir, 'ca.pem');
  const caKey = join(dir, 'ca-key.pem');
  const cert = join(dir, 'server-cert.pem');
  const key = join(dir, 'server-key.pem');
  const csr = join(dir, 'server.csr');
  const run = (args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  run([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    caKey,
    '-out',
    ca,
    '-days',
    '2',
    '-subj',
    '/CN=sonde test CA',
  ]);
  run(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', '/CN=127.0.0.1']);
  run([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    ca,
    '-CAkey',
    caKey,
    '-CAcreateserial',
    '-out',
    cert,
    '-days',
    '2',
  ]);
  return { ca, cert, key };
}

/** Collect tls once through a real pool to `server`. */
async function collectFrom(server: MariaDB) {
  const db: PooledDb = rootDb(server.socket);
  try {
    const c = new TlsCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { tls: { metrics: ['enabled'] } } }), NO_SIGNAL);
    assert.equal(c.source(), 'have_ssl');
    return await c.collect('l', NO_SIGNAL);
  } finally {
    await db.close();
  }
}

void describe('tls against a MariaDB with a certificate', () => {
  let server: MariaDB;
  let certDir: string;
  let caPem: string;

  before(async () => {
    certDir = mkdtempSync(join(tmpdir(), 'sonde-tls-'));
    const { ca, cert, key } = makeCerts(certDir);
    caPem = readFileSync(ca, 'utf8');
    server = await startMariaDB({ args: [`--ssl-ca=${ca}`, `--ssl-cert=${cert}`, `--ssl-key=${key}`] });
    await server.createUser('tlsuser', 'tls-pass-1');
  });
  after(async () => {
    await server.stop();
    rmSync(certDir, { recursive: true, force: true });
  });

  void it('reports enabled = 1, and the server really speaks TLS with our CA', async () => {
    const [row] = await server.query('SELECT @@have_ssl AS v');
    assert.equal(row?.v, 'YES');
    assert.deepEqual(await collectFrom(server), { values: [enabled(1)] });

    // mysql2 verifies the chain against our CA (host name checks are off by default).
    const conn = await createConnection({
      host: server.host,
      port: server.port,
      user: 'tlsuser',
      password: 'tls-pass-1',
      ssl: { ca: caPem, rejectUnauthorized: true },
    });
    try {
      const [rows] = await conn.query("SHOW SESSION STATUS LIKE 'Ssl_cipher'");
      const cipher = (rows as { Value?: string }[])[0]?.Value ?? '';
      assert.notEqual(cipher, '');
    } finally {
      await conn.end();
    }
  });
});

void describe('tls against a MariaDB without a certificate', () => {
  let server: MariaDB;

  before(async () => {
    server = await startMariaDB();
  });
  after(async () => {
    await server.stop();
  });

  void it('reports enabled = 0', async () => {
    const [row] = await server.query('SELECT @@have_ssl AS v');
    assert.equal(row?.v, 'DISABLED');
    assert.deepEqual(await collectFrom(server), { values: [enabled(0)] });
  });
});
