/**
 * stmt.schema — statement counters summed per schema, as metrics (Blip's domain of the
 * same name): the digest summary's counters (performance_schema.events_statements_summary_by_digest)
 * added up by SCHEMA_NAME, from the same read as query.top when both collect in one run.
 *
 * Values are cumulative counters (timers in picoseconds), group `db` = the schema. Rows
 * without a schema or a digest (the catch-all row of a full table included) are left out.
 * `include` (comma-separated schemas) wins over `exclude` (default: the system schemas).
 */
import type {
  CollectResult,
  Collector,
  CollectorContext,
  CollectorHelp,
  CollectorRegistration,
} from '../../core/collector.js';
import type { CollectError } from '../../core/collector.js';
import type { Db, ServerInfo } from '../../core/db.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import type { DomainPlan, Plan } from '../../core/plan.js';
import { mapLevels } from '../kit/common.js';
import { unsupportedError } from '../kit/sources.js';
import { DIGEST_COUNTERS, readDigests, type DigestRead } from '../kit/query/digests.js';
import { durationOption, pfsUnavailable, qaQueryError, TIME_LIMIT_OPTION } from '../kit/query/shared.js';

export const DOMAIN = 'stmt.schema';

const METRIC_NAMES = DIGEST_COUNTERS.map((c) => c.toLowerCase());
const DEFAULT_METRICS = ['count_star', 'sum_timer_wait', 'sum_errors', 'sum_rows_examined', 'sum_rows_sent'];
const DEFAULT_EXCLUDE = 'mysql,information_schema,performance_schema,sys';

export const help: CollectorHelp = {
  domain: DOMAIN,
  description:
    'Statement counters summed per schema (performance_schema.events_statements_summary_by_digest)',
  sources: ['performance_schema.events_statements_summary_by_digest'],
  options: [
    { name: 'include', description: 'Comma-separated schemas to report; wins over exclude', default: '' },
    { name: 'exclude', description: 'Comma-separated schemas not to report', default: DEFAULT_EXCLUDE },
    TIME_LIMIT_OPTION,
  ],
  errors: [],
  groups: [{ key: 'db', description: 'The statement schema (SCHEMA_NAME)' }],
  meta: [],
  metrics: METRIC_NAMES.map((name) => ({
    name,
    type: MetricType.CumulativeCounter,
    description: `Sum of ${name.toUpperCase()} over the schema's digests${name.includes('timer') || name.includes('lock_time') ? ' (picoseconds)' : ''}`,
  })),
};

interface SchemaLevel {
  /** Column indexes of the metrics to report, in plan order. */
  metrics: number[];
  include: Set<string> | undefined;
  exclude: Set<string>;
  limitMs: number;
  /** The digest read this level used last (a shared read is used once per level). */
  used?: Promise<DigestRead>;
}

const list = (text: string): Set<string> =>
  new Set(
    text
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
  );

/** Validate one level. */
export function schemaLevel(dp: DomainPlan): SchemaLevel {
  const names = dp.metrics.length === 0 ? DEFAULT_METRICS : dp.metrics.map((m) => m.toLowerCase());
  const metrics: number[] = [];
  for (const n of names) {
    const i = METRIC_NAMES.indexOf(n);
    if (i < 0) throw new Error(`invalid metric: ${n} (stmt.schema has: ${METRIC_NAMES.join(', ')})`);
    if (!metrics.includes(i)) metrics.push(i);
  }
  const include = (dp.options['include'] ?? '').trim();
  return {
    metrics,
    include: include === '' ? undefined : list(include),
    exclude: list(dp.options['exclude'] ?? DEFAULT_EXCLUDE),
    limitMs: durationOption(dp, 'statement-time-limit', '2s', 1),
  };
}

/** Pure part: the read → per-schema sums. */
export function schemaValues(read: DigestRead, level: SchemaLevel): MetricValue[] {
  const sums = new Map<string, bigint[]>();
  for (const r of read.rows) {
    if (r.schema === null || r.digest === null) continue;
    if (level.include !== undefined ? !level.include.has(r.schema) : level.exclude.has(r.schema)) continue;
    const s = sums.get(r.schema) ?? DIGEST_COUNTERS.map(() => 0n);
    r.counters.forEach((c, i) => (s[i] = (s[i] ?? 0n) + c));
    sums.set(r.schema, s);
  }
  const values: MetricValue[] = [];
  for (const [db, s] of [...sums].sort(([a], [b]) => (a < b ? -1 : 1)))
    for (const i of level.metrics)
      values.push({
        name: METRIC_NAMES[i] ?? '',
        value: Number(s[i] ?? 0n),
        type: MetricType.CumulativeCounter,
        group: { db },
      });
  return values;
}

export class StmtSchemaCollector implements Collector {
  readonly domain = DOMAIN;
  readonly #db: Db;
  #levels = new Map<string, SchemaLevel>();
  #info: ServerInfo | undefined;
  #unsupported: CollectError | undefined;

  constructor(ctx: CollectorContext) {
    this.#db = ctx.db;
  }

  async prepare(plan: Plan, signal: AbortSignal): Promise<void> {
    this.#levels = mapLevels(plan, DOMAIN, schemaLevel);
    this.#unsupported = undefined;
    if (this.#levels.size === 0) return;
    this.#info = await this.#db.serverInfo({ signal });
    const reason = await pfsUnavailable(this.#db, ['statements_digest'], signal, false);
    if (reason !== undefined) this.#unsupported = unsupportedError(DOMAIN, this.#info, reason);
  }

  async collect(level: string, signal: AbortSignal): Promise<CollectResult> {
    const state = this.#levels.get(level);
    if (state === undefined || this.#info === undefined) return { values: [] };
    if (this.#unsupported !== undefined) return { values: [], error: this.#unsupported };
    try {
      const pending = readDigests(this.#db, this.#info, state.limitMs, signal, state.used);
      state.used = pending;
      const read = await pending;
      return { values: schemaValues(read, state) };
    } catch (err) {
      return {
        values: [],
        error: qaQueryError(err, 'reading the digest summary', 'SELECT ON performance_schema.*'),
      };
    }
  }
}

export const registration: CollectorRegistration = {
  help,
  create: (ctx) => new StmtSchemaCollector(ctx),
};
