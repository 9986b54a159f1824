/**
 * query.sample — statements slower than a threshold, one `db.server.query_sample` record
 * each, from performance_schema.events_statements_history_long (or, when only that consumer
 * is on, events_statements_history).
 *
 * A bookmark on the end time (TIMER_END, picoseconds since the server started, the same
 * clock for every thread) and the (thread, event id) pairs that ended exactly at the
 * bookmark makes each statement go out once and none be skipped between intervals, as long
 * as the history table does not wrap within an interval. The first read only sets the
 * bookmark; a server restart (its uptime went back, or grew less than the agent's own clock
 * did) starts it again from zero. At most
 * `max-per-digest` samples per digest per hour go out (the others are counted in
 * `capped`). The SQL text and the error message go through the obfuscator; sonde's own
 * statements are left out. Where the server records waits (the events_waits_history_long
 * consumer), the wait the statement spent most time in is named.
 */
import type {
  CollectResult,
  Collector,
  CollectorContext,
  CollectorHelp,
  CollectorRegistration,
} from '../../core/collector.js';
import type { CollectError } from '../../core/collector.js';
import type { Db, Row, ServerInfo } from '../../core/db.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import type { Plan } from '../../core/plan.js';
import type { AttributeValue, LogRecord } from '../../core/records.js';
import { field, mapLevels, option } from '../kit/common.js';
import { unsupportedError } from '../kit/sources.js';
import {
  bigOf,
  COMMON_OPTIONS,
  commonSettings,
  consumerFix,
  dbSystem,
  durationOption,
  ENABLE_CONSUMERS_OPTION,
  intOption,
  limited,
  OWN_THREADS_SQL,
  pfsUnavailable,
  psToSeconds,
  sqlText,
  type CommonSettings,
  qaQueryError,
} from '../kit/query/shared.js';
import { ownStatement } from '../kit/query/texts.js';
import { topWaits, WAITS_CONSUMER } from './waits.js';

export const DOMAIN = 'query.sample';
export const EVENT = 'db.server.query_sample';

export const help: CollectorHelp = {
  domain: DOMAIN,
  description:
    'Statements slower than a threshold, as db.server.query_sample records (performance_schema.events_statements_history_long or _history)',
  sources: [
    'performance_schema.events_statements_history_long',
    'performance_schema.events_statements_history',
  ],
  options: [
    { name: 'threshold', description: 'Statements that ran at least this long are sampled', default: '1s' },
    { name: 'max-per-digest', description: 'Samples per digest per hour at most', default: '10' },
    {
      name: 'max-per-interval',
      description: 'Statements read per interval at most, oldest first (the rest are read the next interval)',
      default: '500',
    },
    ...COMMON_OPTIONS,
    ENABLE_CONSUMERS_OPTION,
  ],
  errors: [],
  groups: [],
  meta: [],
  metrics: [
    {
      name: 'samples',
      type: MetricType.DeltaCounter,
      description: 'db.server.query_sample records made in the interval',
    },
    {
      name: 'capped',
      type: MetricType.DeltaCounter,
      description: 'Slow statements not sent: their digest had max-per-digest samples this hour',
    },
  ],
};

interface SampleLevel extends CommonSettings {
  thresholdPs: bigint;
  perDigest: number;
  perInterval: number;
  enable: boolean;
}

const HISTORY = {
  long: 'events_statements_history_long',
  short: 'events_statements_history',
} as const;

/** The read of slow statements ended after the bookmark (numbers inlined: exact 64-bit). */
export function sampleSql(table: string, after: bigint, thresholdPs: bigint, limit: number): string {
  return (
    'SELECT h.THREAD_ID, h.EVENT_ID, CAST(h.TIMER_END AS CHAR) AS TIMER_END, h.TIMER_WAIT, h.LOCK_TIME, h.SQL_TEXT, h.DIGEST, ' +
    'h.CURRENT_SCHEMA, h.ROWS_EXAMINED, h.ROWS_SENT, h.ROWS_AFFECTED, h.ERRORS, h.MYSQL_ERRNO, h.MESSAGE_TEXT, ' +
    't.PROCESSLIST_USER, t.PROCESSLIST_HOST, t.PROCESSLIST_ID ' +
    `FROM performance_schema.${table} h LEFT JOIN performance_schema.threads t ON t.THREAD_ID = h.THREAD_ID ` +
    `WHERE h.TIMER_END >= ${after} AND h.TIMER_WAIT >= ${thresholdPs} AND h.THREAD_ID NOT IN (${OWN_THREADS_SQL}) ` +
    `ORDER BY h.TIMER_END LIMIT ${limit}`
  );
}
const UPTIME_SQL = ownStatement(
  "SELECT VARIABLE_VALUE AS UPTIME FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'UPTIME'",
);
const maxEndSql = (table: string): string =>
  ownStatement(`SELECT CAST(MAX(TIMER_END) AS CHAR) AS M FROM performance_schema.${table}`);
for (const t of Object.values(HISTORY)) ownStatement(sampleSql(t, 0n, 0n, 1));

/** Per-digest sample counts of the current hour (bounded: cleared each hour). */
class HourlyCap {
  #hour = -1;
  readonly #counts = new Map<string, number>();
  take(digest: string, now: number, max: number): boolean {
    const hour = Math.floor(now / 3_600_000);
    if (hour !== this.#hour) {
      this.#hour = hour;
      this.#counts.clear();
    }
    const n = this.#counts.get(digest) ?? 0;
    if (n >= max) return false;
    this.#counts.set(digest, n + 1);
    return true;
  }
}

/** Seconds the server's uptime may lag the agent's clock between reads before it counts as a restart. */
const RESTART_SLACK_S = 5;

/** The bookmark: the last end time read, and the statements that ended exactly then. */
export class Bookmark {
  at: bigint | undefined;
  #atKeys = new Set<string>();

  /** The rows not sent before, and the bookmark moved past them. */
  take(rows: readonly Row[]): Row[] {
    const out: Row[] = [];
    for (const r of rows) {
      const end = bigOf(field(r, 'TIMER_END'));
      if (end === undefined) continue;
      const key = `${field(r, 'THREAD_ID')}/${field(r, 'EVENT_ID')}`;
      if (this.at !== undefined && (end < this.at || (end === this.at && this.#atKeys.has(key)))) continue;
      if (this.at === undefined || end > this.at) {
        this.at = end;
        this.#atKeys = new Set();
      }
      this.#atKeys.add(key);
      out.push(r);
    }
    return out;
  }

  reset(at: bigint): void {
    this.at = at;
    this.#atKeys = new Set();
  }

  #uptime: number | undefined;
  #seenAtMs = 0;

  /**
   * Whether the server restarted since the last call: its uptime (whole seconds, from the
   * server's clock) went back, or grew more than RESTART_SLACK_S less than the agent's
   * monotonic clock did (a restart slept through, while collections failed). The end times
   * cannot tell: performance_schema's clock starts before the server's uptime does, by up
   * to a second or more on a loaded host, so a statement's end time can pass the uptime
   * plus one second without any restart. An unreadable uptime decides nothing.
   */
  restarted(uptime: number, monoMs: number): boolean {
    if (!Number.isFinite(uptime)) return false;
    const last = this.#uptime;
    const grewS = (monoMs - this.#seenAtMs) / 1000;
    this.#uptime = uptime;
    this.#seenAtMs = monoMs;
    return last !== undefined && (uptime < last || uptime + RESTART_SLACK_S < last + grewS);
  }
}

/** One slow statement as a record. `startMs` is the server start in Unix ms. */
export function sampleRecord(r: Row, info: ServerInfo, startMs: number, raw: boolean): LogRecord {
  const end = bigOf(field(r, 'TIMER_END')) ?? 0n;
  const num = (name: string): number | undefined => {
    const v = bigOf(field(r, name));
    return v === undefined ? undefined : Number(v);
  };
  const a: Record<string, AttributeValue> = { 'db.system.name': dbSystem(info) };
  const set = (k: string, v: AttributeValue | undefined | null): void => {
    if (v !== undefined && v !== null) a[k] = v;
  };
  set('db.namespace', field(r, 'CURRENT_SCHEMA'));
  set('db.query.text', sqlText(field(r, 'SQL_TEXT'), raw));
  set('mysql.events_statements_current.digest', field(r, 'DIGEST'));
  set('mysql.events_statements_current.timer_wait', psToSeconds(bigOf(field(r, 'TIMER_WAIT')) ?? 0n));
  set('mysql.events_statements_current.lock_time', psToSeconds(bigOf(field(r, 'LOCK_TIME')) ?? 0n));
  set('mysql.events_statements_current.rows_examined', num('ROWS_EXAMINED'));
  set('mysql.events_statements_current.rows_sent', num('ROWS_SENT'));
  set('mysql.events_statements_current.rows_affected', num('ROWS_AFFECTED'));
  set('mysql.events_statements_current.errors', num('ERRORS'));
  const errno = num('MYSQL_ERRNO');
  if (errno !== undefined && errno !== 0) set('db.response.status_code', String(errno));
  set('mysql.events_statements_current.message_text', sqlText(field(r, 'MESSAGE_TEXT'), raw));
  set('mysql.threads.thread_id', num('THREAD_ID'));
  set('mysql.session.id', num('PROCESSLIST_ID'));
  set('mysql.event_id', num('EVENT_ID'));
  set('user.name', field(r, 'PROCESSLIST_USER'));
  set('client.address', field(r, 'PROCESSLIST_HOST'));
  return {
    event: EVENT,
    time: Math.round(startMs + Number(end / 1_000_000_000n)),
    severity: 'info',
    attributes: a,
  };
}

export class QuerySampleCollector implements Collector {
  readonly domain = DOMAIN;
  readonly #db: Db;
  #levels = new Map<string, SampleLevel>();
  #info: ServerInfo | undefined;
  #unsupported: CollectError | undefined;
  #table: string = HISTORY.long;
  #waits = false;
  readonly #bookmarks = new Map<string, Bookmark>();
  readonly #cap = new HourlyCap();

  constructor(ctx: CollectorContext) {
    this.#db = ctx.db;
  }

  async prepare(plan: Plan, signal: AbortSignal): Promise<void> {
    this.#levels = mapLevels(plan, DOMAIN, (dp) => ({
      ...commonSettings(dp),
      thresholdPs: BigInt(Math.round(durationOption(dp, 'threshold', '1s', 0) * 1e9)),
      perDigest: intOption(dp, 'max-per-digest', 10, 1),
      perInterval: intOption(dp, 'max-per-interval', 500, 1),
      enable: option(dp, 'enable-consumers') === 'yes',
    }));
    this.#unsupported = undefined;
    this.#bookmarks.clear();
    if (this.#levels.size === 0) return;
    const info = await this.#db.serverInfo({ signal });
    this.#info = info;
    const enable = [...this.#levels.values()].some((l) => l.enable);
    const reason = await this.#pickTable(signal, enable);
    if (reason !== undefined) this.#unsupported = unsupportedError(DOMAIN, info, reason);
    const waits = ['events_waits_current', WAITS_CONSUMER];
    this.#waits = (await pfsUnavailable(this.#db, waits, signal, false)) === undefined;
  }

  /** history_long when its consumer is on (or enabled), else history; why neither can serve. */
  async #pickTable(signal: AbortSignal, enable: boolean): Promise<string | undefined> {
    const pfs = await pfsUnavailable(this.#db, [], signal, false);
    if (pfs !== undefined) return pfs;
    // The history tables fill only while events_statements_current (their parent) is on.
    const needed = ['global_instrumentation', 'thread_instrumentation', 'events_statements_current'];
    if ((await pfsUnavailable(this.#db, [...needed, HISTORY.long], signal, enable)) === undefined) {
      this.#table = HISTORY.long;
      return undefined;
    }
    if ((await pfsUnavailable(this.#db, [...needed, HISTORY.short], signal, false)) === undefined) {
      // history keeps the last statements of each thread only: a busy thread's may be missed.
      this.#table = HISTORY.short;
      return undefined;
    }
    return (await pfsUnavailable(this.#db, needed, signal, false)) ?? consumerFix(HISTORY.long);
  }

  async collect(level: string, signal: AbortSignal): Promise<CollectResult> {
    const state = this.#levels.get(level);
    const info = this.#info;
    if (state === undefined || info === undefined) return { values: [] };
    if (this.#unsupported !== undefined) return { values: [], error: this.#unsupported };
    try {
      return await this.#collect(level, state, info, signal);
    } catch (err) {
      return {
        values: [],
        error: qaQueryError(err, `reading ${this.#table}`, 'SELECT ON performance_schema.*'),
      };
    }
  }

  async #collect(
    level: string,
    state: SampleLevel,
    info: ServerInfo,
    signal: AbortSignal,
  ): Promise<CollectResult> {
    const now = Date.now();
    const q = (sql: string): Promise<Row[]> =>
      this.#db.query(limited(sql, info, state.limitMs), [], { signal });
    const uptime = Number(field((await q(UPTIME_SQL))[0] ?? {}, 'UPTIME'));
    let mark = this.#bookmarks.get(level);
    if (mark === undefined) {
      mark = new Bookmark();
      mark.reset(bigOf(field((await q(maxEndSql(this.#table)))[0] ?? {}, 'M')) ?? 0n);
      mark.restarted(uptime, performance.now());
      this.#bookmarks.set(level, mark);
      return { values: this.#values(0, 0) };
    }
    // The server restarted: its statement clock started again from zero.
    if (mark.restarted(uptime, performance.now())) mark.reset(0n);
    const rows = mark.take(
      await q(sampleSql(this.#table, mark.at ?? 0n, state.thresholdPs, state.perInterval)),
    );
    const startMs = now - uptime * 1000;
    const kept = rows.filter((r) => this.#cap.take(field(r, 'DIGEST') ?? '', now, state.perDigest));
    const records = kept.map((r) => sampleRecord(r, info, startMs, state.raw));
    if (this.#waits && records.length > 0)
      await topWaits(this.#db, info, state.limitMs, kept, records, signal);
    return {
      values: this.#values(records.length, rows.length - kept.length),
      ...(records.length > 0 ? { records } : {}),
    };
  }

  #values(samples: number, capped: number): MetricValue[] {
    return [
      { name: 'samples', value: samples, type: MetricType.DeltaCounter },
      { name: 'capped', value: capped, type: MetricType.DeltaCounter },
    ];
  }
}

export const registration: CollectorRegistration = {
  help,
  create: (ctx) => new QuerySampleCollector(ctx),
};
