/**
 * The Amazon RDS certificate authorities sonde verifies an RDS server against when it turns
 * TLS on by itself (`tls=rds`): the file `certs/rds-global-bundle.pem` shipped with sonde,
 * Amazon's global bundle of RDS root CAs for every region. Read on first use only.
 * `scripts/refresh-rds-ca.sh` downloads a new copy.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PACKAGE_ROOT, inSingleExecutable, readShipped } from '../util/shipped.js';

/** Where Amazon publishes the bundle. */
export const RDS_CA_URL = 'https://truststore.pki.rds.amazonaws.com/global/global-bundle.pem';

/** The bundle's path in the package, and the single executable's embedded copy. */
const RDS_CA_ASSET = 'certs/rds-global-bundle.pem';

/** The bundle's path: `certs/` at the package root. */
export const RDS_CA_FILE = join(PACKAGE_ROOT, RDS_CA_ASSET);

let bundle: string | undefined;

/**
 * The bundle's PEM text. Throws, naming the file and how to get it, when it is missing or
 * holds no certificate; sonde then does not connect rather than connect unverified.
 */
export async function rdsCaBundle(file = RDS_CA_FILE): Promise<string> {
  if (bundle !== undefined && file === RDS_CA_FILE) return bundle;
  let text: string;
  try {
    text =
      file === RDS_CA_FILE && inSingleExecutable()
        ? readShipped(RDS_CA_ASSET).toString('utf8')
        : await readFile(file, 'utf8');
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'is missing' : 'cannot be read';
    throw new Error(
      `the Amazon RDS CA bundle ${file} ${why}: fetch it with curl -o ${file} ${RDS_CA_URL} (or set tls.ca, or aws.disable-auto-tls: true)`,
      { cause: err },
    );
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) {
    throw new Error(
      `the Amazon RDS CA bundle ${file} holds no certificate: fetch it again from ${RDS_CA_URL}`,
    );
  }
  if (file === RDS_CA_FILE) bundle = text;
  return text;
}
