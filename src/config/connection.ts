/**
 * Connection assembly for one finalized monitor: my.cnf, network and
 * address, credentials, TLS, connect timeout, and the redacted DSN shown by the API.
 *
 * No error thrown here contains a password: messages name paths, keys and line numbers only.
 */
import { resolve } from 'node:path';
import type { FinalMonitorConfig } from '../core/config.js';
import type { ConnectionSettings, CredentialSource, TlsChoice, TlsSpec } from '../core/db.js';
import { errorMessage } from '../core/errors.js';
import { parseDuration } from '../util/duration.js';
import { splitHostPort } from '../util/net.js';
import type { HostPort } from '../util/net.js';
import { ConfigError, osErrorText } from './errors.js';
import { myCnfHostname, readMyCnf, readMyCnfModule, readMyCnfSection, readMyCnfSync } from './mycnf.js';
import type { MyCnf } from './mycnf.js';
import { readRegularText } from '../util/read-file.js';

/** MySQL's port when none is given. */
export const DEFAULT_MYSQL_PORT = 3306;
/** Connect timeout when `timeout-connect` is empty. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** The built-in default username; my.cnf's `user` replaces it (it is not an explicit choice). */
const BUILTIN_USERNAME = 'blip';

const RDS_ADDRESS = /rds\.amazonaws\.com(:\d+)?$/;

/** Go's url.QueryEscape: everything but `A-Za-z0-9-_.~` is %XX, space is `+`. */
function queryEscape(s: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(b);
    if (/[A-Za-z0-9\-_.~]/.test(c)) out += c;
    else if (c === ' ') out += '+';
    else out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

// Kept for the importers of these names here; the parser itself lives in util/net.
export { splitHostPort };
export type { HostPort };

/** The tcp address as go-sql-driver prints it: default port added, IPv6 bracketed. */
function displayTcpAddress(hostname: string): string {
  if (hostname === '') return `127.0.0.1:${DEFAULT_MYSQL_PORT}`;
  const hp = splitHostPort(hostname);
  if (hp.port !== undefined) return hostname; // written with a port: shown as written
  const host = hp.host.includes(':') ? `[${hp.host}]` : hp.host;
  return `${host}:${DEFAULT_MYSQL_PORT}`;
}

/** What the redacted DSN is made of. */
export interface RedactDsnInput {
  username: string;
  /** unix socket path; wins over `hostname` */
  socket?: string | undefined;
  /** tcp address as configured: `host`, `host:port`, `[v6]:port`, `v6` or "" */
  hostname?: string | undefined;
  /** TLS config name for the `tls` param: the monitor id, or `rds` */
  tls?: string | undefined;
  /** IAM auth adds `allowCleartextPasswords=true` */
  allowCleartextPasswords?: boolean | undefined;
}

/**
 * The DSN as shown by `GET /monitors` and status key `dsn`:
 * `<user>:...@tcp(host:3306)/?interpolateParams=true&parseTime=true[&tls=<id>]` or
 * `<user>:...@unix(/path)/?...`. The password is always `...` (even when there is none);
 * no username → no `<user>:...@` at all. Params in go-sql-driver's order.
 */
export function redactDsn(p: RedactDsnInput): string {
  const user = p.username !== '' ? `${p.username}:...@` : '';
  const socket = p.socket ?? '';
  const addr = socket !== '' ? `unix(${socket})` : `tcp(${displayTcpAddress(p.hostname ?? '')})`;
  const params: string[] = [];
  if (p.allowCleartextPasswords) params.push('allowCleartextPasswords=true');
  params.push('interpolateParams=true', 'parseTime=true');
  if (p.tls !== undefined && p.tls !== '') params.push(`tls=${queryEscape(p.tls)}`);
  return `${user}${addr}/?${params.join('&')}`;
}

async function readTlsFile(key: string, path: string, cwd: string): Promise<string> {
  try {
    return await readRegularText(resolve(cwd, path));
  } catch (err) {
    throw new ConfigError(`cannot read tls.${key}: ${osErrorText(err, path)}`, { key: `tls.${key}` });
  }
}

function parsePort(hostname: string, port: string | undefined): number {
  if (port === undefined) return DEFAULT_MYSQL_PORT;
  const n = /^\d{1,5}$/.test(port) ? Number.parseInt(port, 10) : NaN;
  if (!(n >= 1 && n <= 65535)) {
    throw new ConfigError(`invalid port in hostname ${hostname}`, { key: 'hostname' });
  }
  return n;
}

function connectTimeout(v: string | undefined): number {
  if (v === undefined || v === '') return DEFAULT_CONNECT_TIMEOUT_MS;
  let ms: number;
  try {
    ms = parseDuration(v);
  } catch (err) {
    throw new ConfigError(`invalid timeout-connect: ${v}: ${errorMessage(err)}`, { key: 'timeout-connect' });
  }
  return ms > 0 ? ms : DEFAULT_CONNECT_TIMEOUT_MS;
}

/** Options of connectionSettings (and of the db layer's buildConnection, which adds `reload`). */
export interface BuildConnectionOptions {
  /** base of relative mycnf/password-file/tls paths; default process.cwd() */
  cwd?: string;
  /**
   * An auth module (the probe listener's `auth_module`): the username and password come
   * from the `[client.<name>]` section of the monitor's my.cnf (its missing keys from
   * `[client]`) instead of the monitor's own; address, TLS and timeouts stay the monitor's.
   * Throws a ConfigError with key `auth_module` when the monitor has no my.cnf, the file has
   * no such section, or the section gives no user.
   */
  authModule?: string;
  /**
   * mysqld_exporter's multi-target probe: connect to `address` (`host:port` or
   * `unix://<path>`) with the user, password and TLS settings of the my.cnf section
   * `section` (`client`, `client.<x>` over `[client]`, or any other section alone); a
   * `client` or `client.<x>` section without a user or password gets the monitor's (the
   * command line's `--mysqld.username` and MYSQLD_EXPORTER_PASSWORD). ConfigError with key
   * `target` for a bad address, `auth_module` for a missing section or user.
   */
  target?: { address: string; section: string };
  /** Told each key of the monitor's my.cnf that sonde does not read (`<file>: unknown key <k>, ignored`). */
  warn?: (message: string) => void;
}

/**
 * The connection settings of a finalized monitor, with sonde's choices (no network I/O:
 * credentials that live elsewhere are named by their source, which the db layer's
 * credentials module resolves when connecting):
 * - my.cnf `[client]` fills only empty fields: an explicit config hostname, username or
 *   password wins; my.cnf's socket is used only when the config sets neither socket nor
 *   hostname. The built-in default username `blip` counts as empty when my.cnf has `user`.
 * - credentials: aws.iam-auth (RDS IAM token, cleartext allowed over TLS only), then
 *   aws.password-secret (Secrets Manager), then password-file (one trailing newline
 *   stripped), then my.cnf, then `password`.
 * - no TLS files, over TCP, and IAM auth, a secret or an RDS hostname: TLS verified with
 *   the shipped Amazon RDS CA bundle (`tls=rds`) unless aws.disable-auto-tls.
 * - socket wins over hostname; tcp port defaults to 3306; empty address → 127.0.0.1:3306.
 * - TLS when not disabled (tls.disable or my.cnf `ssl-mode=DISABLED`) and a ca/cert/key is
 *   set; cert+key used only together; socket + TLS + no hostname → skip-verify unless set.
 * - connect timeout from `timeout-connect` (default 10s).
 * Every call re-reads my.cnf and the TLS files. Throws ConfigError; no message contains the
 * password.
 */
export async function connectionSettings(
  m: FinalMonitorConfig,
  opts: BuildConnectionOptions = {},
): Promise<ConnectionSettings> {
  const cwd = opts.cwd ?? process.cwd();
  if (opts.target !== undefined) return targetSettings(m, opts.target, cwd);
  const f = await withMyCnf(m, cwd);
  for (const key of f.cnf?.unknown ?? [])
    opts.warn?.(`mycnf ${m.mycnf ?? ''}: unknown key ${key} in [client], ignored`);
  const module =
    opts.authModule === undefined ? undefined : await authModuleCredentials(m, opts.authModule, cwd);
  const credentials: CredentialSource =
    module !== undefined
      ? { kind: 'static', username: module.user, password: module.password }
      : credentialSource(m, f, cwd);

  // Address: a socket wins; otherwise tcp, 127.0.0.1 and port 3306 by default.
  const { host, port } = tcpAddress(f, '127.0.0.1');
  return {
    credentials,
    socket: f.socket === '' ? undefined : f.socket,
    host,
    port,
    tls: await tlsChoiceOf(m, f, cwd),
    connectTimeoutMs: connectTimeout(m['timeout-connect']),
    hostname: f.hostname,
    // my.cnf enable-cleartext-plugin: the server may ask for the password in clear text
    // (LDAP or PAM authentication); it is sent over TLS only.
    ...(f.cnf?.enableCleartextPlugin === true ? { allowCleartextPasswords: true } : {}),
  };
}

/** A probe target's address: `unix://<path>`, or `host:port` with a port (as mysqld_exporter). */
function targetAddress(address: string): { socket: string } | { hostname: string } {
  if (address.startsWith('unix://') && address.length > 'unix://'.length)
    return { socket: address.slice('unix://'.length) };
  const hp = splitHostPort(address);
  if (hp.host === '' || hp.port === undefined || !/^\d{1,5}$/.test(hp.port) || Number(hp.port) > 65535)
    throw new ConfigError(`invalid target ${JSON.stringify(address)}: want host:port or unix://<path>`, {
      key: 'target',
    });
  return { hostname: address };
}

/** Where TCP connects (nothing over a socket); `emptyHost` stands for a hostname without a host. */
function tcpAddress(f: Fields, emptyHost: string): { host?: string; port?: number } {
  if (f.socket !== '') return {};
  const hp = splitHostPort(f.hostname);
  return { host: hp.host === '' ? emptyHost : hp.host, port: parsePort(f.hostname, hp.port) };
}

/** connectionSettings() of a multi-target probe (see BuildConnectionOptions.target). */
async function targetSettings(
  m: FinalMonitorConfig,
  target: { address: string; section: string },
  cwd: string,
): Promise<ConnectionSettings> {
  const { section } = target;
  const key = 'auth_module';
  const file = m.mycnf ?? '';
  let cnf: MyCnf | undefined;
  if (file !== '') {
    try {
      cnf = await readMyCnfSection(resolve(cwd, file), section);
    } catch (err) {
      throw new ConfigError(`auth_module ${section}: cannot read mycnf: ${errorMessage(err)}`, {
        key,
        cause: err,
      });
    }
  }
  const inherits = section === 'client' || section.startsWith('client.');
  if (cnf === undefined && !(inherits && section === 'client'))
    throw new ConfigError(`auth_module ${section}: no [${section}] section in ${file || 'the my.cnf'}`, {
      key,
    });
  const username = cnf?.user || (inherits ? (m.username ?? '') : '');
  const password = cnf?.password || (inherits ? (m.password ?? '') : '');
  if (username === '') throw new ConfigError(`auth_module ${section}: [${section}] has no user`, { key });
  const at = targetAddress(target.address);
  const probed: FinalMonitorConfig = { ...m, hostname: '', socket: '', ...at };
  delete probed.mycnf;
  const f = fillFromMyCnf(probed, cnf);
  const { host, port } = tcpAddress(f, '');
  return {
    credentials: { kind: 'static', username, password },
    socket: f.socket === '' ? undefined : f.socket,
    host,
    port,
    tls: await tlsChoiceOf(probed, f, cwd),
    connectTimeoutMs: connectTimeout(m['timeout-connect']),
    hostname: f.hostname,
    ...(cnf?.enableCleartextPlugin === true ? { allowCleartextPasswords: true } : {}),
  };
}

/** The user and password of the auth module `name`: `[client.<name>]` of the monitor's my.cnf. */
async function authModuleCredentials(
  m: FinalMonitorConfig,
  name: string,
  cwd: string,
): Promise<{ user: string; password: string }> {
  const key = 'auth_module';
  const file = m.mycnf ?? '';
  if (file === '') throw new ConfigError(`auth_module ${name}: monitor ${m.id} has no mycnf`, { key });
  let cnf: MyCnf | undefined;
  try {
    cnf = await readMyCnfModule(resolve(cwd, file), name);
  } catch (err) {
    throw new ConfigError(`auth_module ${name}: cannot read mycnf: ${errorMessage(err)}`, {
      key,
      cause: err,
    });
  }
  if (cnf === undefined)
    throw new ConfigError(`auth_module ${name}: no [client.${name}] section in ${file}`, { key });
  if (cnf.user === '')
    throw new ConfigError(`auth_module ${name}: [client.${name}] in ${file} has no user`, { key });
  return { user: cnf.user, password: cnf.password };
}

/** The monitor's my.cnf read synchronously for listing; undefined without one or when unreadable. */
function listedMyCnf(m: FinalMonitorConfig, cwd: string | undefined): MyCnf | undefined {
  if ((m.mycnf ?? '') === '') return undefined;
  try {
    return readMyCnfSync(resolve(cwd ?? process.cwd(), m.mycnf ?? ''));
  } catch {
    return undefined;
  }
}

/**
 * Where a monitor connects, as its config and my.cnf say (read synchronously, no
 * connection): `host:port` with the default port added and an IPv6 host in brackets, or
 * `unix://<path>` for a socket. An unreadable my.cnf counts as none.
 */
export function monitorAddress(m: FinalMonitorConfig, opts: { cwd?: string } = {}): string {
  const f = fillFromMyCnf(m, listedMyCnf(m, opts.cwd));
  return f.socket !== '' ? `unix://${f.socket}` : displayTcpAddress(f.hostname);
}

/** The connection fields of a monitor once my.cnf has filled the gaps. */
interface Fields {
  username: string;
  password: string;
  hostname: string;
  socket: string;
  tls: { ca: string; cert: string; key: string };
  tlsDisabled: boolean;
  cnf: MyCnf | undefined;
  /** my.cnf asks for TLS without files (`tls`, an `ssl-mode` that requires it, TLS versions, a server name). */
  cnfWantsTls: boolean;
}

/** `ssl-mode` values that mean TLS even without certificate files. */
const TLS_SSL_MODES: ReadonlySet<string> = new Set(['REQUIRED', 'VERIFY_CA', 'VERIFY_IDENTITY']);

/**
 * The monitor's fields, with my.cnf `[client]` filling only the empty ones: its socket only
 * when neither socket nor hostname is set, its TLS files unless it disables TLS (or prefers
 * it over a socket), its user when the username is empty or the built-in default.
 */
async function withMyCnf(m: FinalMonitorConfig, cwd: string): Promise<Fields> {
  if ((m.mycnf ?? '') === '') return fillFromMyCnf(m, undefined);
  let cnf: MyCnf;
  try {
    cnf = await readMyCnf(resolve(cwd, m.mycnf ?? ''));
  } catch (err) {
    throw new ConfigError(`cannot read mycnf: ${errorMessage(err)}`, { key: 'mycnf', cause: err });
  }
  return fillFromMyCnf(m, cnf);
}

/** The monitor's fields with `cnf` (when there is one) filling the empty ones. */
function fillFromMyCnf(m: FinalMonitorConfig, cnf: MyCnf | undefined): Fields {
  const f: Fields = {
    username: m.username ?? '',
    password: m.password ?? '',
    hostname: m.hostname ?? '',
    socket: m.socket ?? '',
    tls: { ca: m.tls?.ca ?? '', cert: m.tls?.cert ?? '', key: m.tls?.key ?? '' },
    tlsDisabled: m.tls?.disable === true,
    cnf,
    cnfWantsTls: false,
  };
  if (!cnf) return f;
  f.cnfWantsTls =
    ['true', 'skip-verify', 'preferred'].includes(cnf.tls) ||
    cnf.sslSkipVerify ||
    TLS_SSL_MODES.has(cnf.sslMode) ||
    cnf.tlsMinVersion !== '' ||
    cnf.tlsMaxVersion !== '' ||
    cnf.tlsServerName !== '';
  if (f.socket === '' && f.hostname === '' && cnf.socket !== '') f.socket = cnf.socket;
  if (f.hostname === '') f.hostname = myCnfHostname(cnf);
  if (cnf.sslMode === 'DISABLED') f.tlsDisabled = true;
  else if (!(f.socket !== '' && cnf.sslMode === 'PREFERRED')) {
    if (f.tls.ca === '') f.tls.ca = cnf.sslCa;
    if (f.tls.cert === '') f.tls.cert = cnf.sslCert;
    if (f.tls.key === '') f.tls.key = cnf.sslKey;
  }
  if ((f.username === '' || f.username === BUILTIN_USERNAME) && cnf.user !== '') f.username = cnf.user;
  return f;
}

/**
 * The redacted DSN of a monitor as its config describes it, for listing a monitor before it
 * has started (`GET /monitors`). Reads the monitor's my.cnf when it has one; when that file
 * cannot be read the DSN is made from the config alone. Never reads the password file nor
 * TLS files, never throws. Once the monitor starts, buildConnection's DSN replaces it.
 */
export function listedDsn(m: FinalMonitorConfig, opts: { cwd?: string } = {}): string {
  const f = fillFromMyCnf(m, listedMyCnf(m, opts.cwd));
  const insecure = flagBool(m.exporter?.flags?.['tls.insecure-skip-verify'] ?? '') === true;
  const tls =
    !f.tlsDisabled && (insecure || f.cnfWantsTls || f.tls.ca !== '' || f.tls.cert !== '' || f.tls.key !== '');
  return redactDsn({
    username: f.username,
    socket: f.socket,
    hostname: f.hostname,
    tls: tls ? m.id : autoRdsTls(m, f) ? 'rds' : undefined,
    allowCleartextPasswords: m.aws?.['iam-auth'] === true || f.cnf?.enableCleartextPlugin === true,
  });
}

/**
 * Where the credentials come from, first match wins: aws.iam-auth (an RDS IAM token),
 * aws.password-secret (Secrets Manager), the password file, my.cnf's password when the config
 * sets none, `password`.
 */
function credentialSource(m: FinalMonitorConfig, f: Fields, cwd: string): CredentialSource {
  const username = f.username;
  const region = m.aws?.region ?? '';
  if (m.aws?.['iam-auth'] === true) {
    if (f.hostname === '') {
      throw new ConfigError('aws.iam-auth: no hostname: the IAM token is signed for host:port', {
        key: 'aws.iam-auth',
      });
    }
    const hp = splitHostPort(f.hostname);
    const port = parsePort(f.hostname, hp.port);
    return { kind: 'iam', username, host: hp.host, port, region, hostname: f.hostname };
  }
  const secretId = m.aws?.['password-secret'] ?? '';
  if (secretId !== '') return { kind: 'secret', username, secretId, region, hostname: f.hostname };
  if ((m['password-file'] ?? '') !== '')
    return { kind: 'file', username, path: resolve(cwd, m['password-file'] ?? '') };
  if (f.cnf && f.password === '') return { kind: 'static', username, password: f.cnf.password };
  return { kind: 'static', username, password: f.password };
}

/**
 * Whether sonde turns TLS on by itself with the Amazon RDS CA bundle (`tls=rds`): over TCP,
 * when TLS files are not set, aws.disable-auto-tls is not true, and the monitor uses IAM
 * auth or a Secrets Manager password or its hostname is an RDS endpoint.
 */
function autoRdsTls(m: FinalMonitorConfig, f: Fields): boolean {
  if (m.aws?.['disable-auto-tls'] === true || f.socket !== '') return false;
  return (
    m.aws?.['iam-auth'] === true || (m.aws?.['password-secret'] ?? '') !== '' || RDS_ADDRESS.test(f.hostname)
  );
}

/** Node's name of a my.cnf TLS version (`TLSv1.0` is Node's `TLSv1`). */
function nodeTlsVersion(v: string): string | undefined {
  return v === '' ? undefined : v === 'TLSv1.0' ? 'TLSv1' : v;
}

/** my.cnf's TLS versions and server name added to a spec. */
function cnfTlsExtras(spec: TlsSpec, cnf: MyCnf | undefined): TlsSpec {
  if (cnf === undefined) return spec;
  const min = nodeTlsVersion(cnf.tlsMinVersion);
  const max = nodeTlsVersion(cnf.tlsMaxVersion);
  if (min !== undefined) spec.minVersion = min;
  if (max !== undefined) spec.maxVersion = max;
  if (cnf.tlsServerName !== '') spec.checkName = cnf.tlsServerName;
  return spec;
}

/**
 * TLS when not disabled and a ca, cert or key is set, or my.cnf asks for it (`tls`, an
 * `ssl-mode` of REQUIRED, VERIFY_CA or VERIFY_IDENTITY, TLS versions, a server name); cert
 * and key are used only together; a socket with no hostname skips verification unless
 * `skip-verify` says otherwise. Without any, the automatic `tls=rds` rule applies.
 * Undefined when TLS is off.
 */
async function tlsChoiceOf(m: FinalMonitorConfig, f: Fields, cwd: string): Promise<TlsChoice | undefined> {
  const { tls, socket, hostname, cnf } = f;
  // mysqld_exporter's --tls.insecure-skip-verify and my.cnf ssl-skip-verfication: TLS
  // without verifying the server, even with no TLS file (as mysqld_exporter's skip-verify
  // mode does), unless TLS is disabled.
  const insecure =
    flagBool(m.exporter?.flags?.['tls.insecure-skip-verify'] ?? '') === true || cnf?.sslSkipVerify === true;
  if (insecure && !f.tlsDisabled)
    return { spec: cnfTlsExtras(await insecureTls(tls, hostname, cwd), cnf), name: m.id };
  const files = tls.ca !== '' || tls.cert !== '' || tls.key !== '';
  if (f.tlsDisabled || (!files && !f.cnfWantsTls)) {
    // No TLS of the monitor's own: RDS connections get TLS verified with the RDS CAs.
    return autoRdsTls(m, f) ? { name: 'rds', rds: { servername: splitHostPort(hostname).host } } : undefined;
  }
  let skipVerify = m.tls?.['skip-verify'];
  if (skipVerify === undefined && socket !== '' && hostname === '') skipVerify = true;
  // tls=skip-verify and tls=preferred do not verify; ssl-mode=REQUIRED only when given a CA.
  if (skipVerify === undefined && (cnf?.tls === 'skip-verify' || cnf?.tls === 'preferred')) skipVerify = true;
  if (skipVerify === undefined && cnf?.sslMode === 'REQUIRED' && tls.ca === '') skipVerify = true;
  const spec: TlsSpec = { rejectUnauthorized: skipVerify !== true };
  if (cnf?.sslMode === 'VERIFY_CA') spec.verifyIdentity = false;
  if (cnf?.tls === 'preferred' && !files && !TLS_SSL_MODES.has(cnf.sslMode)) spec.preferred = true;
  if (tls.ca !== '') spec.ca = await readTlsFile('ca', tls.ca, cwd);
  if (tls.cert !== '' && tls.key !== '') {
    spec.cert = await readTlsFile('cert', tls.cert, cwd);
    spec.key = await readTlsFile('key', tls.key, cwd);
  }
  const servername = hostname === '' ? '' : splitHostPort(hostname).host;
  if (servername !== '') spec.servername = servername;
  return { spec: cnfTlsExtras(spec, cnf), name: m.id };
}

/** TLS that does not verify the server; the CA is not needed, a client certificate is sent. */
async function insecureTls(tls: Fields['tls'], hostname: string, cwd: string): Promise<TlsSpec> {
  const spec: TlsSpec = { rejectUnauthorized: false };
  if (tls.cert !== '' && tls.key !== '') {
    spec.cert = await readTlsFile('cert', tls.cert, cwd);
    spec.key = await readTlsFile('key', tls.key, cwd);
  }
  const servername = hostname === '' ? '' : splitHostPort(hostname).host;
  if (servername !== '') spec.servername = servername;
  return spec;
}

/** A kingpin/Go boolean flag value, any case; undefined when it is none. */
function flagBool(v: string): boolean | undefined {
  const t = v.trim().toLowerCase();
  if (t === '1' || t === 't' || t === 'true') return true;
  if (t === '0' || t === 'f' || t === 'false') return false;
  return undefined;
}
