/**
 * query.top — the statements that cost the most, per interval, as records.
 *
 * Each interval one counters-only read of performance_schema.events_statements_summary_by_digest
 * (shared with stmt.schema, see query/digests.ts) gives per schema and digest the delta of
 * every counter since the previous read. The `limit` digests with the most statement time
 * become one `db.server.top_query` record each; the rest are summed into one more record
 * (digest `other`), so the records of an interval add up to what the server counted.
 * DIGEST_TEXT is read only for digests not seen before (a cache bounded by the table's
 * size, performance_schema_digests_size) and goes through the obfuscator. Digests sonde
 * runs itself are left out. An interval without statements sends no record.
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
import type { Plan } from '../../core/plan.js';
import type { AttributeValue, LogRecord } from '../../core/records.js';
import { mapLevels, option } from '../kit/common.js';
import { unsupportedError } from '../kit/sources.js';
import {
  DIGEST_COUNTERS,
  DigestTracker,
  readDigests,
  type DigestDelta,
  type DigestRead,
} from '../kit/query/digests.js';
import {
  COMMON_OPTIONS,
  ENABLE_CONSUMERS_OPTION,
  commonSettings,
  dbSystem,
  intOption,
  pfsUnavailable,
  psToSeconds,
  type CommonSettings,
  qaQueryError,
} from '../kit/query/shared.js';
import { DigestTexts } from '../kit/query/texts.js';

export const DOMAIN = 'query.top';
export const EVENT = 'db.server.top_query';
const PREFIX = 'mysql.events_statements_summary_by_digest.';

export const help: CollectorHelp = {
  domain: DOMAIN,
  description:
    'Top statements by total time per interval, as db.server.top_query records (performance_schema.events_statements_summary_by_digest)',
  sources: ['performance_schema.events_statements_summary_by_digest'],
  options: [
    {
      name: 'limit',
      description: 'Digests sent as records of their own per interval; the rest are summed into one record',
      default: '50',
    },
    ...COMMON_OPTIONS,
    ENABLE_CONSUMERS_OPTION,
  ],
  errors: [],
  groups: [],
  meta: [],
  metrics: [
    {
      name: 'calls',
      type: MetricType.DeltaCounter,
      description: 'Statements the server counted in the interval (every digest, sonde’s own left out)',
    },
    {
      name: 'records',
      type: MetricType.DeltaCounter,
      description: 'db.server.top_query records made in the interval',
    },
    { name: 'digests', type: MetricType.Gauge, description: 'Rows in the digest summary table' },
    {
      name: 'lost_calls',
      type: MetricType.DeltaCounter,
      description:
        'Statements counted in the catch-all row (no digest): the table is full (raise performance_schema_digests_size)',
    },
  ],
};

/** Attribute name of each counter (the OpenTelemetry receiver's where it has one). */
export const COUNTER_ATTRIBUTES: Readonly<Record<(typeof DIGEST_COUNTERS)[number], string>> = {
  COUNT_STAR: `${PREFIX}count_star`,
  SUM_TIMER_WAIT: `${PREFIX}sum_timer_wait`,
  SUM_LOCK_TIME: `${PREFIX}sum_lock_time`,
  SUM_ERRORS: `${PREFIX}sum_errors`,
  SUM_WARNINGS: `${PREFIX}sum_warnings`,
  SUM_ROWS_AFFECTED: `${PREFIX}sum_rows_affected`,
  SUM_ROWS_SENT: `${PREFIX}returned_rows`,
  SUM_ROWS_EXAMINED: `${PREFIX}examined_rows`,
  SUM_CREATED_TMP_DISK_TABLES: `${PREFIX}sum_created_tmp_disk_tables`,
  SUM_CREATED_TMP_TABLES: `${PREFIX}sum_created_tmp_tables`,
  SUM_SORT_ROWS: `${PREFIX}sum_sort_rows`,
  SUM_SELECT_SCAN: `${PREFIX}sum_select_scan`,
  SUM_SELECT_FULL_JOIN: `${PREFIX}sum_select_full_join`,
  SUM_NO_INDEX_USED: `${PREFIX}sum_no_index_used`,
  SUM_NO_GOOD_INDEX_USED: `${PREFIX}sum_no_good_index_used`,
};
/** Counters in picoseconds, sent in seconds (double). */
const TIMERS = new Set(['SUM_TIMER_WAIT', 'SUM_LOCK_TIME']);

interface TopLevel extends CommonSettings {
  limit: number;
  enable: boolean;
  tracker: DigestTracker;
  /** The digest read this level used last (a shared read is used once per level). */
  used?: Promise<DigestRead>;
}

/** The attributes of one delta's counters. */
function counterAttributes(counters: readonly bigint[]): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  DIGEST_COUNTERS.forEach((c, i) => {
    const v = counters[i] ?? 0n;
    out[COUNTER_ATTRIBUTES[c]] = TIMERS.has(c) ? psToSeconds(v) : Number(v);
  });
  return out;
}

/** One delta as a record; `text` is the digest's (obfuscated) text when known. */
export function topRecord(
  d: DigestDelta,
  info: ServerInfo,
  time: number,
  total: bigint,
  text: string | undefined,
): LogRecord {
  const time_ = d.counters[1] ?? 0n;
  const attributes: Record<string, AttributeValue> = {
    'db.system.name': dbSystem(info),
    ...(d.schema !== null ? { 'db.namespace': d.schema } : {}),
    ...(text !== undefined ? { 'db.query.text': text } : {}),
    [`${PREFIX}digest`]: d.digest ?? 'other',
    ...counterAttributes(d.counters),
    ...(d.max !== undefined ? { [`${PREFIX}max_timer_wait`]: psToSeconds(d.max) } : {}),
    'sonde.query.time_share': total > 0n ? Number((time_ * 1_000_000n) / total) / 1_000_000 : 0,
  };
  return { event: EVENT, time, severity: 'info', attributes };
}

/** Sum of deltas (the `other` record). */
function sumOf(list: readonly DigestDelta[]): DigestDelta {
  const counters = DIGEST_COUNTERS.map((_c, i) => list.reduce((n, d) => n + (d.counters[i] ?? 0n), 0n));
  return { schema: null, digest: null, counters };
}

/**
 * The interval's records: the `limit` digests with the most time, then one `other` record
 * with the rest (also the catch-all row of statements without a digest).
 */
export function topRecords(
  deltas: readonly DigestDelta[],
  limit: number,
  info: ServerInfo,
  time: number,
  textOf: (digest: string) => string | undefined,
): LogRecord[] {
  const sorted = [...deltas].sort((a, b) => {
    const x = b.counters[1] ?? 0n;
    const y = a.counters[1] ?? 0n;
    return x > y ? 1 : x < y ? -1 : 0;
  });
  const total = sorted.reduce((n, d) => n + (d.counters[1] ?? 0n), 0n);
  const named = sorted.filter((d) => d.digest !== null).slice(0, limit);
  const rest = sorted.filter((d) => !named.includes(d));
  const records = named.map((d) => topRecord(d, info, time, total, textOf(d.digest ?? '')));
  if (rest.length > 0) {
    const other = topRecord(sumOf(rest), info, time, total, undefined);
    other.attributes['sonde.query.digests'] = rest.length;
    records.push(other);
  }
  return records;
}

export class QueryTopCollector implements Collector {
  readonly domain = DOMAIN;
  readonly #db: Db;
  #levels = new Map<string, TopLevel>();
  #info: ServerInfo | undefined;
  #unsupported: CollectError | undefined;
  #texts: DigestTexts | undefined;

  constructor(ctx: CollectorContext) {
    this.#db = ctx.db;
  }

  async prepare(plan: Plan, signal: AbortSignal): Promise<void> {
    this.#levels = mapLevels(plan, DOMAIN, (dp) => ({
      ...commonSettings(dp),
      limit: intOption(dp, 'limit', 50, 1),
      enable: option(dp, 'enable-consumers') === 'yes',
      tracker: new DigestTracker(),
    }));
    this.#unsupported = undefined;
    if (this.#levels.size === 0) return;
    const info = await this.#db.serverInfo({ signal });
    this.#info = info;
    const enable = [...this.#levels.values()].some((l) => l.enable);
    const reason = await pfsUnavailable(this.#db, ['statements_digest'], signal, enable);
    if (reason !== undefined) this.#unsupported = unsupportedError(DOMAIN, info, reason);
    this.#texts = await DigestTexts.create(this.#db, info, signal);
  }

  async collect(level: string, signal: AbortSignal): Promise<CollectResult> {
    const state = this.#levels.get(level);
    const info = this.#info;
    const texts = this.#texts;
    if (state === undefined || info === undefined || texts === undefined) return { values: [] };
    if (this.#unsupported !== undefined) return { values: [], error: this.#unsupported };
    const time = Date.now();
    let deltas: DigestDelta[];
    let rows: number;
    try {
      const pending = readDigests(this.#db, info, state.limitMs, signal, state.used);
      state.used = pending;
      const read = await pending;
      rows = read.rows.length;
      deltas = state.tracker.update(read);
      await texts.learn(deltas, state, signal);
    } catch (err) {
      return {
        values: [],
        error: qaQueryError(err, 'reading the digest summary', 'SELECT ON performance_schema.*'),
      };
    }
    const mine = deltas.filter((d) => d.digest === null || !texts.own(d.digest));
    const records = topRecords(mine, state.limit, info, time, (d) => texts.text(d, state.raw));
    const lost = mine.filter((d) => d.digest === null).reduce((n, d) => n + (d.counters[0] ?? 0n), 0n);
    const calls = mine.reduce((n, d) => n + (d.counters[0] ?? 0n), 0n);
    const values: MetricValue[] = [
      { name: 'calls', value: Number(calls), type: MetricType.DeltaCounter },
      { name: 'records', value: records.length, type: MetricType.DeltaCounter },
      { name: 'digests', value: rows, type: MetricType.Gauge },
      { name: 'lost_calls', value: Number(lost), type: MetricType.DeltaCounter },
    ];
    return { values, ...(records.length > 0 ? { records } : {}) };
  }
}

export const registration: CollectorRegistration = {
  help,
  create: (ctx) => new QueryTopCollector(ctx),
};
