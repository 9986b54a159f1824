import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FinalMonitorConfig } from '../core/config.js';
import { buildConnection, readPasswordFile } from '../db/credentials.js';
import { listedDsn, redactDsn, splitHostPort } from './connection.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sonde-conn-'));
  await writeFile(join(dir, 'ca.pem'), 'CA');
  await writeFile(join(dir, 'cert.pem'), 'CERT');
  await writeFile(join(dir, 'key.pem'), 'KEY');
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const build = (m: FinalMonitorConfig) => buildConnection(m, { cwd: dir });

describe('redactDsn', () => {
  it('prints tcp, IPv6, socket and TLS addresses as go-sql-driver does, password as ...', () => {
    assert.equal(
      redactDsn({ username: 'blip', hostname: 'db1' }),
      'blip:...@tcp(db1:3306)/?interpolateParams=true&parseTime=true',
    );
    assert.equal(
      redactDsn({ username: 'blip', socket: '/tmp/mysql.sock', hostname: 'ignored' }),
      'blip:...@unix(/tmp/mysql.sock)/?interpolateParams=true&parseTime=true',
    );
    assert.equal(
      redactDsn({ username: 'blip', hostname: 'db1', tls: 'db1' }),
      'blip:...@tcp(db1:3306)/?interpolateParams=true&parseTime=true&tls=db1',
    );
    assert.equal(
      redactDsn({
        username: 'blip',
        hostname: 'x.abc.us-east-1.rds.amazonaws.com',
        tls: 'rds',
        allowCleartextPasswords: true,
      }),
      'blip:...@tcp(x.abc.us-east-1.rds.amazonaws.com:3306)/?allowCleartextPasswords=true&interpolateParams=true&parseTime=true&tls=rds',
    );
  });

  it('handles empty, IPv6 and explicit-port addresses, no user, and escapes the tls name', () => {
    const q = '/?interpolateParams=true&parseTime=true';
    assert.equal(redactDsn({ username: 'u', hostname: '' }), `u:...@tcp(127.0.0.1:3306)${q}`);
    assert.equal(redactDsn({ username: 'u', hostname: '::1' }), `u:...@tcp([::1]:3306)${q}`);
    assert.equal(redactDsn({ username: 'u', hostname: '[::1]' }), `u:...@tcp([::1]:3306)${q}`);
    assert.equal(redactDsn({ username: 'u', hostname: '[fe80::1]:3307' }), `u:...@tcp([fe80::1]:3307)${q}`);
    assert.equal(redactDsn({ username: 'u', hostname: 'db:3310' }), `u:...@tcp(db:3310)${q}`);
    assert.equal(redactDsn({ username: '', hostname: 'db' }), `tcp(db:3306)${q}`);
    assert.equal(
      redactDsn({ username: 'u', hostname: 'db:3306', tls: 'db:3306' }),
      `u:...@tcp(db:3306)${q}&tls=db%3A3306`,
    );
  });
});

describe('splitHostPort', () => {
  it('splits like Go, treating an unbracketed IPv6 literal as a host', () => {
    assert.deepEqual(splitHostPort('db:1'), { host: 'db', port: '1' });
    assert.deepEqual(splitHostPort('db'), { host: 'db', port: undefined });
    assert.deepEqual(splitHostPort(':1'), { host: '', port: '1' });
    assert.deepEqual(splitHostPort('::1'), { host: '::1', port: undefined });
    assert.deepEqual(splitHostPort('[::1]:5'), { host: '::1', port: '5' });
  });
});

describe('readPasswordFile', () => {
  it('strips exactly one trailing newline', async () => {
    const cases: [string, string][] = [
      ['pw\n', 'pw'],
      ['pw\r\n', 'pw'],
      ['pw\n\n', 'pw\n'],
      ['pw', 'pw'],
      [' pw \n', ' pw '],
    ];
    for (const [i, [content, want]] of cases.entries()) {
      const p = join(dir, `pw${i}`);
      await writeFile(p, content);
      assert.equal(await readPasswordFile(p), want, JSON.stringify(content));
    }
    await assert.rejects(readPasswordFile(join(dir, 'nope')), {
      message: `cannot read password-file: open ${join(dir, 'nope')}: no such file or directory`,
    });
  });
});

describe('buildConnection', () => {
  it('builds a tcp connection with the default port and 10s connect timeout', async () => {
    const c = await build({ id: 'db1', hostname: 'db1', username: 'blip', password: 'sekret' });
    assert.equal(c.host, 'db1');
    assert.equal(c.port, 3306);
    assert.equal(c.socket, undefined);
    assert.equal(c.username, 'blip');
    assert.equal(c.password(), 'sekret');
    assert.equal(c.tls, undefined);
    assert.equal(c.connectTimeoutMs, 10_000);
    assert.equal(c.redactedDsn, 'blip:...@tcp(db1:3306)/?interpolateParams=true&parseTime=true');
    assert.ok(!JSON.stringify(c).includes('sekret'));
  });

  it('uses timeout-connect, an explicit port, IPv6 and the 127.0.0.1 fallback', async () => {
    const a = await build({ id: 'a', hostname: 'db:3310', 'timeout-connect': '1.5s' });
    assert.deepEqual([a.host, a.port, a.connectTimeoutMs], ['db', 3310, 1500]);
    const b = await build({ id: 'b', hostname: '::1' });
    assert.deepEqual([b.host, b.port], ['::1', 3306]);
    const e = await build({ id: '' });
    assert.deepEqual(
      [e.host, e.port, e.redactedDsn],
      ['127.0.0.1', 3306, 'tcp(127.0.0.1:3306)/?interpolateParams=true&parseTime=true'],
    );
    await assert.rejects(build({ id: 'x', hostname: 'db:http' }), {
      message: 'invalid port in hostname db:http',
    });
  });

  it('lets the socket win over the hostname', async () => {
    const c = await build({ id: 's', socket: '/tmp/mysql.sock', hostname: 'db1', username: 'blip' });
    assert.equal(c.socket, '/tmp/mysql.sock');
    assert.equal(c.host, undefined);
    assert.equal(c.redactedDsn, 'blip:...@unix(/tmp/mysql.sock)/?interpolateParams=true&parseTime=true');
  });

  it('reads the password file, stripping one trailing newline', async () => {
    await writeFile(join(dir, 'pwfile'), 'from-file\n');
    const c = await build({
      id: 'p',
      hostname: 'db',
      username: 'u',
      password: 'ignored',
      'password-file': 'pwfile',
    });
    assert.equal(c.password(), 'from-file');
  });

  describe('with my.cnf', () => {
    it('fills only empty fields: explicit username, password and hostname win', async () => {
      await writeFile(
        join(dir, 'full.cnf'),
        '[client]\nuser=cnfuser\npassword=cnfpw\nhost=cnfhost\nport=3311\n',
      );
      const gaps = await build({ id: 'm', mycnf: 'full.cnf', username: 'blip' });
      assert.deepEqual(
        [gaps.username, gaps.password(), gaps.host, gaps.port],
        ['cnfuser', 'cnfpw', 'cnfhost', 3311],
      );
      assert.equal(gaps.redactedDsn, 'cnfuser:...@tcp(cnfhost:3311)/?interpolateParams=true&parseTime=true');
      const explicit = await build({
        id: 'm',
        mycnf: 'full.cnf',
        username: 'me',
        password: 'mine',
        hostname: 'myhost',
      });
      assert.deepEqual(
        [explicit.username, explicit.password(), explicit.host, explicit.port],
        ['me', 'mine', 'myhost', 3306],
      );
    });

    it('uses its socket only when the config sets no hostname', async () => {
      await writeFile(join(dir, 'sock.cnf'), '[client]\nsocket=/tmp/cnf.sock\n');
      assert.equal((await build({ id: 'a', mycnf: 'sock.cnf' })).socket, '/tmp/cnf.sock');
      const c = await build({ id: 'b', mycnf: 'sock.cnf', hostname: 'db' });
      assert.deepEqual([c.socket, c.host], [undefined, 'db']);
    });

    it('supplies TLS files unless ssl-mode is DISABLED or a socket is used with PREFERRED', async () => {
      await writeFile(join(dir, 'tls.cnf'), `[client]\nssl-ca=${join(dir, 'ca.pem')}\n`);
      const t = await build({ id: 'db', hostname: 'db:3306', mycnf: 'tls.cnf' });
      assert.deepEqual(t.tls, { ca: 'CA', rejectUnauthorized: true, servername: 'db' });
      assert.match(t.redactedDsn, /&tls=db$/);
      const s = await build({ id: 'db', socket: '/tmp/s.sock', mycnf: 'tls.cnf' });
      assert.equal(s.tls, undefined);
      await writeFile(join(dir, 'off.cnf'), '[client]\nssl-mode=disabled\n');
      const off = await build({ id: 'db', hostname: 'db', mycnf: 'off.cnf', tls: { ca: 'ca.pem' } });
      assert.equal(off.tls, undefined);
      assert.doesNotMatch(off.redactedDsn, /tls=/);
    });

    it("reads mysqld_exporter's TLS keys and enable-cleartext-plugin; warns of unknown keys", async () => {
      const cnf = async (name: string, lines: string[]) => {
        await writeFile(join(dir, name), ['[client]', ...lines, ''].join('\n'));
        return build({ id: 'db', hostname: 'db:3306', mycnf: name });
      };
      assert.deepEqual((await cnf('req.cnf', ['ssl-mode=REQUIRED'])).tls, {
        rejectUnauthorized: false,
        servername: 'db',
      });
      assert.deepEqual((await cnf('vca.cnf', ['ssl-mode=VERIFY_CA'])).tls, {
        rejectUnauthorized: true,
        verifyIdentity: false,
        servername: 'db',
      });
      assert.deepEqual((await cnf('pref.cnf', ['tls=preferred'])).tls, {
        rejectUnauthorized: false,
        preferred: true,
        servername: 'db',
      });
      assert.deepEqual(
        (await cnf('ver.cnf', ['tls=true', 'tls-min-version=TLSv1.0', 'tls-server-name=x.example'])).tls,
        { rejectUnauthorized: true, servername: 'db', minVersion: 'TLSv1', checkName: 'x.example' },
      );
      assert.equal((await cnf('clear.cnf', ['enable-cleartext-plugin'])).allowCleartextPasswords, true);
      assert.equal((await cnf('false.cnf', ['tls=false'])).tls, undefined);
      const warned: string[] = [];
      await writeFile(join(dir, 'unk.cnf'), '[client]\nuser=u\nprotocol=tcp\n');
      await buildConnection({ id: 'db', mycnf: 'unk.cnf' }, { cwd: dir, warn: (m) => warned.push(m) });
      assert.deepEqual(warned, ['mycnf unk.cnf: unknown key protocol in [client], ignored']);
    });

    it('reports an unreadable my.cnf', async () => {
      await assert.rejects(build({ id: 'x', mycnf: 'absent.cnf' }), {
        message: `cannot read mycnf: open ${join(dir, 'absent.cnf')}: no such file or directory`,
      });
    });
  });

  describe('TLS', () => {
    it('reads the files, uses cert and key only together, and sets the server name without port', async () => {
      const c = await build({
        id: 'db1',
        hostname: 'db1:3307',
        tls: { ca: 'ca.pem', cert: 'cert.pem', key: 'key.pem' },
      });
      assert.deepEqual(c.tls, {
        ca: 'CA',
        cert: 'CERT',
        key: 'KEY',
        rejectUnauthorized: true,
        servername: 'db1',
      });
      assert.equal(c.redactedDsn, 'tcp(db1:3307)/?interpolateParams=true&parseTime=true&tls=db1');
      const lone = await build({ id: 'x', hostname: 'db', tls: { key: 'key.pem' } });
      assert.deepEqual(lone.tls, { rejectUnauthorized: true, servername: 'db' });
    });

    it('honours skip-verify and disable', async () => {
      const skip = await build({ id: 'x', hostname: 'db', tls: { ca: 'ca.pem', 'skip-verify': true } });
      assert.equal(skip.tls?.rejectUnauthorized, false);
      const off = await build({ id: 'x', hostname: 'db', tls: { ca: 'ca.pem', disable: true } });
      assert.equal(off.tls, undefined);
    });

    it('forces skip-verify for a socket without hostname unless skip-verify is set', async () => {
      const forced = await build({ id: 'x', socket: '/tmp/s', tls: { ca: 'ca.pem' } });
      assert.equal(forced.tls?.rejectUnauthorized, false);
      assert.equal(forced.tls?.servername, undefined);
      const kept = await build({ id: 'x', socket: '/tmp/s', tls: { ca: 'ca.pem', 'skip-verify': false } });
      assert.equal(kept.tls?.rejectUnauthorized, true);
      const named = await build({ id: 'x', socket: '/tmp/s', hostname: 'db', tls: { ca: 'ca.pem' } });
      assert.deepEqual([named.tls?.rejectUnauthorized, named.tls?.servername], [true, 'db']);
    });

    it('reports an unreadable TLS file', async () => {
      await assert.rejects(build({ id: 'x', hostname: 'db', tls: { ca: 'gone.pem' } }), {
        message: 'cannot read tls.ca: open gone.pem: no such file or directory',
      });
    });
  });

  describe('Amazon RDS', () => {
    it('turns TLS on with the shipped RDS CA bundle for an RDS hostname, verifying the server', async () => {
      const pw = 'topsecret-pw';
      const spec = await build({
        id: 'a',
        hostname: 'x.abc.us-east-1.rds.amazonaws.com',
        username: 'blip',
        password: pw,
      });
      assert.equal(spec.tls?.rejectUnauthorized, true);
      assert.equal(spec.tls?.servername, 'x.abc.us-east-1.rds.amazonaws.com');
      assert.match(spec.tls?.ca ?? '', /^-----BEGIN CERTIFICATE-----/);
      assert.equal(
        spec.redactedDsn,
        'blip:...@tcp(x.abc.us-east-1.rds.amazonaws.com:3306)/?interpolateParams=true&parseTime=true&tls=rds',
      );
      assert.equal(spec.allowCleartextPasswords, false);
      const own = await build({
        id: 'a',
        hostname: 'x.abc.us-east-1.rds.amazonaws.com',
        tls: { ca: 'ca.pem' },
      });
      assert.deepEqual([own.tls?.ca, own.redactedDsn.endsWith('&tls=a')], ['CA', true]);
      const off = await build({
        id: 'a',
        hostname: 'x.abc.us-east-1.rds.amazonaws.com',
        aws: { 'disable-auto-tls': true },
      });
      assert.equal(off.tls, undefined);
      const sock = await build({ id: 'a', socket: '/tmp/s', hostname: 'x.abc.us-east-1.rds.amazonaws.com' });
      assert.equal(sock.tls, undefined, 'no automatic TLS over a unix socket');
    });

    it('refuses IAM auth without a hostname to sign the token for', async () => {
      await assert.rejects(build({ id: 'a', socket: '/tmp/s', aws: { 'iam-auth': true } }), {
        message: 'aws.iam-auth: no hostname: the IAM token is signed for host:port',
      });
    });
  });
});

describe('listedDsn', () => {
  it('is the DSN the monitor will assemble, my.cnf and TLS included, without reading the password', async () => {
    await writeFile(
      join(dir, 'list.cnf'),
      '[client]\nuser = cnfuser\npassword = cnfpw\nhost = db9\nport = 3310\n',
    );
    const m: FinalMonitorConfig = {
      id: 'db9',
      mycnf: 'list.cnf',
      'password-file': 'missing-password-file',
      tls: { ca: 'ca.pem' },
    };
    assert.equal(
      listedDsn(m, { cwd: dir }),
      'cnfuser:...@tcp(db9:3310)/?interpolateParams=true&parseTime=true&tls=db9',
    );
  });

  it('falls back on the config alone when the my.cnf cannot be read', () => {
    assert.equal(
      listedDsn({ id: 'x', hostname: 'h', username: 'u', mycnf: 'nope.cnf' }, { cwd: dir }),
      'u:...@tcp(h:3306)/?interpolateParams=true&parseTime=true',
    );
  });
});
