/**
 * query.plan — plans of statements running longer than a threshold, without running them:
 * `SHOW EXPLAIN FORMAT=JSON FOR <id>` on MariaDB (10.9 and later; the tabular
 * `SHOW EXPLAIN FOR <id>` before), `EXPLAIN FORMAT=JSON FOR CONNECTION <id>` on MySQL.
 * Both ask the optimizer for the plan the running statement already has: sonde never runs
 * the user's statement, never runs `ANALYZE` of a statement, never runs DML or DDL.
 *
 * The plan goes out with every string obfuscated, its hash (SHA-256 of its shape, see
 * plan.ts) per digest, and a `db.server.query_plan` record the first time a digest's plan is
 * seen and each time its hash changes. The digest is the server's (events_statements_current,
 * when that consumer is on), else sonde's hash of the statement's normalised text.
 */
import type {
  CollectError,
  CollectResult,
  Collector,
  CollectorContext,
  CollectorHelp,
  CollectorRegistration,
} from '../../core/collector.js';
import type { Db, Row, ServerInfo } from '../../core/db.js';
import { errorMessage } from '../../core/errors.js';
import { MetricType } from '../../core/metrics.js';
import type { Plan } from '../../core/plan.js';
import type { AttributeValue, LogRecord } from '../../core/records.js';
import { sqlFingerprint } from '../../sql/obfuscate.js';
import { field, mapLevels, queryError } from '../kit/common.js';
import { sourceFor, unsupportedError } from '../kit/sources.js';
import {
  COMMON_OPTIONS,
  commonSettings,
  dbSystem,
  durationOption,
  intOption,
  limited,
  OWN_CONNECTIONS_SQL,
  pfsUnavailable,
  sqlText,
  type CommonSettings,
  qaQueryError,
} from '../kit/query/shared.js';
import { ownStatement } from '../kit/query/texts.js';
import { obfuscatePlan, parsePlan, planHash, type Json } from './plan.js';

export const DOMAIN = 'query.plan';
export const EVENT = 'db.server.query_plan';

export const help: CollectorHelp = {
  domain: DOMAIN,
  description:
    'Plans of statements running longer than a threshold (SHOW EXPLAIN FOR / EXPLAIN FOR CONNECTION), as db.server.query_plan records when a digest’s plan changes',
  sources: [
    'information_schema.PROCESSLIST',
    'SHOW EXPLAIN FORMAT=JSON FOR <id>',
    'EXPLAIN FORMAT=JSON FOR CONNECTION <id>',
  ],
  options: [
    { name: 'threshold', description: 'Statements running at least this long are explained', default: '1s' },
    {
      name: 'max-per-interval',
      description: 'Statements explained per interval at most (the longest-running first)',
      default: '5',
    },
    ...COMMON_OPTIONS,
  ],
  errors: [],
  groups: [],
  meta: [],
  metrics: [
    { name: 'running', type: MetricType.Gauge, description: 'Statements running at least threshold now' },
    { name: 'explained', type: MetricType.DeltaCounter, description: 'Plans read in the interval' },
    {
      name: 'changes',
      type: MetricType.DeltaCounter,
      description: 'db.server.query_plan records made in the interval (new or changed plans)',
    },
  ],
};

interface PlanLevel extends CommonSettings {
  thresholdMs: number;
  max: number;
}

/** Statements whose plan can be asked for. */
const EXPLAINABLE = /^\s*(\/\*.*?\*\/\s*)*\(?\s*(SELECT|WITH|INSERT|UPDATE|DELETE|REPLACE)\b/is;

export function runningSql(info: ServerInfo, thresholdMs: number, ownByAttribute: boolean): string {
  const time = info.flavor === 'mariadb' ? 'TIME_MS' : 'TIME * 1000';
  const own = ownByAttribute ? ` AND ID NOT IN (${OWN_CONNECTIONS_SQL})` : '';
  return (
    `SELECT ID, USER, DB, ${time} AS MS, INFO FROM information_schema.PROCESSLIST ` +
    `WHERE COMMAND = 'Query' AND INFO IS NOT NULL AND ID <> CONNECTION_ID() AND ${time} >= ${Math.floor(thresholdMs)}${own} ` +
    `ORDER BY MS DESC`
  );
}
for (const flavor of ['mariadb', 'mysql'] as const)
  for (const own of [true, false])
    ownStatement(runningSql({ flavor, version: [0, 0, 0], versionString: '' }, 0, own));
const DIGEST_SQL =
  'SELECT s.DIGEST FROM performance_schema.events_statements_current s JOIN performance_schema.threads t ON t.THREAD_ID = s.THREAD_ID WHERE t.PROCESSLIST_ID = ?';
ownStatement(DIGEST_SQL);

/** The statement asking for a connection's plan. */
export function explainSql(source: string, id: number): string {
  if (source === 'explain-for-connection') return `EXPLAIN FORMAT=JSON FOR CONNECTION ${id}`;
  if (source === 'show-explain') return `SHOW EXPLAIN FOR ${id}`;
  return `SHOW EXPLAIN FORMAT=JSON FOR ${id}`;
}

/** The plan out of the answer: the JSON text of the single column, or the tabular rows. */
export function planOf(rows: readonly Row[], source: string): Json | undefined {
  if (rows.length === 0) return undefined;
  if (source === 'show-explain') return rows.map((r) => ({ ...r }));
  const text = Object.values(rows[0] ?? {})[0];
  return typeof text === 'string' ? parsePlan(text) : undefined;
}

/** Bounded memory of the last plan hash per digest (least recently seen out). */
class PlanHashes {
  readonly #map = new Map<string, string>();
  constructor(readonly capacity: number) {}
  swap(digest: string, hash: string): string | undefined {
    const prev = this.#map.get(digest);
    this.#map.delete(digest);
    this.#map.set(digest, hash);
    if (this.#map.size > this.capacity) {
      const oldest = this.#map.keys().next().value;
      if (oldest !== undefined) this.#map.delete(oldest);
    }
    return prev;
  }
}

export class QueryPlanCollector implements Collector {
  readonly domain = DOMAIN;
  readonly #db: Db;
  #levels = new Map<string, PlanLevel>();
  #info: ServerInfo | undefined;
  #source = 'show-explain-json';
  #pfs = false;
  #unsupported: CollectError | undefined;
  readonly #hashes = new PlanHashes(10_000);

  constructor(ctx: CollectorContext) {
    this.#db = ctx.db;
  }

  async prepare(plan: Plan, signal: AbortSignal): Promise<void> {
    this.#levels = mapLevels(plan, DOMAIN, (dp) => ({
      ...commonSettings(dp),
      thresholdMs: durationOption(dp, 'threshold', '1s', 0),
      max: intOption(dp, 'max-per-interval', 5, 1),
    }));
    if (this.#levels.size === 0) return;
    const info = await this.#db.serverInfo({ signal });
    this.#info = info;
    const choice = sourceFor(DOMAIN, info);
    this.#unsupported =
      'unsupported' in choice ? unsupportedError(DOMAIN, info, choice.unsupported) : undefined;
    if ('source' in choice) this.#source = choice.source;
    // performance_schema gives sonde's own connections and the server's digest; without it
    // the processlist is read alone and the digest is sonde's.
    this.#pfs = (await pfsUnavailable(this.#db, [], signal, false)) === undefined;
  }

  async collect(level: string, signal: AbortSignal): Promise<CollectResult> {
    const state = this.#levels.get(level);
    const info = this.#info;
    if (state === undefined || info === undefined) return { values: [] };
    if (this.#unsupported !== undefined) return { values: [], error: this.#unsupported };
    let running: Row[];
    try {
      running = await this.#db.query(
        limited(runningSql(info, state.thresholdMs, this.#pfs), info, state.limitMs),
        [],
        {
          signal,
        },
      );
    } catch (err) {
      return {
        values: [],
        error: qaQueryError(err, 'reading information_schema.PROCESSLIST', 'PROCESS ON *.*'),
      };
    }
    const candidates = running.filter((r) => EXPLAINABLE.test(field(r, 'INFO') ?? '')).slice(0, state.max);
    const records: LogRecord[] = [];
    let explained = 0;
    const errors: string[] = [];
    for (const r of candidates) {
      const rec = await this.#explain(r, info, state, signal).catch((err: unknown) => {
        errors.push(errorMessage(err));
        return undefined;
      });
      if (rec === undefined) continue;
      explained++;
      if (rec !== 'same') records.push(rec);
    }
    const values = [
      { name: 'running', value: running.length, type: MetricType.Gauge },
      { name: 'explained', value: explained, type: MetricType.DeltaCounter },
      { name: 'changes', value: records.length, type: MetricType.DeltaCounter },
    ];
    const out: CollectResult = { values, ...(records.length > 0 ? { records } : {}) };
    // A statement that ended before its plan was asked for is no error; a refusal is.
    const refused = errors.find((e) => /denied|privilege/i.test(e));
    if (refused !== undefined && explained === 0)
      out.error = queryError(new Error(`${refused} (grant PROCESS ON *.* to sonde's user)`));
    return out;
  }

  /** The record of one running statement's plan, 'same' when its digest's plan is unchanged. */
  async #explain(
    r: Row,
    info: ServerInfo,
    state: PlanLevel,
    signal: AbortSignal,
  ): Promise<LogRecord | 'same' | undefined> {
    const id = Number(field(r, 'ID'));
    if (!Number.isSafeInteger(id)) return undefined;
    const info_ = field(r, 'INFO') ?? '';
    let rows: Row[];
    try {
      rows = await this.#db.query(limited(explainSql(this.#source, id), info, state.limitMs), [], { signal });
    } catch (err) {
      if (/denied|privilege/i.test(errorMessage(err))) throw err;
      return undefined; // the statement ended, or cannot be explained now
    }
    const plan = planOf(rows, this.#source);
    if (plan === undefined) return undefined;
    const digest = (await this.#serverDigest(id, info, state, signal)) ?? `sonde:${sqlFingerprint(info_)}`;
    const hash = planHash(plan);
    const previous = this.#hashes.swap(digest, hash);
    if (previous === hash) return 'same';
    const a: Record<string, AttributeValue> = {
      'db.system.name': dbSystem(info),
      'mysql.query_plan': JSON.stringify(obfuscatePlan(plan, state.raw)),
      'mysql.query_plan.hash': hash,
      'mysql.query_plan.source': DOMAIN,
      'mysql.events_statements_current.digest': digest,
      'mysql.session.id': id,
    };
    const text = sqlText(info_, state.raw);
    if (text !== undefined) a['db.query.text'] = text;
    const db = field(r, 'DB');
    if (db !== null && db !== undefined) a['db.namespace'] = db;
    const user = field(r, 'USER');
    if (user !== null && user !== undefined) a['user.name'] = user;
    if (previous !== undefined) a['mysql.query_plan.previous_hash'] = previous;
    return {
      event: EVENT,
      time: Date.now(),
      severity: previous === undefined ? 'info' : 'warn',
      attributes: a,
    };
  }

  async #serverDigest(
    id: number,
    info: ServerInfo,
    state: PlanLevel,
    signal: AbortSignal,
  ): Promise<string | undefined> {
    if (!this.#pfs) return undefined;
    try {
      const rows = await this.#db.query(limited(DIGEST_SQL, info, state.limitMs), [id], { signal });
      return field(rows[0] ?? {}, 'DIGEST') ?? undefined;
    } catch {
      return undefined;
    }
  }
}

export const registration: CollectorRegistration = {
  help,
  create: (ctx) => new QueryPlanCollector(ctx),
};
