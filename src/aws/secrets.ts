/**
 * Database credentials kept in AWS Secrets Manager (`aws.password-secret`): the secret's
 * string must be JSON with a `password` key, and may carry `username` too (the shape RDS
 * and Secrets Manager rotation use). A secret stored as SecretBinary is read the same way:
 * its bytes are that JSON text in UTF-8. It is read when the connection is built and read
 * again when the server answers "access denied", so a rotated password is picked up
 * without a restart.
 *
 * Errors are one line and never contain the secret's value.
 */
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { AwsConfigFactory } from '../core/aws.js';
import { awsClientSettings, awsCredentials, awsErrorName, awsErrorText, withTimeout } from './sdk.js';

/** How long one read of the secret may take (credentials already at hand). */
export const SECRET_TIMEOUT_MS = 500;

export interface SecretCredentials {
  /** The secret's `username`, when it has a non-empty one. */
  username?: string;
  password: string;
}

const clients = new Map<string, SecretsManagerClient>();

async function client(region: string | undefined): Promise<SecretsManagerClient> {
  const key = region ?? '';
  const known = clients.get(key);
  if (known) return known;
  const [{ SecretsManagerClient }, credentials] = await Promise.all([
    import('@aws-sdk/client-secrets-manager'),
    awsCredentials(),
  ]);
  const c = new SecretsManagerClient({ credentials, ...(region === undefined ? {} : { region }) });
  clients.set(key, c);
  return c;
}

/**
 * Reads secret `secretId` (name or ARN) and returns its password (and username). Throws
 * `secret <id> not found`, `secret <id> is not JSON…`, `access to secret <id> denied: …`
 * and the like; never the secret's content.
 */
export async function fetchDbSecret(
  secretId: string,
  region: string | undefined,
  opts: { aws?: AwsConfigFactory | undefined; monitorId?: string } = {},
): Promise<SecretCredentials> {
  // With the embedding program's factory, a client of its settings for this read only.
  const own =
    opts.aws === undefined
      ? undefined
      : new (await import('@aws-sdk/client-secrets-manager')).SecretsManagerClient(
          await awsClientSettings('secrets-manager', region, opts.aws, opts.monitorId),
        );
  const sm = own ?? (await client(region));
  const { GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
  let out: { SecretString?: string | undefined; SecretBinary?: Uint8Array | undefined };
  try {
    out = await withTimeout(`GetSecretValue of secret ${secretId}`, SECRET_TIMEOUT_MS, (abortSignal) =>
      sm.send(new GetSecretValueCommand({ SecretId: secretId }), { abortSignal }),
    );
  } catch (err) {
    throw new Error(secretErrorText(secretId, err), { cause: err });
  } finally {
    own?.destroy();
  }
  return parseDbSecret(secretId, secretText(out));
}

/** The secret's text: its SecretString, else its SecretBinary's bytes as UTF-8. */
export function secretText(out: {
  SecretString?: string | undefined;
  SecretBinary?: Uint8Array | undefined;
}): string | undefined {
  if (out.SecretString !== undefined) return out.SecretString;
  if (out.SecretBinary === undefined) return undefined;
  return Buffer.from(out.SecretBinary).toString('utf8');
}

function secretErrorText(id: string, err: unknown): string {
  switch (awsErrorName(err)) {
    case 'ResourceNotFoundException':
      return `secret ${id} not found (ResourceNotFoundException)`;
    case 'AccessDeniedException':
      return `access to secret ${id} denied: ${awsErrorText(err)}`;
    case 'DecryptionFailure':
      return `secret ${id} cannot be decrypted: ${awsErrorText(err)}`;
    default:
      return `cannot read secret ${id}: ${awsErrorText(err)}`;
  }
}

/** The `password` (and `username`) of a secret string; errors never quote the string. */
export function parseDbSecret(id: string, text: string | undefined): SecretCredentials {
  if (text === undefined) throw new Error(`secret ${id} has neither SecretString nor SecretBinary`);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new Error(`secret ${id} is not JSON: want {"password": "..."}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new Error(`secret ${id} is not a JSON object: want {"password": "..."}`);
  }
  const { password, username } = doc as Record<string, unknown>;
  if (typeof password !== 'string') throw new Error(`secret ${id} has no "password" string`);
  if (username !== undefined && typeof username !== 'string')
    throw new Error(`secret ${id}: "username" is not a string`);
  return username === undefined || username === '' ? { password } : { username, password };
}
