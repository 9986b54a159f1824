/**
 * status.global — global status variables from `SHOW GLOBAL STATUS` (spec domains.md §2.1).
 *
 * This is the worked example for writing a collector (style.md habit 11). A collector is
 * four things:
 *
 * 1. **help** — static data: what the domain is, which options it takes (with allowed
 *    values and the *effective* default), which metrics/meta/groups/errors it declares.
 *    The same object drives plan validation, `--print-domains` and the docs, so keep it
 *    exact: an option missing here is rejected in every plan.
 * 2. **create(ctx)** — a factory: one instance per monitor per plan activation, holding
 *    `ctx.db` (the monitor's pool) and whatever prepare() works out.
 * 3. **prepare(plan)** — called once with the *whole* plan. Read this domain's DomainPlan
 *    in each level and turn options/metrics into ready-to-run per-level state. Throw to
 *    refuse the plan (the engine prefixes the plan/level/domain).
 * 4. **collect(level, signal)** — one level, one interval: query, parse, return
 *    MetricValues. Pass `signal` to every query so the engine's deadline KILLs it. Return
 *    query failures as `{ values: [], error }` rather than throwing: errors are data and
 *    the engine applies the plan's error policy.
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
} from '../../core/collector.js';
import type { Db } from '../../core/db.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import type { Plan } from '../../core/plan.js';
import { parseValue } from '../../db/values.js';
import { field, levelPlans, option, queryError } from '../common.js';

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

/** Static help: options with allowed values and effective defaults (domains.md §3). */
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
}

/** Pure part of collect(): SHOW GLOBAL STATUS rows → metric values, in server order. */
export function statusValues(
  rows: readonly Record<string, string | null>[],
  state: LevelState,
): MetricValue[] {
  const values: MetricValue[] = [];
  for (const row of rows) {
    const name = (field(row, 'Variable_name') ?? '').toLowerCase();
    if (name === '' || (!state.all && !state.names.has(name))) continue;
    const value = parseValue(field(row, 'Value') ?? null);
    if (value === undefined) continue; // text such as Ssl_cipher: not a metric, skipped silently
    values.push({ name, value, type: GAUGES.has(name) ? MetricType.Gauge : MetricType.CumulativeCounter });
  }
  return values;
}

export class StatusGlobalCollector implements Collector {
  readonly domain = DOMAIN;
  readonly #db: Db;
  /** level name → state; a level missing here does not collect this domain. */
  #levels = new Map<string, LevelState>();

  constructor(ctx: CollectorContext) {
    this.#db = ctx.db;
  }

  async prepare(plan: Plan, _signal?: AbortSignal): Promise<void> {
    // Nothing to check on the server: SHOW GLOBAL STATUS needs no privilege and exists
    // everywhere. Listed names the server lacks are simply never reported.
    const levels = new Map<string, LevelState>();
    for (const [level, dp] of levelPlans(plan, DOMAIN)) {
      levels.set(level, {
        all: option(dp, 'all') === 'yes',
        names: new Set(dp.metrics.map((m) => m.toLowerCase())),
      });
    }
    this.#levels = levels;
  }

  async collect(level: string, signal: AbortSignal): Promise<CollectResult> {
    const state = this.#levels.get(level);
    if (state === undefined || (!state.all && state.names.size === 0)) return { values: [] };
    let rows;
    try {
      rows = await this.#db.query('SHOW GLOBAL STATUS', [], { signal });
    } catch (err) {
      return { values: [], error: queryError(err) };
    }
    return { values: statusValues(rows, state) };
  }
}

/** The registry entry (one line in builtin.ts). */
export const registration: CollectorRegistration = {
  help,
  create: (ctx) => new StatusGlobalCollector(ctx),
};
