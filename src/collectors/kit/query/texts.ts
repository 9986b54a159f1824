/**
 * Digest texts for query.top: DIGEST_TEXT read only for digests not seen before, kept in a
 * cache bounded by the size of the server's digest table (performance_schema_digests_size),
 * least recently used first out. The cache also knows which digests are sonde's own: those
 * whose text is one of sonde's statements, and those sonde's connections ran (read from
 * events_statements_history when that consumer is on).
 */
import type { Db, ServerInfo } from '../../../core/db.js';
import { field, placeholders } from '../common.js';
import { canonicalSql, CONSUMERS_SQL_HEAD, limited, OWN_THREADS_SQL, PFS_ON_SQL } from './shared.js';
import { normalizeSql, obfuscateSql } from '../../../sql/obfuscate.js';
import { CappedSet } from '../../../util/capped.js';

/** Canonical texts of sonde's own statements (see {@link ownStatement}). */
const OWN_TEXTS = new Set<string>();

/**
 * Declare a statement sonde runs: its digest (in both flavors' time-limited forms too) is
 * left out of query.top. Returns the statement.
 */
export function ownStatement(sql: string): string {
  OWN_TEXTS.add(canonicalSql(normalizeSql(sql)));
  for (const flavor of ['mariadb', 'mysql'] as const)
    OWN_TEXTS.add(
      canonicalSql(normalizeSql(limited(sql, { flavor, version: [0, 0, 0], versionString: '' }, 1000))),
    );
  return sql;
}

/** Digests read per interval at most (the most expensive first). */
const TEXTS_PER_READ = 200;
const DEFAULT_CAPACITY = 10_000;

const DIGESTS_SIZE_SQL = 'SELECT @@performance_schema_digests_size AS n';

export const TEXT_SQL_HEAD =
  'SELECT DIGEST, DIGEST_TEXT FROM performance_schema.events_statements_summary_by_digest WHERE DIGEST IN ';
const OWN_HISTORY_SQL = ownStatement(
  `SELECT DIGEST FROM performance_schema.events_statements_history WHERE DIGEST IS NOT NULL AND THREAD_ID IN (${OWN_THREADS_SQL})`,
);
ownStatement(`${TEXT_SQL_HEAD}(?)`);
ownStatement(`${TEXT_SQL_HEAD}(?, ?)`);
ownStatement(DIGESTS_SIZE_SQL);
ownStatement(PFS_ON_SQL);
ownStatement(`${CONSUMERS_SQL_HEAD}(?)`);
ownStatement(`${CONSUMERS_SQL_HEAD}(?, ?)`);

interface Entry {
  /** The server's text (already without literals where the server normalised them). */
  raw: string;
  obfuscated: string;
  own: boolean;
}

export class DigestTexts {
  readonly #db: Db;
  readonly #info: ServerInfo;
  readonly capacity: number;
  readonly #cache = new Map<string, Entry>();
  /** Digests sonde's connections ran (bounded like the cache). */
  readonly #ownRan: Set<string>;
  /** Canonical forms of the statements this monitor's pool ran, and how many were read. */
  readonly #poolTexts = new Set<string>();
  #poolRead = 0;

  private constructor(db: Db, info: ServerInfo, capacity: number) {
    this.#db = db;
    this.#info = info;
    this.capacity = capacity;
    this.#ownRan = new CappedSet(capacity);
  }

  /** A cache sized by the server's digest table. */
  static async create(db: Db, info: ServerInfo, signal: AbortSignal): Promise<DigestTexts> {
    let capacity = DEFAULT_CAPACITY;
    try {
      const rows = await db.query(DIGESTS_SIZE_SQL, [], { signal });
      const n = Number(field(rows[0] ?? {}, 'n'));
      if (Number.isInteger(n) && n > 0) capacity = n + 1;
    } catch {
      // no such variable: the default bound
    }
    return new DigestTexts(db, info, capacity);
  }

  /** Entries held. */
  get size(): number {
    return this.#cache.size;
  }

  /** Read the texts of the digests not seen before, and which digests sonde ran. */
  async learn(
    deltas: readonly { digest: string | null }[],
    opts: { limitMs: number },
    signal: AbortSignal,
  ): Promise<void> {
    await this.#learnOwn(opts.limitMs, signal);
    this.#learnPool();
    const wanted = [...new Set(deltas.map((d) => d.digest).filter((d): d is string => d !== null))]
      .filter((d) => !this.#cache.has(d))
      .slice(0, TEXTS_PER_READ);
    if (wanted.length === 0) return;
    const sql = limited(`${TEXT_SQL_HEAD}(${placeholders(wanted.length)})`, this.#info, opts.limitMs);
    const rows = await this.#db.query(sql, wanted, { signal });
    for (const r of rows) {
      const digest = field(r, 'DIGEST');
      const raw = field(r, 'DIGEST_TEXT');
      if (digest === null || digest === undefined || raw === null || raw === undefined) continue;
      const canonical = canonicalSql(raw);
      const own = OWN_TEXTS.has(canonical) || this.#poolTexts.has(canonical);
      this.#put(digest, { raw, obfuscated: obfuscateSql(raw), own });
    }
  }

  /** The statements the monitor's pool ran since the last look (every sonde statement of this monitor). */
  #learnPool(): void {
    const run = this.#db.statementsRun?.();
    if (run === undefined || run.size === this.#poolRead) return;
    let i = 0;
    for (const sql of run) {
      if (i++ < this.#poolRead) continue;
      this.#poolTexts.add(canonicalSql(normalizeSql(sql)));
    }
    this.#poolRead = run.size;
  }

  async #learnOwn(limitMs: number, signal: AbortSignal): Promise<void> {
    try {
      const rows = await this.#db.query(limited(OWN_HISTORY_SQL, this.#info, limitMs), [], { signal });
      for (const r of rows) {
        const d = field(r, 'DIGEST');
        if (d !== null && d !== undefined) this.#ownRan.add(d);
      }
    } catch {
      // the history consumer off or no grant: own digests are known by their text alone
    }
  }

  #put(digest: string, e: Entry): void {
    this.#cache.delete(digest);
    this.#cache.set(digest, e);
    while (this.#cache.size > this.capacity) {
      const oldest = this.#cache.keys().next().value;
      if (oldest === undefined) break;
      this.#cache.delete(oldest);
    }
  }

  /** The text of a digest (obfuscated unless `raw`), when known. */
  text(digest: string, raw: boolean): string | undefined {
    const e = this.#cache.get(digest);
    if (e === undefined) return undefined;
    this.#cache.delete(digest);
    this.#cache.set(digest, e);
    return raw ? e.raw : e.obfuscated;
  }

  /** Whether the digest is one sonde runs. */
  own(digest: string): boolean {
    return this.#ownRan.has(digest) || this.#cache.get(digest)?.own === true;
  }
}
