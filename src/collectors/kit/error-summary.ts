/**
 * error.global, error.account, error.host, error.user, error.thread — how often each server
 * error was raised, from the performance_schema error summary tables of MySQL 8.0+.
 * One implementation; each domain folder is a thin wrapper that
 * picks its {@link ErrorScope}.
 *
 * | domain        | table                                       | entity columns → group keys |
 * |---------------|---------------------------------------------|-----------------------------|
 * | error.global  | events_errors_summary_global_by_error       | –                           |
 * | error.account | events_errors_summary_by_account_by_error   | USER, HOST → error_user, error_host |
 * | error.host    | events_errors_summary_by_host_by_error      | HOST → error_host           |
 * | error.user    | events_errors_summary_by_user_by_error      | USER → error_user           |
 * | error.thread  | events_errors_summary_by_thread_by_error    | THREAD_ID → error_thread    |
 *
 * Metric `raised` = SUM_ERROR_RAISED, grouped by `error_number`, `error_name` and the
 * entity. Plan metrics select errors by number (`1146`) or name (`ER_NO_SUCH_TABLE`) with
 * `all: no`, or exclude them with `all: exclude`. `total` adds (or, with `only`, keeps
 * just) one series per entity with `error_number` = `error_name` = "".
 *
 * Truncation: by default the table is truncated once when the plan starts
 * (`truncate-on-startup`), and values are CUMULATIVE_COUNTERs from then on; with
 * `truncate-table: yes` it is truncated after each read and values are DELTA_COUNTERs.
 * A failed startup truncate is reported (status + event, once per level) and collection
 * continues (Blip fails the whole plan instead). Per-interval failures are reported
 * under the `truncate-timeout` policy (truncate.ts).
 *
 * Flavors (see the source table): the tables exist only in MySQL 8.0+. MariaDB and MySQL
 * 5.7 → "not supported" once, and so is a 1146 from any server.
 */
import type {
  CollectResult,
  Collector,
  CollectorContext,
  CollectorHelp,
  CollectorRegistration,
  OptionHelp,
} from '../../core/collector.js';
import { CollectError } from '../../core/collector.js';
import type { Db, Row, ServerInfo } from '../../core/db.js';
import { errnoOf, errorMessage } from '../../core/errors.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import type { DomainPlan, Plan } from '../../core/plan.js';
import { ER_NO_SUCH_TABLE } from '../../db/errnos.js';
import { parseValue } from '../../db/values.js';
import { field, mapLevels, option, placeholders, queryError } from './common.js';
import { withCause } from './pfs.js';
import { sourceFor, unsupportedError } from './sources.js';
import { LevelTruncate, TRUNCATE_POLICY, truncateHow, truncateTable, type TruncateHow } from './truncate.js';

export type ErrorScope = 'global' | 'account' | 'host' | 'user' | 'thread';

/** An entity column of a summary table and the group key it becomes. */
interface EntityColumn {
  column: 'USER' | 'HOST' | 'THREAD_ID';
  key: 'error_user' | 'error_host' | 'error_thread';
}

/** Everything that differs between the five domains. */
export interface ErrorScopeDef {
  scope: ErrorScope;
  domain: string;
  table: string;
  entity: readonly EntityColumn[];
  /** What one entity is, for help texts. */
  noun: string;
}

const USER: EntityColumn = { column: 'USER', key: 'error_user' };
const HOST: EntityColumn = { column: 'HOST', key: 'error_host' };
const THREAD: EntityColumn = { column: 'THREAD_ID', key: 'error_thread' };

/** The five scopes. */
const ERROR_SCOPES: Readonly<Record<ErrorScope, ErrorScopeDef>> = {
  global: {
    scope: 'global',
    domain: 'error.global',
    table: 'events_errors_summary_global_by_error',
    entity: [],
    noun: 'server',
  },
  account: {
    scope: 'account',
    domain: 'error.account',
    table: 'events_errors_summary_by_account_by_error',
    entity: [USER, HOST],
    noun: 'account (user@host)',
  },
  host: {
    scope: 'host',
    domain: 'error.host',
    table: 'events_errors_summary_by_host_by_error',
    entity: [HOST],
    noun: 'client host',
  },
  user: {
    scope: 'user',
    domain: 'error.user',
    table: 'events_errors_summary_by_user_by_error',
    entity: [USER],
    noun: 'user',
  },
  thread: {
    scope: 'thread',
    domain: 'error.thread',
    table: 'events_errors_summary_by_thread_by_error',
    entity: [THREAD],
    noun: 'thread',
  },
};

// ---- help ------------------------------------------------------------------------------

const FILTER_HELP: Record<Exclude<ErrorScope, 'global'>, { include: string; exclude: string }> = {
  account: {
    include: 'Accounts to collect, comma-separated user@host; * for any user or host (user@*, *@host)',
    exclude: 'Accounts to skip, comma-separated user@host; * for any user or host (user@*, *@host)',
  },
  host: { include: 'Hosts to collect, comma-separated', exclude: 'Hosts to skip, comma-separated' },
  user: { include: 'Users to collect, comma-separated', exclude: 'Users to skip, comma-separated' },
  thread: {
    include: 'Thread IDs (performance_schema THREAD_ID) to collect, comma-separated',
    exclude: 'Thread IDs to skip, comma-separated',
  },
};

/** The options of one scope: what to collect, totals, truncation, and the entity filter. */
function errorOptions(scope: ErrorScope): OptionHelp[] {
  const def = ERROR_SCOPES[scope];
  const options: OptionHelp[] = [
    {
      name: 'all',
      description:
        'Which errors to collect; plan metrics name errors by number (1146) or name (ER_NO_SUCH_TABLE)',
      default: 'yes',
      values: {
        yes: 'Every error raised at least once (metrics ignored)',
        no: 'Only the errors listed under metrics (all errors if none listed)',
        exclude: 'Every error except those listed under metrics',
      },
    },
    {
      name: 'total',
      description: `Also report ${scope === 'global' ? 'the total' : `a total per ${def.noun}`} of the errors collected (error_number and error_name empty)`,
      default: 'yes',
      values: {
        yes: 'Each error, plus the total',
        no: 'Each error, no total',
        only: 'Only the total (summed by the server)',
      },
    },
    ...TRUNCATE_OPTIONS,
  ];
  if (scope !== 'global') {
    const f = FILTER_HELP[scope];
    options.push({ name: 'include', description: f.include, default: '' });
    options.push({ name: 'exclude', description: `${f.exclude} (ignored when include is set)`, default: '' });
  }
  return options;
}

const TRUNCATE_OPTIONS: readonly OptionHelp[] = [
  {
    name: 'truncate-table',
    description: 'Truncate the table after each read, so every value covers one interval',
    default: 'no',
    values: {
      yes: 'Truncate after each read (values are delta counters; needs DROP on the table)',
      no: 'Never truncate after reading (values are cumulative counters)',
    },
  },
  {
    name: 'truncate-timeout',
    description: 'How long a truncate may wait (for a metadata lock) before it counts as failed',
    default: '250ms',
  },
  {
    name: 'truncate-on-startup',
    description: 'Truncate the table once when the plan starts, so counts start from zero',
    default: 'yes',
    values: {
      yes: 'Truncate when the plan starts (a failure is reported, collection goes on)',
      no: 'Keep the counts since server start',
    },
  },
];

/** Static help of one scope (`exclude` is accepted beside `include` everywhere but global). */
export function errorHelp(scope: ErrorScope): CollectorHelp {
  const def = ERROR_SCOPES[scope];
  return {
    domain: def.domain,
    description:
      scope === 'global'
        ? 'Server errors raised, by error (performance_schema, MySQL 8.0+)'
        : `Server errors raised, by ${def.noun} and error (performance_schema, MySQL 8.0+)`,
    sources: [
      `SELECT SUM_ERROR_RAISED, ERROR_NUMBER, ERROR_NAME${def.entity.map((e) => `, ${e.column}`).join('')} FROM performance_schema.${def.table} WHERE … AND SUM_ERROR_RAISED > 0`,
      `TRUNCATE TABLE performance_schema.${def.table} (truncate-on-startup, truncate-table)`,
    ],
    options: errorOptions(scope),
    errors: [
      {
        name: TRUNCATE_POLICY,
        description: `Truncating performance_schema.${def.table} after a read failed (timeout, missing DROP privilege...)`,
      },
    ],
    groups: [
      { key: 'error_number', description: 'Error number, e.g. 1146 ("" for the total)' },
      { key: 'error_name', description: 'Error name, e.g. ER_NO_SUCH_TABLE ("" for the total)' },
      ...def.entity.map((e) => ({ key: e.key, description: `${e.column} column` })),
    ],
    meta: [],
    metrics: [
      {
        name: 'raised',
        type: MetricType.CumulativeCounter,
        description: 'Times the error was raised (a delta counter with truncate-table: yes)',
      },
    ],
  };
}

// ---- query -----------------------------------------------------------------------------

/** A bound SQL parameter: error numbers bind as numbers, everything else as text. */
export type Param = string | number;

export interface ErrorQuery {
  sql: string;
  params: Param[];
}

/** What buildErrorQuery needs from a level's plan. */
export interface ErrorQueryOptions {
  /** `yes` | `no` | `exclude`. */
  all: string;
  metrics: readonly string[];
  /** `yes` | `no` | `only`. */
  total: string;
  include?: string | undefined;
  exclude?: string | undefined;
}

/** Split a comma list, trimming entries and dropping empty ones (Blip splits raw). */
function list(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

const INTEGER = /^[+-]?\d+$/;

/** `<c1>`: which errors. */
function errorCondition(all: string, metrics: readonly string[], params: Param[]): string {
  if (all === 'yes' || metrics.length === 0) return 'ERROR_NUMBER IS NOT NULL';
  const numbers: number[] = [];
  const names: string[] = [];
  for (const m of metrics) {
    if (INTEGER.test(m)) numbers.push(Number.parseInt(m, 10));
    else names.push(m);
  }
  const parts: string[] = [];
  const not = all === 'exclude' ? 'NOT ' : '';
  if (numbers.length > 0) parts.push(`ERROR_NUMBER ${not}IN (${placeholders(numbers.length)})`);
  if (names.length > 0) parts.push(`ERROR_NAME ${not}IN (${placeholders(names.length)})`);
  params.push(...numbers, ...names);
  return `(${parts.join(all === 'exclude' ? ' AND ' : ' OR ')})`;
}

/** Account tokens `user@host` sorted into pairs, users (`u@*`) and hosts (`*@h`). */
export function parseAccounts(text: string | undefined): {
  pairs: [string, string][];
  users: string[];
  hosts: string[];
} {
  const out = { pairs: [] as [string, string][], users: [] as string[], hosts: [] as string[] };
  for (const token of list(text)) {
    const parts = token.split('@');
    if (parts.length !== 2) continue; // malformed: ignored, as in Blip
    const [user = '', host = ''] = parts;
    if (user === '' || host === '') continue;
    if (user === '*' && host === '*') continue; // everything: no condition
    if (user === '*') out.hosts.push(host);
    else if (host === '*') out.users.push(user);
    else out.pairs.push([user, host]);
  }
  return out;
}

/** `<c2>` for error.account; '' when no valid token. */
function accountCondition(text: string | undefined, include: boolean, params: Param[]): string {
  const { pairs, users, hosts } = parseAccounts(text);
  const not = include ? '' : 'NOT ';
  const parts: string[] = [];
  if (pairs.length > 0) {
    parts.push(`(USER, HOST) ${not}IN (${pairs.map(() => '(?, ?)').join(', ')})`);
    for (const [u, h] of pairs) params.push(u, h);
  }
  if (users.length > 0) {
    parts.push(`USER ${not}IN (${placeholders(users.length)})`);
    params.push(...users);
  }
  if (hosts.length > 0) {
    parts.push(`HOST ${not}IN (${placeholders(hosts.length)})`);
    params.push(...hosts);
  }
  return parts.length === 0 ? '' : `(${parts.join(include ? ' OR ' : ' AND ')})`;
}

/**
 * Pure: the query of one level, identical to Blip's text except that
 * the `total: only` sum is aliased (and COALESCEd to 0 for error.global, where no rows
 * would give NULL).
 */
export function buildErrorQuery(scope: ErrorScope, o: ErrorQueryOptions): ErrorQuery {
  const def = ERROR_SCOPES[scope];
  const params: Param[] = [];
  const only = o.total === 'only';
  const entityCols = def.entity.map((e) => e.column);
  const sum = only
    ? scope === 'global'
      ? 'COALESCE(SUM(SUM_ERROR_RAISED), 0) AS SUM_ERROR_RAISED'
      : 'SUM(SUM_ERROR_RAISED) AS SUM_ERROR_RAISED'
    : 'SUM_ERROR_RAISED';
  const select = [
    sum,
    only ? "'' ERROR_NUMBER" : 'ERROR_NUMBER',
    only ? "'' ERROR_NAME" : 'ERROR_NAME',
    ...entityCols,
  ];

  const where = [errorCondition(o.all, o.metrics, params)];
  const inc = list(o.include);
  const exc = list(o.exclude);
  if (scope === 'account') {
    const c =
      inc.length > 0 ? accountCondition(o.include, true, params) : accountCondition(o.exclude, false, params);
    if (c !== '') where.push(c);
    where.push('USER IS NOT NULL AND HOST IS NOT NULL');
  } else if (scope !== 'global') {
    const col = entityCols[0] ?? '';
    if (inc.length > 0) {
      where.push(`${col} IN (${placeholders(inc.length)})`);
      params.push(...inc);
    } else if (exc.length > 0) {
      where.push(`${col} NOT IN (${placeholders(exc.length)})`);
      params.push(...exc);
    } else {
      where.push(`${col} IS NOT NULL`);
    }
  }
  where.push('SUM_ERROR_RAISED > 0');

  let sql = `SELECT ${select.join(', ')} FROM performance_schema.${def.table} WHERE ${where.join(' AND ')}`;
  if (only && entityCols.length > 0) sql += ` GROUP BY ${entityCols.join(', ')}`;
  return { sql, params };
}

// ---- values ----------------------------------------------------------------------------

/**
 * Pure part of collect(): rows → `raised` values, then (total: yes) one total per entity in
 * order of first appearance; error.global's total is always there, 0 without rows. With
 * `total: only` the rows already are the totals (summed by the server).
 */
export function errorValues(
  scope: ErrorScope,
  rows: readonly Row[],
  total: string,
  type: MetricType,
): MetricValue[] {
  const def = ERROR_SCOPES[scope];
  const values: MetricValue[] = [];
  const totals = new Map<string, { group: Record<string, string>; sum: number }>();
  for (const row of rows) {
    const value = parseValue(field(row, 'SUM_ERROR_RAISED'));
    if (value === undefined) continue;
    const entity: Record<string, string> = {};
    let complete = true;
    for (const e of def.entity) {
      const v = field(row, e.column);
      if (v === null || v === undefined) complete = false;
      else entity[e.key] = v;
    }
    if (!complete) continue;
    const group = {
      error_number: total === 'only' ? '' : (field(row, 'ERROR_NUMBER') ?? ''),
      error_name: total === 'only' ? '' : (field(row, 'ERROR_NAME') ?? ''),
      ...entity,
    };
    values.push({ name: 'raised', value, type, group });
    if (total !== 'yes') continue;
    const key = def.entity.map((e) => entity[e.key] ?? '').join('\0');
    const t = totals.get(key);
    if (t === undefined)
      totals.set(key, { group: { error_number: '', error_name: '', ...entity }, sum: value });
    else t.sum += value;
  }
  if (total === 'yes') {
    if (scope === 'global' && totals.size === 0)
      totals.set('', { group: { error_number: '', error_name: '' }, sum: 0 });
    for (const t of totals.values()) values.push({ name: 'raised', value: t.sum, type, group: t.group });
  }
  return values;
}

// ---- collector -------------------------------------------------------------------------

interface LevelState {
  query: ErrorQuery;
  total: string;
  truncate: LevelTruncate;
  truncateOnStartup: boolean;
  /** A failed startup truncate, reported with the level's first collection. */
  startupError: CollectError | undefined;
}

function levelState(scope: ErrorScope, dp: DomainPlan): LevelState {
  const all = option(dp, 'all') || 'yes';
  if (all !== 'yes' && all !== 'no' && all !== 'exclude') {
    throw new Error(`invalid value for option all: ${dp.options.all ?? ''} (expected yes, no or exclude)`);
  }
  const total = option(dp, 'total') || 'yes';
  if (total !== 'yes' && total !== 'no' && total !== 'only') {
    throw new Error(`invalid value for option total: ${dp.options.total ?? ''} (expected yes, no or only)`);
  }
  return {
    query: buildErrorQuery(scope, {
      all,
      metrics: dp.metrics,
      total,
      include: dp.options.include,
      exclude: dp.options.exclude,
    }),
    total,
    // The timeout also bounds the startup truncate, so it is always parsed.
    truncate: new LevelTruncate(dp, false, true),
    truncateOnStartup: option(dp, 'truncate-on-startup') !== 'no',
    startupError: undefined,
  };
}

/** The collector of one error.* domain. */
export class ErrorSummaryCollector implements Collector {
  readonly domain: string;
  readonly #def: ErrorScopeDef;
  readonly #db: Db;
  #levels = new Map<string, LevelState>();
  #info: ServerInfo | undefined;
  #how: TruncateHow = 'truncate';
  /** Why the domain cannot work here (source table, or the table turned out missing). */
  #unsupported: CollectError | undefined;

  constructor(scope: ErrorScope, ctx: CollectorContext) {
    this.#def = ERROR_SCOPES[scope];
    this.domain = this.#def.domain;
    this.#db = ctx.db;
  }

  async prepare(plan: Plan, signal: AbortSignal): Promise<void> {
    this.#levels = mapLevels(plan, this.domain, (dp) => levelState(this.#def.scope, dp));
    this.#unsupported = undefined;
    if (this.#levels.size === 0) return;
    const info = await this.#db.serverInfo({ signal });
    this.#info = info;
    this.#how = truncateHow(info);
    const choice = sourceFor(this.domain, info);
    if ('unsupported' in choice) {
      this.#unsupported = unsupportedError(this.domain, info, choice.unsupported);
      return; // nothing to truncate on this server
    }
    for (const [level, st] of this.#levels) {
      if (st.truncateOnStartup) await this.#startupTruncate(level, st, info, signal);
      if (this.#unsupported !== undefined) return;
    }
  }

  /**
   * The startup truncate of one level, as Blip does it. A failure is kept for the level's
   * first collection (status + event) instead of failing the plan.
   */
  async #startupTruncate(
    level: string,
    st: LevelState,
    info: ServerInfo,
    signal: AbortSignal,
  ): Promise<void> {
    try {
      await truncateTable(this.#db, this.#def.table, {
        timeoutMs: st.truncate.timeoutMs,
        how: this.#how,
        signal,
      });
    } catch (err) {
      if (errnoOf(err) === ER_NO_SUCH_TABLE) {
        this.#unsupported = this.#noTable(info, err);
        return;
      }
      signal.throwIfAborted();
      st.startupError = new CollectError(
        `failed to truncate table for ${this.domain} on level ${level}: ${errorMessage(err)}`,
        { cause: err },
      );
    }
  }

  #noTable(info: ServerInfo, err: unknown): CollectError {
    return unsupportedError(
      this.domain,
      info,
      withCause(`no performance_schema.${this.#def.table}`, err),
      err,
    );
  }

  async collect(level: string, signal: AbortSignal): Promise<CollectResult> {
    const st = this.#levels.get(level);
    const info = this.#info;
    if (st === undefined || info === undefined) return { values: [] };
    if (this.#unsupported !== undefined) return { values: [], error: this.#unsupported };

    let rows: Row[];
    try {
      rows = await this.#db.query(st.query.sql, st.query.params, { signal });
    } catch (err) {
      if (errnoOf(err) !== ER_NO_SUCH_TABLE) return { values: [], error: queryError(err) };
      this.#unsupported = this.#noTable(info, err);
      return { values: [], error: this.#unsupported };
    }
    const type = st.truncate.enabled ? MetricType.DeltaCounter : MetricType.CumulativeCounter;
    const values = errorValues(this.#def.scope, rows, st.total, type);
    const result = await st.truncate.after(this.#db, this.#def.table, values, this.#how, signal);
    if (st.startupError === undefined || result.error !== undefined) return result;
    const error = st.startupError;
    st.startupError = undefined;
    return { values: result.values, error };
  }
}

/** The registry entry of one scope (what each error.* folder exports). */
export function errorRegistration(scope: ErrorScope): CollectorRegistration {
  return { help: errorHelp(scope), create: (ctx) => new ErrorSummaryCollector(scope, ctx) };
}
