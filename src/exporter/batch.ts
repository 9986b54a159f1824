/**
 * Statement batches for the scrape reader. A scrape runs the same statements as the one
 * before it (SHOW GLOBAL STATUS, SHOW GLOBAL VARIABLES, …), one domain after the other,
 * each a round trip to MySQL. So at the start of a scrape the statements the last scrape of
 * the same domains ran successfully are sent together, in one request (Db.queryBatch), and
 * each collector's statement is answered from that batch's rows instead of being sent again,
 * as soon as its own result set is in (the pool tells each as it completes): a collector goes
 * on with its rows while the server still runs the statements after its own.
 *
 * Nothing else changes for a collector: a statement the batch does not hold, one with
 * parameters or options other than its signal, and every statement of a scrape whose batch
 * failed (the server stops a batch at its first failing statement) run on their own as
 * before, with their own errors; a statement that failed is left out of the next batch. A
 * collector whose deadline passes while it waits for the batch gets the pool's own
 * cancellation, as if its statement had been running.
 */
import type { Db, QueryOptions, Row } from '../core/db.js';
import { systemClock, type Clock } from '../util/clock.js';
import { CappedMap, CappedSet } from '../util/capped.js';

/** Statement lists kept, one per set of domains scraped (`collect[]` filters). */
const LISTS_KEPT = 16;

/**
 * A batch answers its statements only once all of them ran, so a slow statement would hold
 * up the quick ones (which, one by one, start beside a slow one after the engine's stagger).
 * A statement that took longer than this alone is never batched; after a batch that took
 * longer, its statements run one by one for a scrape, which shows which one is slow.
 */
export const BATCH_SLOW_MS = 50;

/**
 * A statement a batch may carry: no parameters, no options but the signal, and no `;` (so
 * the batch splits into exactly the statements it was made of; each has also run on its own
 * before, so its quotes and comments are closed).
 */
function batchable(
  sql: string,
  params: readonly unknown[] | undefined,
  o: QueryOptions | undefined,
): boolean {
  return (
    !sql.includes(';') &&
    (params === undefined || params.length === 0) &&
    o?.timeoutMs === undefined &&
    o?.session === undefined &&
    o?.serverTimeLimit !== true
  );
}

/** `work`'s value, or undefined as soon as `signal` aborts (no listener left behind). */
function unlessAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T | undefined> {
  if (signal === undefined) return work;
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const onAbort = (): void => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    void work.then((v) => {
      signal.removeEventListener('abort', onAbort);
      resolve(v);
    });
  });
}

/** Db.queryBatch, with its per-statement handler. */
export type BatchQuery = NonNullable<Db['queryBatch']>;

/** One statement's answer from the batch: its rows, or undefined when it must run on its own. */
interface Pending {
  rows: Promise<Row[] | undefined>;
  settle: (rows: Row[] | undefined) => void;
}

function pending(): Pending {
  let settle: (rows: Row[] | undefined) => void = () => undefined;
  const rows = new Promise<Row[] | undefined>((resolve) => (settle = resolve));
  return { rows, settle };
}

export class StatementBatch {
  readonly #clock: Pick<Clock, 'precise'>;
  /** Per set of domains: the statements its last scrape ran successfully, in order. */
  readonly #lists = new CappedMap<string, string[]>(LISTS_KEPT);
  /** The scrape in progress: its set of domains and the statements it ran so far. */
  #key = '';
  #ran: string[] = [];
  /**
   * The scrape's batch: each statement's answer by text (in order, for a text sent twice).
   * Each settles as soon as its result set is complete (a collector goes on with its rows
   * while the server still runs the statements after it), or when the batch failed.
   */
  #answers = new Map<string, Pending[]>();
  /** The statements of the scrape's batch, and whether it failed. */
  #sent: readonly string[] = [];
  #failed = false;
  /**
   * A batch failed where each of its statements then ran on its own: the server or a proxy
   * in between takes no multi-statement requests (or no more connections). No more batches.
   */
  #off = false;
  /** Statements that took longer than BATCH_SLOW_MS alone (bounded like the lists). */
  readonly #slow = new CappedSet<string>(LISTS_KEPT * 64);
  /** The scrape's batch took longer than BATCH_SLOW_MS. */
  #tooSlow = false;

  constructor(clock: Pick<Clock, 'precise'> = systemClock) {
    this.#clock = clock;
  }

  /** `db` whose statements are answered from the scrape's batch when it holds them. */
  wrap(db: Db): Db {
    return {
      query: (sql, params, o) => this.#query(db, sql, params, o),
      serverInfo: (o) => db.serverInfo(o),
      ping: (o) => db.ping(o),
    };
  }

  /**
   * A scrape of the domains `key` names starts: send the statements the last scrape of
   * them ran, as one batch on `db` (when it can batch and there are two or more).
   */
  start(db: Db, key: string, opts: QueryOptions): void {
    this.#key = key;
    this.#ran = [];
    this.#answers = new Map();
    this.#sent = [];
    this.#failed = false;
    this.#tooSlow = false;
    const sqls = (this.#lists.get(key) ?? []).filter((sql) => !this.#slow.has(sql));
    const queryBatch: BatchQuery | undefined = db.queryBatch?.bind(db);
    if (queryBatch === undefined || sqls.length < 2 || this.#off) return;
    this.#sent = sqls;
    const answers = sqls.map((sql) => {
      const p = pending();
      const list = this.#answers.get(sql);
      if (list === undefined) this.#answers.set(sql, [p]);
      else list.push(p);
      return p;
    });
    const t0 = this.#clock.precise();
    // A Db without the per-statement handler answers every statement once all ran.
    queryBatch(sqls, opts, (i, rows) => answers[i]?.settle(rows)).then(
      (results) => {
        this.#tooSlow = this.#clock.precise() - t0 > BATCH_SLOW_MS;
        for (const [i, p] of answers.entries()) p.settle(results[i] ?? []);
      },
      () => {
        this.#failed = true;
        for (const p of answers) p.settle(undefined); // each statement not answered yet runs on its own
      },
    );
  }

  /** False once batches were turned off (see #off). */
  get on(): boolean {
    return !this.#off;
  }

  /** The scrape ended: what it ran successfully is the next batch of its domains. */
  finish(): void {
    if (this.#failed && this.#sent.every((sql) => this.#ran.includes(sql))) this.#off = true;
    this.#lists.set(this.#key, this.#tooSlow ? [] : this.#ran);
    this.#ran = [];
    this.#answers = new Map();
  }

  /** Forget every list (MySQL went down: the next scrapes start afresh). */
  reset(): void {
    this.#lists.clear();
    this.#ran = [];
    this.#answers = new Map();
  }

  async #query(
    db: Db,
    sql: string,
    params: readonly unknown[] | undefined,
    o?: QueryOptions,
  ): Promise<Row[]> {
    if (!batchable(sql, params, o)) return db.query(sql, params, o);
    let rows = await this.#take(sql, o?.signal);
    if (rows === undefined) {
      const t0 = this.#clock.precise();
      rows = await db.query(sql, params, o);
      if (this.#clock.precise() - t0 > BATCH_SLOW_MS) {
        this.#slow.add(sql);
      } else this.#slow.delete(sql);
    }
    this.#ran.push(sql);
    return rows;
  }

  /** The batch's rows for `sql` (each result is handed out once); undefined when it has none. */
  async #take(sql: string, signal: AbortSignal | undefined): Promise<Row[] | undefined> {
    const answer = this.#answers.get(sql)?.shift();
    if (answer === undefined) return undefined;
    return unlessAborted(answer.rows, signal);
  }
}
