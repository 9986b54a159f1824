/**
 * The exporter's own collection engine for one monitor (spec exporter.md §2–3): an
 * ExporterSource built from real parts — the monitor's Db (so a scrape reuses the
 * monitor's connection pool), the exporter plan and the collector registry.
 *
 * Per scrape: ping MySQL (`mysql_up`), prepare the plan's domains that are not prepared yet
 * (once; a domain is prepared again only after it failed), collect the plan's single level
 * (2 domains at a time, each under its own deadline), and hand back the values. Scrapes are
 * serialized. Nothing here feeds sinks.
 *
 * Two things make the values match mysqld_exporter rather than Blip, without touching the
 * collectors (they also serve the monitor's normal pipeline):
 * - the collectors get a Db wrapper that reads `SHOW GLOBAL STATUS` / `SHOW GLOBAL
 *   VARIABLES` values the way mysqld_exporter does (case-insensitive `on/yes` → 1,
 *   `off/no/disabled/connecting` → 0, `primary` → 1, `non-primary/disconnected` → 0, so
 *   e.g. `wsrep_cluster_status` exists as in mysqld_exporter) and keeps the text values
 *   mysqld_exporter turns into info families (`version`, `version_comment`, …);
 * - innodb values get the INNODB_METRICS NAME/TYPE/COMMENT columns as meta (read once per
 *   preparation), which translateForExporter() uses for mysqld_exporter's innodb names.
 */
import type { Collector, CollectorContext } from '../core/collector.js';
import type { Db, QueryOptions, Row, ServerInfo } from '../core/db.js';
import { errorMessage } from '../core/errors.js';
import type { Events } from '../core/events.js';
import type { ExporterSource, ScrapeDomain, ScrapeResult } from '../core/exporter.js';
import type { Metrics, MetricValue } from '../core/metrics.js';
import type { Level, Plan } from '../core/plan.js';
import type { StatusWriter } from '../core/status.js';
import { formatDuration } from '../util/duration.js';
import { INNODB_META } from '../core/metrics.js';
import { TEXT_STATUS, TEXT_VARIABLES } from '../prom/translate.js';

/** Collectors running at once per scrape (monitors.md §7.2). */
const CONCURRENCY = 2;
/** Limit on the ping that decides `mysql_up`. */
const PING_TIMEOUT_MS = 5000;

/** What createExporterSource needs from the collector registry. */
export interface CollectorFactory {
  has(domain: string): boolean;
  make(domain: string, ctx: CollectorContext): Collector;
}

export interface ExporterSourceOptions {
  monitorId: string;
  /** The monitor's connection pool. */
  db: Db;
  /** The exporter plan (already loaded): exactly one level. */
  plan: Plan;
  /** Usually builtinCollectors(). */
  collectors: CollectorFactory;
  status?: StatusWriter;
  events?: Events;
}

/** An ExporterSource that owns collectors: close() releases them. */
export interface ClosableExporterSource extends ExporterSource {
  /** Close every prepared collector; later scrapes prepare again. */
  close(): Promise<void>;
}

/** The single level of an exporter plan, or an error naming the level count (exporter.md §1). */
export function exporterLevel(plan: Plan): Level {
  const levels = Object.values(plan.levels);
  const level = levels[0];
  if (levels.length !== 1 || level === undefined)
    throw new Error(`exporter plan has ${levels.length} levels, expected 1`);
  return level;
}

/** Collector deadline for a level: freq − min(20% of freq, 2 s) (exporter.md §3). */
export function collectorTimeoutMs(freqMs: number): number {
  return Math.max(1, freqMs - Math.min(freqMs * 0.2, 2000));
}

// ---- mysqld_exporter's reading of text values ------------------------------------------

/** mysqld_exporter's parseStatus keywords (compared lowercase). */
const UPSTREAM_KEYWORDS: ReadonlyMap<string, string> = new Map([
  ['yes', '1'],
  ['on', '1'],
  ['no', '0'],
  ['off', '0'],
  ['disabled', '0'],
  ['connecting', '0'],
  ['primary', '1'],
  ['non-primary', '0'],
  ['disconnected', '0'],
]);

const STATUS_TEXT = new Set(TEXT_STATUS);
const VARIABLES_TEXT = new Set(TEXT_VARIABLES);

/**
 * Rewrite keyword values of SHOW GLOBAL STATUS/VARIABLES rows to `1`/`0` (in place) and
 * keep the wanted text values in `text` (lowercase names). Numbers are left as they are.
 */
export function upstreamValues(rows: Row[], keep: ReadonlySet<string>, text: Record<string, string>): void {
  // First letters of the kept names, both cases: most rows are rejected without lowercasing.
  let firsts = FIRST_LETTERS.get(keep);
  if (firsts === undefined) {
    firsts = new Set([...keep].flatMap((n) => [n.charAt(0), n.charAt(0).toUpperCase()]));
    FIRST_LETTERS.set(keep, firsts);
  }
  for (const row of rows) {
    const value = row.Value ?? row.VALUE ?? row.value;
    if (value === undefined || value === null || value === '') continue;
    const rawName = row.Variable_name ?? row.VARIABLE_NAME ?? row.variable_name ?? '';
    if (firsts.has(rawName.charAt(0))) {
      const name = rawName.toLowerCase();
      if (keep.has(name)) {
        text[name] = value;
        continue;
      }
    }
    const c = value.charCodeAt(0);
    if ((c >= 48 && c <= 57) || c === 45 /* - */ || c === 46 /* . */) continue; // a number
    const kw = UPSTREAM_KEYWORDS.get(value.toLowerCase());
    if (kw !== undefined) row['Value' in row ? 'Value' : 'VALUE' in row ? 'VALUE' : 'value'] = kw;
  }
}

const FIRST_LETTERS = new WeakMap<ReadonlySet<string>, Set<string>>();

/** The collectors' view of the monitor's Db during exporter scrapes. */
class ExporterDb implements Db {
  readonly #db: Db;
  /** text values of the current scrape */
  text: Record<string, string> = {};

  constructor(db: Db) {
    this.#db = db;
  }

  async query(sql: string, params?: readonly unknown[], opts?: QueryOptions): Promise<Row[]> {
    const rows = await this.#db.query(sql, params, opts);
    const head = sql.trimStart().slice(0, 21).toUpperCase();
    if (head.startsWith('SHOW GLOBAL STATUS')) upstreamValues(rows, STATUS_TEXT, this.text);
    else if (head.startsWith('SHOW GLOBAL VARIABLES')) upstreamValues(rows, VARIABLES_TEXT, this.text);
    return rows;
  }

  serverInfo(opts?: QueryOptions): Promise<ServerInfo> {
    return this.#db.serverInfo(opts);
  }

  ping(opts?: QueryOptions): Promise<void> {
    return this.#db.ping(opts);
  }
}

// ---- INNODB_METRICS columns -------------------------------------------------------------

interface InnodbRow {
  name: string;
  type: string;
  comment: string;
}

const INNODB_CATALOG_SQL = 'SELECT name, type, comment FROM information_schema.innodb_metrics';

/** NAME/TYPE/COMMENT of every INNODB_METRICS row, keyed by lowercase name. */
async function loadInnodbCatalog(db: Db, signal: AbortSignal): Promise<Map<string, InnodbRow>> {
  const rows = await db.query(INNODB_CATALOG_SQL, [], { signal });
  const out = new Map<string, InnodbRow>();
  for (const r of rows) {
    const name = r.name ?? r.NAME ?? '';
    if (name === '') continue;
    out.set(name.toLowerCase(), {
      name,
      type: (r.type ?? r.TYPE ?? '').toLowerCase(),
      comment: r.comment ?? r.COMMENT ?? '',
    });
  }
  return out;
}

/** The meta objects addInnodbMeta hands out, by subsystem and name (shared, frozen). */
const innodbMetaCache = new WeakMap<
  ReadonlyMap<string, InnodbRow>,
  Map<string, Readonly<Record<string, string>>>
>();

/**
 * Add NAME/TYPE/COMMENT meta to innodb values (in place; the values are this scrape's own).
 * The merged meta object is made once per metric and catalog, then shared.
 */
export function addInnodbMeta(values: MetricValue[], catalog: ReadonlyMap<string, InnodbRow>): void {
  let cache = innodbMetaCache.get(catalog);
  if (cache === undefined) {
    cache = new Map();
    innodbMetaCache.set(catalog, cache);
  }
  for (const v of values) {
    const info = catalog.get(v.name);
    if (info === undefined) continue;
    const merged = () =>
      Object.freeze({
        ...v.meta,
        [INNODB_META.name]: info.name,
        [INNODB_META.type]: info.type,
        [INNODB_META.comment]: info.comment,
      });
    // The collector's meta is `{subsystem}`: share one merged object per subsystem and name.
    const keys = v.meta === undefined ? [] : Object.keys(v.meta);
    let meta: Readonly<Record<string, string>>;
    if (keys.length === 1 && keys[0] === INNODB_META.subsystem) {
      const key = `${v.meta?.[INNODB_META.subsystem] ?? ''}\0${v.name}`;
      meta = cache.get(key) ?? merged();
      cache.set(key, meta);
    } else {
      meta = merged();
    }
    v.meta = meta;
  }
}

/** Milliseconds → seconds, rounded to the nanosecond (Go's time.Duration.Seconds() resolution). */
function seconds(ms: number): number {
  return Math.round(ms * 1e6) / 1e9;
}

// ---- the source -------------------------------------------------------------------------

/** A deadline signal: the caller's signal or `ms`, whichever fires first. */
function deadline(
  signal: AbortSignal,
  ms: number,
  reason: string,
): { signal: AbortSignal; done: () => void } {
  const ctl = new AbortController();
  const onAbort = () => ctl.abort(signal.reason);
  if (signal.aborted) ctl.abort(signal.reason);
  else signal.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => ctl.abort(new Error(reason)), ms);
  return {
    signal: ctl.signal,
    done: () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    },
  };
}

class Source implements ClosableExporterSource {
  readonly #opts: ExporterSourceOptions;
  readonly #level: Level;
  readonly #db: ExporterDb;
  readonly #cmrMs: number;
  /** domain → prepared collector */
  readonly #ready = new Map<string, Collector>();
  #innodbCatalog: Map<string, InnodbRow> | undefined;
  #interval = 0;
  /** the scrape in progress (scrapes are serialized) */
  #last: Promise<unknown> = Promise.resolve();
  #closed = false;
  /** MySQL answered the previous scrape's ping */
  #wasUp = false;

  constructor(opts: ExporterSourceOptions) {
    this.#opts = opts;
    this.#level = exporterLevel(opts.plan);
    this.#db = new ExporterDb(opts.db);
    this.#cmrMs = collectorTimeoutMs(this.#level.freqMs);
  }

  domains(): string[] {
    return Object.keys(this.#level.collect);
  }

  async serverInfo(signal: AbortSignal): Promise<ServerInfo | undefined> {
    try {
      return await this.#opts.db.serverInfo({ signal });
    } catch {
      return undefined;
    }
  }

  scrape(signal: AbortSignal, domains?: readonly string[]): Promise<ScrapeResult> {
    const run = this.#last.then(() => this.#scrape(signal, domains));
    this.#last = run.catch(() => undefined);
    return run.catch((err: unknown): ScrapeResult => ({
      up: false,
      metrics: undefined,
      domains: [],
      error: errorMessage(err),
    }));
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#last;
    const collectors = [...this.#ready.values()];
    this.#ready.clear();
    await Promise.allSettled(collectors.map(async (c) => c.close?.()));
  }

  async #scrape(signal: AbortSignal, only?: readonly string[]): Promise<ScrapeResult> {
    const begin = new Date();
    const t0 = performance.now();
    this.#db.text = {};
    // The ping decides mysql_up. While MySQL was up at the last scrape it runs alongside the
    // collection (one round trip less on the scrape's critical path); after a failure, or on
    // the first scrape, it runs first so collectors are not tried against a server that is down.
    const pinging = this.#ping(signal, t0);
    if (!this.#wasUp) {
      const p = await pinging;
      if (typeof p === 'string') return { up: false, metrics: undefined, domains: [], error: p };
    }

    const wanted = this.domains().filter((d) => only === undefined || only.includes(d));
    const queue = [...wanted];
    const outcomes: (ScrapeDomain & { values: MetricValue[]; error: string })[] = [];
    // Every domain has the same deadline, scrape start + CMR: one timer for all of them.
    const dl = deadline(
      signal,
      Math.max(1, this.#cmrMs - (performance.now() - t0)),
      `timeout after ${formatDuration(this.#cmrMs)}`,
    );
    const worker = async (): Promise<void> => {
      for (let d = queue.shift(); d !== undefined; d = queue.shift())
        outcomes.push(await this.#collectDomain(d, dl.signal));
    };
    try {
      await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, worker));
    } finally {
      dl.done();
    }
    const ping = await pinging;
    this.#wasUp = typeof ping === 'number';
    if (typeof ping === 'string') return { up: false, metrics: undefined, domains: [], error: ping };
    const connectSeconds = ping;

    const metrics: Metrics = {
      begin,
      end: new Date(),
      monitorId: this.#opts.monitorId,
      plan: this.#opts.plan.name,
      level: this.#level.name,
      interval: ++this.#interval,
      state: '',
      values: {},
    };
    // Plan order, whatever order the workers finished in.
    outcomes.sort((a, b) => wanted.indexOf(a.domain) - wanted.indexOf(b.domain));
    const errors: string[] = [];
    for (const o of outcomes) {
      if (o.values.length > 0) metrics.values[o.domain] = o.values;
      if (o.error !== '') errors.push(`${o.domain}: ${o.error}`);
    }
    return {
      up: true,
      metrics,
      domains: outcomes.map(({ domain, ok, seconds }) => ({ domain, ok, seconds })),
      error: errors.join('; '),
      connectSeconds,
      text: { ...this.#db.text },
    };
  }

  /** Ping under its own limit: the seconds it took, or the error text. Never rejects. */
  async #ping(signal: AbortSignal, t0: number): Promise<number | string> {
    const dl = deadline(signal, PING_TIMEOUT_MS, `ping: timeout after ${formatDuration(PING_TIMEOUT_MS)}`);
    try {
      await this.#opts.db.ping({ signal: dl.signal });
      return seconds(performance.now() - t0);
    } catch (err) {
      this.#wasUp = false;
      return errorMessage(err);
    } finally {
      dl.done();
    }
  }

  /** Prepare (if needed) and collect one domain under its deadline. Never rejects. */
  async #collectDomain(
    domain: string,
    signal: AbortSignal,
  ): Promise<ScrapeDomain & { values: MetricValue[]; error: string }> {
    const start = performance.now();
    const result = (values: MetricValue[], error: string) => ({
      domain,
      ok: error === '',
      seconds: seconds(performance.now() - start),
      values,
      error,
    });
    try {
      let collector = this.#ready.get(domain);
      if (collector === undefined) {
        collector = await this.#prepare(domain, signal);
      }
      let values: MetricValue[] = [];
      let error = '';
      try {
        const r = await collector.collect(this.#level.name, signal);
        values = r.values;
        if (r.error !== undefined) error = r.error.message;
      } catch (err) {
        error = signal.aborted ? errorMessage(signal.reason) : errorMessage(err);
      }
      if (error !== '') {
        // Prepare again next time (exporter.md §3 Recommended: re-prepare after a failure).
        this.#ready.delete(domain);
        void Promise.resolve(collector.close?.()).catch(() => undefined); // best effort
      }
      if (domain === 'innodb' && values.length > 0) {
        this.#innodbCatalog ??= await loadInnodbCatalog(this.#opts.db, signal).catch(() => undefined);
        if (this.#innodbCatalog !== undefined) addInnodbMeta(values, this.#innodbCatalog);
      }
      return result(values, error);
    } catch (err) {
      return result([], signal.aborted ? errorMessage(signal.reason) : errorMessage(err));
    }
  }

  async #prepare(domain: string, signal: AbortSignal): Promise<Collector> {
    if (this.#closed) throw new Error('exporter source closed');
    if (!this.#opts.collectors.has(domain)) throw new Error(`collector for domain ${domain} not registered`);
    const ctx: CollectorContext = { monitorId: this.#opts.monitorId, db: this.#db };
    if (this.#opts.status !== undefined) ctx.status = this.#opts.status;
    if (this.#opts.events !== undefined) ctx.events = this.#opts.events;
    const collector = this.#opts.collectors.make(domain, ctx);
    try {
      await collector.prepare(this.#opts.plan, signal);
    } catch (err) {
      await Promise.resolve(collector.close?.()).catch(() => undefined);
      throw new Error(
        `while preparing ${this.#opts.plan.name}/${this.#level.name}/${domain}: ${errorMessage(err)}`,
        {
          cause: err,
        },
      );
    }
    if (domain === 'innodb') this.#innodbCatalog = undefined; // re-read with the new preparation
    this.#ready.set(domain, collector);
    return collector;
  }
}

/**
 * The exporter source for one monitor: the plan's single level collected on demand through
 * the monitor's Db. Throws `exporter plan has <n> levels, expected 1` for a plan with
 * another number of levels (the monitor then fails to start, exporter.md §1).
 */
export function createExporterSource(opts: ExporterSourceOptions): ClosableExporterSource {
  return new Source(opts);
}
