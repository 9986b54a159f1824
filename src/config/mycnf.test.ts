import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  myCnfHostname,
  parseMyCnf,
  parseMyCnfModule,
  readMyCnf,
  readMyCnfModule,
  readMyCnfSync,
} from './mycnf.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sonde-mycnf-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('parseMyCnf', () => {
  it('reads only the [client] section, with comments, quotes and value-less keys', () => {
    const c = parseMyCnf(
      [
        '# comment',
        '[mysqld]',
        'user = mysql',
        'port = 9999',
        '[client]',
        '; another comment',
        'user = "monitor"',
        "password = 'p#ss w=rd'",
        'host=db1.local',
        'port = 3307',
        'skip-ssl',
        'ssl_ca = /etc/ca.pem',
        '!include /etc/other.cnf',
        '[Client]',
        'user = ignored',
        '',
      ].join('\n'),
    );
    assert.equal(c.user, 'monitor');
    assert.equal(c.password, 'p#ss w=rd');
    assert.equal(c.host, 'db1.local');
    assert.equal(c.port, '3307');
    assert.equal(c.socket, '');
    assert.equal(c.sslCa, '/etc/ca.pem');
    assert.equal(c.sslMode, 'PREFERRED');
    assert.deepEqual(c.client, {
      user: 'monitor',
      password: 'p#ss w=rd',
      host: 'db1.local',
      port: '3307',
      'skip-ssl': '',
      'ssl-ca': '/etc/ca.pem',
    });
  });

  it('upper-cases ssl-mode and handles CRLF line ends', () => {
    const c = parseMyCnf('[client]\r\nssl-mode = disabled\r\nsocket=/tmp/m.sock\r\n');
    assert.equal(c.sslMode, 'DISABLED');
    assert.equal(c.socket, '/tmp/m.sock');
  });

  it("reads mysqld_exporter's TLS keys, its spelling of ssl-skip-verfication and enable-cleartext-plugin", () => {
    const c = parseMyCnf(
      [
        '[client]',
        'tls = skip-verify',
        'ssl_skip_verfication',
        'tls-min-version = TLSv1.2',
        'tls-max-version = TLSv1.3',
        'tls-server-name = db.example',
        'enable-cleartext-plugin = true',
        'default-character-set = utf8mb4',
        'ssl-verify-server-cert',
        '',
      ].join('\n'),
    );
    assert.equal(c.tls, 'skip-verify');
    assert.equal(c.sslSkipVerify, true);
    assert.equal(c.tlsMinVersion, 'TLSv1.2');
    assert.equal(c.tlsMaxVersion, 'TLSv1.3');
    assert.equal(c.tlsServerName, 'db.example');
    assert.equal(c.enableCleartextPlugin, true);
    assert.deepEqual(c.unknown, ['default-character-set', 'ssl-verify-server-cert']);
    const none = parseMyCnf('[client]\nuser=u\nenable-cleartext-plugin = off\n');
    assert.equal(none.sslSkipVerify, false);
    assert.equal(none.enableCleartextPlugin, false);
    assert.equal(none.tls, '');
    assert.deepEqual(none.unknown, []);
  });

  it('refuses a bad TLS value naming the key', () => {
    assert.throws(() => parseMyCnf('[client]\ntls=maybe\n'), {
      message: 'tls=maybe is not allowed, use one of: true, false, skip-verify, preferred',
    });
    assert.throws(() => parseMyCnf('[client]\ntls-min-version=TLSv9\n'), {
      message: 'tls-min-version=TLSv9 is not allowed, use one of: TLSv1.0, TLSv1.1, TLSv1.2, TLSv1.3',
    });
    assert.throws(() => parseMyCnf('[client]\ntls-min-version=TLSv1.3\ntls-max-version=TLSv1.2\n'), {
      message: 'tls-min-version must not be higher than tls-max-version: TLSv1.3 > TLSv1.2',
    });
    assert.throws(() => parseMyCnf('[client]\nenable-cleartext-plugin=sometimes\n'), {
      message: 'enable-cleartext-plugin: not a boolean',
    });
  });

  it('expands ${NAME} from the environment; any other $ stays as written', () => {
    const env = { PW: 'from-env', HOST: 'db9' };
    const c = parseMyCnf('[client]\npassword = ${PW}\nhost=${HOST}.local\nuser=${UNSET}x\n', env);
    assert.equal(c.password, 'from-env');
    assert.equal(c.host, 'db9.local');
    assert.equal(c.user, 'x');
    for (const pw of ['pa$$word', 'a$', '$PW', 'x$1y', '${', '${}', '$ {PW}'])
      assert.equal(parseMyCnf(`[client]\npassword = ${pw}\n`, env).password, pw, pw);
  });

  it('fails on a malformed line without quoting it', () => {
    assert.throws(() => parseMyCnf('[client\nuser=x\n'), { message: 'line 1: invalid section header' });
    assert.throws(() => parseMyCnf('[client]\n = secret\n'), { message: 'line 2: missing option name' });
  });
});

describe('myCnfHostname', () => {
  const base = parseMyCnf('');
  it('joins host and port, also without host, and brackets IPv6', () => {
    assert.equal(myCnfHostname({ ...base, host: 'db', port: '' }), 'db');
    assert.equal(myCnfHostname({ ...base, host: 'db', port: '3307' }), 'db:3307');
    assert.equal(myCnfHostname({ ...base, host: '', port: '3307' }), ':3307');
    assert.equal(myCnfHostname({ ...base, host: '::1', port: '3307' }), '[::1]:3307');
    assert.equal(myCnfHostname(base), '');
  });
});

describe('readMyCnf', () => {
  it('reads a file, and names the file in errors', async () => {
    const p = join(dir, 'my.cnf');
    await writeFile(p, '[client]\nuser=u\n');
    assert.equal((await readMyCnf(p)).user, 'u');
    assert.equal(readMyCnfSync(p).user, 'u');
    await assert.rejects(readMyCnf(join(dir, 'nope.cnf')), {
      message: `open ${join(dir, 'nope.cnf')}: no such file or directory`,
    });
    const bad = join(dir, 'bad.cnf');
    await writeFile(bad, '[client\n');
    assert.throws(() => readMyCnfSync(bad), { message: `${bad}: line 1: invalid section header` });
  });
});

describe('auth modules: [client.<name>]', () => {
  const text = [
    '[client]',
    'user = base',
    'password = base-pw',
    'ssl-ca = /ca.pem',
    '[client.servers]',
    'user = bar',
    'password = "bar#123"',
    '[client.onlyuser]',
    'user = solo',
    '[mysqld]',
    'user = mysql',
    '',
  ].join('\n');

  it('reads a section over the keys of [client]; [client] alone is unchanged', () => {
    const s = parseMyCnfModule(text, 'servers');
    assert.equal(s?.user, 'bar');
    assert.equal(s?.password, 'bar#123');
    assert.equal(s?.sslCa, '/ca.pem', 'inherited from [client]');
    const solo = parseMyCnfModule(text, 'onlyuser');
    assert.equal(solo?.user, 'solo');
    assert.equal(solo?.password, 'base-pw', 'inherited from [client]');
    assert.equal(parseMyCnf(text).user, 'base');
  });

  it('is undefined for a section the file does not have, including [client] itself and other programs', () => {
    assert.equal(parseMyCnfModule(text, 'nope'), undefined);
    assert.equal(parseMyCnfModule(text, ''), undefined);
    assert.equal(
      parseMyCnfModule('[client.x]\nuser=a\n', 'X'),
      undefined,
      'section names are case-sensitive',
    );
  });

  it('reads a file and fails on a malformed line without quoting it', async () => {
    const path = join(dir, 'modules.cnf');
    await writeFile(path, text);
    assert.equal((await readMyCnfModule(path, 'servers'))?.user, 'bar');
    const bad = join(dir, 'bad-modules.cnf');
    await writeFile(bad, '[client.servers]\n= secret\n');
    await assert.rejects(readMyCnfModule(bad, 'servers'), { message: `${bad}: line 2: missing option name` });
  });
});
