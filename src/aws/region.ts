/**
 * Which AWS region a monitor's AWS calls go to:
 * - `aws.region` set to a region name: that region;
 * - `aws.region: auto`: the region of the EC2 instance sonde runs on, asked from the
 *   instance metadata service (IMDSv2: a session token first, then
 *   `meta-data/placement/region`) within 200 ms. A successful answer is kept for the life of
 *   the process and reused by every later `auto`; an explicit region is never replaced by it.
 * - otherwise the region written in an Amazon RDS endpoint
 *   (`<instance>.<cluster>.<region>.rds.amazonaws.com`, exactly six dot-separated fields);
 * - otherwise none: the SDK's own default applies (`AWS_REGION`, the profile's region).
 */
import { splitHostPort } from '../util/net.js';
import { oneLine } from './sdk.js';

/** How long the instance metadata query may take, token included. */
export const IMDS_TIMEOUT_MS = 200;
export const AUTO_REGION_ERROR = 'cannot auto-detect AWS region (EC2 IMDS query failed)';

let autoRegion: string | undefined;
let inFlight: Promise<string> | undefined;

/** The region of an RDS endpoint (`db1.abc123.eu-west-1.rds.amazonaws.com[:port]`), else undefined. */
export function regionFromRdsHostname(hostname: string): string | undefined {
  const host = splitHostPort(hostname).host.toLowerCase();
  const fields = host.split('.');
  if (fields.length !== 6 || !host.endsWith('.rds.amazonaws.com')) return undefined;
  const region = fields[2] ?? '';
  return region === '' ? undefined : region;
}

/**
 * The EC2 instance's region from the metadata service. Rejects with
 * `cannot auto-detect AWS region (EC2 IMDS query failed): <why>` after 200 ms or on any
 * failure (nothing cached then: the next call asks again).
 */
export function imdsRegion(): Promise<string> {
  if (autoRegion !== undefined) return Promise.resolve(autoRegion);
  inFlight ??= queryImds()
    .then((r) => {
      autoRegion = r;
      return r;
    })
    .finally(() => {
      inFlight = undefined;
    });
  return inFlight;
}

async function queryImds(): Promise<string> {
  const { MetadataService } = await import('@aws-sdk/ec2-metadata-service');
  const imds = new MetadataService({ httpOptions: { timeout: IMDS_TIMEOUT_MS }, retries: 0 });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${IMDS_TIMEOUT_MS} ms`)), IMDS_TIMEOUT_MS);
  });
  try {
    // No leading slash: the service joins the endpoint's path and this one itself.
    const text = await Promise.race([imds.request('latest/meta-data/placement/region', {}), deadline]);
    const region = text.trim();
    if (!/^[a-z0-9-]+$/.test(region)) throw new Error('unexpected answer');
    return region;
  } catch (err) {
    throw new Error(`${AUTO_REGION_ERROR}: ${oneLine(err instanceof Error ? err.message : String(err))}`, {
      cause: err,
    });
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The region for a monitor's AWS calls: `aws.region` (`auto` asks the instance metadata),
 * else the region of an RDS hostname, else undefined (the SDK's default).
 */
export async function resolveRegion(o: {
  region?: string | undefined;
  hostname?: string | undefined;
}): Promise<string | undefined> {
  const region = (o.region ?? '').trim();
  if (region === 'auto') return imdsRegion();
  if (region !== '') return region;
  return regionFromRdsHostname(o.hostname ?? '');
}

/** Forget the instance metadata region (tests). */
export function resetAutoRegion(): void {
  autoRegion = undefined;
}
