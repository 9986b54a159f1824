/**
 * Which source each metric domain reads on which server (spec domains.md §1.1, §1.2;
 * style.md habit 6): one explicit table, keyed by domain, flavor and version.
 *
 * Blip only compares version numbers, so MariaDB 10.11 looks newer than every MySQL 8 and
 * is sent MySQL-8 queries. Here every rule names its flavor first (Percona Server reports
 * a MySQL version and is the `mysql` flavor), then an optional version range.
 *
 * A rule gives either a `source` or `unsupported` with the reason (§0.7). A source is a
 * short key that the domain maps to its SQL; a comma-separated key lists sources to try in
 * order (`have_ssl,tls_channel_status`: read `@@have_ssl`, fall back to the P_S table when
 * the variable is unknown). Runtime conditions that no version number can tell (MariaDB's
 * performance_schema switched off, a plugin not loaded) are checked by the domain itself.
 *
 * Unknown versions (`@@version` not `x.y.z…`, version [0,0,0]) match only rules without a
 * version range, or ranged rules marked `unknown: true` — the tolerant choice for domains
 * that can fall back at run time.
 */
import { CollectError } from '../core/collector.js';
import type { Flavor, ServerInfo } from '../core/db.js';
import { describeServer, versionAtLeast } from '../db/flavor.js';

/** One row of the table. The first row of a domain that matches the server wins. */
export interface SourceRule {
  flavor: Flavor;
  /** Inclusive lower bound `x.y.z`. */
  min?: string;
  /** Exclusive upper bound `x.y.z`. */
  below?: string;
  /** With a range: the rule also applies when the server version is unknown. */
  unknown?: boolean;
  /** The source key, or several tried in order, comma-separated. */
  source?: string;
  /** Why the domain cannot work there (the `<reason>` of §0.7). */
  unsupported?: string;
}

/** What sourceFor() answers: a source key, or why the domain cannot work. */
export type SourceChoice = { source: string } | { unsupported: string };

const both = (source: string): SourceRule[] => [
  { flavor: 'mysql', source },
  { flavor: 'mariadb', source },
];

const ERROR_TABLES_REASON = {
  mysql: 'the performance_schema error summary tables exist only in MySQL 8.0 and later',
  mariadb: 'MariaDB has no performance_schema error summary tables (events_errors_summary_*)',
};

const errorDomain = (table: string): SourceRule[] => [
  { flavor: 'mysql', min: '8.0.0', unknown: true, source: table },
  { flavor: 'mysql', unsupported: ERROR_TABLES_REASON.mysql },
  { flavor: 'mariadb', unsupported: ERROR_TABLES_REASON.mariadb },
];

/**
 * The table. Source keys per domain:
 * - status.global `show-global-status`; size.binlog `show-binary-logs` (MySQL ≥ 8.0.14 adds
 *   an `Encrypted` column: read File_size by name); size.database / size.table `tables`,
 *   autoinc `columns` (information_schema); trx `innodb_trx`; innodb.buffer-pool
 *   `innodb_buffer_pool_stats`; aws.rds `cloudwatch`.
 * - var.global: the `auto` try order of `select`, `pfs`, `show` (no P_S global_variables on
 *   MariaDB, nor before MySQL 5.7.6).
 * - innodb: `innodb_metrics:status` (MySQL, STATUS='enabled') / `innodb_metrics:enabled`
 *   (MariaDB, ENABLED=1) — the column `all: enabled` filters on.
 * - repl: `show-replica-status` (Replica_* / Source_Host columns) or `show-slave-status`
 *   (MariaDB keeps Slave_* / Master_Host columns whatever the statement).
 * - repl.lag: the `auto` writer order, `pfs` (P_S replication tables) then `blip` (heartbeat).
 * - tls: `have_ssl` (`SELECT @@have_ssl`) and/or `tls_channel_status` (P_S, MySQL 8.0.21+;
 *   the only one on MySQL 8.4+, which removed have_ssl).
 * - query.response-time `events_statements_histogram_global`; percona.response-time
 *   `query_response_time` (plugin must be loaded); stmt.current `events_statements_current`
 *   (MariaDB: performance_schema and the consumer must be on); wait.io.table
 *   `table_io_waits_summary_by_table` (MariaDB: performance_schema must be on); error.* their
 *   `events_errors_summary_*` table.
 *
 * query.response-time and percona.response-time keep their named error policies
 * (`table-not-exist`, `unknown-table`) for a missing table, so the plan can silence it;
 * their `unsupported` rows say why, for docs and for callers that want to know up front.
 */
export const SOURCE_TABLE: Readonly<Record<string, readonly SourceRule[]>> = {
  'status.global': both('show-global-status'),
  'var.global': [
    { flavor: 'mysql', min: '5.7.6', unknown: true, source: 'select,pfs,show' },
    { flavor: 'mysql', source: 'select,show' },
    { flavor: 'mariadb', source: 'select,show' },
  ],
  innodb: [
    { flavor: 'mysql', source: 'innodb_metrics:status' },
    { flavor: 'mariadb', source: 'innodb_metrics:enabled' },
  ],
  'innodb.buffer-pool': both('innodb_buffer_pool_stats'),
  repl: [
    { flavor: 'mysql', min: '8.0.22', source: 'show-replica-status' },
    // Unknown MySQL version: SHOW SLAVE STATUS, as Blip does (it works up to 8.3).
    { flavor: 'mysql', source: 'show-slave-status' },
    { flavor: 'mariadb', source: 'show-slave-status' },
  ],
  'repl.lag': [
    { flavor: 'mysql', min: '8.0.0', unknown: true, source: 'pfs,blip' },
    // 5.7 lacks the LAST_APPLIED_TRANSACTION_* columns, MariaDB the P_S replication tables.
    { flavor: 'mysql', source: 'blip' },
    { flavor: 'mariadb', source: 'blip' },
  ],
  'size.binlog': both('show-binary-logs'),
  'size.database': both('tables'),
  'size.table': both('tables'),
  autoinc: both('columns'),
  trx: both('innodb_trx'),
  tls: [
    { flavor: 'mysql', min: '8.4.0', source: 'tls_channel_status' },
    { flavor: 'mysql', min: '8.0.21', unknown: true, source: 'have_ssl,tls_channel_status' },
    { flavor: 'mysql', source: 'have_ssl' },
    { flavor: 'mariadb', source: 'have_ssl' },
  ],
  'query.response-time': [
    { flavor: 'mysql', min: '8.0.1', unknown: true, source: 'events_statements_histogram_global' },
    {
      flavor: 'mysql',
      unsupported:
        'performance_schema.events_statements_histogram_global exists only in MySQL 8.0.1 and later',
    },
    {
      flavor: 'mariadb',
      unsupported: 'MariaDB has no performance_schema.events_statements_histogram_global',
    },
  ],
  'percona.response-time': [
    {
      flavor: 'mysql',
      min: '8.0.0',
      unsupported:
        'INFORMATION_SCHEMA.QUERY_RESPONSE_TIME (a Percona Server 5.7 plugin) does not exist in 8.0 and later',
    },
    { flavor: 'mysql', source: 'query_response_time' },
    { flavor: 'mariadb', source: 'query_response_time' },
  ],
  'stmt.current': both('events_statements_current'),
  'wait.io.table': both('table_io_waits_summary_by_table'),
  'error.global': errorDomain('events_errors_summary_global_by_error'),
  'error.account': errorDomain('events_errors_summary_by_account_by_error'),
  'error.host': errorDomain('events_errors_summary_by_host_by_error'),
  'error.user': errorDomain('events_errors_summary_by_user_by_error'),
  'error.thread': errorDomain('events_errors_summary_by_thread_by_error'),
  'aws.rds': both('cloudwatch'),
};

/** `8.0.22` → [8, 0, 22]; the table holds only literal triples. */
function triple(text: string): [number, number, number] {
  const parts = text.split('.').map(Number);
  const [a = 0, b = 0, c = 0] = parts;
  return [a, b, c];
}

function versionKnown(info: ServerInfo): boolean {
  return info.version.some((n) => n !== 0);
}

function matches(rule: SourceRule, info: ServerInfo): boolean {
  if (rule.flavor !== info.flavor) return false;
  if (rule.min === undefined && rule.below === undefined) return true;
  if (!versionKnown(info)) return rule.unknown === true;
  if (rule.min !== undefined && !versionAtLeast(info, ...triple(rule.min))) return false;
  if (rule.below !== undefined && versionAtLeast(info, ...triple(rule.below))) return false;
  return true;
}

/**
 * The source a domain reads on this server, or why it cannot work there.
 * Throws for a domain the table does not know (a programming error).
 */
export function sourceFor(domain: string, info: ServerInfo): SourceChoice {
  const rules = SOURCE_TABLE[domain];
  if (rules === undefined) throw new Error(`no source table entry for domain ${domain}`);
  const rule = rules.find((r) => matches(r, info));
  if (rule?.source !== undefined) return { source: rule.source };
  if (rule?.unsupported !== undefined) return { unsupported: rule.unsupported };
  // Every domain has a catch-all row per flavor; reaching this is a table bug.
  throw new Error(`source table for ${domain} has no row for ${describeServer(info)}`);
}

/** The sources of a key in try order: `have_ssl,tls_channel_status` → both, in that order. */
export function sourceList(source: string): string[] {
  return source.split(',').filter((s) => s !== '');
}

/**
 * The §0.7 error for a domain that cannot work on this server:
 * `<domain>: not supported on <flavor> <x.y.z>: <reason>`. The engine reports it once and
 * stops the domain until the plan is activated again.
 */
export function unsupportedError(
  domain: string,
  info: ServerInfo,
  reason: string,
  cause?: unknown,
): CollectError {
  const errno = (cause as { errno?: unknown } | null | undefined)?.errno;
  return new CollectError(`${domain}: not supported on ${describeServer(info)}: ${reason}`, {
    unsupported: true,
    ...(cause === undefined ? {} : { cause }),
    ...(typeof errno === 'number' ? { errno } : {}),
  });
}
