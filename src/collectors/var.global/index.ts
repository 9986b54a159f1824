/**
 * var.global — global system variables as gauges.
 *
 * Three sources, chosen per level in prepare() (`auto` tries them in the source table's
 * order for the server):
 * - `select`: `SELECT @@GLOBAL.a AS v0, @@GLOBAL.b AS v1, …` — one column per variable
 *   (Blip's CONCAT_WS shifts values when one is NULL or has commas);
 * - `pfs`: performance_schema.global_variables (MySQL only; MariaDB has no such table);
 * - `show`: `SHOW GLOBAL VARIABLES WHERE variable_name IN (…)`.
 * `all: yes` (without an explicit source) reads every variable with `SHOW GLOBAL VARIABLES`.
 * Names are always reported lowercase; values that are not numbers (sql_mode…) are skipped.
 * For the mysqld_exporter emulation (`exporterReading`), keyword values (`ON`, `off`…) are
 * read as mysqld_exporter reads them and the kept text values are handed back as text.
 */
import type {
  CollectResult,
  Collector,
  CollectorContext,
  CollectorHelp,
  CollectorRegistration,
  ExporterReading,
} from '../../core/collector.js';
import type { Db, Row, ServerInfo } from '../../core/db.js';
import { errorMessage } from '../../core/errors.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import type { Plan } from '../../core/plan.js';
import { describeServer } from '../../db/flavor.js';
import {
  field,
  levelPlans,
  option,
  placeholders,
  queryError,
  VariableReader,
  variableValues,
} from '../kit/common.js';
import { absentReason, sourceFor, sourceList, type SourceChoice } from '../kit/sources.js';

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

/** Rows of any source as `Variable_name`/`Value` rows, the shape SHOW GLOBAL VARIABLES has. */
function varRows(q: VarQuery, rows: readonly Row[]): readonly Row[] {
  if (q.source === 'select') {
    const row = rows[0];
    if (row === undefined) return [];
    return q.names.map((name, i) => ({ Variable_name: name, Value: field(row, `v${i}`) ?? null }));
  }
  if (q.source !== 'pfs') return rows;
  return rows.map((row) => ({
    Variable_name: field(row, 'variable_name') ?? '',
    Value: field(row, 'variable_value') ?? null,
  }));
}

const gauge = (): MetricType => MetricType.Gauge;

/** Pure part of collect(): rows of a VarQuery → gauges. */
export function varValues(q: VarQuery, rows: readonly Row[]): MetricValue[] {
  return variableValues(varRows(q, rows), gauge);
}

const isVarSource = (s: string): s is VarSource => s === 'select' || s === 'pfs' || s === 'show';

/** The server and the source table's choice for it, asked once per prepare. */
interface TableAnswer {
  info: ServerInfo;
  choice: SourceChoice;
}

export class VarGlobalCollector implements Collector {
  readonly domain = DOMAIN;
  readonly #db: Db;
  readonly #exporter: ExporterReading | undefined;
  #levels = new Map<string, VarQuery>();
  /** Each level's row reader (varValues() in one pass; the exporter's reading with the exporter), made on first use. */
  readonly #readers = new Map<string, VariableReader>();

  constructor(ctx: CollectorContext) {
    this.#db = ctx.db;
    this.#exporter = ctx.exporterReading;
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
    let answer: Promise<TableAnswer> | undefined;
    const ask = (): Promise<TableAnswer> =>
      (answer ??= this.#db
        .serverInfo({ signal })
        .then((info) => ({ info, choice: sourceFor(DOMAIN, info) })));

    for (const [level, dp] of levelPlans(plan, DOMAIN)) {
      const source = option(dp, 'source');
      const explicit = source !== '' && source !== 'auto';
      // all: yes without an explicit source → every variable.
      if (!explicit && option(dp, 'all') === 'yes') {
        levels.set(level, buildVarQuery('all', []));
        continue;
      }
      if (dp.metrics.length === 0) throw new Error('no metrics specified');
      const q = explicit
        ? await this.#explicit(source, dp.metrics, ask, signal)
        : await this.#auto(dp.metrics, await ask(), signal);
      levels.set(level, q);
    }
    this.#levels = levels;
    this.#readers.clear();
  }

  /**
   * An explicit source: exactly that one, and it must work now. When it fails where the
   * source table says the server lacks it, the error says so.
   */
  async #explicit(
    source: string,
    metrics: readonly string[],
    ask: () => Promise<TableAnswer>,
    signal: AbortSignal,
  ): Promise<VarQuery> {
    if (!isVarSource(source)) throw new Error(`invalid source: ${source}`);
    const q = buildVarQuery(source, metrics);
    const err = await this.#trial(q, signal);
    if (err === undefined) return q;
    const answer = await ask().catch(() => undefined);
    const absent = answer === undefined ? undefined : absentReason(answer.choice, source);
    if (answer !== undefined && absent !== undefined) {
      throw new Error(
        `source ${source} is not supported on ${describeServer(answer.info)}: ${absent} (${errorMessage(err)})`,
      );
    }
    throw new Error(`source ${source} failed: ${errorMessage(err)}`);
  }

  /** `auto`: the first source, in the source table's order, whose trial query works. */
  async #auto(metrics: readonly string[], answer: TableAnswer, signal: AbortSignal): Promise<VarQuery> {
    const candidates = 'source' in answer.choice ? sourceList(answer.choice.source) : [];
    let lastErr: unknown = new Error(`no source for ${describeServer(answer.info)}`);
    for (const candidate of candidates.filter(isVarSource)) {
      signal.throwIfAborted();
      let q: VarQuery;
      try {
        q = buildVarQuery(candidate, metrics);
      } catch (err) {
        lastErr = err; // a name select cannot take: try the next source
        continue;
      }
      lastErr = await this.#trial(q, signal);
      if (lastErr === undefined) return q;
    }
    throw new Error(`auto source failed, last error: ${errorMessage(lastErr)}`);
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
    let reader = this.#readers.get(level);
    if (reader === undefined) {
      reader = new VariableReader(gauge, this.#exporter?.keepText);
      this.#readers.set(level, reader);
    }
    if (this.#exporter === undefined) return { values: reader.read(varRows(q, rows)) };
    const text: Record<string, string> = {};
    return { values: reader.read(varRows(q, rows), text), text };
  }
}

export const registration: CollectorRegistration = {
  help,
  create: (ctx) => new VarGlobalCollector(ctx),
};
