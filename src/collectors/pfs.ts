/**
 * Small helpers for the performance_schema domains (query.response-time,
 * percona.response-time, wait.io.table, error.*): errnos, error causes and the
 * `@@performance_schema` check. The §0.7 "not supported" error is sources.ts's.
 */
import type { Db } from '../core/db.js';
import { errorMessage } from '../core/errors.js';

/** MySQL/MariaDB errno: table doesn't exist. */
export const ER_NO_SUCH_TABLE = 1146;
/** MySQL/MariaDB errno: unknown table in information_schema (a plugin table not loaded). */
export const ER_UNKNOWN_TABLE = 1109;

/** `reason (server error text)` when there is a server error to quote. */
export function withCause(reason: string, err: unknown): string {
  return err === undefined ? reason : `${reason} (${errorMessage(err)})`;
}

/** The errno of a query failure, if it has one. */
export function errnoOf(err: unknown): number | undefined {
  const errno = (err as { errno?: unknown } | null | undefined)?.errno;
  return typeof errno === 'number' ? errno : undefined;
}

/**
 * Whether `@@performance_schema` is on. Undefined when the question itself fails (then the
 * caller just tries its query). MariaDB ships with it OFF: its P_S tables then exist but
 * stay empty, which would look like "no activity" rather than "not measured".
 */
export async function performanceSchemaEnabled(db: Db, signal: AbortSignal): Promise<boolean | undefined> {
  try {
    const rows = await db.query('SELECT @@performance_schema AS pfs', [], { signal });
    const v = rows[0]?.pfs ?? rows[0]?.PFS;
    if (v === undefined || v === null) return undefined;
    return v === '1' || v.toUpperCase() === 'ON';
  } catch {
    return undefined;
  }
}
