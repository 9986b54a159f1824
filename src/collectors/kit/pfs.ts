/**
 * Small helpers for the performance_schema domains (query.response-time,
 * percona.response-time, wait.io.table, error.*): error causes and the
 * `@@performance_schema` check. The "not supported" error is sources.ts's.
 */
import type { Db } from '../../core/db.js';
import { errorMessage } from '../../core/errors.js';

/** `reason (server error text)` when there is a server error to quote. */
export function withCause(reason: string, err: unknown): string {
  return err === undefined ? reason : `${reason} (${errorMessage(err)})`;
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
