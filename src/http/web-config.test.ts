import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { getCiphers } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { makeClientCert, makeTlsFiles, type TlsFiles } from '../../test/helpers/tls.js';
import {
  ALLOWED_HEADERS,
  CIPHER_SUITES,
  CLIENT_AUTH_TYPES,
  CURVES,
  WebConfigError,
  certificateSans,
  loadWebConfig,
  parseWebConfig,
} from './web-config.js';

const HASH = bcrypt.hashSync('s3cret', 4);
const FILE = '/etc/sonde/web.yml';

/** The error message of parsing `text`, or a failure when it parses. */
function problem(text: string): string {
  try {
    parseWebConfig(text, FILE);
  } catch (err) {
    assert.ok(err instanceof WebConfigError, String(err));
    return err.message;
  }
  assert.fail(`parsed: ${text}`);
}

const TLS = 'tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n';

describe('web config file: parsing', () => {
  it('reads an empty file (or only comments) as no TLS, no users, HTTP/2 on', () => {
    for (const text of [
      '',
      '# nothing\n',
      '{}',
      'tls_server_config:\nhttp_server_config:\nbasic_auth_users:\n',
    ]) {
      const c = parseWebConfig(text, FILE);
      assert.equal(c.tls, undefined);
      assert.equal(c.http2, true);
      assert.deepEqual(c.headers, {});
      assert.equal(c.users.size, 0);
      assert.equal(c.rateLimit, undefined);
    }
  });

  it('reads tls_server_config with its defaults, files relative to the config file', () => {
    const c = parseWebConfig(`${TLS}`, FILE);
    assert.deepEqual(c.tls, {
      certSource: '/etc/sonde/c.pem',
      keySource: '/etc/sonde/k.pem',
      cert: '',
      key: '',
      clientAuth: 'NoClientCert',
      clientCaSource: undefined,
      clientCa: undefined,
      allowedSans: undefined,
      minVersion: 'TLSv1.2',
      maxVersion: 'TLSv1.3',
      ciphers: undefined,
      honorCipherOrder: true,
      ecdhCurve: undefined,
    });
    assert.equal(parseWebConfig(TLS.replace('c.pem', '/abs/c.pem'), FILE).tls?.certSource, '/abs/c.pem');
  });

  it('reads every tls_server_config key', () => {
    const c = parseWebConfig(
      [
        TLS.trimEnd(),
        '  client_auth_type: RequireAndVerifyClientCert',
        '  client_ca_file: ca.pem',
        '  client_allowed_sans: [scraper.example, 10.0.0.1]',
        '  min_version: TLS13',
        '  max_version: TLS13',
        '  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256]',
        '  prefer_server_cipher_suites: no',
        '  curve_preferences: [X25519, CurveP256, CurveP384, CurveP521]',
      ].join('\n'),
      FILE,
    );
    assert.equal(c.tls?.clientAuth, 'RequireAndVerifyClientCert');
    assert.equal(c.tls?.clientCaSource, '/etc/sonde/ca.pem');
    assert.deepEqual(c.tls?.allowedSans, ['scraper.example', '10.0.0.1']);
    assert.equal(c.tls?.minVersion, 'TLSv1.3');
    assert.equal(c.tls?.maxVersion, 'TLSv1.3');
    assert.equal(c.tls?.ciphers, 'ECDHE-RSA-AES128-GCM-SHA256:TLS_AES_128_GCM_SHA256');
    assert.equal(c.tls?.honorCipherOrder, false);
    assert.equal(c.tls?.ecdhCurve, 'X25519:P-256:P-384:P-521');
  });

  it('keeps TLS 1.3 suites available when cipher_suites names only TLS 1.2 ones', () => {
    const c = parseWebConfig(`${TLS}  cipher_suites: [TLS_RSA_WITH_AES_256_GCM_SHA384]\n`, FILE);
    assert.equal(
      c.tls?.ciphers,
      'AES256-GCM-SHA384:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256',
    );
  });

  it('maps every accepted cipher suite and curve to a name this OpenSSL knows', () => {
    const known = new Set(getCiphers().map((c) => c.toLowerCase()));
    for (const [iana, openssl] of Object.entries(CIPHER_SUITES))
      assert.ok(known.has(openssl.toLowerCase()), `${iana} → ${openssl}`);
    assert.deepEqual(Object.values(CURVES), ['P-256', 'P-384', 'P-521', 'X25519']);
  });

  it('reads each client_auth_type, and RequireClientCert as RequireAnyClientCert', () => {
    for (const t of CLIENT_AUTH_TYPES) {
      const ca = t === 'NoClientCert' ? '' : '  client_ca_file: ca.pem\n';
      assert.equal(parseWebConfig(`${TLS}  client_auth_type: ${t}\n${ca}`, FILE).tls?.clientAuth, t);
    }
    const old = parseWebConfig(`${TLS}  client_auth_type: RequireClientCert\n`, FILE);
    assert.equal(old.tls?.clientAuth, 'RequireAnyClientCert');
  });

  it('turns TLS on with any certificate, key, CA or client auth key, and not with the others', () => {
    assert.equal(parseWebConfig('tls_server_config:\n  min_version: TLS13\n', FILE).tls, undefined);
    assert.equal(parseWebConfig('tls_server_config:\n  cert_file: ""\n', FILE).tls, undefined);
    assert.match(
      problem('tls_server_config:\n  client_auth_type: NoClientCert\n'),
      /missing one of cert or cert_file/,
    );
    assert.match(problem('tls_server_config:\n  key_file: k\n'), /missing one of cert or cert_file/);
  });

  it('takes the certificate, key and CA inline', () => {
    const c = parseWebConfig(
      'tls_server_config:\n  cert: "CERT"\n  key: "KEY"\n  client_ca: "CA"\n  client_auth_type: VerifyClientCertIfGiven\n',
      FILE,
    );
    assert.equal(c.tls?.cert, 'CERT');
    assert.equal(c.tls?.key, 'KEY');
    assert.equal(c.tls?.clientCa, 'CA');
    assert.equal(c.tls?.certSource, 'tls_server_config.cert');
  });

  it('reads http_server_config: http2 and the allowed headers', () => {
    const c = parseWebConfig(
      [
        'http_server_config:',
        '  http2: false',
        '  headers:',
        '    Strict-Transport-Security: max-age=31536000',
        '    X-Content-Type-Options: nosniff',
        '    X-Frame-Options: deny',
        '    X-XSS-Protection: 1; mode=block',
        "    Content-Security-Policy: default-src 'self'",
      ].join('\n'),
      FILE,
    );
    assert.equal(c.http2, false);
    assert.deepEqual(c.headers, {
      'Strict-Transport-Security': 'max-age=31536000',
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'deny',
      'X-XSS-Protection': '1; mode=block',
      'Content-Security-Policy': "default-src 'self'",
    });
    assert.deepEqual(Object.keys(ALLOWED_HEADERS).sort(), Object.keys(c.headers).sort());
    assert.deepEqual(
      parseWebConfig('http_server_config:\n  headers:\n    X-Frame-Options: ""\n', FILE).headers,
      {},
    );
    assert.equal(parseWebConfig('http_server_config:\n  http2: off\n', FILE).http2, false);
  });

  it('reads basic_auth_users with $2a$, $2b$ and $2y$ hashes', () => {
    const y = HASH.replace('$2b$', '$2y$');
    const a = HASH.replace('$2b$', '$2a$');
    const c = parseWebConfig(`basic_auth_users:\n  alice: ${HASH}\n  bob: '${y}'\n  1234: "${a}"\n`, FILE);
    assert.deepEqual(
      [...c.users],
      [
        ['alice', HASH],
        ['bob', y],
        ['1234', a],
      ],
    );
  });

  it('reads rate_limit: a duration and a burst; 0 turns it off', () => {
    assert.deepEqual(parseWebConfig('rate_limit:\n  interval: 1s\n  burst: 5\n', FILE).rateLimit, {
      intervalMs: 1000,
      burst: 5,
    });
    assert.equal(parseWebConfig('rate_limit:\n  interval: 0\n  burst: 5\n', FILE).rateLimit, undefined);
    assert.equal(parseWebConfig('rate_limit:\n  interval: 1000000\n', FILE).rateLimit?.intervalMs, 1);
  });
});

describe('web config file: errors', () => {
  const cases: [string, string, string][] = [
    ['bad YAML', 'tls_server_config: [\n', ': line 2: '],
    ['a top-level list', '- a\n', ': expected a mapping, got a list'],
    [
      'unknown top key',
      'tls_config: {}\n',
      'tls_config: unknown key; valid keys: tls_server_config, http_server_config, basic_auth_users, rate_limit',
    ],
    ['duplicate key', `${TLS}  cert_file: d.pem\n`, 'tls_server_config.cert_file: duplicate key'],
    [
      'unknown tls key',
      `${TLS}  ca_file: x\n`,
      'tls_server_config.ca_file: unknown key; valid keys: cert, key, client_ca',
    ],
    ['tls as a list', 'tls_server_config: [a]\n', 'tls_server_config: expected a mapping, got a list'],
    [
      'cert and cert_file',
      `${TLS}  cert: PEM\n`,
      'tls_server_config.cert_file: cert and cert_file are both set; set one of them',
    ],
    [
      'key and key_file',
      `${TLS}  key: PEM\n`,
      'tls_server_config.key_file: key and key_file are both set; set one of them',
    ],
    [
      'missing key',
      'tls_server_config:\n  cert_file: c\n',
      'tls_server_config.key_file: missing one of key or key_file',
    ],
    [
      'unknown client auth',
      `${TLS}  client_auth_type: Yes\n`,
      'tls_server_config.client_auth_type: unknown value Yes; valid values: NoClientCert, RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven, RequireAndVerifyClientCert',
    ],
    [
      'CA without client auth',
      `${TLS}  client_ca_file: ca.pem\n`,
      'tls_server_config.client_auth_type: a client CA is set but client_auth_type does not ask for client certificates',
    ],
    [
      'SANs without client auth',
      `${TLS}  client_allowed_sans: [a]\n`,
      'tls_server_config.client_auth_type: client_allowed_sans is set but client_auth_type does not ask for client certificates',
    ],
    [
      'empty SAN list',
      `${TLS}  client_allowed_sans: []\n`,
      'tls_server_config.client_allowed_sans: empty list would refuse every client',
    ],
    [
      'SANs as text',
      `${TLS}  client_allowed_sans: a\n`,
      'tls_server_config.client_allowed_sans: expected a list, got a value',
    ],
    [
      'unknown min version',
      `${TLS}  min_version: TLS14\n`,
      'tls_server_config.min_version: unknown TLS version TLS14; valid: TLS10, TLS11, TLS12, TLS13',
    ],
    [
      'unknown max version',
      `${TLS}  max_version: tls12\n`,
      'tls_server_config.max_version: unknown TLS version tls12',
    ],
    [
      'min above max',
      `${TLS}  min_version: TLS13\n  max_version: TLS12\n`,
      'tls_server_config.min_version: TLSv1.3 is above max_version TLSv1.2',
    ],
    [
      'unknown cipher',
      `${TLS}  cipher_suites: [TLS_AES_128_GCM_SHA256, ECDHE-RSA-AES128-GCM-SHA256]\n`,
      'tls_server_config.cipher_suites[1]: unknown cipher suite ECDHE-RSA-AES128-GCM-SHA256',
    ],
    [
      'insecure cipher',
      `${TLS}  cipher_suites: [TLS_RSA_WITH_3DES_EDE_CBC_SHA]\n`,
      'tls_server_config.cipher_suites[0]: TLS_RSA_WITH_3DES_EDE_CBC_SHA is insecure and not accepted',
    ],
    [
      'unknown curve',
      `${TLS}  curve_preferences: [P-256]\n`,
      'tls_server_config.curve_preferences[0]: unknown curve P-256; valid: CurveP256, CurveP384, CurveP521, X25519',
    ],
    [
      'bad bool',
      `${TLS}  prefer_server_cipher_suites: maybe\n`,
      'tls_server_config.prefer_server_cipher_suites: expected true or false, got maybe',
    ],
    [
      'cert_file as a list',
      'tls_server_config:\n  cert_file: [a]\n',
      'tls_server_config.cert_file: expected a text value, got a list',
    ],
    [
      'unknown http key',
      'http_server_config:\n  http3: true\n',
      'http_server_config.http3: unknown key; valid keys: http2, headers',
    ],
    [
      'bad http2',
      'http_server_config:\n  http2: 2\n',
      'http_server_config.http2: expected true or false, got 2',
    ],
    [
      'header not allowed',
      'http_server_config:\n  headers:\n    Server: x\n',
      'http_server_config.headers.Server: this header cannot be set; valid headers: Strict-Transport-Security',
    ],
    [
      'header case',
      'http_server_config:\n  headers:\n    x-frame-options: deny\n',
      'http_server_config.headers.x-frame-options: this header cannot be set',
    ],
    [
      'bad frame options',
      'http_server_config:\n  headers:\n    X-Frame-Options: allow\n',
      'http_server_config.headers.X-Frame-Options: invalid value allow; valid values: deny, sameorigin',
    ],
    [
      'bad nosniff',
      'http_server_config:\n  headers:\n    X-Content-Type-Options: sniff\n',
      'http_server_config.headers.X-Content-Type-Options: invalid value sniff; valid values: nosniff',
    ],
    ['users as a list', 'basic_auth_users: [alice]\n', 'basic_auth_users: expected a mapping, got a list'],
    ['plain password', 'basic_auth_users:\n  alice: hunter2\n', 'basic_auth_users.alice: not a bcrypt hash'],
    ['empty hash', 'basic_auth_users:\n  alice:\n', 'basic_auth_users.alice: not a bcrypt hash'],
    [
      '$2x$ hash',
      `basic_auth_users:\n  alice: ${HASH.replace('$2b$', '$2x$')}\n`,
      'basic_auth_users.alice: not a bcrypt hash',
    ],
    [
      'cost 03',
      `basic_auth_users:\n  alice: ${HASH.replace('$04$', '$03$')}\n`,
      'basic_auth_users.alice: not a bcrypt hash',
    ],
    [
      'short hash',
      `basic_auth_users:\n  alice: ${HASH.slice(0, -1)}\n`,
      'basic_auth_users.alice: not a bcrypt hash',
    ],
    [
      'unknown rate key',
      'rate_limit:\n  every: 1s\n',
      'rate_limit.every: unknown key; valid keys: interval, burst',
    ],
    ['bad interval', 'rate_limit:\n  interval: 1x\n', 'rate_limit.interval: time: invalid duration "1x"'],
    ['negative interval', 'rate_limit:\n  interval: -1s\n', 'rate_limit.interval: -1s: must not be negative'],
    [
      'bad burst',
      'rate_limit:\n  interval: 1s\n  burst: -1\n',
      'rate_limit.burst: -1: not a whole number >= 0',
    ],
  ];
  for (const [name, text, want] of cases) {
    it(`refuses ${name} with one line naming the file and the key`, () => {
      const msg = problem(text);
      assert.ok(msg.startsWith(`web.config.file: ${FILE}`), msg);
      assert.ok(msg.includes(want), `${msg}\n  does not include\n${want}`);
      assert.ok(!msg.includes('\n'), msg);
      assert.ok(!msg.includes(HASH.slice(7)), 'the hash is never quoted');
    });
  }

  it('names the setting given by the caller', () => {
    assert.throws(() => parseWebConfig('x: 1', FILE, 'exporter.flags.web.config.file'), {
      message: `exporter.flags.web.config.file: ${FILE}: x: unknown key; valid keys: tls_server_config, http_server_config, basic_auth_users, rate_limit`,
    });
  });
});

describe('web config file: loading', () => {
  let tls: TlsFiles;
  let dir: string;
  before(() => {
    tls = makeTlsFiles();
    makeClientCert(tls, 'client', [
      'DNS:scraper.example',
      'IP:10.0.0.1',
      'IP:::1',
      'email:ops@example.com',
      'URI:spiffe://x/y',
    ]);
    dir = mkdtempSync(join(tmpdir(), 'sonde-webcfg-'));
    copyFileSync(tls.cert, join(dir, 'server.pem'));
    copyFileSync(tls.key, join(dir, 'server-key.pem'));
    copyFileSync(tls.ca, join(dir, 'ca.pem'));
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(tls.dir, { recursive: true, force: true });
  });
  const write = (text: string): string => {
    const f = join(dir, 'web.yml');
    writeFileSync(f, text);
    return f;
  };
  const good = 'tls_server_config:\n  cert_file: server.pem\n  key_file: server-key.pem\n';

  it('reads the certificate, key and client CA, relative to the file', () => {
    const f = write(`${good}  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n`);
    const c = loadWebConfig(f);
    assert.equal(c.tls?.cert, readFileSync(tls.cert, 'utf8'));
    assert.equal(c.tls?.key, readFileSync(tls.key, 'utf8'));
    assert.equal(c.tls?.clientCa, readFileSync(tls.ca, 'utf8'));
  });

  it('reads inline PEM', () => {
    const pem = (p: string): string => JSON.stringify(readFileSync(p, 'utf8'));
    const c = loadWebConfig(write(`tls_server_config:\n  cert: ${pem(tls.cert)}\n  key: ${pem(tls.key)}\n`));
    assert.equal(c.tls?.cert, readFileSync(tls.cert, 'utf8'));
  });

  it('refuses a missing file, missing certificate files, a mismatched key, junk and a CA without certificates', () => {
    const missing = join(dir, 'nope.yml');
    assert.throws(() => loadWebConfig(missing), {
      message: `web.config.file: ${missing}: cannot read: ENOENT`,
    });
    let f = write(good.replace('server.pem', 'gone.pem'));
    assert.throws(() => loadWebConfig(f), {
      message: `web.config.file: ${f}: tls_server_config.cert_file: cannot read ${join(dir, 'gone.pem')}: ENOENT`,
    });
    f = write(good.replace('server-key.pem', 'gone.pem'));
    assert.throws(() => loadWebConfig(f), {
      message: /tls_server_config\.key_file: cannot read .*gone\.pem: ENOENT$/,
    });
    writeFileSync(join(dir, 'other-key.pem'), readFileSync(join(tls.dir, 'client-key.pem')));
    f = write(good.replace('server-key.pem', 'other-key.pem'));
    assert.throws(() => loadWebConfig(f), {
      message:
        /^web\.config\.file: .*: tls_server_config\.key_file: certificate and key do not load: .*key values mismatch/,
    });
    writeFileSync(join(dir, 'junk.pem'), 'not a certificate\n');
    f = write(good.replace('server.pem', 'junk.pem'));
    assert.throws(() => loadWebConfig(f), { message: /tls_server_config\.cert_file: bad certificate: / });
    f = write(`${good}  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: junk.pem\n`);
    assert.throws(() => loadWebConfig(f), {
      message: /tls_server_config\.client_ca_file: holds no PEM certificate$/,
    });
    f = write(`${good}  cert: x\n`);
    assert.throws(() => loadWebConfig(f), { message: /cert and cert_file are both set/ });
  });

  it('never quotes the private key when it is bad', () => {
    const f = write(
      'tls_server_config:\n  cert_file: server.pem\n  key: "-----BEGIN PRIVATE KEY-----\\nSECRETSTUFF\\n"\n',
    );
    assert.throws(
      () => loadWebConfig(f),
      (err: Error) =>
        /tls_server_config\.key: certificate and key do not load/.test(err.message) &&
        !err.message.includes('SECRETSTUFF'),
    );
  });

  it('lists the SANs of a certificate as the allowed SANs are compared', () => {
    const cert = new X509Certificate(readFileSync(join(tls.dir, 'client.pem')));
    assert.deepEqual(certificateSans(cert), [
      'scraper.example',
      '10.0.0.1',
      '::1',
      'ops@example.com',
      'spiffe://x/y',
    ]);
  });
});
