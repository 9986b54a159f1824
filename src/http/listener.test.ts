import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { httpCall, type CallOptions } from '../../test/helpers/http-call.js';
import { makeClientCert, makeTlsFiles, type TlsFiles } from '../../test/helpers/tls.js';
import {
  BasicAuth,
  RateLimiter,
  basicCredentials,
  splitListenAddresses,
  startWebListeners,
  type RequestHandler,
  type WebListeners,
} from './listener.js';

const HASH = bcrypt.hashSync('s3cret', 4);
const basic = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

const hello: RequestHandler = (req, res) => {
  res.writeHead(200, { 'Content-Type': 'text/plain' });
  res.end(`hello ${req.url ?? ''}\n`);
};

const portOf = (address: string): number => Number(address.slice(address.lastIndexOf(':') + 1));

describe('web listener helpers', () => {
  it('reads Basic credentials like Go does', () => {
    assert.deepEqual(basicCredentials(basic('alice', 'a:b')), { user: 'alice', password: 'a:b' });
    assert.deepEqual(basicCredentials(`bAsIc ${Buffer.from('u:').toString('base64')}`), {
      user: 'u',
      password: '',
    });
    assert.equal(basicCredentials(undefined), undefined);
    assert.equal(basicCredentials('Bearer abc'), undefined);
    assert.equal(basicCredentials(`Basic ${Buffer.from('nocolon').toString('base64')}`), undefined);
    assert.equal(basicCredentials('Basic dXNlcjpwYXNz='), undefined, 'bad padding');
    assert.equal(basicCredentials('Basic  dXNlcjpwYXNz'), undefined, 'two spaces');
  });

  it('checks passwords against bcrypt hashes, unknown users included', async () => {
    const auth = new BasicAuth(new Map([['alice', HASH]]));
    assert.equal(await auth.check(basic('alice', 's3cret')), true);
    assert.equal(await auth.check(basic('alice', 's3cret')), true, 'again, from the cache');
    assert.equal(await auth.check(basic('alice', 'wrong')), false);
    assert.equal(await auth.check(basic('bob', 's3cret')), false);
    assert.equal(await auth.check(undefined), false);
    const many = await Promise.all(Array.from({ length: 40 }, () => auth.check(basic('alice', 'x'))));
    assert.ok(many.includes('busy'), 'more than 32 waiting checks are refused as busy');
    assert.ok(many.includes(false));
  });

  it('limits the request rate with a token bucket', () => {
    let now = 0;
    const rl = new RateLimiter({ intervalMs: 1000, burst: 2 }, () => now);
    assert.deepEqual([rl.allow(), rl.allow(), rl.allow()], [true, true, false]);
    now = 999;
    assert.equal(rl.allow(), false);
    now = 1000;
    assert.deepEqual([rl.allow(), rl.allow()], [true, false]);
    assert.equal(new RateLimiter({ intervalMs: 1000, burst: 0 }, () => now).allow(), false);
  });

  it('splits a comma-separated listen address list', () => {
    assert.deepEqual(splitListenAddresses('127.0.0.1:1, [::1]:2 ,:3'), ['127.0.0.1:1', '[::1]:2', ':3']);
    assert.throws(() => splitListenAddresses('127.0.0.1:1,'), /invalid listen address "": want host:port/);
  });
});

describe('web listener', () => {
  let tls: TlsFiles;
  let dir: string;
  let ca: Buffer;
  let good: { cert: Buffer; key: Buffer };
  let selfSigned: { cert: Buffer; key: Buffer };
  const open: WebListeners[] = [];
  const read = (p: { cert: string; key: string }): { cert: Buffer; key: Buffer } => ({
    cert: readFileSync(p.cert),
    key: readFileSync(p.key),
  });

  before(() => {
    tls = makeTlsFiles();
    ca = readFileSync(tls.ca);
    good = read(makeClientCert(tls, 'scraper', ['DNS:scraper.example']));
    selfSigned = read(makeClientCert(tls, 'rogue', ['DNS:scraper.example'], { selfSigned: true }));
    dir = mkdtempSync(join(tmpdir(), 'sonde-weblisten-'));
  });
  after(async () => {
    await Promise.all(open.map((l) => l.close()));
    rmSync(dir, { recursive: true, force: true });
    rmSync(tls.dir, { recursive: true, force: true });
  });

  let n = 0;
  async function start(config: string | undefined, listen = '127.0.0.1:0'): Promise<WebListeners> {
    let file: string | undefined;
    if (config !== undefined) {
      file = join(dir, `web-${n++}.yml`);
      writeFileSync(file, config);
    }
    const l = await startWebListeners({ handler: hello, listen, webConfigFile: file });
    open.push(l);
    return l;
  }
  const tlsYaml = (extra = ''): string =>
    `tls_server_config:\n  cert_file: ${tls.cert}\n  key_file: ${tls.key}\n${extra}`;
  const call = (l: WebListeners, o: CallOptions = {}, i = 0) =>
    httpCall(portOf(l.addresses[i] ?? ''), '/x', o);

  it('listens on every address of a list with the same handler', async () => {
    const l = await start(undefined, '127.0.0.1:0,127.0.0.1:0');
    assert.equal(l.addresses.length, 2);
    assert.equal(l.tls, false);
    assert.equal((await call(l, {}, 0)).body, 'hello /x\n');
    assert.equal((await call(l, {}, 1)).body, 'hello /x\n');
  });

  it('closes the listeners already started when one address cannot be bound', async () => {
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const port = (busy.address() as { port: number }).port;
    try {
      await assert.rejects(
        startWebListeners({ handler: hello, listen: ['127.0.0.1:0', `127.0.0.1:${port}`] }),
        { message: new RegExp(`^cannot listen on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`) },
      );
    } finally {
      busy.close();
    }
  });

  it('refuses to start with a bad web config file, naming the setting, the file and the key', async () => {
    const file = join(dir, 'bad.yml');
    writeFileSync(file, 'basic_auth_users:\n  alice: plain\n');
    await assert.rejects(
      startWebListeners({
        handler: hello,
        listen: '127.0.0.1:0',
        webConfigFile: file,
        configKey: 'x.web.config.file',
      }),
      {
        message: `x.web.config.file: ${file}: basic_auth_users.alice: not a bcrypt hash ($2a$, $2b$ or $2y$, cost 04 to 31, 60 characters)`,
      },
    );
  });

  it('asks for basic auth (401, WWW-Authenticate: Basic) and adds the configured headers', async () => {
    const l = await start(
      `basic_auth_users:\n  alice: ${HASH}\nhttp_server_config:\n  headers:\n    X-Frame-Options: deny\n`,
    );
    const none = await call(l);
    assert.equal(none.status, 401);
    assert.equal(none.headers['www-authenticate'], 'Basic');
    assert.equal(none.body, 'Unauthorized\n');
    assert.equal(none.headers['x-frame-options'], 'deny');
    assert.equal((await call(l, { headers: { authorization: basic('alice', 'nope') } })).status, 401);
    assert.equal((await call(l, { headers: { authorization: basic('mallory', 's3cret') } })).status, 401);
    const ok = await call(l, { headers: { authorization: basic('alice', 's3cret') } });
    assert.equal(ok.status, 200);
    assert.equal(ok.body, 'hello /x\n');
    assert.equal(ok.headers['x-frame-options'], 'deny');
  });

  it('answers 429 beyond the rate limit', async () => {
    const l = await start('rate_limit:\n  interval: 1h\n  burst: 1\n');
    assert.equal((await call(l)).status, 200);
    const r = await call(l);
    assert.equal(r.status, 429);
    assert.equal(r.body, 'Too Many Requests\n');
  });

  it('serves HTTPS with the configured certificate', async () => {
    const l = await start(tlsYaml());
    assert.equal(l.tls, true);
    assert.equal((await call(l, { tls: { ca } })).body, 'hello /x\n');
    await assert.rejects(call(l), 'plain HTTP is not answered');
  });

  it('RequireAndVerifyClientCert: only certificates signed by client_ca_file', async () => {
    const l = await start(
      tlsYaml(`  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ${tls.ca}\n`),
    );
    assert.equal((await call(l, { tls: { ca, ...good } })).status, 200);
    await assert.rejects(call(l, { tls: { ca } }), 'no certificate');
    await assert.rejects(call(l, { tls: { ca, ...selfSigned } }), 'a certificate of another issuer');
  });

  it('RequireAnyClientCert: any certificate, none refused', async () => {
    const l = await start(tlsYaml('  client_auth_type: RequireAnyClientCert\n'));
    assert.equal((await call(l, { tls: { ca, ...selfSigned } })).status, 200);
    await assert.rejects(call(l, { tls: { ca } }));
  });

  it('VerifyClientCertIfGiven: none or a verified one', async () => {
    const l = await start(
      tlsYaml(`  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: ${tls.ca}\n`),
    );
    assert.equal((await call(l, { tls: { ca } })).status, 200);
    assert.equal((await call(l, { tls: { ca, ...good } })).status, 200);
    await assert.rejects(call(l, { tls: { ca, ...selfSigned } }));
  });

  it('RequestClientCert: asks, never refuses', async () => {
    const l = await start(tlsYaml('  client_auth_type: RequestClientCert\n'));
    assert.equal((await call(l, { tls: { ca } })).status, 200);
    assert.equal((await call(l, { tls: { ca, ...selfSigned } })).status, 200);
  });

  it('client_allowed_sans: the client certificate must carry one of them', async () => {
    const verify = `  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ${tls.ca}\n`;
    const yes = await start(tlsYaml(`${verify}  client_allowed_sans: [other.example, scraper.example]\n`));
    assert.equal((await call(yes, { tls: { ca, ...good } })).status, 200);
    const no = await start(tlsYaml(`${verify}  client_allowed_sans: [other.example]\n`));
    await assert.rejects(call(no, { tls: { ca, ...good } }));
  });

  it('min_version TLS13 refuses a TLS 1.2 client; cipher_suites limits TLS 1.2', async () => {
    const l = await start(tlsYaml('  min_version: TLS13\n'));
    const port = portOf(l.addresses[0] ?? '');
    const handshake = (o: object): Promise<string> =>
      new Promise((resolve, reject) => {
        const s = tlsConnect({ host: '127.0.0.1', port, ca, servername: 'localhost', ...o }, () => {
          const v = `${s.getProtocol() ?? ''} ${s.getCipher().name}`;
          s.end();
          resolve(v);
        });
        s.on('error', reject);
      });
    assert.match(await handshake({}), /^TLSv1\.3 /);
    await assert.rejects(handshake({ maxVersion: 'TLSv1.2' }));
    const c = await start(
      tlsYaml('  max_version: TLS12\n  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384]\n'),
    );
    const cport = portOf(c.addresses[0] ?? '');
    const got = await new Promise<string>((resolve, reject) => {
      const s = tlsConnect({ host: '127.0.0.1', port: cport, ca, servername: 'localhost' }, () => {
        resolve(`${s.getProtocol() ?? ''} ${s.getCipher().name}`);
        s.end();
      });
      s.on('error', reject);
    });
    assert.equal(got, 'TLSv1.2 ECDHE-RSA-AES256-GCM-SHA384');
  });
});
