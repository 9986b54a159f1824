/**
 * Small helpers shared by collectors. Nothing here knows about a particular domain.
 */
import { CollectError } from '../../core/collector.js';
import type { Db, Row } from '../../core/db.js';
import { errnoOf, errorMessage } from '../../core/errors.js';
import type { MetricType, MetricValue } from '../../core/metrics.js';
import { parseValue, upstreamText } from '../../db/values.js';
import { DB_ERROR_CODES } from '../../db/pool.js';
import { timeLeftMs } from '../../util/abort.js';
import { formatDuration } from '../../util/duration.js';
import type { DomainPlan, Plan } from '../../core/plan.js';
import { CappedMap } from '../../util/capped.js';

/**
 * This domain's part of every level of the plan: level name → DomainPlan. A level that
 * does not list the domain is absent, so collect() for it returns nothing.
 */
export function levelPlans(plan: Plan, domain: string): Map<string, DomainPlan> {
  const out = new Map<string, DomainPlan>();
  for (const [name, level] of Object.entries(plan.levels)) {
    const dp = level.collect[domain];
    if (dp !== undefined) out.set(name, dp);
  }
  return out;
}

/** This domain's levels, each turned into ready-to-run state by `build` (which may throw). */
export function mapLevels<T>(plan: Plan, domain: string, build: (dp: DomainPlan) => T): Map<string, T> {
  const out = new Map<string, T>();
  for (const [name, dp] of levelPlans(plan, domain)) out.set(name, build(dp));
  return out;
}

/** An option value as collectors compare it: trimmed, lowercase; '' when unset. */
export function option(dp: DomainPlan, name: string): string {
  return (dp.options[name] ?? '').trim().toLowerCase();
}

/**
 * A column of a row by name, ignoring case: servers differ in how they spell result
 * columns (`Variable_name` vs `VARIABLE_NAME`). Undefined when there is no such column.
 */
export function field(row: Row, name: string): string | null | undefined {
  if (name in row) return row[name];
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(row)) if (k.toLowerCase() === lower) return v;
  return undefined;
}

/**
 * `Variable_name`/`Value` rows (SHOW GLOBAL STATUS / VARIABLES) → values named in lowercase,
 * in row order. `wanted` filters by lowercase name; text that is no number is skipped.
 */
export function variableValues(
  rows: readonly Row[],
  typeOf: (name: string) => MetricType,
  wanted?: (name: string) => boolean,
): MetricValue[] {
  const values: MetricValue[] = [];
  for (const row of rows) {
    const name = (field(row, 'Variable_name') ?? '').toLowerCase();
    if (name === '' || (wanted !== undefined && !wanted(name))) continue;
    const value = parseValue(field(row, 'Value'));
    if (value !== undefined) values.push({ name, value, type: typeOf(name) });
  }
  return values;
}

/** What a {@link VariableReader} works out once per variable name as the server spells it. */
interface NameInfo {
  /** as the server spells it */
  raw: string;
  /** lowercase */
  name: string;
  type: MetricType;
  /** wanted as a value */
  wanted: boolean;
  /** kept as text for the exporter */
  keep: boolean;
}

/** Names a name table remembers; past that it starts over (names are a small, stable set). */
const NAMES_KEPT = 20_000;

/** Filters (wanted name lists) with a name table kept; past that the tables start over. */
const FILTERS_KEPT = 1_000;

/** The key of "no kept texts" among the name tables (a kept-text set is keyed by itself). */
const NO_KEEP: object = {};

/**
 * The readers' name tables, one per type function, kept-text set and wanted names: every
 * monitor's reader of a level shares one (1,000 monitors of the default plan read the same
 * lists), so a name is worked out once per process and its NameInfo kept once. With a table
 * per reader, each monitor held its levels' NameInfo objects, about 140 of them.
 */
const NAME_TABLES = new WeakMap<
  (name: string) => MetricType,
  WeakMap<object, Map<string, Map<string, NameInfo>>>
>();

function nameTable(
  typeOf: (name: string) => MetricType,
  keep: ReadonlySet<string> | undefined,
  wanted: ReadonlySet<string> | undefined,
): Map<string, NameInfo> {
  let byKeep = NAME_TABLES.get(typeOf);
  if (byKeep === undefined) {
    byKeep = new WeakMap();
    NAME_TABLES.set(typeOf, byKeep);
  }
  let byWanted = byKeep.get(keep ?? NO_KEEP);
  if (byWanted === undefined) {
    byWanted = new CappedMap(FILTERS_KEPT);
    byKeep.set(keep ?? NO_KEEP, byWanted);
  }
  const key = wanted === undefined ? 'all' : `only\n${[...wanted].sort().join('\n')}`;
  let table = byWanted.get(key);
  if (table === undefined) {
    table = new CappedMap(NAMES_KEPT);
    byWanted.set(key, table);
  }
  return table;
}

/**
 * Every reader's variable names, as the server spells them and lowercased, one pair of strings
 * per name in the process: with a copy per reader, 1,000 monitors held about 300 more strings
 * each than before the readers existed (heap snapshots, docs/performance.md).
 */
const NAME_STRINGS = new CappedMap<string, readonly [raw: string, lower: string]>(NAMES_KEPT);

function nameStrings(raw: string): readonly [raw: string, lower: string] {
  let pair = NAME_STRINGS.get(raw);
  if (pair === undefined) {
    pair = [raw, raw.toLowerCase()];
    NAME_STRINGS.set(raw, pair);
  }
  return pair;
}

/**
 * variableValues() in one pass over the rows, with the per-name work (lowercasing, the type,
 * the filters) done once per name: SHOW GLOBAL STATUS / VARIABLES return the same names
 * every time. Without `keep` (sonde's reading) the values are exactly variableValues()'s.
 * With `keep` (the mysqld_exporter reading) values are read as upstreamValues() and
 * parseValue() read them: the text of the names in `keep` is copied to `text` as the server
 * wrote it (and parsed as it is), other keyword values count as 1 or 0, and the values handed
 * out are frozen, the same object again while a value's text does not change. Sonde's
 * reading makes new values each time instead: kept from one collection to the next, the
 * values of a few hundred monitors would outlive the young generation and die old, which
 * cost more garbage collection than making them anew (and 0.1–0.2 MiB per monitor).
 */
export class VariableReader {
  readonly #typeOf: (name: string) => MetricType;
  readonly #keep: ReadonlySet<string> | undefined;
  readonly #wanted: ReadonlySet<string> | undefined;
  readonly #names: Map<string, NameInfo>;
  /**
   * The rows of the last read, by position: the server lists its variables in the same order
   * every time, so a row is usually recognised by comparing its name with the one at its
   * position, without a lookup, and a value whose text did not change is not parsed again:
   * the same (frozen) MetricValue is handed out again. Three arrays rather than an object per
   * row: a monitor keeps them for every variable.
   */
  #infos: NameInfo[] = [];
  /** the value's text last time (undefined before any) */
  #texts: (string | undefined)[] = [];
  /** the value it made (none when no number) */
  #values: (MetricValue | undefined)[] = [];

  constructor(
    typeOf: (name: string) => MetricType,
    keep: ReadonlySet<string> | undefined,
    wanted?: ReadonlySet<string>,
  ) {
    this.#typeOf = typeOf;
    this.#keep = keep;
    this.#wanted = wanted;
    this.#names = nameTable(typeOf, keep, wanted);
  }

  #info(raw: string): NameInfo {
    let info = this.#names.get(raw);
    if (info === undefined) {
      const [shared, name] = nameStrings(raw);
      info = {
        raw: shared,
        name,
        type: this.#typeOf(name),
        wanted: name !== '' && (this.#wanted === undefined || this.#wanted.has(name)),
        keep: this.#keep?.has(name) ?? false,
      };
      this.#names.set(shared, info);
    }
    return info;
  }

  /** `Variable_name`/`Value` rows → values in row order; kept texts go to `text`. */
  read(rows: readonly Row[], text?: Record<string, string>): MetricValue[] {
    const upstream = this.#keep !== undefined;
    const values: MetricValue[] = [];
    const first = rows[0];
    if (first === undefined) return values;
    const nameKey = columnKey(first, 'Variable_name');
    const valueKey = columnKey(first, 'Value');
    const infos = this.#infos;
    const texts = this.#texts;
    const made = this.#values;
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i] as Row;
      const name = (nameKey === undefined ? undefined : row[nameKey]) ?? '';
      let info = infos[i];
      if (info === undefined || info.raw !== name) {
        info = this.#info(name);
        infos[i] = info;
        if (upstream) {
          texts[i] = undefined;
          made[i] = undefined;
        }
      }
      const raw = valueKey === undefined ? undefined : row[valueKey];
      if (raw === undefined || raw === null || raw === '') continue;
      if (info.keep && text !== undefined) text[info.name] = raw;
      if (!info.wanted) continue;
      if (!upstream) {
        const n = parseValue(raw);
        if (n !== undefined) values.push({ name: info.name, value: n, type: info.type });
        continue;
      }
      let value = made[i];
      if (texts[i] !== raw) {
        texts[i] = raw;
        const n = parseValue(info.keep || !upstream ? raw : upstreamText(raw));
        value = n === undefined ? undefined : Object.freeze({ name: info.name, value: n, type: info.type });
        made[i] = value;
      }
      if (value !== undefined) values.push(value);
    }
    if (infos.length > rows.length) {
      infos.length = rows.length;
      texts.length = rows.length;
      made.length = rows.length;
    }
    return values;
  }
}

/** The key of a row's column `name`, ignoring case (see field()); undefined without one. */
export function columnKey(row: Row, name: string): string | undefined {
  if (name in row) return name;
  const lower = name.toLowerCase();
  return Object.keys(row).find((k) => k.toLowerCase() === lower);
}

/** `?, ?, ?` for an IN list of n bound values. */
export function placeholders(n: number): string {
  return Array.from({ length: n }, () => '?').join(', ');
}

/**
 * A query failure as collection data, keeping the server's errno so the engine can match it
 * against the domain's error policies. `what` prefixes the message (`<what> failed: …`);
 * `zero` are the values a `zero` policy emits when the errno maps to one.
 */
export function queryError(err: unknown, opts: { what?: string; zero?: MetricValue[] } = {}): CollectError {
  if (err instanceof CollectError && opts.what === undefined && opts.zero === undefined) return err;
  const errno = errnoOf(err);
  const message = opts.what === undefined ? errorMessage(err) : `${opts.what} failed: ${errorMessage(err)}`;
  return new CollectError(message, {
    cause: err,
    ...(errno === undefined ? {} : { errno }),
    ...(opts.zero === undefined ? {} : { zero: opts.zero }),
  });
}

/** Server errnos of a statement ended by the server's own time limit (MariaDB, MySQL). */
const STATEMENT_TIME_LIMIT_ERRNOS: ReadonlySet<number> = new Set([1969, 3024]);

/** Whether `err` means the statement ran into its deadline (sonde's, or the server's limit). */
function ranOutOfTime(err: unknown, signal: AbortSignal): boolean {
  const errno = errnoOf(err);
  if (errno !== undefined && STATEMENT_TIME_LIMIT_ERRNOS.has(errno)) return true;
  const code = (err as { code?: unknown } | undefined)?.code;
  if (code === DB_ERROR_CODES.timeout) return true;
  const reason: unknown = signal.reason;
  return signal.aborted && reason instanceof Error && /timeout|deadline/i.test(reason.message);
}

/** A catalogue query that ran out of time: "too slow on this server". */
export class TooSlowError extends CollectError {}

/**
 * Run a catalogue query (information_schema: tables, columns), which can take long on a
 * server with very many tables. The server bounds it by its own statement time limit as
 * well as sonde's deadline (QueryOptions.serverTimeLimit), so it ends on the server even
 * when no KILL can reach it. A query that runs out of time fails with a TooSlowError: one
 * line saying it is too slow on this server and what bounds it.
 */
export async function catalogueQuery(
  db: Db,
  sql: string,
  params: readonly unknown[],
  signal: AbortSignal,
): Promise<Row[]> {
  const budget = timeLeftMs(signal);
  try {
    return await db.query(sql, params, { signal, serverTimeLimit: true });
  } catch (err) {
    if (!ranOutOfTime(err, signal)) throw err;
    const within = budget === undefined ? '' : ` within ${formatDuration(budget)}`;
    const errno = errnoOf(err);
    throw new TooSlowError(
      `too slow on this server: the information_schema query did not finish${within}, the domain's deadline (set by the freq of the fastest level that collects it; the server's max_statement_time or MAX_EXECUTION_TIME ends it too): collect the domain at a less frequent level, or narrow its include/exclude options`,
      { cause: err, ...(errno === undefined ? {} : { errno }) },
    );
  }
}

/**
 * How long a catalogue result is reused instead of querying again: 60 times what the query
 * cost, once it cost a second or more (at most an hour). A query that takes 1 s runs at
 * most once a minute, one that takes 10 s once every 10 minutes: the catalogue of a server
 * with tens of thousands of tables changes slowly, and reading it costs the server.
 */
export function catalogueReuseMs(costMs: number): number {
  return costMs < 1000 ? 0 : Math.min(60 * costMs, 3_600_000);
}

/** How old a result may be and still be served (with the error) when a refresh ran out of time. */
export const CATALOGUE_STALE_MAX_MS = 3_600_000;

interface CatalogueEntry {
  rows: Row[];
  /** When the rows were read, and what reading them cost (ms). */
  at: number;
  costMs: number;
  /** After a refresh ran out of time: no new attempt before this. */
  retryAt: number;
}

/** Rows of a catalogue query, and the error of a refresh that ran out of time (rows are then the last ones read). */
export interface CatalogueRead {
  rows: Row[];
  error?: CollectError;
}

/**
 * Catalogue queries with a cost-based refresh (see catalogueReuseMs): a query is run again
 * only once its last result is old enough for what it cost. When a refresh runs out of time,
 * the last complete result (at most CATALOGUE_STALE_MAX_MS old) is returned with the error,
 * saying when it was read, and the query is not tried again before as long as its reuse
 * would be at the deadline's cost: a scrape's series do not come and go with each timeout,
 * and a server that is too slow is not asked every cycle.
 */
export class CatalogueReader {
  readonly #db: Db;
  readonly #now: () => number;
  readonly #last = new Map<string, CatalogueEntry>();

  constructor(db: Db, now: () => number = Date.now) {
    this.#db = db;
    this.#now = now;
  }

  async read(sql: string, params: readonly unknown[], signal: AbortSignal): Promise<CatalogueRead> {
    const key = `${sql}\0${JSON.stringify(params)}`;
    const last = this.#last.get(key);
    const start = this.#now();
    if (last !== undefined && start < Math.max(last.retryAt, last.at + catalogueReuseMs(last.costMs)))
      return last.retryAt > start ? this.#stale(last, undefined) : { rows: last.rows };
    const budget = timeLeftMs(signal) ?? 0;
    try {
      const rows = await catalogueQuery(this.#db, sql, params, signal);
      this.#last.set(key, { rows, at: start, costMs: this.#now() - start, retryAt: 0 });
      return { rows };
    } catch (err) {
      if (!(err instanceof TooSlowError) || last === undefined || start - last.at > CATALOGUE_STALE_MAX_MS)
        throw err;
      last.retryAt = start + catalogueReuseMs(Math.max(budget, 1000));
      return this.#stale(last, err);
    }
  }

  #stale(last: CatalogueEntry, err: CollectError | undefined): CatalogueRead {
    const text = `${err?.message ?? 'too slow on this server: the last refresh of the information_schema query did not finish in time'}; values read at ${new Date(last.at).toISOString()}, next attempt after ${new Date(last.retryAt).toISOString()}`;
    return { rows: last.rows, error: new TooSlowError(text, err === undefined ? {} : { cause: err }) };
  }
}
