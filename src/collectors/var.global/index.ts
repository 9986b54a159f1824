/**
 * var.global — global system variables as gauges (spec domains.md §2.2).
 *
 * Three sources, chosen per level in prepare():
 * - `select`: `SELECT @@GLOBAL.a AS v0, @@GLOBAL.b AS v1, …` — one column per variable
 *   (Recommended over Blip's CONCAT_WS, which shifts values when one is NULL or has commas);
 * - `pfs`: performance_schema.global_variables (MySQL only; MariaDB has no such table);
 * - `show`: `SHOW GLOBAL VARIABLES WHERE variable_name IN (…)`.
 * `all: yes` (without an explicit source) reads every variable with `SHOW GLOBAL VARIABLES`.
 * Names are always reported lowercase; values that are not numbers (sql_mode…) are skipped.
 */
import type {
  CollectResult,
  Collector,
  CollectorContext,
  CollectorHelp,
  CollectorRegistration,
} from '../../core/collector.js';
import type { Db, Row, ServerInfo } from '../../core/db.js';
import { errorMessage } from '../../core/errors.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import type { Plan } from '../../core/plan.js';
import { describeServer } from '../../db/flavor.js';
import { parseValue } from '../../db/values.js';
import { field, levelPlans, option, placeholders, queryError } from '../common.js';

export const DOMAIN = 'var.global';

export type VarSource = 'select' | 'pfs' | 'show';

export const help: CollectorHelp = {
  domain: DOMAIN,
  description: 'Global system variables (numeric ones, as gauges)',
  sources: [
    'SELECT @@GLOBAL.<var> AS v0, … (select)',
    'SELECT variable_name, variable_value FROM performance_schema.global_variables WHERE variable_name IN (…) (pfs)',
    'SHOW GLOBAL VARIABLES WHERE variable_name IN (…) (show)',
    'SHOW GLOBAL VARIABLES (all: yes)',
  ],
  options: [
    {
      name: 'source',
      description: 'Where to read the variables from',
      default: 'auto',
      values: {
        auto: 'Try select, then pfs, then show; the first that works is used',
        select: 'SELECT @@GLOBAL.<var>, one column per variable',
        pfs: 'performance_schema.global_variables (not on MariaDB)',
        show: 'SHOW GLOBAL VARIABLES filtered by name',
      },
    },
    {
      name: 'all',
      description: 'Collect every numeric global variable (ignored when source is set)',
      default: 'no',
      values: {
        yes: 'Every variable from SHOW GLOBAL VARIABLES whose value is a number',
        no: 'Only the variables listed under metrics',
      },
    },
  ],
  errors: [],
  groups: [],
  meta: [],
  metrics: [],
};

/** A variable name safe to put after `@@GLOBAL.` (plans allow `[a-zA-Z0-9_-]`; `-` is not valid SQL). */
const SAFE_NAME = /^[A-Za-z0-9_]+$/;

/** One level's ready-to-run query and how to read it. */
export interface VarQuery {
  source: VarSource | 'all';
  sql: string;
  params: string[];
  /** select: variable names in column order (v0, v1, …), lowercase. */
  names: string[];
}

/** Build the query for a source and a list of variable names (lowercased here). */
export function buildVarQuery(source: VarSource | 'all', metrics: readonly string[]): VarQuery {
  const names = metrics.map((m) => m.toLowerCase());
  switch (source) {
    case 'all':
      return { source, sql: 'SHOW GLOBAL VARIABLES', params: [], names: [] };
    case 'select': {
      const bad = names.find((n) => !SAFE_NAME.test(n));
      // Names are interpolated (variables cannot be bound), so only plain identifiers pass.
      if (bad !== undefined) throw new Error(`invalid variable name for select source: ${bad}`);
      const cols = names.map((n, i) => `@@GLOBAL.${n} AS v${i}`).join(', ');
      return { source, sql: `SELECT ${cols}`, params: [], names };
    }
    case 'pfs':
      return {
        source,
        sql: `SELECT variable_name, variable_value FROM performance_schema.global_variables WHERE variable_name IN (${placeholders(names.length)})`,
        params: names,
        names,
      };
    case 'show':
      return {
        source,
        sql: `SHOW GLOBAL VARIABLES WHERE variable_name IN (${placeholders(names.length)})`,
        params: names,
        names,
      };
  }
}

/** Pure part of collect(): rows of a VarQuery → gauges. */
export function varValues(q: VarQuery, rows: readonly Row[]): MetricValue[] {
  const values: MetricValue[] = [];
  const push = (name: string, text: string | null | undefined) => {
    const value = parseValue(text ?? null);
    if (name !== '' && value !== undefined) values.push({ name, value, type: MetricType.Gauge });
  };
  if (q.source === 'select') {
    const row = rows[0];
    if (row === undefined) return values;
    q.names.forEach((name, i) => push(name, field(row, `v${i}`)));
    return values;
  }
  const [nameCol, valueCol] =
    q.source === 'pfs' ? ['variable_name', 'variable_value'] : ['Variable_name', 'Value'];
  for (const row of rows) push((field(row, nameCol) ?? '').toLowerCase(), field(row, valueCol));
  return values;
}

export class VarGlobalCollector implements Collector {
  readonly domain = DOMAIN;
  readonly #db: Db;
  #levels = new Map<string, VarQuery>();

  constructor(ctx: CollectorContext) {
    this.#db = ctx.db;
  }

  /** Run q once; resolves to undefined on success or the error. */
  async #trial(q: VarQuery, signal: AbortSignal): Promise<unknown> {
    try {
      await this.#db.query(q.sql, q.params, { signal });
      return undefined;
    } catch (err) {
      return err ?? new Error('unknown error');
    }
  }

  async prepare(plan: Plan, signal: AbortSignal): Promise<void> {
    const levels = new Map<string, VarQuery>();
    let info: ServerInfo | undefined;
    const serverInfo = async () => (info ??= await this.#db.serverInfo({ signal }));

    for (const [level, dp] of levelPlans(plan, DOMAIN)) {
      const source = option(dp, 'source');
      const explicit = source !== '' && source !== 'auto';

      // 2) all: yes without an explicit source → every variable.
      if (!explicit && option(dp, 'all') === 'yes') {
        levels.set(level, buildVarQuery('all', []));
        continue;
      }
      if (dp.metrics.length === 0) throw new Error('no metrics specified');

      // 1) explicit source: exactly that one, and it must work now.
      if (explicit) {
        if (source !== 'select' && source !== 'pfs' && source !== 'show')
          throw new Error(`invalid source: ${source}`);
        const q = buildVarQuery(source, dp.metrics);
        const err = await this.#trial(q, signal);
        if (err !== undefined) {
          const si = await serverInfo().catch(() => undefined);
          if (source === 'pfs' && si?.flavor === 'mariadb') {
            throw new Error(
              `source pfs is not supported on ${describeServer(si)}: no performance_schema.global_variables table (${errorMessage(err)})`,
            );
          }
          throw new Error(`source ${source} failed: ${errorMessage(err)}`);
        }
        levels.set(level, q);
        continue;
      }

      // 3) auto: first source whose trial query works. MariaDB has no pfs table: skip it.
      const flavor = (await serverInfo()).flavor;
      const candidates: VarSource[] = flavor === 'mariadb' ? ['select', 'show'] : ['select', 'pfs', 'show'];
      let lastErr: unknown;
      let chosen: VarQuery | undefined;
      for (const candidate of candidates) {
        signal.throwIfAborted();
        let q: VarQuery;
        try {
          q = buildVarQuery(candidate, dp.metrics);
        } catch (err) {
          lastErr = err; // a name select cannot take: try the next source
          continue;
        }
        lastErr = await this.#trial(q, signal);
        if (lastErr === undefined) {
          chosen = q;
          break;
        }
      }
      if (chosen === undefined) throw new Error(`auto source failed, last error: ${errorMessage(lastErr)}`);
      levels.set(level, chosen);
    }
    this.#levels = levels;
  }

  /** The source prepare() chose for a level (for status and tests). */
  sourceFor(level: string): VarQuery['source'] | undefined {
    return this.#levels.get(level)?.source;
  }

  async collect(level: string, signal: AbortSignal): Promise<CollectResult> {
    const q = this.#levels.get(level);
    if (q === undefined) return { values: [] };
    let rows: Row[];
    try {
      rows = await this.#db.query(q.sql, q.params, { signal });
    } catch (err) {
      return { values: [], error: queryError(err) };
    }
    return { values: varValues(q, rows) };
  }
}

export const registration: CollectorRegistration = {
  help,
  create: (ctx) => new VarGlobalCollector(ctx),
};
