/**
 * lock.wait — who blocks whom, now: row-lock waits (InnoDB) and metadata-lock waits, one
 * `sonde.lock_wait` record per waiting connection and blocker each interval, naming both
 * connections (an idle blocker, a transaction left open, included: `sonde.lock.blocking.idle`),
 * the wait in seconds, the table and the index; and as metrics, the waits now and the
 * oldest wait's age, per lock type. Statements in records go through the obfuscator;
 * waits of sonde's own connections are left out.
 *
 * Row locks need no performance_schema on MariaDB (information_schema); metadata locks need
 * performance_schema on and the `wait/lock/metadata/sql/mdl` instrument enabled. When they
 * cannot be read, row locks are still reported and the domain's error says what is missing.
 */
import type {
  CollectResult,
  Collector,
  CollectorContext,
  CollectorHelp,
  CollectorRegistration,
} from '../../core/collector.js';
import { CollectError } from '../../core/collector.js';
import type { Db, Row, ServerInfo } from '../../core/db.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import type { Plan } from '../../core/plan.js';
import type { AttributeValue, LogRecord } from '../../core/records.js';
import { field, mapLevels, option } from '../kit/common.js';
import { sourceFor } from '../kit/sources.js';
import {
  COMMON_OPTIONS,
  commonSettings,
  dbSystem,
  ENABLE_CONSUMERS_OPTION,
  limited,
  OWN_CONNECTIONS_SQL,
  pfsUnavailable,
  sqlText,
  type CommonSettings,
  qaQueryError,
} from '../kit/query/shared.js';
import { ownStatement } from '../kit/query/texts.js';
import {
  MDL_ENABLE_SQL,
  MDL_INSTRUMENT,
  MDL_INSTRUMENT_SQL,
  mdlBlocks,
  MDL_PENDING,
  METADATA_LOCKS,
  ROW_LOCKS_IS,
  ROW_LOCKS_PFS,
  ROW_WAITS_IS,
  ROW_WAITS_PFS,
} from './sql.js';

export const DOMAIN = 'lock.wait';
export const EVENT = 'sonde.lock_wait';
const OWN_SQL = ownStatement(OWN_CONNECTIONS_SQL);

export const help: CollectorHelp = {
  domain: DOMAIN,
  description:
    'Lock waits now, row locks and metadata locks, as sonde.lock_wait records naming waiting and blocking connections',
  sources: [
    'information_schema.INNODB_LOCK_WAITS, INNODB_LOCKS, INNODB_TRX',
    'performance_schema.data_lock_waits, data_locks',
    'performance_schema.metadata_locks',
  ],
  options: [...COMMON_OPTIONS, ENABLE_CONSUMERS_OPTION],
  errors: [
    {
      name: 'metadata-locks',
      description:
        'Metadata-lock waits cannot be read (performance_schema off, or the wait/lock/metadata/sql/mdl instrument disabled); row-lock waits are still reported',
    },
  ],
  groups: [{ key: 'type', description: '`row` (InnoDB row locks) or `metadata` (metadata locks)' }],
  meta: [],
  metrics: [
    {
      name: 'waits',
      type: MetricType.Gauge,
      description: 'Connections waiting for a lock now (one per waiter and blocker pair)',
    },
    {
      name: 'oldest_wait_seconds',
      type: MetricType.Gauge,
      description: 'Seconds the longest current wait has lasted (0 when none)',
    },
  ],
};

interface LockLevel extends CommonSettings {
  enable: boolean;
}

/** One wait as a record. */
export function lockRecord(
  r: Row,
  type: 'row' | 'metadata',
  info: ServerInfo,
  raw: boolean,
  time: number,
): LogRecord {
  const a: Record<string, AttributeValue> = { 'db.system.name': dbSystem(info), 'sonde.lock.type': type };
  const num = (name: string): number | undefined => {
    const v = Number(field(r, name) ?? NaN);
    return Number.isFinite(v) ? v : undefined;
  };
  const set = (k: string, v: AttributeValue | null | undefined): void => {
    if (v !== undefined && v !== null) a[k] = v;
  };
  set('sonde.lock.wait_seconds', num('WAIT_S'));
  set('sonde.lock.table', field(r, 'LOCK_TABLE'));
  set('sonde.lock.index', field(r, 'LOCK_INDEX'));
  set('sonde.lock.mode', field(r, 'LOCK_MODE'));
  set('sonde.lock.waiting.session_id', num('WAITING_ID'));
  set('sonde.lock.waiting.user', field(r, 'WAITING_USER'));
  set('sonde.lock.waiting.query_text', sqlText(field(r, 'WAITING_QUERY'), raw));
  set('sonde.lock.blocking.session_id', num('BLOCKING_ID'));
  set('sonde.lock.blocking.user', field(r, 'BLOCKING_USER'));
  set('sonde.lock.blocking.query_text', sqlText(field(r, 'BLOCKING_QUERY'), raw));
  const idle = field(r, 'BLOCKING_COMMAND') === 'Sleep';
  a['sonde.lock.blocking.idle'] = idle;
  if (idle) set('sonde.lock.blocking.idle_seconds', num('BLOCKING_TIME'));
  return { event: EVENT, time, severity: 'warn', attributes: a };
}

/** The metrics of the lock types read (a type that could not be read is missing, not 0). */
function lockValues(rows: Record<'row' | 'metadata', Row[]>, mdlRead: boolean): MetricValue[] {
  const out: MetricValue[] = [];
  for (const type of mdlRead ? (['row', 'metadata'] as const) : (['row'] as const)) {
    const list = rows[type];
    const oldest = list.reduce((m, r) => Math.max(m, Number(field(r, 'WAIT_S') ?? 0) || 0), 0);
    out.push({ name: 'waits', value: list.length, type: MetricType.Gauge, group: { type } });
    out.push({ name: 'oldest_wait_seconds', value: oldest, type: MetricType.Gauge, group: { type } });
  }
  return out;
}

/** True unless the count statement says there is nothing (a count it cannot read: true). */
async function waiting(q: (sql: string) => Promise<Row[]>, countSql: string): Promise<boolean> {
  const n = Number(field((await q(countSql))[0] ?? {}, 'N'));
  return !(n === 0);
}

export class LockWaitCollector implements Collector {
  readonly domain = DOMAIN;
  readonly #db: Db;
  #levels = new Map<string, LockLevel>();
  #info: ServerInfo | undefined;
  #rowSql = ROW_LOCKS_IS;
  #rowCountSql = ROW_WAITS_IS;
  /** Why metadata locks cannot be read; undefined when they can. */
  #mdlMissing: string | undefined;
  #pfs = false;

  constructor(ctx: CollectorContext) {
    this.#db = ctx.db;
  }

  async prepare(plan: Plan, signal: AbortSignal): Promise<void> {
    this.#levels = mapLevels(plan, DOMAIN, (dp) => ({
      ...commonSettings(dp),
      enable: option(dp, 'enable-consumers') === 'yes',
    }));
    if (this.#levels.size === 0) return;
    const info = await this.#db.serverInfo({ signal });
    this.#info = info;
    const choice = sourceFor(DOMAIN, info);
    const pfsRows = 'source' in choice && choice.source.startsWith('data_lock_waits');
    this.#rowSql = pfsRows ? ROW_LOCKS_PFS : ROW_LOCKS_IS;
    this.#rowCountSql = pfsRows ? ROW_WAITS_PFS : ROW_WAITS_IS;
    const pfs = await pfsUnavailable(this.#db, [], signal, false);
    this.#pfs = pfs === undefined;
    this.#mdlMissing =
      pfs ??
      (await this.#mdlInstrument(
        [...this.#levels.values()].some((l) => l.enable),
        signal,
      ));
  }

  async #mdlInstrument(enable: boolean, signal: AbortSignal): Promise<string | undefined> {
    try {
      const rows = await this.#db.query(MDL_INSTRUMENT_SQL, [], { signal });
      if (field(rows[0] ?? {}, 'ENABLED') === 'YES') return undefined;
      if (enable) {
        await this.#db.query(MDL_ENABLE_SQL, [], { signal });
        return undefined;
      }
    } catch {
      return undefined; // collect() reports what the server says
    }
    return (
      `performance_schema instrument ${MDL_INSTRUMENT} disabled (enable it: UPDATE performance_schema.setup_instruments ` +
      `SET ENABLED='YES' WHERE NAME='${MDL_INSTRUMENT}', or start the server with performance-schema-instrument='${MDL_INSTRUMENT}=ON')`
    );
  }

  async collect(level: string, signal: AbortSignal): Promise<CollectResult> {
    const state = this.#levels.get(level);
    const info = this.#info;
    if (state === undefined || info === undefined) return { values: [] };
    const q = (sql: string): Promise<Row[]> =>
      this.#db.query(limited(sql, info, state.limitMs), [], { signal });
    let row: Row[];
    try {
      row = (await waiting(q, this.#rowCountSql)) ? await q(this.#rowSql) : [];
    } catch (err) {
      return { values: [], error: qaQueryError(err, 'reading row-lock waits', 'PROCESS ON *.*') };
    }
    let metadata: Row[] = [];
    let mdlError: CollectError | undefined;
    if (this.#mdlMissing !== undefined) {
      // What is missing does not change until the server's settings do: one lasting line.
      mdlError = new CollectError(`metadata-lock waits not read: ${this.#mdlMissing}`, {
        policy: 'metadata-locks',
        partial: true,
      });
    } else {
      try {
        if (await waiting(q, MDL_PENDING))
          metadata = (await q(METADATA_LOCKS)).filter((r) =>
            mdlBlocks(field(r, 'LOCK_MODE') ?? '', field(r, 'HELD_MODE') ?? ''),
          );
      } catch (err) {
        mdlError = new CollectError(
          `metadata-lock waits not read: reading performance_schema.metadata_locks failed: ${(err as Error).message}`,
          { policy: 'metadata-locks' },
        );
      }
    }
    const own = row.length + metadata.length > 0 ? await this.#own(q) : new Set<string>();
    const mine = (r: Row): boolean => !own.has(field(r, 'WAITING_ID') ?? '');
    const rows = { row: row.filter(mine), metadata: metadata.filter(mine) };
    const time = Date.now();
    const records = [
      ...rows.row.map((r) => lockRecord(r, 'row', info, state.raw, time)),
      ...rows.metadata.map((r) => lockRecord(r, 'metadata', info, state.raw, time)),
    ];
    const out: CollectResult = {
      values: lockValues(rows, mdlError === undefined),
      ...(records.length > 0 ? { records } : {}),
    };
    if (mdlError !== undefined) out.error = mdlError;
    return out;
  }

  /** sonde's own connections (processlist ids as text); empty without performance_schema. */
  async #own(q: (sql: string) => Promise<Row[]>): Promise<Set<string>> {
    if (!this.#pfs) return new Set();
    try {
      return new Set((await q(OWN_SQL)).map((r) => field(r, 'PROCESSLIST_ID') ?? ''));
    } catch {
      return new Set();
    }
  }
}

export const registration: CollectorRegistration = {
  help,
  create: (ctx) => new LockWaitCollector(ctx),
};
