/**
 * The scrape reader: the pull reader of the engine, behind the mysqld_exporter emulation.
 * Each scrape pings MySQL (`mysql_up`) and runs the exporter plan's single level through an
 * engine of its own (same deadlines, cap, policies and per-domain records as the level
 * collector's), then hands the values and each domain's outcome to the exporter's HTTP
 * side. Scrapes are serialized; nothing here feeds sinks.
 *
 * Its collectors read values the mysqld_exporter way (ExporterReading): keyword values as
 * 1/0, the text values the exporter turns into info families, and the INNODB_METRICS
 * columns it names innodb metrics after. A domain is prepared on its first scrape and
 * prepared again after it fails, as mysqld_exporter retries a failing collector.
 */
import type { AwsTarget, Collector, CollectorContext, CollectorHelp } from '../core/collector.js';
import type { Db, QueryOptions, Row, ServerInfo } from '../core/db.js';
import { errnoOf, errorMessage } from '../core/errors.js';
import type { Events } from '../core/events.js';
import { NO_EVENTS } from '../core/events.js';
import type { ExporterSource, ScrapeDomain, ScrapeResult } from '../core/exporter.js';
import type { Metrics } from '../core/metrics.js';
import type { CollectionTally } from '../core/probe.js';
import type { Level, Plan } from '../core/plan.js';
import type { StatusWriter } from '../core/status.js';
import type { ActivePlan, DomainOutcome } from '../engine/engine.js';
import { Engine, STAGGER_MS } from '../engine/engine.js';
import { Limiter, NestedLimiter } from '../engine/limiter.js';
import { collectorMaxRuntimeMs, sortLevels } from '../plan/schedule.js';
import { TEXT_STATUS, TEXT_VARIABLES } from '../prom/translate.js';
import { monotonicMs, systemClock, type Clock } from '../util/clock.js';
import { withDeadline } from '../util/abort.js';
import { formatDuration } from '../util/duration.js';
import { StatementBatch, type BatchQuery } from './batch.js';

/** Limit on the ping that decides `mysql_up`. */
const PING_TIMEOUT_MS = 5000;

/** Text values the exporter needs (mysql_version_info, Galera info families). */
const KEEP_TEXT: ReadonlySet<string> = new Set([...TEXT_STATUS, ...TEXT_VARIABLES]);

/** What the scrape reader needs from the collector registry. */
export interface CollectorFactory {
  has(domain: string): boolean;
  make(domain: string, ctx: CollectorContext): Collector;
  help?(domain: string): CollectorHelp | undefined;
}

export interface ScrapeReaderOptions {
  monitorId: string;
  /** The monitor's connection pool. */
  db: Db;
  /** The exporter plan (already loaded): exactly one level. */
  plan: Plan;
  /** Usually builtinCollectors(). */
  collectors: CollectorFactory;
  /** Where the engine writes `domain:<d>` and `error:<d>`; none when the level collector runs too. */
  status?: StatusWriter;
  events?: Events;
  /** The monitor's AWS settings, for the aws.rds domain. */
  aws?: AwsTarget;
  /** The monitor's collector cap, shared with its level collector. */
  limiter?: Limiter;
  /** Counts this reader's finished and failed domain runs. */
  tally?: CollectionTally;
  clock?: Clock;
  /** Called after a scrape without errors. */
  onClean?(): void;
  /** Session variables of every exporter query and ping (exporter.lock_wait_timeout…). */
  session?: QueryOptions['session'];
  /** exporter.query_timeout: each domain's deadline and the ping's limit, ms. */
  queryTimeoutMs?: number;
  /** exporter.max_open_connections: domains of one scrape at once, within the limiter. */
  maxCollectors?: number;
}

/** A scrape reader owns collectors: close() releases them. */
export interface ScrapeReader extends ExporterSource {
  close(): Promise<void>;
}

/** The single level of an exporter plan, or an error naming the level count. */
export function exporterLevel(plan: Plan): Level {
  const levels = Object.values(plan.levels);
  const level = levels[0];
  if (levels.length !== 1 || level === undefined)
    throw new Error(`exporter plan has ${levels.length} levels, expected 1`);
  return level;
}

/**
 * The exporter plan's limits: every domain's deadline is freq − min(20 % of freq, 2 s), or
 * `queryTimeoutMs` when given (exporter.query_timeout), counted from the scrape's start.
 */
export function exporterActivePlan(plan: Plan, queryTimeoutMs?: number): ActivePlan {
  const level = exporterLevel(plan);
  const sorted = sortLevels(plan);
  const domains = Object.keys(level.collect);
  const cmr = new Map(
    domains.map((d) => [d, queryTimeoutMs ?? collectorMaxRuntimeMs(sorted, d) ?? level.freqMs]),
  );
  return {
    plan,
    emrMs: Math.max(0, ...cmr.values()),
    cmrMs: cmr,
    domainFreqMs: new Map(domains.map((d) => [d, level.freqMs])),
  };
}

/** Milliseconds → seconds, rounded to the nanosecond (Go's time.Duration.Seconds() resolution). */
function seconds(ms: number): number {
  return Math.round(ms * 1e6) / 1e9;
}

const down = (error: string): ScrapeResult => ({ up: false, metrics: undefined, domains: [], error });

/** An error the server sent (an errno and SQLSTATE), not a connection or client failure. */
function fromServer(err: unknown): boolean {
  const errno = errnoOf(err);
  return errno !== undefined && errno > 0 && typeof (err as { sqlState?: unknown }).sqlState === 'string';
}

/** `db` with `session` added to every query and ping (the statement's own variables win). */
function withSession(db: Db, session: QueryOptions['session']): Db {
  if (session === undefined || Object.keys(session).length === 0) return db;
  const opts = (o?: QueryOptions): QueryOptions => ({ ...o, session: { ...session, ...o?.session } });
  // The pool's per-statement handler goes through (see BatchQuery).
  const batch: BatchQuery | undefined = db.queryBatch?.bind(db);
  return {
    query: (sql, params, o) => db.query(sql, params, opts(o)),
    ...(batch === undefined
      ? {}
      : {
          queryBatch: (
            sqls: readonly string[],
            o?: QueryOptions,
            onResult?: (i: number, rows: Row[]) => void,
          ) => batch(sqls, opts(o), onResult),
        }),
    serverInfo: (o) => db.serverInfo(opts(o)),
    ping: (o) => db.ping(opts(o)),
  };
}

class Reader implements ScrapeReader {
  readonly #opts: ScrapeReaderOptions;
  readonly #level: Level;
  readonly #engine: Engine;
  readonly #clock: Clock;
  /** The monitor's Db with the exporter's session variables (the batch's way to MySQL). */
  readonly #sessionDb: Db;
  /** #sessionDb answering from the scrape's statement batch, counting answers: the collectors'. */
  readonly #db: Db;
  readonly #batch: StatementBatch;
  #interval = 0;
  /** the scrape in progress (scrapes are serialized) */
  #last: Promise<unknown> = Promise.resolve();
  #closed = false;
  /** MySQL answered the previous scrape (its ping or a collector query) */
  #wasUp = false;
  /** Collector queries MySQL answered so far (proof it is up without a ping). */
  #answered = 0;

  constructor(opts: ScrapeReaderOptions) {
    this.#opts = opts;
    this.#level = exporterLevel(opts.plan);
    this.#clock = opts.clock ?? systemClock;
    this.#batch = new StatementBatch(this.#clock);
    this.#sessionDb = withSession(opts.db, opts.session);
    this.#db = this.#counting(this.#batch.wrap(this.#sessionDb));
    const slots = limiter(opts);
    const ctx: CollectorContext = {
      monitorId: opts.monitorId,
      db: this.#db,
      exporterReading: { keepText: KEEP_TEXT },
      ...(opts.status === undefined ? {} : { status: opts.status }),
      ...(opts.events === undefined ? {} : { events: opts.events }),
      ...(opts.aws === undefined ? {} : { aws: opts.aws }),
    };
    this.#engine = Engine.lazy({
      monitorId: opts.monitorId,
      active: exporterActivePlan(opts.plan, opts.queryTimeoutMs),
      collectors: {
        make: (domain) => {
          if (this.#closed) throw new Error('exporter source closed');
          if (!opts.collectors.has(domain)) throw new Error(`collector for domain ${domain} not registered`);
          return opts.collectors.make(domain, ctx);
        },
        help: (domain) => opts.collectors.help?.(domain),
      },
      events: opts.events ?? NO_EVENTS,
      clock: this.#clock,
      reprepareAfterError: true,
      staggerMs: STAGGER_MS,
      ...(opts.status === undefined ? {} : { status: opts.status }),
      ...(slots === undefined ? {} : { limiter: slots }),
      ...(opts.tally === undefined ? {} : { tally: opts.tally }),
    });
  }

  domains(): string[] {
    return Object.keys(this.#level.collect);
  }

  /** `db` counting the queries MySQL answers (errors from the server count too: it answered). */
  #counting(db: Db): Db {
    const answered = () => this.#answered++;
    return {
      query: (sql, params, o) =>
        db.query(sql, params, o).then(
          (rows) => {
            answered();
            return rows;
          },
          (err: unknown) => {
            if (fromServer(err)) answered();
            throw err;
          },
        ),
      serverInfo: (o) => db.serverInfo(o),
      ping: (o) => db.ping(o),
    };
  }

  async serverInfo(signal: AbortSignal): Promise<ServerInfo | undefined> {
    try {
      return await this.#db.serverInfo({ signal });
    } catch {
      return undefined;
    }
  }

  scrape(signal: AbortSignal, domains?: readonly string[]): Promise<ScrapeResult> {
    const run = this.#last.then(() => this.#scrape(signal, domains));
    this.#last = run.catch(() => undefined);
    return run.catch((err: unknown) => down(errorMessage(err)));
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#last;
    await this.#engine.close();
  }

  async #scrape(signal: AbortSignal, only?: readonly string[]): Promise<ScrapeResult> {
    const start = this.#clock.now();
    // mysql_up: after a failure, or on the first scrape, a ping runs first, so collectors are
    // not tried against a server that is down. While MySQL is up, any collector query it
    // answers proves it still is — no ping, one round trip less — and the ping runs after the
    // collection only when no query was answered (it then tells up from down, and why).
    let ping: number | string | undefined;
    if (!this.#wasUp) {
      ping = await this.#ping(signal);
      if (typeof ping === 'string') {
        this.#batch.reset();
        return down(ping);
      }
    }
    const answered = this.#answered;
    const wanted = this.domains().filter((d) => only === undefined || only.includes(d));
    // The statements the last scrape of these domains ran go out together (see batch.ts).
    this.#batch.start(this.#sessionDb, wanted.join(','), { signal, timeoutMs: this.#engine.active.emrMs });
    const result = await this.#engine.run({
      interval: ++this.#interval,
      level: this.#level.name,
      work: wanted.map((domain) => ({ domain, level: this.#level.name })),
      start,
      signal,
    });
    const batching = this.#batch.on;
    this.#batch.finish();
    if (batching && !this.#batch.on)
      this.#opts.events?.debug(
        `exporter ${this.#opts.monitorId}: statement batches failed where each statement alone worked; sending statements one by one from now on`,
      );
    if (ping === undefined && this.#answered === answered) ping = await this.#ping(signal);
    this.#wasUp = typeof ping !== 'string';
    if (typeof ping === 'string') {
      this.#batch.reset();
      return down(ping);
    }
    // No ping ran: the pooled connections needed no connection step this scrape.
    const scraped = this.#result(wanted, result.outcomes, start, ping ?? 0);
    if (scraped.error === '') this.#opts.onClean?.();
    return scraped;
  }

  /** The ScrapeResult in plan order; a domain without an outcome did not finish in time. */
  #result(wanted: string[], outcomes: DomainOutcome[], start: number, connectSeconds: number): ScrapeResult {
    const byDomain = new Map(outcomes.map((o) => [o.domain, o]));
    const metrics: Metrics = {
      begin: new Date(start),
      end: new Date(this.#clock.now()),
      monitorId: this.#opts.monitorId,
      plan: this.#opts.plan.name,
      level: this.#level.name,
      interval: this.#interval,
      state: '',
      values: {},
    };
    const domains: ScrapeDomain[] = [];
    const errors: string[] = [];
    const text: Record<string, string> = {};
    const elapsed = seconds(this.#clock.now() - start);
    for (const domain of wanted) {
      const o = byDomain.get(domain);
      if (o === undefined) {
        const rec = this.#engine.records().get(domain);
        const why =
          rec !== undefined && !rec.ok
            ? rec.error
            : `timeout after ${formatDuration(this.#engine.active.emrMs)}`;
        domains.push({ domain, ok: false, seconds: elapsed });
        errors.push(`${domain}: ${why}`);
        continue;
      }
      if (o.values.length > 0) metrics.values[domain] = o.values;
      if (o.text !== undefined) Object.assign(text, o.text);
      domains.push({ domain, ok: !o.failed, seconds: seconds(o.ms) });
      if (o.error !== '') errors.push(`${domain}: ${o.error}`);
    }
    return { up: true, metrics, domains, error: errors.join('; '), connectSeconds, text };
  }

  /** Ping under its own limit: the seconds it took, or the error text. Never rejects. */
  async #ping(signal: AbortSignal): Promise<number | string> {
    const t0 = monotonicMs();
    const limit = this.#opts.queryTimeoutMs ?? PING_TIMEOUT_MS;
    const dl = withDeadline(signal, limit, `ping: timeout after ${formatDuration(limit)}`);
    try {
      await this.#db.ping({ signal: dl.signal });
      return seconds(monotonicMs() - t0);
    } catch (err) {
      this.#wasUp = false;
      return errorMessage(err);
    } finally {
      dl.done();
    }
  }
}

/** The engine's limiter: the monitor's, or a smaller cap inside it (max_open_connections). */
function limiter(opts: ScrapeReaderOptions): Limiter | undefined {
  const cap = opts.maxCollectors;
  if (cap === undefined) return opts.limiter;
  return new NestedLimiter(cap, opts.limiter ?? new Limiter());
}

/**
 * The scrape reader for one monitor: the plan's single level collected on demand through
 * the monitor's Db. Throws `exporter plan has <n> levels, expected 1` for a plan with
 * another number of levels (the monitor then fails to start).
 */
export function createScrapeReader(opts: ScrapeReaderOptions): ScrapeReader {
  return new Reader(opts);
}
