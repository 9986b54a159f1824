/**
 * The `<what> failed: <err>` collection error that several domains report for a query
 * failure (domains.md §2.10, §2.11, §2.14), keeping the server's errno so the engine can
 * still match it against the domain's error policies.
 */
import { CollectError } from '../core/collector.js';
import { errorMessage } from '../core/errors.js';

/** `<what> failed: <message of err>`, with err's errno (when it has one) and err as cause. */
export function queryFailed(what: string, err: unknown): CollectError {
  const errno = (err as { errno?: unknown } | null)?.errno;
  return new CollectError(`${what} failed: ${errorMessage(err)}`, {
    cause: err,
    ...(typeof errno === 'number' ? { errno } : {}),
  });
}
