/**
 * Credentials, resolved where connections are made. The config layer turns a monitor's
 * configuration into ConnectionSettings whose credentials are a source (static, a password
 * file, a Secrets Manager secret, an RDS IAM token) and whose TLS may be the shipped Amazon
 * RDS CA bundle; this module resolves both into the ConnectionSpec the pool connects with.
 * It runs when a monitor connects and again when the server answers "access denied", so a
 * rotated password file, secret or expired token is picked up then.
 *
 * The AWS pieces are imported on first use: a monitor that uses none of them never loads
 * the AWS SDK.
 */
import type { AwsConfigFactory } from '../core/aws.js';
import type { FinalMonitorConfig } from '../core/config.js';
import { ConnectionSpec } from '../core/db.js';
import type { ConnectionSettings, CredentialSource, TlsChoice, TlsSpec } from '../core/db.js';
import { errorMessage } from '../core/errors.js';
import { connectionSettings, redactDsn, type BuildConnectionOptions } from '../config/connection.js';
import { ConfigError, osErrorText } from '../config/errors.js';
import { MAX_SECRET_FILE_BYTES, readRegularText } from '../util/read-file.js';

/** What a resolved source gives: the login, and for IAM a fresh token per new connection. */
interface Credentials {
  username: string;
  password: string;
  /** IAM auth: a fresh token for each new connection's cleartext exchange. */
  cleartext?: () => Promise<string>;
}

/** Options of a resolution. */
export interface ResolveOptions {
  /**
   * True when resolving again after MySQL error 1045: a new IAM token is made even when the
   * last one is still young. The password file and the secret are read at every resolution.
   */
  reload?: boolean;
  /** The embedding program's AWS SDK settings (secrets, IAM tokens), and the monitor they are for. */
  aws?: AwsConfigFactory | undefined;
  monitorId?: string;
}

/**
 * Read a password file: the whole content, minus ONE trailing `\n` or `\r\n` (sonde's choice;
 * Blip keeps it). Other whitespace is part of the password.
 */
export async function readPasswordFile(path: string): Promise<string> {
  let text: string;
  try {
    text = await readRegularText(path, { maxBytes: MAX_SECRET_FILE_BYTES });
  } catch (err) {
    throw new ConfigError(`cannot read password-file: ${osErrorText(err, path)}`, { key: 'password-file' });
  }
  if (text.endsWith('\r\n')) return text.slice(0, -2);
  if (text.endsWith('\n')) return text.slice(0, -1);
  return text;
}

/** The login a credential source gives now. Throws ConfigError naming the config key. */
async function resolveCredentials(src: CredentialSource, opts: ResolveOptions): Promise<Credentials> {
  switch (src.kind) {
    case 'static':
      return { username: src.username, password: src.password };
    case 'file':
      return { username: src.username, password: await readPasswordFile(src.path) };
    case 'secret':
      return secretCredentials(src, opts);
    case 'iam':
      return iamCredentials(src, opts);
  }
}

/** An RDS IAM token for host:port and the username, signed for the monitor's region. */
async function iamCredentials(
  src: Extract<CredentialSource, { kind: 'iam' }>,
  opts: ResolveOptions,
): Promise<Credentials> {
  try {
    const [{ resolveRegion }, { iamToken }] = await Promise.all([
      import('../aws/region.js'),
      import('../aws/iam.js'),
    ]);
    const region = await resolveRegion({ region: src.region, hostname: src.hostname });
    const target = { host: src.host, port: src.port, user: src.username, region };
    const via = { aws: opts.aws, monitorId: opts.monitorId ?? '' };
    const password = await iamToken(target, { ...via, fresh: opts.reload === true });
    return { username: src.username, password, cleartext: () => iamToken(target, via) };
  } catch (err) {
    throw new ConfigError(`aws.iam-auth: ${errorMessage(err)}`, { key: 'aws.iam-auth', cause: err });
  }
}

/** The `password` (and `username`, when it has one) of the monitor's Secrets Manager secret. */
async function secretCredentials(
  src: Extract<CredentialSource, { kind: 'secret' }>,
  opts: ResolveOptions,
): Promise<Credentials> {
  const key = 'aws.password-secret';
  try {
    const [{ resolveRegion }, { fetchDbSecret }] = await Promise.all([
      import('../aws/region.js'),
      import('../aws/secrets.js'),
    ]);
    const region = await resolveRegion({ region: src.region, hostname: src.hostname });
    const secret = await fetchDbSecret(src.secretId, region, {
      aws: opts.aws,
      monitorId: opts.monitorId ?? '',
    });
    return { username: secret.username ?? src.username, password: secret.password };
  } catch (err) {
    throw new ConfigError(`aws.password-secret: ${errorMessage(err)}`, { key, cause: err });
  }
}

/** TLS verified against the shipped Amazon RDS CA bundle, for the hostname without its port. */
async function rdsTls(servername: string): Promise<TlsSpec> {
  let ca: string;
  try {
    ca = await (await import('../aws/rds-ca.js')).rdsCaBundle();
  } catch (err) {
    throw new ConfigError(`automatic TLS for Amazon RDS (tls=rds): ${errorMessage(err)}`, {
      key: 'tls',
      cause: err,
    });
  }
  const spec: TlsSpec = { ca, rejectUnauthorized: true };
  if (servername !== '') spec.servername = servername;
  return spec;
}

/** The TLS material of a choice: as read from files, or the RDS CA bundle. */
async function tlsSpec(choice: TlsChoice): Promise<TlsSpec> {
  return 'rds' in choice ? rdsTls(choice.rds.servername) : choice.spec;
}

/** Resolve settings into what the pool connects with. */
export async function resolveConnection(
  s: ConnectionSettings,
  opts: ResolveOptions = {},
): Promise<ConnectionSpec> {
  const creds = await resolveCredentials(s.credentials, opts);
  const tls = s.tls === undefined ? undefined : await tlsSpec(s.tls);
  const iam = creds.cleartext !== undefined || s.allowCleartextPasswords === true;
  return new ConnectionSpec({
    username: creds.username,
    password: creds.password,
    socket: s.socket,
    host: s.host,
    port: s.port,
    tls,
    connectTimeoutMs: s.connectTimeoutMs,
    redactedDsn: redactDsn({
      username: creds.username,
      socket: s.socket ?? '',
      hostname: s.hostname,
      tls: s.tls?.name,
      allowCleartextPasswords: iam,
    }),
    allowCleartextPasswords: iam,
    ...(creds.cleartext === undefined ? {} : { cleartextPassword: creds.cleartext }),
  });
}

/**
 * The ConnectionSpec of a finalized monitor: its settings (config/connection.ts, which
 * re-reads my.cnf and the TLS files) resolved here. `reload`: the server refused the last
 * credentials (a new IAM token is made).
 */
export async function buildConnection(
  m: FinalMonitorConfig,
  opts: BuildConnectionOptions & ResolveOptions = {},
): Promise<ConnectionSpec> {
  return resolveConnection(await connectionSettings(m, opts), opts);
}
