/**
 * status.global — global status variables from `SHOW GLOBAL STATUS`.
 *
 * This is the worked example for writing a collector. A collector is four things:
 *
 * 1. **help** — static data: what the domain is, which options it takes (with allowed
 *    values and the *effective* default), which metrics/meta/groups/errors it declares.
 *    The same object drives plan validation, `--print-domains` and the docs, so keep it
 *    exact: an option missing here is rejected in every plan.
 * 2. **create(ctx)** — a factory: one instance per monitor per plan activation, holding
 *    `ctx.db` (the monitor's pool) and whatever prepare() works out.
 * 3. **prepare(plan)** — called once with the *whole* plan. Read this domain's DomainPlan
 *    in each level and turn options/metrics into ready-to-run per-level state. Ask the
 *    source table (sources.ts) which source this server gets — never compare flavors or
 *    versions in the collector. Throw to refuse the plan (the engine prefixes the
 *    plan/level/domain).
 * 4. **collect(level, signal)** — one level, one interval: query, parse, return
 *    MetricValues. Pass `signal` to every query so the engine's deadline KILLs it. Return
 *    query failures as `{ values: [], error }` rather than throwing: errors are data and
 *    the engine applies the plan's error policy (never read the plan's `errors:` here;
 *    declare policies in help and return a CollectError carrying the errno or policy).
 *
 * Values are always text from the db layer; parse them with parseValue() and skip what
 * does not parse (no `Number(text)`). Then add the folder to builtin.ts — that is all.
 */
import type {
  CollectResult,
  Collector,
  CollectorContext,
  CollectorHelp,
  CollectorRegistration,
  ExporterReading,
} from '../../core/collector.js';
import type { Db, Row } from '../../core/db.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import type { Plan } from '../../core/plan.js';
import {
  mapLevels,
  option,
  placeholders,
  queryError,
  VariableReader,
  variableValues,
} from '../kit/common.js';
import { prepareSource } from '../kit/sources.js';
import { sharedText } from '../../util/text.js';

export const DOMAIN = 'status.global';

/**
 * Status variables reported as GAUGE; everything else is a CUMULATIVE_COUNTER, even
 * variables that are really gauges (Open_tables...). Blip does the same, and sinks that
 * compute deltas or print Prometheus TYPE lines depend on it, so keep the list exact.
 */
export const GAUGES: ReadonlySet<string> = new Set([
  'threads_running',
  'threads_connected',
  'prepared_stmt_count',
  'innodb_buffer_pool_pages_dirty',
  'innodb_buffer_pool_pages_free',
  'innodb_buffer_pool_pages_total',
  'innodb_row_lock_current_waits',
  'innodb_os_log_pending_writes',
  'max_used_connections',
]);

/** Static help: options with allowed values and effective defaults. */
export const help: CollectorHelp = {
  domain: DOMAIN,
  description: 'Global status variables (SHOW GLOBAL STATUS)',
  sources: ['SHOW GLOBAL STATUS'],
  options: [
    {
      name: 'all',
      description: 'Collect every numeric status variable, or only those listed under metrics',
      default: 'no',
      values: {
        yes: 'Every status variable whose value is a number',
        no: 'Only the status variables listed under metrics',
      },
    },
  ],
  errors: [],
  groups: [],
  meta: [],
  metrics: [],
};

/** What prepare() works out for one level. */
interface LevelState {
  /** `all: yes`: keep every row that parses. */
  all: boolean;
  /** Otherwise: the wanted names, lowercased (plans may write `Threads_running`). */
  names: ReadonlySet<string>;
  /** The level's statement once prepared (see filtered()), and its parameters. */
  sql?: string;
  params: string[];
  /** The level's row reader (statusValues() in one pass; the exporter's reading with the exporter). */
  reader?: VariableReader;
}

/**
 * A level's statement: a metric list is filtered by the server, so a few rows instead of
 * every one (about 500) are sent and parsed. `all`, and the exporter reading (which keeps
 * text rows), read them all.
 */
function filtered(base: string, state: LevelState, exporter: boolean): void {
  if (state.all || exporter || state.names.size === 0) {
    state.sql = base;
    state.params = [];
    return;
  }
  state.params = [...state.names];
  state.sql = sharedText(`${base} WHERE Variable_name IN (${placeholders(state.params.length)})`);
}

const typeOf = (name: string): MetricType =>
  GAUGES.has(name) ? MetricType.Gauge : MetricType.CumulativeCounter;

/**
 * Pure part of collect(): SHOW GLOBAL STATUS rows → metric values, in server order. Text
 * such as Ssl_cipher is not a metric and is skipped silently.
 */
export function statusValues(rows: readonly Row[], state: Pick<LevelState, 'all' | 'names'>): MetricValue[] {
  return variableValues(rows, typeOf, state.all ? undefined : (name) => state.names.has(name));
}

/** The statement of each source key the source table gives for this domain. */
const STATEMENTS: Readonly<Record<string, string>> = { 'show-global-status': 'SHOW GLOBAL STATUS' };

export class StatusGlobalCollector implements Collector {
  readonly domain = DOMAIN;
  readonly #db: Db;
  readonly #exporter: ExporterReading | undefined;
  /** level name → state; a level missing here does not collect this domain. */
  #levels = new Map<string, LevelState>();
  #sql = 'SHOW GLOBAL STATUS';

  constructor(ctx: CollectorContext) {
    this.#db = ctx.db;
    this.#exporter = ctx.exporterReading;
  }

  async prepare(plan: Plan, signal: AbortSignal): Promise<void> {
    // SHOW GLOBAL STATUS needs no privilege and exists everywhere: the source table gives it
    // without asking the server. Listed names the server lacks are simply never reported.
    this.#levels = mapLevels(plan, DOMAIN, (dp): LevelState => ({
      all: option(dp, 'all') === 'yes',
      names: new Set(dp.metrics.map((m) => m.toLowerCase())),
      params: [],
    }));
    if (this.#levels.size === 0) return;
    const { sources } = await prepareSource(this.#db, DOMAIN, signal);
    const sql = STATEMENTS[sources[0] ?? ''];
    if (sql === undefined) throw new Error(`${DOMAIN}: no statement for source ${sources.join(',')}`);
    this.#sql = sql;
    for (const state of this.#levels.values()) {
      filtered(sql, state, this.#exporter !== undefined);
      state.reader = new VariableReader(
        typeOf,
        this.#exporter?.keepText,
        state.all ? undefined : state.names,
      );
    }
  }

  async collect(level: string, signal: AbortSignal): Promise<CollectResult> {
    const state = this.#levels.get(level);
    if (state === undefined || (!state.all && state.names.size === 0)) return { values: [] };
    let rows: Row[];
    try {
      rows = await this.#db.query(state.sql ?? this.#sql, state.params, { signal });
    } catch (err) {
      return { values: [], error: queryError(err) };
    }
    if (state.reader === undefined) return { values: statusValues(rows, state) };
    if (this.#exporter === undefined) return { values: state.reader.read(rows) };
    const text: Record<string, string> = {};
    return { values: state.reader.read(rows, text), text };
  }
}

/** The registry entry (one line in builtin.ts). */
export const registration: CollectorRegistration = {
  help,
  create: (ctx) => new StatusGlobalCollector(ctx),
};
