/**
 * The wait a sampled statement spent most time in: events_waits_history_long rows nested
 * in the statement (same thread, NESTING_EVENT_ID = the statement's EVENT_ID), summed per
 * wait name. Only where the server records waits (the events_waits_history_long consumer);
 * a statement whose waits have already left that table gets no wait attribute.
 */
import type { Db, Row, ServerInfo } from '../../core/db.js';
import type { LogRecord } from '../../core/records.js';
import { field } from '../kit/common.js';
import { bigOf, limited, psToSeconds } from '../kit/query/shared.js';

export const WAITS_CONSUMER = 'events_waits_history_long';

/** Set `mysql.wait_type` and `mysql.events_waits_current.timer_wait` on each record that has waits. */
export async function topWaits(
  db: Db,
  info: ServerInfo,
  limitMs: number,
  rows: readonly Row[],
  records: LogRecord[],
  signal: AbortSignal,
): Promise<void> {
  const pairs = rows.map((r) => [bigOf(field(r, 'THREAD_ID')), bigOf(field(r, 'EVENT_ID'))] as const);
  const wanted = pairs.filter(
    (p): p is readonly [bigint, bigint] => p[0] !== undefined && p[1] !== undefined,
  );
  if (wanted.length === 0) return;
  const where = wanted.map(([t, e]) => `(THREAD_ID = ${t} AND NESTING_EVENT_ID = ${e})`).join(' OR ');
  const sql =
    'SELECT THREAD_ID, NESTING_EVENT_ID, EVENT_NAME, CAST(SUM(TIMER_WAIT) AS CHAR) AS W ' +
    `FROM performance_schema.${WAITS_CONSUMER} WHERE ${where} GROUP BY THREAD_ID, NESTING_EVENT_ID, EVENT_NAME`;
  let waits: Row[];
  try {
    waits = await db.query(limited(sql, info, limitMs), [], { signal });
  } catch {
    return; // waits are a detail: the samples go out without them
  }
  const best = new Map<string, { name: string; ps: bigint }>();
  for (const w of waits) {
    const key = `${field(w, 'THREAD_ID')}/${field(w, 'NESTING_EVENT_ID')}`;
    const ps = bigOf(field(w, 'W')) ?? 0n;
    const cur = best.get(key);
    if (cur === undefined || ps > cur.ps) best.set(key, { name: field(w, 'EVENT_NAME') ?? '', ps });
  }
  rows.forEach((r, i) => {
    const b = best.get(`${field(r, 'THREAD_ID')}/${field(r, 'EVENT_ID')}`);
    const rec = records[i];
    if (b === undefined || rec === undefined) return;
    rec.attributes['mysql.wait_type'] = b.name;
    rec.attributes['mysql.events_waits_current.timer_wait'] = psToSeconds(b.ps);
  });
}
