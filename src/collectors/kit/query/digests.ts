/**
 * The digest summary (performance_schema.events_statements_summary_by_digest): one
 * counters-only read per interval, shared by query.top and stmt.schema of the same monitor,
 * and the per-digest delta rules of query.top.
 *
 * Delta rules (per schema and digest, counters as exact integers):
 * - the first read of a level only remembers: nothing is reported for time before sonde looked;
 * - same FIRST_SEEN as remembered: delta = now − before; a counter that went down means the
 *   row was emptied and re-created within the same second (a TRUNCATE): then the row counts
 *   from zero when it was first seen at or after the previous read, else it is only remembered;
 * - a row not remembered, or with another FIRST_SEEN (a TRUNCATE, a server restart, a digest
 *   dropped from the table and created again): everything it holds happened after the
 *   previous read when FIRST_SEEN is at or after that read's server time, and is reported
 *   whole; otherwise it is only remembered;
 * - a row gone from the table is forgotten; a row whose deltas are all zero is not reported.
 * So no delta is ever negative nor counts the same statement twice, and sonde never
 * truncates the table (other tools read it too).
 */
import type { Db, Row, ServerInfo } from '../../../core/db.js';
import { field } from '../common.js';
import { bigOf, limited } from './shared.js';
import { ownStatement } from './texts.js';

/** The counters read, in column order; their names in records are derived from these. */
export const DIGEST_COUNTERS = [
  'COUNT_STAR',
  'SUM_TIMER_WAIT',
  'SUM_LOCK_TIME',
  'SUM_ERRORS',
  'SUM_WARNINGS',
  'SUM_ROWS_AFFECTED',
  'SUM_ROWS_SENT',
  'SUM_ROWS_EXAMINED',
  'SUM_CREATED_TMP_DISK_TABLES',
  'SUM_CREATED_TMP_TABLES',
  'SUM_SORT_ROWS',
  'SUM_SELECT_SCAN',
  'SUM_SELECT_FULL_JOIN',
  'SUM_NO_INDEX_USED',
  'SUM_NO_GOOD_INDEX_USED',
] as const;
export type DigestCounter = (typeof DIGEST_COUNTERS)[number];

/** The read: counters, the running maximum, FIRST_SEEN, and the server's time of the read. */
export const DIGEST_READ_SQL = ownStatement(
  `SELECT SCHEMA_NAME, DIGEST, ${DIGEST_COUNTERS.join(', ')}, MAX_TIMER_WAIT, FIRST_SEEN, NOW() AS READ_AT FROM performance_schema.events_statements_summary_by_digest`,
);

/** One row of the read. Counters as exact integers. */
export interface DigestRow {
  schema: string | null;
  digest: string | null;
  counters: bigint[];
  max: bigint;
  firstSeen: string;
}

/** The read: its rows and the server time it was made at ('' when the table was empty). */
export interface DigestRead {
  rows: DigestRow[];
  readAt: string;
}

/** Parse the rows of {@link DIGEST_READ_SQL}; rows with an unreadable counter are skipped. */
export function parseDigestRows(rows: readonly Row[]): DigestRead {
  const out: DigestRow[] = [];
  let readAt = '';
  for (const r of rows) {
    readAt = field(r, 'READ_AT') ?? readAt;
    const counters = DIGEST_COUNTERS.map((c) => bigOf(field(r, c)));
    if (counters.some((c) => c === undefined)) continue;
    out.push({
      schema: field(r, 'SCHEMA_NAME') ?? null,
      digest: field(r, 'DIGEST') ?? null,
      counters: counters as bigint[],
      max: bigOf(field(r, 'MAX_TIMER_WAIT')) ?? 0n,
      firstSeen: field(r, 'FIRST_SEEN') ?? '',
    });
  }
  return { rows: out, readAt };
}

/** Reads of the same monitor started less than this long ago are shared. */
const SHARE_MS = 2000;

/** The last read per monitor pool, shared by the domains collecting in the same run. */
const lastRead = new WeakMap<Db, { at: number; read: Promise<DigestRead> }>();

/**
 * The digest read of this monitor: the one another domain started less than 2 s ago (in
 * the same run) and that the caller has not used yet (`used`: the read it used last), else
 * a new one, under the server's statement time limit.
 */
export function readDigests(
  db: Db,
  info: ServerInfo,
  limitMs: number,
  signal: AbortSignal,
  used?: Promise<DigestRead>,
  now: number = Date.now(),
): Promise<DigestRead> {
  const last = lastRead.get(db);
  if (last !== undefined && last.read !== used && now - last.at < SHARE_MS) return last.read;
  const read = db.query(limited(DIGEST_READ_SQL, info, limitMs), [], { signal }).then(parseDigestRows);
  lastRead.set(db, { at: now, read });
  // A failed read is not shared: the next domain asks again.
  read.catch(() => {
    if (lastRead.get(db)?.read === read) lastRead.delete(db);
  });
  return read;
}

/** The change of one row since the previous read. */
export interface DigestDelta {
  schema: string | null;
  digest: string | null;
  /** Deltas in {@link DIGEST_COUNTERS} order. */
  counters: bigint[];
  /** MAX_TIMER_WAIT when a new maximum was set during the interval (ps). */
  max?: bigint;
}

interface Kept {
  firstSeen: string;
  counters: bigint[];
  max: bigint;
}

const keyOf = (r: { schema: string | null; digest: string | null }): string =>
  `${r.schema ?? '\u0000'}\u0001${r.digest ?? '\u0000'}`;

/** Per-level memory of the previous read, bounded by the rows the table holds. */
export class DigestTracker {
  #kept = new Map<string, Kept>();
  #readAt: string | undefined;

  /** Rows remembered (at most the rows of the last read). */
  get size(): number {
    return this.#kept.size;
  }

  /** The deltas since the previous read, by the rules above; [] on the first read. */
  update(read: DigestRead): DigestDelta[] {
    const prevAt = this.#readAt;
    const next = new Map<string, Kept>();
    const out: DigestDelta[] = [];
    for (const row of read.rows) {
      const key = keyOf(row);
      next.set(key, { firstSeen: row.firstSeen, counters: row.counters, max: row.max });
      if (prevAt === undefined) continue;
      const d = this.#delta(row, this.#kept.get(key), prevAt);
      if (d !== undefined) out.push(d);
    }
    this.#kept = next;
    if (read.readAt !== '') this.#readAt = read.readAt;
    else this.#readAt ??= '';
    return out;
  }

  #delta(row: DigestRow, kept: Kept | undefined, prevAt: string): DigestDelta | undefined {
    // Server times compare as text: both are `YYYY-MM-DD hh:mm:ss[.ffffff]` in the session zone.
    const bornAfter = row.firstSeen !== '' && row.firstSeen >= prevAt.slice(0, 19);
    let counters: bigint[];
    let max: bigint | undefined;
    if (kept !== undefined && kept.firstSeen === row.firstSeen) {
      counters = row.counters.map((c, i) => c - (kept.counters[i] ?? 0n));
      if (counters.some((c) => c < 0n)) {
        if (!bornAfter) return undefined;
        counters = row.counters;
        max = row.max;
      } else if (row.max > kept.max) max = row.max;
    } else {
      if (!bornAfter) return undefined;
      counters = row.counters;
      max = row.max;
    }
    if (counters[0] === 0n && counters.every((c) => c === 0n)) return undefined;
    return { schema: row.schema, digest: row.digest, counters, ...(max !== undefined ? { max } : {}) };
  }
}
