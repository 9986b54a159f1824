/**
 * `sonde healthcheck [URL]`: GET the API's `/healthz` (the URL, else SONDE_HEALTHZ, else
 * the default bind's), exit 0 on a 2xx and 1 otherwise, within 5 s. A container image with
 * nothing but the single executable has no curl and no node to ask for it. The entry
 * (bin/sonde.ts) runs it without loading the rest of sonde: an image's health check runs it
 * every 30 s.
 */
import { errorMessage } from '../core/errors.js';

/** Where `sonde healthcheck` asks without a URL: SONDE_HEALTHZ, else the default API's liveness. */
const HEALTHZ_DEFAULT = 'http://127.0.0.1:7522/healthz';

/** The exit code: 0 when the API answered 2xx, else 1 after one line on stderr. */
export async function healthcheck(url: string | undefined): Promise<number> {
  const target = url ?? (process.env.SONDE_HEALTHZ || HEALTHZ_DEFAULT);
  try {
    const res = await fetch(target, { signal: AbortSignal.timeout(5000) });
    if (res.ok) return 0;
    process.stderr.write(`sonde healthcheck: ${target}: HTTP ${res.status}\n`);
  } catch (err) {
    process.stderr.write(`sonde healthcheck: ${target}: ${errorMessage(err)}\n`);
  }
  return 1;
}
