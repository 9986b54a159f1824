/**
 * The exporter web configuration file (`web.config.file`), the format Prometheus exporters
 * share: TLS for the listener (`tls_server_config`), extra response headers
 * (`http_server_config`), basic authentication users with bcrypt hashes
 * (`basic_auth_users`) and a request rate limit (`rate_limit`).
 *
 * The file is YAML 1.1 read strictly: an unknown key, a duplicate key or a value of the
 * wrong kind is an error. Every error is one line naming the file and the key, and never
 * quotes a password hash or a private key. Relative file names are read from the
 * directory of the configuration file.
 *
 * parseWebConfig() checks the text alone; loadWebConfig() reads the file and the
 * certificate, key and CA files it names and proves they load.
 */
import { dirname, isAbsolute, join } from 'node:path';
import type { X509Certificate } from 'node:crypto';
import type { SecureVersion } from 'node:tls';
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';
import type { Document, Node as YamlNode } from 'yaml';
import { errorMessage } from '../core/errors.js';
import { parseDuration } from '../util/duration.js';
import { fileErrorText, readRegularTextSync } from '../util/read-file.js';

/** Who must show a client certificate, and whether it is verified. */
export const CLIENT_AUTH_TYPES = [
  'NoClientCert',
  'RequestClientCert',
  'RequireAnyClientCert',
  'VerifyClientCertIfGiven',
  'RequireAndVerifyClientCert',
] as const;
export type ClientAuthType = (typeof CLIENT_AUTH_TYPES)[number];

/** `min_version`/`max_version` names and Node's names for them. */
const TLS_VERSIONS: Readonly<Record<string, SecureVersion>> = {
  TLS10: 'TLSv1',
  TLS11: 'TLSv1.1',
  TLS12: 'TLSv1.2',
  TLS13: 'TLSv1.3',
};

const VERSION_ORDER: readonly SecureVersion[] = Object.values(TLS_VERSIONS);

/**
 * The cipher suites the format accepts (the IANA names of the secure suites) and their
 * OpenSSL names. TLS 1.3 suites keep their names in OpenSSL.
 */
export const CIPHER_SUITES: Readonly<Record<string, string>> = {
  TLS_RSA_WITH_AES_128_CBC_SHA: 'AES128-SHA',
  TLS_RSA_WITH_AES_256_CBC_SHA: 'AES256-SHA',
  TLS_RSA_WITH_AES_128_GCM_SHA256: 'AES128-GCM-SHA256',
  TLS_RSA_WITH_AES_256_GCM_SHA384: 'AES256-GCM-SHA384',
  TLS_AES_128_GCM_SHA256: 'TLS_AES_128_GCM_SHA256',
  TLS_AES_256_GCM_SHA384: 'TLS_AES_256_GCM_SHA384',
  TLS_CHACHA20_POLY1305_SHA256: 'TLS_CHACHA20_POLY1305_SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: 'ECDHE-ECDSA-AES128-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: 'ECDHE-ECDSA-AES256-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: 'ECDHE-RSA-AES128-SHA',
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: 'ECDHE-RSA-AES256-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
};

/**
 * Suites the format's own tooling knows but refuses as insecure (RC4, 3DES, CBC with
 * SHA-256): named in the error so that the refusal is not mistaken for a typo.
 */
const INSECURE_SUITES: ReadonlySet<string> = new Set([
  'TLS_RSA_WITH_RC4_128_SHA',
  'TLS_RSA_WITH_3DES_EDE_CBC_SHA',
  'TLS_RSA_WITH_AES_128_CBC_SHA256',
  'TLS_ECDHE_ECDSA_WITH_RC4_128_SHA',
  'TLS_ECDHE_RSA_WITH_RC4_128_SHA',
  'TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA',
  'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256',
  'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256',
]);

/** TLS 1.3 suites Node offers when `cipher_suites` names none (TLS 1.3 stays available). */
const TLS13_DEFAULT = 'TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256';

/** `curve_preferences` names and OpenSSL's group names. */
export const CURVES: Readonly<Record<string, string>> = {
  CurveP256: 'P-256',
  CurveP384: 'P-384',
  CurveP521: 'P-521',
  X25519: 'X25519',
};

/**
 * Response headers `http_server_config.headers` may set, with the values allowed for the
 * enumerated ones (an empty list: any value).
 */
export const ALLOWED_HEADERS: Readonly<Record<string, readonly string[]>> = {
  'Strict-Transport-Security': [],
  'X-Content-Type-Options': ['nosniff'],
  'X-Frame-Options': ['deny', 'sameorigin'],
  'X-XSS-Protection': [],
  'Content-Security-Policy': [],
};

/** A bcrypt hash: `$2a$`, `$2b$` or `$2y$`, a two-digit cost, 22 characters of salt, 31 of hash. */
const BCRYPT = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/;

/** `tls_server_config` once checked; undefined in WebConfig when TLS is off. */
export interface WebTlsConfig {
  /** Where the certificate and key come from (a file name, or `cert`/`key` for inline PEM). */
  certSource: string;
  keySource: string;
  /** PEM text; filled by loadWebConfig (parseWebConfig leaves the inline values only). */
  cert: string;
  key: string;
  clientAuth: ClientAuthType;
  clientCaSource: string | undefined;
  clientCa: string | undefined;
  /** `client_allowed_sans`: a client certificate must carry one of these SANs. */
  allowedSans: readonly string[] | undefined;
  minVersion: SecureVersion;
  maxVersion: SecureVersion;
  /** OpenSSL cipher list, or undefined for Node's default. */
  ciphers: string | undefined;
  honorCipherOrder: boolean;
  /** OpenSSL group list (`P-256:X25519`), or undefined for Node's default. */
  ecdhCurve: string | undefined;
}

export interface WebRateLimit {
  /** Time between two requests (a token added to the bucket), ms. */
  intervalMs: number;
  /** Bucket size: requests allowed at once. */
  burst: number;
}

/** A checked web configuration file. */
export interface WebConfig {
  /** The file, as given. */
  file: string;
  tls: WebTlsConfig | undefined;
  /** `http_server_config.http2` (default true). */
  http2: boolean;
  /** Headers added to every answer. */
  headers: Readonly<Record<string, string>>;
  /** `basic_auth_users`: user → bcrypt hash; empty = no authentication. */
  users: ReadonlyMap<string, string>;
  rateLimit: WebRateLimit | undefined;
}

/** One bad key of a web configuration file. `message`: `<key>: <file>: <path>: <why>`. */
export class WebConfigError extends Error {
  constructor(
    readonly file: string,
    readonly path: string,
    readonly why: string,
    key = 'web.config.file',
  ) {
    super(`${key}: ${file}: ${path === '' ? '' : `${path}: `}${why}`);
    this.name = 'WebConfigError';
  }
}

/** A failure at one key path, before the file name is known. */
class KeyProblem extends Error {
  constructor(
    readonly path: string,
    readonly why: string,
  ) {
    super(why);
  }
}

/** Reads the YAML tree: aliases resolved (a bounded number), scalars by their text. */
class Reader {
  #aliases = 0;
  constructor(readonly doc: Document) {}

  node(n: unknown): YamlNode | null {
    if (isAlias(n)) {
      if (++this.#aliases > 100) throw new KeyProblem('', 'too many aliases');
      return (n.resolve(this.doc) as YamlNode | undefined) ?? null;
    }
    return (n ?? null) as YamlNode | null;
  }

  /** A mapping's entries by key text; null = absent. Unknown keys are refused. */
  map(raw: unknown, path: string, known?: readonly string[]): Map<string, unknown> | undefined {
    const n = this.node(raw);
    if (n === null || (isScalar(n) && n.value === null)) return undefined;
    if (!isMap(n)) throw new KeyProblem(path, `expected a mapping, got ${kindOf(n)}`);
    const out = new Map<string, unknown>();
    for (const pair of n.items) {
      const k = this.node(pair.key);
      const name = isScalar(k) ? scalarText(k) : '';
      const at = join2(path, name);
      if (!isScalar(k)) throw new KeyProblem(path, `expected a text key, got ${kindOf(k)}`);
      if (known !== undefined && !known.includes(name))
        throw new KeyProblem(at, `unknown key; valid keys: ${known.join(', ')}`);
      if (out.has(name)) throw new KeyProblem(at, 'duplicate key');
      out.set(name, pair.value);
    }
    return out;
  }

  /** A scalar's text (any scalar: numbers keep their spelling); undefined when absent or null. */
  string(raw: unknown, path: string): string | undefined {
    const n = this.node(raw);
    if (n === null) return undefined;
    if (!isScalar(n)) throw new KeyProblem(path, `expected a text value, got ${kindOf(n)}`);
    if (n.value === null) return undefined;
    return scalarText(n);
  }

  /** A YAML 1.1 boolean (`true`, `yes`, `on`…). */
  bool(raw: unknown, path: string): boolean | undefined {
    const n = this.node(raw);
    if (n === null || (isScalar(n) && n.value === null)) return undefined;
    if (isScalar(n) && typeof n.value === 'boolean') return n.value;
    throw new KeyProblem(path, `expected true or false, got ${isScalar(n) ? scalarText(n) : kindOf(n)}`);
  }

  /** A list of text values; undefined when absent or null. */
  strings(raw: unknown, path: string): string[] | undefined {
    const n = this.node(raw);
    if (n === null || (isScalar(n) && n.value === null)) return undefined;
    if (!isSeq(n)) throw new KeyProblem(path, `expected a list, got ${kindOf(n)}`);
    return n.items.map((item, i) => {
      const s = this.string(item, `${path}[${i}]`);
      if (s === undefined) throw new KeyProblem(`${path}[${i}]`, 'empty entry');
      return s;
    });
  }
}

function join2(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function scalarText(n: YamlNode): string {
  if (!isScalar(n)) return '';
  return typeof n.source === 'string' ? n.source : String(n.value);
}

function kindOf(n: YamlNode | null): string {
  if (n === null) return 'nothing';
  if (isMap(n)) return 'a mapping';
  if (isSeq(n)) return 'a list';
  return 'a value';
}

const TOP_KEYS = ['tls_server_config', 'http_server_config', 'basic_auth_users', 'rate_limit'] as const;
const TLS_KEYS = [
  'cert',
  'key',
  'client_ca',
  'cert_file',
  'key_file',
  'client_auth_type',
  'client_ca_file',
  'client_allowed_sans',
  'min_version',
  'max_version',
  'cipher_suites',
  'prefer_server_cipher_suites',
  'curve_preferences',
] as const;

/** A file name as read: relative names are taken from the configuration file's directory. */
function fromDir(dir: string, file: string): string {
  return isAbsolute(file) ? file : join(dir, file);
}

/** `min_version`/`max_version`. */
function tlsVersion(text: string | undefined, fallback: SecureVersion, path: string): SecureVersion {
  if (text === undefined) return fallback;
  const v = TLS_VERSIONS[text];
  if (v === undefined)
    throw new KeyProblem(path, `unknown TLS version ${text}; valid: ${Object.keys(TLS_VERSIONS).join(', ')}`);
  return v;
}

/** `cipher_suites` as an OpenSSL list; TLS 1.3 keeps Node's suites when none is named. */
function cipherList(names: readonly string[] | undefined, path: string): string | undefined {
  if (names === undefined || names.length === 0) return undefined;
  const out = names.map((name, i) => {
    const openssl = CIPHER_SUITES[name];
    if (openssl !== undefined) return openssl;
    if (INSECURE_SUITES.has(name))
      throw new KeyProblem(`${path}[${i}]`, `${name} is insecure and not accepted`);
    throw new KeyProblem(`${path}[${i}]`, `unknown cipher suite ${name}`);
  });
  if (!out.some((c) => c.startsWith('TLS_'))) out.push(TLS13_DEFAULT);
  return out.join(':');
}

/** `curve_preferences` as an OpenSSL group list. */
function curveList(names: readonly string[] | undefined, path: string): string | undefined {
  if (names === undefined || names.length === 0) return undefined;
  return names
    .map((name, i) => {
      const c = CURVES[name];
      if (c === undefined)
        throw new KeyProblem(
          `${path}[${i}]`,
          `unknown curve ${name}; valid: ${Object.keys(CURVES).join(', ')}`,
        );
      return c;
    })
    .join(':');
}

/** The certificate or key: inline PEM or a file, exactly one of them. */
function pemSource(
  tls: Map<string, unknown>,
  r: Reader,
  inline: string,
  file: string,
  dir: string,
): { source: string; pem: string } | undefined {
  const text = r.string(tls.get(inline), `tls_server_config.${inline}`);
  const name = r.string(tls.get(file), `tls_server_config.${file}`);
  if (text !== undefined && text !== '' && name !== undefined && name !== '')
    throw new KeyProblem(`tls_server_config.${file}`, `${inline} and ${file} are both set; set one of them`);
  if (name !== undefined && name !== '') return { source: fromDir(dir, name), pem: '' };
  if (text !== undefined && text !== '') return { source: `tls_server_config.${inline}`, pem: text };
  return undefined;
}

/** `client_auth_type`, checked against the client CA and the allowed SANs. */
function clientAuthOf(
  tls: Map<string, unknown>,
  r: Reader,
  hasCa: boolean,
  sans: readonly string[] | undefined,
): ClientAuthType {
  const path = 'tls_server_config.client_auth_type';
  const text = r.string(tls.get('client_auth_type'), path) ?? '';
  // RequireClientCert is the older spelling of RequireAnyClientCert.
  const auth = text === '' ? 'NoClientCert' : text === 'RequireClientCert' ? 'RequireAnyClientCert' : text;
  if (!(CLIENT_AUTH_TYPES as readonly string[]).includes(auth))
    throw new KeyProblem(path, `unknown value ${text}; valid values: ${CLIENT_AUTH_TYPES.join(', ')}`);
  if (hasCa && auth === 'NoClientCert')
    throw new KeyProblem(
      path,
      'a client CA is set but client_auth_type does not ask for client certificates',
    );
  if (sans !== undefined && auth === 'NoClientCert')
    throw new KeyProblem(
      path,
      'client_allowed_sans is set but client_auth_type does not ask for client certificates',
    );
  return auth as ClientAuthType;
}

/** Whether `tls_server_config` turns TLS on: any certificate, key, CA or client auth key set. */
function tlsEnabled(tls: Map<string, unknown>, r: Reader): boolean {
  return ['cert', 'key', 'client_ca', 'cert_file', 'key_file', 'client_ca_file', 'client_auth_type'].some(
    (k) => (r.string(tls.get(k), `tls_server_config.${k}`) ?? '') !== '',
  );
}

/** `tls_server_config`; undefined when it does not turn TLS on. */
function parseTls(raw: unknown, r: Reader, dir: string): WebTlsConfig | undefined {
  const tls = r.map(raw, 'tls_server_config', TLS_KEYS);
  if (tls === undefined) return undefined;
  const p = (k: string): string => `tls_server_config.${k}`;
  const minVersion = tlsVersion(
    r.string(tls.get('min_version'), p('min_version')),
    'TLSv1.2',
    p('min_version'),
  );
  const maxVersion = tlsVersion(
    r.string(tls.get('max_version'), p('max_version')),
    'TLSv1.3',
    p('max_version'),
  );
  const ciphers = cipherList(r.strings(tls.get('cipher_suites'), p('cipher_suites')), p('cipher_suites'));
  const ecdhCurve = curveList(
    r.strings(tls.get('curve_preferences'), p('curve_preferences')),
    p('curve_preferences'),
  );
  const honorCipherOrder =
    r.bool(tls.get('prefer_server_cipher_suites'), p('prefer_server_cipher_suites')) ?? true;
  const allowedSans = r.strings(tls.get('client_allowed_sans'), p('client_allowed_sans'));
  if (allowedSans?.length === 0)
    throw new KeyProblem(
      p('client_allowed_sans'),
      'empty list would refuse every client; remove the key or list names',
    );
  if (!tlsEnabled(tls, r)) return undefined;
  if (VERSION_ORDER.indexOf(minVersion) > VERSION_ORDER.indexOf(maxVersion))
    throw new KeyProblem(p('min_version'), `${minVersion} is above max_version ${maxVersion}`);
  const cert = pemSource(tls, r, 'cert', 'cert_file', dir);
  if (cert === undefined) throw new KeyProblem(p('cert_file'), 'missing one of cert or cert_file');
  const key = pemSource(tls, r, 'key', 'key_file', dir);
  if (key === undefined) throw new KeyProblem(p('key_file'), 'missing one of key or key_file');
  const ca = pemSource(tls, r, 'client_ca', 'client_ca_file', dir);
  const clientAuth = clientAuthOf(tls, r, ca !== undefined, allowedSans);
  return {
    certSource: cert.source,
    keySource: key.source,
    cert: cert.pem,
    key: key.pem,
    clientAuth,
    clientCaSource: ca?.source,
    clientCa: ca?.pem,
    allowedSans,
    minVersion,
    maxVersion,
    ciphers,
    honorCipherOrder,
    ecdhCurve,
  };
}

/** `http_server_config`: `http2` and the extra headers. */
function parseHttp(raw: unknown, r: Reader): { http2: boolean; headers: Record<string, string> } {
  const http = r.map(raw, 'http_server_config', ['http2', 'headers']);
  const http2 = r.bool(http?.get('http2'), 'http_server_config.http2') ?? true;
  const headers: Record<string, string> = {};
  for (const [name, v] of r.map(http?.get('headers'), 'http_server_config.headers') ?? []) {
    const path = `http_server_config.headers.${name}`;
    const allowed = ALLOWED_HEADERS[name];
    if (allowed === undefined)
      throw new KeyProblem(
        path,
        `this header cannot be set; valid headers: ${Object.keys(ALLOWED_HEADERS).join(', ')}`,
      );
    const value = r.string(v, path) ?? '';
    if (value === '') continue;
    if (allowed.length > 0 && !allowed.includes(value))
      throw new KeyProblem(path, `invalid value ${value}; valid values: ${allowed.join(', ')}`);
    headers[name] = value;
  }
  return { http2, headers };
}

/** `basic_auth_users`: every value a bcrypt hash (never quoted in errors). */
function parseUsers(raw: unknown, r: Reader): Map<string, string> {
  const users = new Map<string, string>();
  for (const [user, v] of r.map(raw, 'basic_auth_users') ?? []) {
    const path = `basic_auth_users.${user}`;
    const hash = r.string(v, path) ?? '';
    const m = BCRYPT.exec(hash);
    const cost = Number(m?.[1]);
    if (m === null || cost < 4 || cost > 31)
      throw new KeyProblem(path, 'not a bcrypt hash ($2a$, $2b$ or $2y$, cost 04 to 31, 60 characters)');
    users.set(user, hash);
  }
  return users;
}

/** `rate_limit`: `interval` (a duration; 0 = off) and `burst`. */
function parseRateLimit(raw: unknown, r: Reader): WebRateLimit | undefined {
  const rl = r.map(raw, 'rate_limit', ['interval', 'burst']);
  if (rl === undefined) return undefined;
  const text = r.string(rl.get('interval'), 'rate_limit.interval') ?? '0';
  let intervalMs: number;
  try {
    // A bare number is nanoseconds.
    intervalMs = /^\d+$/.test(text) ? Number(text) / 1e6 : parseDuration(text);
  } catch (err) {
    throw new KeyProblem('rate_limit.interval', errorMessage(err));
  }
  if (intervalMs < 0) throw new KeyProblem('rate_limit.interval', `${text}: must not be negative`);
  const burstText = r.string(rl.get('burst'), 'rate_limit.burst') ?? '0';
  if (!/^\d+$/.test(burstText))
    throw new KeyProblem('rate_limit.burst', `${burstText}: not a whole number >= 0`);
  return intervalMs === 0 ? undefined : { intervalMs, burst: Number(burstText) };
}

/**
 * Check a web configuration file's text. `file` names it in errors and is the directory
 * relative file names are read from; no file is read here. Throws WebConfigError.
 */
export function parseWebConfig(text: string, file: string, key = 'web.config.file'): WebConfig {
  const lc = new LineCounter();
  const doc = parseDocument(text, {
    version: '1.1',
    uniqueKeys: false,
    lineCounter: lc,
    prettyErrors: false,
  });
  const first = doc.errors[0];
  if (first !== undefined) {
    const line = lc.linePos(first.pos[0]).line;
    throw new WebConfigError(file, '', `line ${line}: ${first.message.split('\n')[0] ?? ''}`, key);
  }
  try {
    const r = new Reader(doc);
    const top = r.map(doc.contents, '', TOP_KEYS);
    const { http2, headers } = parseHttp(top?.get('http_server_config'), r);
    return {
      file,
      tls: parseTls(top?.get('tls_server_config'), r, dirname(file)),
      http2,
      headers,
      users: parseUsers(top?.get('basic_auth_users'), r),
      rateLimit: parseRateLimit(top?.get('rate_limit'), r),
    };
  } catch (err) {
    if (err instanceof KeyProblem) throw new WebConfigError(file, err.path, err.why, key);
    throw err;
  }
}

/** The code of a file error (ENOENT…), never the file's content. */
function fileCode(err: unknown): string {
  return fileErrorText(err);
}

/** Read one PEM file named by `path` (a key of the file). */
function readPem(file: string, path: string, name: string, key: string): string {
  try {
    return readRegularTextSync(name);
  } catch (err) {
    throw new WebConfigError(file, path, `cannot read ${name}: ${fileCode(err)}`, key);
  }
}

/** The certificates of a CA bundle; at least one must parse. */
function checkCa(pem: string, file: string, path: string, key: string): void {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new WebConfigError(file, path, 'holds no PEM certificate', key);
  for (const b of blocks) {
    try {
      new (process.getBuiltinModule('node:crypto').X509Certificate)(b);
    } catch (err) {
      throw new WebConfigError(file, path, `bad certificate: ${errorMessage(err)}`, key);
    }
  }
}

/** Read the certificate, key and CA files of `tls` and prove that they make a TLS context. */
function loadTls(tls: WebTlsConfig, file: string, key: string): WebTlsConfig {
  const inline = (s: string): boolean => s.startsWith('tls_server_config.');
  const certPath = inline(tls.certSource) ? 'tls_server_config.cert' : 'tls_server_config.cert_file';
  const keyPath = inline(tls.keySource) ? 'tls_server_config.key' : 'tls_server_config.key_file';
  const cert = inline(tls.certSource) ? tls.cert : readPem(file, certPath, tls.certSource, key);
  const pkey = inline(tls.keySource) ? tls.key : readPem(file, keyPath, tls.keySource, key);
  let clientCa = tls.clientCa;
  if (tls.clientCaSource !== undefined) {
    const caPath = inline(tls.clientCaSource)
      ? 'tls_server_config.client_ca'
      : 'tls_server_config.client_ca_file';
    if (!inline(tls.clientCaSource)) clientCa = readPem(file, caPath, tls.clientCaSource, key);
    checkCa(clientCa ?? '', file, caPath, key);
  }
  try {
    new (process.getBuiltinModule('node:crypto').X509Certificate)(cert);
  } catch (err) {
    throw new WebConfigError(file, certPath, `bad certificate: ${errorMessage(err)}`, key);
  }
  try {
    // node:tls is loaded here, by a web configuration with TLS, and not at every start.
    process.getBuiltinModule('node:tls').createSecureContext({ cert, key: pkey });
  } catch (err) {
    throw new WebConfigError(file, keyPath, `certificate and key do not load: ${errorMessage(err)}`, key);
  }
  return { ...tls, cert, key: pkey, clientCa };
}

/**
 * Read and check a web configuration file and the files it names (certificate, key, client
 * CA). Throws WebConfigError: one line with `key`, the file and the bad key.
 */
export function loadWebConfig(file: string, key = 'web.config.file'): WebConfig {
  let text: string;
  try {
    text = readRegularTextSync(file);
  } catch (err) {
    throw new WebConfigError(file, '', `cannot read: ${fileCode(err)}`, key);
  }
  const config = parseWebConfig(text, file, key);
  if (config.tls === undefined) return config;
  return { ...config, tls: loadTls(config.tls, file, key) };
}

/**
 * The SANs of a certificate as text: DNS names, e-mail addresses, IP addresses (IPv6
 * compressed, lower case) and URIs. Other kinds are left out.
 */
export function certificateSans(cert: X509Certificate): string[] {
  const text = cert.subjectAltName ?? '';
  const out: string[] = [];
  const re = /(DNS|IP Address|email|URI|[^:,]+):("(?:[^"\\]|\\.)*"|[^,]*)(?:, |$)/gy;
  for (let m = re.exec(text); m !== null && m[0] !== ''; m = re.exec(text)) {
    const kind = m[1] ?? '';
    const raw = m[2] ?? '';
    let value: string;
    try {
      value = raw.startsWith('"') ? (JSON.parse(raw) as string) : raw;
    } catch {
      continue;
    }
    if (kind === 'IP Address') out.push(value.includes(':') ? compressV6(value) : value);
    else if (kind === 'DNS' || kind === 'email' || kind === 'URI') out.push(value);
  }
  return out;
}

/** An IPv6 address in its compressed form (`0:0:0:0:0:0:0:1` → `::1`). */
function compressV6(addr: string): string {
  try {
    return new URL(`http://[${addr}]/`).hostname.slice(1, -1);
  } catch {
    return addr.toLowerCase();
  }
}
