/**
 * What the query analytics domains (query.top, query.sample, query.plan, lock.wait,
 * stmt.schema) share: their common options, the server's statement time limit around each
 * of their statements, SQL text through the obfuscator, how sonde's own connections are
 * recognised, and the availability checks that name the setting, consumer or grant missing.
 */
import { CollectError, type OptionHelp } from '../../../core/collector.js';
import type { Db, Row, ServerInfo } from '../../../core/db.js';
import { errnoOf } from '../../../core/errors.js';
import type { DomainPlan } from '../../../core/plan.js';
import { ER_UNKNOWN_SYSTEM_VARIABLE } from '../../../db/errnos.js';
import { parseDuration } from '../../../util/duration.js';
import { obfuscateSql } from '../../../sql/obfuscate.js';
import { field, queryError } from '../common.js';

/**
 * The connection attribute every sonde connection sends (`program_name=sonde`): the
 * query analytics domains leave out every thread whose connection carries it.
 */
export const SONDE_PROGRAM_NAME = 'sonde';

/** The threads of sonde's own connections, as a subquery of THREAD_IDs. */
export const OWN_THREADS_SQL =
  "SELECT t.THREAD_ID FROM performance_schema.threads t JOIN performance_schema.session_connect_attrs a ON a.PROCESSLIST_ID = t.PROCESSLIST_ID WHERE a.ATTR_NAME = 'program_name' AND a.ATTR_VALUE = 'sonde'";

/** The processlist ids of sonde's own connections, as a subquery. */
export const OWN_CONNECTIONS_SQL =
  "SELECT PROCESSLIST_ID FROM performance_schema.session_connect_attrs WHERE ATTR_NAME = 'program_name' AND ATTR_VALUE = 'sonde'";

/** The `query-text` option: every SQL text through the obfuscator (default) or as the server has it. */
export const QUERY_TEXT_OPTION: OptionHelp = {
  name: 'query-text',
  description:
    'SQL text in records (digest text, samples, plans, processlist text, error messages): literals replaced by ? (obfuscated), or as the server has it (raw, literal values included)',
  default: 'obfuscated',
  values: {
    obfuscated: 'Every literal replaced by ? before the text leaves sonde',
    raw: 'The text as the server has it, literal values included (only where the data may leave)',
  },
};

/** The `statement-time-limit` option: the server-side limit of each statement the domain runs. */
export const TIME_LIMIT_OPTION: OptionHelp = {
  name: 'statement-time-limit',
  description:
    "Server-side time limit of each statement the domain runs (MariaDB max_statement_time, MySQL MAX_EXECUTION_TIME), besides sonde's own deadline",
  default: '2s',
};

/** The options every query analytics domain takes. */
export const COMMON_OPTIONS: readonly OptionHelp[] = [QUERY_TEXT_OPTION, TIME_LIMIT_OPTION];

/** Settings of the common options for one level. */
export interface CommonSettings {
  raw: boolean;
  limitMs: number;
}

/** Read the common options of a level; throws with the option named. */
export function commonSettings(dp: DomainPlan): CommonSettings {
  const text = (dp.options['query-text'] ?? '').trim().toLowerCase() || 'obfuscated';
  if (text !== 'obfuscated' && text !== 'raw')
    throw new Error(`invalid query-text: ${text}: valid values: obfuscated, raw`);
  return { raw: text === 'raw', limitMs: durationOption(dp, 'statement-time-limit', '2s', 1) };
}

/** A duration option in ms (Go syntax), at least `minMs`; throws naming the option. */
export function durationOption(dp: DomainPlan, name: string, def: string, minMs: number): number {
  const text = (dp.options[name] ?? '').trim() || def;
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch (err) {
    throw new Error(`invalid ${name}: ${(err as Error).message}`);
  }
  if (ms < minMs) throw new Error(`invalid ${name}: ${text}: must be at least ${minMs}ms`);
  return ms;
}

/** A whole-number option, at least `min`; throws naming the option. */
export function intOption(dp: DomainPlan, name: string, def: number, min: number): number {
  const text = (dp.options[name] ?? '').trim();
  if (text === '') return def;
  if (!/^\d+$/.test(text) || Number(text) < min)
    throw new Error(`invalid ${name}: ${text}: want a whole number of at least ${min}`);
  return Number(text);
}

/** SQL text as it may leave sonde: obfuscated unless the level asked for raw text. */
export function sqlText(text: string | null | undefined, raw: boolean): string | undefined {
  if (text === null || text === undefined) return undefined;
  return raw ? text : obfuscateSql(text);
}

/**
 * `sql` under the server's statement time limit: `SET STATEMENT max_statement_time=<s> FOR`
 * on MariaDB, the `MAX_EXECUTION_TIME(<ms>)` optimizer hint after the leading SELECT on
 * MySQL (which limits SELECT only: other statements run under sonde's deadline alone).
 */
export function limited(sql: string, info: ServerInfo, ms: number): string {
  if (info.flavor === 'mariadb')
    return `SET STATEMENT max_statement_time=${(ms / 1000).toFixed(3)} FOR ${sql}`;
  if (/^SELECT\s/i.test(sql))
    return `SELECT /*+ MAX_EXECUTION_TIME(${Math.max(1, Math.round(ms))}) */ ${sql.slice(7)}`;
  return sql;
}

/** Server errors of a missing privilege: table access, database access, a global privilege. */
const DENIED = new Set([1142, 1044, 1227, 1143]);

/**
 * A query failure as collection data; a missing privilege names the grant that fixes it
 * (`… (grant SELECT ON performance_schema.* TO the monitor's user)`).
 */
export function qaQueryError(err: unknown, what: string, grant: string): CollectError {
  const errno = errnoOf(err);
  const base = queryError(err, { what });
  if (errno === undefined || !DENIED.has(errno)) return base;
  return new CollectError(`${base.message} (grant ${grant} TO the monitor's user)`, { cause: err, errno });
}

/** `db.system.name` of the server. */
export function dbSystem(info: ServerInfo): string {
  return info.flavor;
}

/** Picoseconds (text, up to 2^64) as a BigInt; undefined when not a whole number. */
export function bigOf(text: string | null | undefined): bigint | undefined {
  if (text === null || text === undefined || !/^\d+$/.test(text.trim())) return undefined;
  return BigInt(text.trim());
}

/** Picoseconds → seconds. */
export function psToSeconds(ps: bigint | number): number {
  return Number(ps) / 1e12;
}

/** The availability checks' statements (sonde's own; see query/texts.ts). */
export const PFS_ON_SQL = 'SELECT @@performance_schema AS pfs';
export const CONSUMERS_SQL_HEAD =
  'SELECT NAME, ENABLED FROM performance_schema.setup_consumers WHERE NAME IN ';

/** A consumer (or instrument) state a domain depends on. */
export interface Needed {
  /** setup_consumers NAME. */
  consumers: readonly string[];
}

/** The text of a missing consumer, with both fixes. */
export function consumerFix(name: string): string {
  return (
    `performance_schema consumer ${name} disabled (enable it: ` +
    `UPDATE performance_schema.setup_consumers SET ENABLED='YES' WHERE NAME='${name}', ` +
    `or start the server with performance-schema-consumer-${name.replaceAll('_', '-')}=ON)`
  );
}

/**
 * Why performance_schema cannot serve the domain, or undefined when it can (or when the
 * checks themselves fail: then collect() runs and reports what the server says).
 */
export async function pfsUnavailable(
  db: Db,
  consumers: readonly string[],
  signal: AbortSignal,
  enable: boolean,
): Promise<string | undefined> {
  let rows: Row[];
  try {
    rows = await db.query(PFS_ON_SQL, [], { signal });
  } catch (err) {
    if (errnoOf(err) === ER_UNKNOWN_SYSTEM_VARIABLE)
      return 'the server has no performance_schema (built without it)';
    return undefined;
  }
  const on = field(rows[0] ?? {}, 'pfs');
  if (on === '0' || on?.toUpperCase() === 'OFF')
    return 'performance_schema is disabled (set performance_schema=ON in my.cnf and restart the server)';
  if (consumers.length === 0) return undefined;
  return consumersOff(db, consumers, signal, enable);
}

async function consumersOff(
  db: Db,
  consumers: readonly string[],
  signal: AbortSignal,
  enable: boolean,
): Promise<string | undefined> {
  let rows: Row[];
  try {
    rows = await db.query(`${CONSUMERS_SQL_HEAD}(${consumers.map(() => '?').join(', ')})`, consumers, {
      signal,
    });
  } catch {
    return undefined; // e.g. no SELECT on performance_schema: collect() reports the real error
  }
  const off = rows.filter((r) => field(r, 'ENABLED') !== 'YES').map((r) => field(r, 'NAME') ?? '');
  if (off.length === 0) return undefined;
  if (enable) {
    try {
      await db.query(
        `UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME IN (${off.map(() => '?').join(', ')})`,
        off,
        { signal },
      );
      return undefined;
    } catch (err) {
      return `${consumerFix(off[0] ?? '')}; enable-consumers could not enable it: ${(err as Error).message}`;
    }
  }
  return consumerFix(off[0] ?? '');
}

/** The `enable-consumers` option: sonde enables the consumers the domain needs (changes server settings). */
export const ENABLE_CONSUMERS_OPTION: OptionHelp = {
  name: 'enable-consumers',
  description:
    'When a performance_schema consumer the domain needs is off, enable it (UPDATE performance_schema.setup_consumers; needs UPDATE on performance_schema.setup_consumers; changes the server until its restart)',
  default: 'no',
  values: { yes: 'Enable the needed consumers', no: 'Report the missing consumer and its fix' },
};

/** Canonical form of a statement text for comparing sonde's own statements with DIGEST_TEXT. */
export function canonicalSql(text: string): string {
  return text
    .replace(/\/\*.*?\*\//gs, '')
    .replace(/\b\d+(\.\d+)?\b/g, '?')
    .replace(/[`\s]/g, '')
    .replace(/\((\?,?)+\)/g, '(...)')
    .toLowerCase();
}
