/**
 * repl.lag — replication lag in milliseconds.
 *
 * Two sources ("writers"):
 * - `blip`: the heartbeat table. A background HeartbeatReader (src/heartbeat/reader.ts)
 *   reads the source's replicated heartbeat row just after each heartbeat is due; collect()
 *   reports its latest lag as `current` with meta `source` = the followed src_id.
 * - `pfs`: MySQL 8.0+ Performance Schema replication tables; `current`, `backlog` and
 *   `worker_usage` per channel (group `channel`).
 * `auto` (default) picks pfs when its query runs, else blip. The source table decides first:
 * MariaDB and MySQL 5.7 lack the tables/columns, so auto means blip there without a trial
 * query.
 *
 * sonde choices over Blip: options must be identical on every
 * level that collects the domain and apply on all of them; repl-check is applied by the
 * heartbeat reader; network-latency accepts integer milliseconds and durations; NULLs,
 * `ANONYMOUS` and tagged GTIDs in the pfs rows never crash; a channel whose workers never
 * applied anything reports nothing instead of "now" as lag; the coordinator table is
 * LEFT JOINed so single-threaded replicas (replica_parallel_workers=0) still report.
 */
import type {
  CollectError,
  CollectResult,
  Collector,
  CollectorContext,
  CollectorHelp,
  CollectorRegistration,
} from '../../core/collector.js';
import type { Db, Row } from '../../core/db.js';
import { errorMessage } from '../../core/errors.js';
import type { Events } from '../../core/events.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import type { Plan } from '../../core/plan.js';
import type { StatusWriter } from '../../core/status.js';
import { parseValue } from '../../db/values.js';
import { DEFAULT_NETWORK_LATENCY_MS, HeartbeatReader, REPL_CHECK_NAME } from '../../heartbeat/reader.js';
import { DEFAULT_HEARTBEAT_TABLE } from '../../heartbeat/table.js';
import { parseDuration } from '../../util/duration.js';
import { isYes } from '../../util/text.js';
import { field, levelPlans, queryError } from '../kit/common.js';
import { absentReason, sourceFor, unsupportedError } from '../kit/sources.js';

export const DOMAIN = 'repl.lag';

const yesNo = (yes: string, no: string) => ({ yes, no });

export const help: CollectorHelp = {
  domain: DOMAIN,
  description: 'Replication lag in milliseconds, from the heartbeat table or Performance Schema',
  sources: [
    'heartbeat table (default blip.heartbeat) written by the source, read by a background reader',
    'performance_schema.replication_connection_status, replication_applier_status(_by_coordinator, _by_worker) (MySQL 8.0+)',
  ],
  options: [
    {
      name: 'writer',
      description: 'Where lag comes from',
      default: 'auto',
      values: {
        auto: 'pfs when its Performance Schema query runs (MySQL 8.0+), else blip',
        blip: 'Heartbeat table written by the heartbeat writer (heartbeat.freq) on the source',
        pfs: 'Performance Schema replication tables (MySQL 8.0+)',
      },
    },
    {
      name: 'table',
      description: 'Heartbeat table (blip writer): db.table, or table in database blip',
      default: DEFAULT_HEARTBEAT_TABLE,
    },
    {
      name: 'source-id',
      description: 'Follow the heartbeat row with this src_id (blip writer; wins over source-role)',
      default: '',
    },
    {
      name: 'source-role',
      description: 'Follow the most recent heartbeat row with this src_role (blip writer)',
      default: '',
    },
    {
      name: 'repl-check',
      description:
        'Global variable (without @@) whose value 0 means this server is not a replica, e.g. server_id',
      default: '',
    },
    {
      name: 'report-no-heartbeat',
      description: 'Report current = -1 when there is no heartbeat (blip writer)',
      default: 'no',
      values: yesNo(
        'Report current = -1 when there is no heartbeat',
        'Drop the metric when there is no heartbeat',
      ),
    },
    {
      name: 'report-not-a-replica',
      description: 'Report current = -1 when repl-check says this server is not a replica',
      default: 'no',
      values: yesNo('Report current = -1 when not a replica', 'Drop the metric when not a replica'),
    },
    {
      name: 'default-channel-name',
      description: 'Channel name reported for the default channel "" (pfs writer)',
      default: '',
    },
    {
      name: 'network-latency',
      description:
        'Network latency between source and replica subtracted from on-time heartbeats (blip writer): integer milliseconds or a duration such as 50ms',
      default: String(DEFAULT_NETWORK_LATENCY_MS),
    },
  ],
  errors: [],
  groups: [{ key: 'channel', description: 'Replication channel (pfs writer)' }],
  meta: [
    { key: 'source', description: 'src_id of the heartbeat row the lag was computed from (blip writer)' },
  ],
  metrics: [
    {
      name: 'current',
      type: MetricType.Gauge,
      description: 'Replication lag in milliseconds (-1 = no heartbeat or not a replica, when reported)',
    },
    {
      name: 'backlog',
      type: MetricType.Gauge,
      description: 'Transactions received but not yet applied (pfs writer, GTID numbers)',
    },
    {
      name: 'worker_usage',
      type: MetricType.Gauge,
      description: 'Percent (0-100) of applier workers busy (pfs writer)',
    },
  ],
};

export type LagWriter = 'auto' | 'blip' | 'pfs';
const WRITERS: readonly LagWriter[] = ['auto', 'blip', 'pfs'];

/** The domain's options, parsed. */
export interface LagOptions {
  writer: LagWriter;
  table: string;
  sourceId: string;
  sourceRole: string;
  replCheck: string;
  reportNoHeartbeat: boolean;
  reportNotAReplica: boolean;
  defaultChannelName: string;
  networkLatencyMs: number;
}

/** Blip's boolean options: true, yes, enable, enabled (any case). */
/**
 * `network-latency`: integer milliseconds (`50`, what Blip parses) or a duration (`50ms`,
 * what Blip's docs show); empty → 50. Anything else is an error rather than a silent 50.
 */
export function parseNetworkLatency(value: string | undefined): number {
  const v = (value ?? '').trim();
  if (v === '') return DEFAULT_NETWORK_LATENCY_MS;
  if (/^\d+$/.test(v)) return Number(v);
  let ms: number;
  try {
    ms = parseDuration(v);
  } catch (err) {
    throw new Error(
      `invalid network-latency: "${v}": ${errorMessage(err)}; use milliseconds (50) or a duration (50ms)`,
      {
        cause: err,
      },
    );
  }
  if (ms < 0) throw new Error(`invalid network-latency: "${v}": must not be negative`);
  return ms;
}

/** Parse one level's options; throws on an invalid writer or network-latency. */
export function parseLagOptions(options: Record<string, string>): LagOptions {
  const raw = (options['writer'] ?? '').trim().toLowerCase();
  const writer = (raw === '' ? 'auto' : raw) as LagWriter;
  if (!WRITERS.includes(writer)) {
    throw new Error(`invalid lag writer: "${options['writer'] ?? ''}"; valid values: auto, pfs, blip`);
  }
  const replCheck = (options['repl-check'] ?? '').trim();
  if (replCheck !== '' && !REPL_CHECK_NAME.test(replCheck)) {
    throw new Error(`invalid repl-check variable name: "${replCheck}"`);
  }
  return {
    writer,
    table: (options['table'] ?? '').trim() || DEFAULT_HEARTBEAT_TABLE,
    sourceId: options['source-id'] ?? '',
    sourceRole: options['source-role'] ?? '',
    replCheck,
    reportNoHeartbeat: isYes(options['report-no-heartbeat'] ?? ''),
    reportNotAReplica: isYes(options['report-not-a-replica'] ?? ''),
    defaultChannelName: options['default-channel-name'] ?? '',
    networkLatencyMs: parseNetworkLatency(options['network-latency']),
  };
}

/**
 * Every level that collects repl.lag must configure it identically (one collector, one
 * reader, one writer choice). The first difference is an error; `writer` keeps Blip's text.
 */
export function checkSameOptions(levels: readonly [string, Record<string, string>][]): void {
  const first = levels[0];
  if (first === undefined) return;
  for (const [, opts] of levels.slice(1)) {
    const keys = new Set([...Object.keys(first[1]), ...Object.keys(opts)]);
    for (const key of ['writer', ...[...keys].filter((k) => k !== 'writer').sort()]) {
      const a = first[1][key] ?? '';
      const b = opts[key] ?? '';
      if (a !== b) throw new Error(`different ${key} configuration: ${a} != ${b}`);
    }
  }
}

/**
 * The pfs query: one row per applier worker. As Blip's query, except that the
 * coordinator is LEFT JOINed and the SQL thread state falls back to
 * replication_applier_status: a single-threaded replica has no coordinator row.
 */
export const PFS_SQL = `SELECT r.CHANNEL_NAME, r.LAST_QUEUED_TRANSACTION, r.SERVICE_STATE AS io_thd,
  COALESCE(c.SERVICE_STATE, a.SERVICE_STATE) AS sql_thd,
  c.LAST_PROCESSED_TRANSACTION, w.WORKER_ID, w.LAST_APPLIED_TRANSACTION,
  UNIX_TIMESTAMP(NOW(6)) AS \`now\`,
  UNIX_TIMESTAMP(w.LAST_APPLIED_TRANSACTION_IMMEDIATE_COMMIT_TIMESTAMP) AS last_applied_ts,
  COALESCE(TIMESTAMPDIFF(MICROSECOND, w.LAST_APPLIED_TRANSACTION_IMMEDIATE_COMMIT_TIMESTAMP, w.LAST_APPLIED_TRANSACTION_END_APPLY_TIMESTAMP), 0) AS last_applied_lag,
  UNIX_TIMESTAMP(w.APPLYING_TRANSACTION_IMMEDIATE_COMMIT_TIMESTAMP) AS applying_ts
FROM performance_schema.replication_connection_status r
  JOIN performance_schema.replication_applier_status a ON a.CHANNEL_NAME = r.CHANNEL_NAME
  LEFT JOIN performance_schema.replication_applier_status_by_coordinator c ON c.CHANNEL_NAME = r.CHANNEL_NAME
  JOIN performance_schema.replication_applier_status_by_worker w ON w.CHANNEL_NAME = r.CHANNEL_NAME`;

/**
 * Transaction number of a GTID: the integer after the last `:` (`uuid:42` → 42, tagged
 * `uuid:tag:42` → 42). Empty, `ANONYMOUS`, NULL or anything non-numeric → 0.
 */
export function trxNo(gtid: string | null | undefined): number {
  if (gtid === null || gtid === undefined) return 0;
  const i = gtid.lastIndexOf(':');
  if (i < 0) return 0;
  const tail = gtid.slice(i + 1).trim();
  return /^\d+$/.test(tail) ? Number(tail) : 0;
}

/**
 * `UNIX_TIMESTAMP(...)` text (`1700000000.123456`) → integer microseconds, exact (no float
 * rounding). NULL or unparsable → 0 (a NULL timestamp means "nothing there").
 */
export function micros(text: string | null | undefined): number {
  if (text === null || text === undefined) return 0;
  const m = /^(-?)(\d+)(?:\.(\d*))?$/.exec(text.trim());
  if (m === null) return 0;
  const us = Number(m[2]) * 1_000_000 + Number(((m[3] ?? '') + '000000').slice(0, 6));
  return m[1] === '-' ? -us : us;
}

/** An integer column (microseconds of last_applied_lag); NULL or text → 0. */
function intOf(text: string | null | undefined): number {
  const v = parseValue(text);
  return v === undefined ? 0 : v;
}

/**
 * Pure part of the pfs writer: worker rows → `current`, `backlog`, `worker_usage` per channel.
 * `lastQueued` remembers LAST_QUEUED_TRANSACTION per channel between
 * collections and is updated here.
 */
export function pfsLagValues(
  rows: readonly Row[],
  lastQueued: Map<string, string>,
  defaultChannelName: string,
): MetricValue[] {
  const channels = new Map<string, Row[]>();
  for (const row of rows) {
    const ch = field(row, 'CHANNEL_NAME') ?? '';
    let list = channels.get(ch);
    if (list === undefined) channels.set(ch, (list = []));
    list.push(row);
  }
  const values: MetricValue[] = [];
  for (const [channel, workers] of channels) {
    const first = workers[0];
    if (first === undefined) continue;
    const queued = field(first, 'LAST_QUEUED_TRANSACTION') ?? '';
    const io = field(first, 'io_thd') ?? '';
    const sql = field(first, 'sql_thd') ?? '';
    const now = micros(field(first, 'now'));

    let applying = 0;
    let oldest = Infinity;
    // The worker that applied the highest transaction number; ties (no GTIDs: ANONYMOUS)
    // go to the most recently committed one.
    let best: { no: number; ts: number; lag: number } | undefined;
    for (const w of workers) {
      const applyingTs = micros(field(w, 'applying_ts'));
      if (applyingTs > 0) {
        applying++;
        oldest = Math.min(oldest, applyingTs);
      }
      const no = trxNo(field(w, 'LAST_APPLIED_TRANSACTION'));
      const ts = micros(field(w, 'last_applied_ts'));
      if (best === undefined || no > best.no || (no === best.no && ts > best.ts)) {
        best = { no, ts, lag: intOf(field(w, 'last_applied_lag')) };
      }
    }
    if (best === undefined) continue;

    const previous = lastQueued.get(channel) ?? '';
    lastQueued.set(channel, queued);
    let current: number;
    if (applying > 0) {
      current = Math.floor((now - oldest) / 1000); // oldest transaction being applied
    } else if (queued !== previous) {
      current = Math.floor(best.lag / 1000); // new work arrived and was applied: its apply lag
    } else if (io !== 'ON' || sql !== 'ON') {
      // A stopped thread: time since the last applied transaction was committed on the source.
      // Nothing ever applied (timestamp 0) would make that "now"; report nothing instead.
      if (best.ts <= 0) continue;
      current = Math.floor((now - best.ts) / 1000);
    } else {
      current = 0; // both threads run and nothing is queued or applying: caught up
    }
    const group = { channel: channel === '' ? defaultChannelName : channel };
    values.push(
      { name: 'current', value: current, type: MetricType.Gauge, group: { ...group } },
      { name: 'backlog', value: trxNo(queued) - best.no, type: MetricType.Gauge, group: { ...group } },
      {
        name: 'worker_usage',
        value: (applying / workers.length) * 100,
        type: MetricType.Gauge,
        group: { ...group },
      },
    );
  }
  return values;
}

/** −1 for "no heartbeat" / "not a replica" when the options say to report it. */
function minusOne(): MetricValue[] {
  return [{ name: 'current', value: -1, type: MetricType.Gauge }];
}

export class ReplLagCollector implements Collector {
  readonly domain = DOMAIN;
  readonly #db: Db;
  readonly #monitorId: string;
  readonly #status: StatusWriter | undefined;
  readonly #events: Events | undefined;
  #levels = new Set<string>();
  #opts: LagOptions | undefined;
  /** The writer in use after prepare: auto resolved. */
  #writer: 'blip' | 'pfs' | undefined;
  #reader: HeartbeatReader | undefined;
  /** Set when the configured writer cannot work on this server. */
  #unsupported: CollectError | undefined;
  readonly #lastQueued = new Map<string, string>();

  constructor(ctx: CollectorContext) {
    this.#db = ctx.db;
    this.#monitorId = ctx.monitorId;
    this.#status = ctx.status;
    this.#events = ctx.events;
  }

  /** The writer chosen in prepare ('blip' or 'pfs'). */
  get writer(): 'blip' | 'pfs' | undefined {
    return this.#writer;
  }

  /** The running heartbeat reader (blip writer). */
  get reader(): HeartbeatReader | undefined {
    return this.#reader;
  }

  async prepare(plan: Plan, signal: AbortSignal): Promise<void> {
    await this.close(); // a second prepare replaces the first
    this.#opts = undefined;
    this.#writer = undefined;
    this.#unsupported = undefined;
    const levels = [...levelPlans(plan, DOMAIN)];
    this.#levels = new Set(levels.map(([name]) => name));
    const first = levels[0];
    if (first === undefined) return;
    checkSameOptions(levels.map(([name, dp]) => [name, dp.options]));
    const opts = parseLagOptions(first[1].options);
    this.#opts = opts;

    if (opts.replCheck !== '') {
      let found: Row[];
      try {
        found = await this.#db.query('SHOW GLOBAL VARIABLES LIKE ?', [opts.replCheck], { signal });
      } catch (err) {
        throw new Error(
          `failed to verify replication check variable ${opts.replCheck}: ${errorMessage(err)}`,
          {
            cause: err,
          },
        );
      }
      if (found.length === 0) {
        throw new Error(
          `failed to verify replication check variable ${opts.replCheck}: no such global variable`,
        );
      }
    }

    const writer = opts.writer === 'blip' ? 'blip' : await this.#pfsWriter(opts.writer, signal);
    this.#writer = writer;

    if (writer === 'blip') {
      const reader = new HeartbeatReader({
        monitorId: this.#monitorId,
        db: this.#db,
        table: opts.table,
        sourceId: opts.sourceId,
        sourceRole: opts.sourceRole,
        replCheck: opts.replCheck,
        networkLatencyMs: opts.networkLatencyMs,
        ...(this.#status !== undefined ? { status: this.#status } : {}),
        ...(this.#events !== undefined ? { events: this.#events } : {}),
      });
      this.#reader = reader;
      reader.start();
    }
  }

  /**
   * Writer `auto` or `pfs`: the source table says whether this server has the pfs tables
   * (`auto` then tries the query and falls back to blip); an explicit `pfs` where they
   * cannot exist makes the domain "not supported".
   */
  async #pfsWriter(writer: 'auto' | 'pfs', signal: AbortSignal): Promise<'blip' | 'pfs'> {
    const info = await this.#db.serverInfo({ signal });
    const absent = absentReason(sourceFor(DOMAIN, info), 'pfs');
    if (writer === 'auto') return absent === undefined && (await this.#pfsRuns(signal)) ? 'pfs' : 'blip';
    if (absent !== undefined) {
      this.#unsupported = unsupportedError(DOMAIN, info, `writer pfs: ${absent}`);
      return 'pfs';
    }
    try {
      await this.#db.query(PFS_SQL, [], { signal });
    } catch (err) {
      throw new Error(`writer pfs: Performance Schema query failed: ${errorMessage(err)}`, { cause: err });
    }
    return 'pfs';
  }

  async #pfsRuns(signal: AbortSignal): Promise<boolean> {
    try {
      await this.#db.query(PFS_SQL, [], { signal });
      return true;
    } catch {
      signal.throwIfAborted();
      return false;
    }
  }

  async collect(level: string, signal: AbortSignal): Promise<CollectResult> {
    const opts = this.#opts;
    if (!this.#levels.has(level) || opts === undefined) return { values: [] };
    if (this.#unsupported !== undefined) {
      return { values: [], error: this.#unsupported };
    }
    if (this.#writer === 'pfs') return this.#collectPfs(opts, signal);

    const cur = this.#reader?.current();
    if (cur === undefined) return { values: [] };
    if (!cur.replica) return { values: opts.reportNotAReplica ? minusOne() : [] };
    if (cur.lag < 0) return { values: opts.reportNoHeartbeat ? minusOne() : [] };
    return {
      values: [{ name: 'current', value: cur.lag, type: MetricType.Gauge, meta: { source: cur.source } }],
    };
  }

  async #collectPfs(opts: LagOptions, signal: AbortSignal): Promise<CollectResult> {
    try {
      if (opts.replCheck !== '') {
        const [row] = await this.#db.query(`SELECT @@${opts.replCheck} AS v`, [], { signal });
        if (parseValue(row?.['v']) === 0) return { values: opts.reportNotAReplica ? minusOne() : [] };
      }
      const rows = await this.#db.query(PFS_SQL, [], { signal });
      return { values: pfsLagValues(rows, this.#lastQueued, opts.defaultChannelName) };
    } catch (err) {
      return { values: [], error: queryError(err) };
    }
  }

  /** Stop the heartbeat reader (plan replaced or monitor stopped). */
  async close(): Promise<void> {
    const reader = this.#reader;
    this.#reader = undefined;
    await reader?.stop();
  }
}

export const registration: CollectorRegistration = {
  help,
  create: (ctx) => new ReplLagCollector(ctx),
};
