/**
 * RDS IAM database authentication (`aws.iam-auth`): the password is a token, a presigned
 * `connect` request for `host:port` and the database user, signed with the process's AWS
 * credentials (SigV4, service `rds-db`). A token is valid for 15 minutes; it is reused for
 * new connections while it is less than 10 minutes old and a fresh one is made after, or
 * at once when the server answered "access denied". Making a token is local work (no
 * network call) once the credentials are at hand.
 *
 * The token is a cleartext password: the database driver sends it only over TLS.
 */
import type { AwsConfigFactory } from '../core/aws.js';
import { awsClientSettings, awsErrorText } from './sdk.js';

/** An IAM token is accepted this long after it is made. */
export const IAM_TOKEN_LIFETIME_MS = 15 * 60_000;
/** A token older than this is not handed out again: new connections get a fresh one. */
export const IAM_TOKEN_REUSE_MS = 10 * 60_000;

export interface IamTarget {
  host: string;
  port: number;
  user: string;
  /** undefined: the SDK's default region (`AWS_REGION`, the profile). */
  region: string | undefined;
}

interface Cached {
  token: string;
  madeAt: number;
}

const cache = new Map<string, Cached>();
/** Tokens signed with the settings of an embedding program's factory, kept apart per factory. */
const factoryCaches = new WeakMap<AwsConfigFactory, Map<string, Cached>>();

function cacheOf(aws: AwsConfigFactory | undefined): Map<string, Cached> {
  if (aws === undefined) return cache;
  let c = factoryCaches.get(aws);
  if (c === undefined) factoryCaches.set(aws, (c = new Map<string, Cached>()));
  return c;
}

/** Where a token is made: the target, and the embedding program's factory when there is one. */
interface TokenSource {
  aws?: AwsConfigFactory | undefined;
  monitorId?: string;
}

function keyOf(t: IamTarget): string {
  return JSON.stringify([t.host, t.port, t.user, t.region ?? '']);
}

async function makeToken(t: IamTarget, src: TokenSource): Promise<string> {
  const [{ Signer }, settings] = await Promise.all([
    import('@aws-sdk/rds-signer'),
    awsClientSettings('rds-signer', t.region, src.aws, src.monitorId),
  ]);
  try {
    const signer = new Signer({
      hostname: t.host,
      port: t.port,
      username: t.user,
      credentials: settings.credentials,
      ...(settings.region === undefined ? {} : { region: settings.region }),
    });
    return await signer.getAuthToken();
  } catch (err) {
    throw new Error(`cannot make an IAM auth token for ${t.user}@${t.host}:${t.port}: ${awsErrorText(err)}`, {
      cause: err,
    });
  }
}

/**
 * A token for `target`: the cached one while it is young enough, else a new one. `fresh`
 * forces a new token (after "access denied").
 */
export async function iamToken(
  target: IamTarget,
  opts: { fresh?: boolean; now?: () => number } & TokenSource = {},
): Promise<string> {
  const now = opts.now ?? Date.now;
  const key = keyOf(target);
  const tokens = cacheOf(opts.aws);
  const hit = tokens.get(key);
  if (hit && opts.fresh !== true && now() - hit.madeAt < IAM_TOKEN_REUSE_MS) return hit.token;
  const t0 = now();
  const token = await makeToken(target, opts);
  tokens.set(key, { token, madeAt: t0 });
  return token;
}
