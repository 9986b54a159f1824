/**
 * Which source each metric domain reads on which server: one explicit table, keyed by
 * domain, flavor and version. It is the only place that compares flavors or versions;
 * collectors ask sourceFor() (usually through prepareSource()) and map the key they get to
 * their SQL. docs/domains.md shows the table, generated from SOURCE_TABLE.
 *
 * Comparing version numbers alone is not enough: MariaDB 10.11 is numerically newer than
 * every MySQL 8 yet has none of its performance_schema tables. So every rule names its
 * flavor first (Percona Server reports a MySQL version and is the `mysql` flavor), then an
 * optional version range.
 *
 * A rule gives either a `source` or `unsupported` with the reason; the domain then reports
 * `<domain>: not supported on <flavor> <x.y.z>: <reason>` instead of failing every interval.
 * A source is a short key the domain maps to its SQL; a comma-separated key lists sources
 * to try in order (`have_ssl,tls_channel_status`: read `@@have_ssl`, fall back to the P_S
 * table when the variable is unknown). Runtime conditions that no version number can tell
 * (performance_schema switched off, a plugin not loaded) are checked by the domain itself,
 * within the sources the table gave.
 *
 * Unknown versions (`@@version` not `x.y.z…`, version [0,0,0]) match only rules without a
 * version range, or ranged rules marked `unknown: true` — the tolerant choice for domains
 * that can fall back at run time.
 */
import { CollectError } from '../../core/collector.js';
import type { Db, Flavor, ServerInfo } from '../../core/db.js';
import { errnoOf } from '../../core/errors.js';
import { describeServer, versionAtLeast } from '../../db/flavor.js';
import { EXPORTER_SOURCES } from './exporter-sources.js';
import type { SourceRule } from './source-rule.js';

export type { SourceRule };

/** What sourceFor() answers: a source key (with its notes), or why the domain cannot work. */
export type SourceChoice =
  { source: string; absent?: Readonly<Record<string, string>>; hint?: string } | { unsupported: string };

/** The name under which the truncate of a performance_schema table is in the table. */
export const TRUNCATE_STEP = 'truncate';

const both = (source: string): SourceRule[] => [
  { flavor: 'mysql', source },
  { flavor: 'mariadb', source },
];

const errorDomain = (table: string): SourceRule[] => [
  { flavor: 'mysql', min: '8.0.0', unknown: true, source: table },
  {
    flavor: 'mysql',
    unsupported: 'the performance_schema error summary tables exist only in MySQL 8.0 and later',
  },
  {
    flavor: 'mariadb',
    unsupported: 'MariaDB has no performance_schema error summary tables (MySQL 8.0+ only)',
  },
];

const NO_PFS_GLOBAL_VARIABLES = 'no performance_schema.global_variables table';
const NO_PFS_REPLICATION = 'no performance_schema replication_connection_status table; use writer blip';

/**
 * The table. Source keys per domain:
 * - status.global `show-global-status`; size.binlog `show-binary-logs` (its column count
 *   varies, so File_size is read by name); size.database / size.table `tables`, autoinc
 *   `columns` (information_schema); trx `innodb_trx`; innodb.buffer-pool
 *   `innodb_buffer_pool_stats`.
 * - var.global: the `auto` try order of `select`, `pfs`, `show`.
 * - innodb: `innodb_metrics:status` (MySQL, STATUS='enabled') / `innodb_metrics:enabled`
 *   (MariaDB, ENABLED=1) — the column `all: enabled` filters on.
 * - repl: `show-replica-status` (Replica_* / Source_Host columns) or `show-slave-status`
 *   (MariaDB keeps Slave_* / Master_Host columns whatever the statement).
 * - repl.lag: the `auto` writer order, `pfs` (P_S replication tables) then `blip` (heartbeat).
 * - tls: `have_ssl` (`SELECT @@have_ssl`) and/or `tls_channel_status` (P_S, MySQL 8.0.21+;
 *   the only one on MySQL 8.4+, which removed have_ssl).
 * - query.response-time `events_statements_histogram_global`; percona.response-time
 *   `query_response_time` (the plugin must be loaded); stmt.current
 *   `events_statements_current` (performance_schema and the consumer must be on);
 *   wait.io.table `table_io_waits_summary_by_table` (performance_schema must be on); query.top
 *   and stmt.schema `events_statements_summary_by_digest` (performance_schema must be on); error.*
 *   their `events_errors_summary_*` table.
 * - aws.rds `cloudwatch`: it asks CloudWatch, never the server, so flavor and version do not
 *   matter.
 * - truncate (a step, not a domain: query.response-time, wait.io.table and error.* empty
 *   their P_S table with it): `truncate`, or `set-statement-truncate` where the server can
 *   scope lock_wait_timeout to one statement (MariaDB's `SET STATEMENT … FOR`).
 */
export const SOURCE_TABLE: Readonly<Record<string, readonly SourceRule[]>> = {
  'status.global': both('show-global-status'),
  'var.global': [
    { flavor: 'mysql', min: '5.7.6', unknown: true, source: 'select,pfs,show' },
    {
      flavor: 'mysql',
      source: 'select,show',
      absent: { pfs: 'performance_schema.global_variables exists only in MySQL 5.7.6 and later' },
    },
    { flavor: 'mariadb', source: 'select,show', absent: { pfs: NO_PFS_GLOBAL_VARIABLES } },
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
    {
      flavor: 'mysql',
      source: 'blip',
      absent: {
        pfs: 'performance_schema lacks the LAST_APPLIED_TRANSACTION columns before 8.0; use writer blip',
      },
    },
    { flavor: 'mariadb', source: 'blip', absent: { pfs: NO_PFS_REPLICATION } },
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
      unsupported: 'MariaDB has no performance_schema.events_statements_histogram_global (MySQL 8.0.1+ only)',
    },
  ],
  'percona.response-time': [
    {
      flavor: 'mysql',
      min: '8.0.0',
      unsupported: 'MySQL 8.0 and later have no QUERY_RESPONSE_TIME plugin',
    },
    { flavor: 'mysql', source: 'query_response_time', hint: 'no QUERY_RESPONSE_TIME plugin loaded' },
    {
      flavor: 'mariadb',
      source: 'query_response_time',
      hint: "plugin query_response_time not loaded (INSTALL SONAME 'query_response_time')",
    },
  ],
  'stmt.current': both('events_statements_current'),
  'stmt.schema': both('events_statements_summary_by_digest'),
  'query.top': both('events_statements_summary_by_digest'),
  'query.sample': both('events_statements_history_long,events_statements_history'),
  'lock.wait': [
    { flavor: 'mysql', min: '8.0.1', unknown: true, source: 'data_lock_waits,metadata_locks' },
    { flavor: 'mysql', source: 'innodb_lock_waits,metadata_locks' },
    { flavor: 'mariadb', source: 'innodb_lock_waits,metadata_locks' },
  ],
  'query.plan': [
    { flavor: 'mysql', min: '5.7.0', unknown: true, source: 'explain-for-connection' },
    { flavor: 'mysql', unsupported: 'EXPLAIN FOR CONNECTION exists only in MySQL 5.7 and later' },
    { flavor: 'mariadb', min: '10.9.0', unknown: true, source: 'show-explain-json' },
    { flavor: 'mariadb', source: 'show-explain' },
  ],
  'wait.io.table': both('table_io_waits_summary_by_table'),
  'error.global': errorDomain('events_errors_summary_global_by_error'),
  'error.account': errorDomain('events_errors_summary_by_account_by_error'),
  'error.host': errorDomain('events_errors_summary_by_host_by_error'),
  'error.user': errorDomain('events_errors_summary_by_user_by_error'),
  'error.thread': errorDomain('events_errors_summary_by_thread_by_error'),
  'aws.rds': both('cloudwatch'),
  ...EXPORTER_SOURCES,
  [TRUNCATE_STEP]: [
    { flavor: 'mysql', source: 'truncate' },
    { flavor: 'mariadb', source: 'set-statement-truncate' },
  ],
};

/** Table rows that are no domain: steps several domains share, with what they are. */
export const SOURCE_STEPS: Readonly<Record<string, string>> = {
  [TRUNCATE_STEP]:
    'how query.response-time, wait.io.table and error.* empty their performance_schema table after reading it',
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

function rulesOf(
  domain: string,
  table: Readonly<Record<string, readonly SourceRule[]>>,
): readonly SourceRule[] {
  const rules = table[domain];
  if (rules === undefined) throw new Error(`no source table entry for domain ${domain}`);
  return rules;
}

/**
 * The source a domain reads on this server, or why it cannot work there. Throws for a
 * domain the table does not know (a programming error). `table` is for tests and docs.
 */
export function sourceFor(
  domain: string,
  info: ServerInfo,
  table: Readonly<Record<string, readonly SourceRule[]>> = SOURCE_TABLE,
): SourceChoice {
  const rule = rulesOf(domain, table).find((r) => matches(r, info));
  if (rule?.source !== undefined) {
    const choice: SourceChoice = { source: rule.source };
    if (rule.absent !== undefined) choice.absent = rule.absent;
    if (rule.hint !== undefined) choice.hint = rule.hint;
    return choice;
  }
  if (rule?.unsupported !== undefined) return { unsupported: rule.unsupported };
  // Every domain has a catch-all row per flavor; reaching this is a table bug.
  throw new Error(`source table for ${domain} has no row for ${describeServer(info)}`);
}

/** A server column of the docs: a flavor and a version range, or an unknown version. */
export interface ServerColumn {
  title: string;
  flavor: Flavor;
  /** Inclusive `x.y.z`; with `below`. Both absent: the version is unknown. */
  min?: string;
  /** Exclusive `x.y.z`. */
  below?: string;
}

/** The servers docs/domains.md shows the table for. */
export const SERVER_COLUMNS: readonly ServerColumn[] = [
  { title: 'MySQL 5.7', flavor: 'mysql', min: '5.7.0', below: '8.0.0' },
  { title: 'MySQL 8.0', flavor: 'mysql', min: '8.0.0', below: '8.1.0' },
  { title: 'MySQL 8.1–8.4', flavor: 'mysql', min: '8.1.0', below: '9.0.0' },
  { title: 'MySQL 9.x', flavor: 'mysql', min: '9.0.0', below: '10.0.0' },
  { title: 'MySQL, version unknown', flavor: 'mysql' },
  { title: 'MariaDB 10.x–11.x', flavor: 'mariadb', min: '10.0.0', below: '12.0.0' },
];

function compareVersions(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < 3; i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Where one answer of the table holds inside a column: from `from` on (undefined: throughout). */
export interface ColumnPiece {
  from: string | undefined;
  choice: SourceChoice;
}

/**
 * The table's answers for a domain across one server column, in version order: one piece
 * when a single rule covers the column, else one per rule boundary inside it (adjacent
 * pieces with the same answer merged).
 */
export function choicesInColumn(
  domain: string,
  column: ServerColumn,
  table: Readonly<Record<string, readonly SourceRule[]>> = SOURCE_TABLE,
): ColumnPiece[] {
  const server = (version: [number, number, number]): ServerInfo => ({
    flavor: column.flavor,
    version,
    versionString: version.join('.'),
  });
  if (column.min === undefined || column.below === undefined) {
    return [{ from: undefined, choice: sourceFor(domain, server([0, 0, 0]), table) }];
  }
  const lo = triple(column.min);
  const hi = triple(column.below);
  const starts = new Map<string, [number, number, number]>([[column.min, lo]]);
  for (const r of rulesOf(domain, table)) {
    for (const bound of [r.min, r.below]) {
      if (r.flavor !== column.flavor || bound === undefined) continue;
      const v = triple(bound);
      if (compareVersions(v, lo) > 0 && compareVersions(v, hi) < 0) starts.set(bound, v);
    }
  }
  const pieces: ColumnPiece[] = [];
  for (const [text, v] of [...starts].sort((a, b) => compareVersions(a[1], b[1]))) {
    const choice = sourceFor(domain, server(v), table);
    const last = pieces.at(-1);
    if (last !== undefined && sameAnswer(last.choice, choice)) continue;
    pieces.push({ from: pieces.length === 0 ? undefined : text, choice });
  }
  return pieces;
}

function sameAnswer(a: SourceChoice, b: SourceChoice): boolean {
  if ('source' in a && 'source' in b) return a.source === b.source;
  if ('unsupported' in a && 'unsupported' in b) return a.unsupported === b.unsupported;
  return false;
}

/**
 * The one source a domain reads on every server, when its rules all agree (no version
 * range, no notes); undefined when the choice depends on the server.
 */
export function uniformSource(domain: string): string | undefined {
  const rules = rulesOf(domain, SOURCE_TABLE);
  const first = rules[0]?.source;
  const same = rules.every(
    (r) =>
      r.source === first &&
      r.min === undefined &&
      r.below === undefined &&
      r.absent === undefined &&
      r.hint === undefined,
  );
  return same ? first : undefined;
}

/** The sources of a key in try order: `have_ssl,tls_channel_status` → both, in that order. */
export function sourceList(source: string): string[] {
  return source.split(',').filter((s) => s !== '');
}

/** Why `source` is not among the sources of a choice; undefined when it is. */
export function absentReason(choice: SourceChoice, source: string): string | undefined {
  if ('unsupported' in choice) return choice.unsupported;
  if (sourceList(choice.source).includes(source)) return undefined;
  return choice.absent?.[source] ?? `no ${source} source`;
}

/**
 * The error of a domain that cannot work on this server:
 * `<domain>: not supported on <flavor> <x.y.z>: <reason>`. The engine reports it once and
 * stops the domain until the plan is activated again. `opts.policy` names an error policy
 * that governs the same failure when the plan sets it (the policy then wins).
 */
export function unsupportedError(
  domain: string,
  info: ServerInfo,
  reason: string,
  cause?: unknown,
  opts: { policy?: string; zero?: CollectError['zero'] } = {},
): CollectError {
  const errno = errnoOf(cause);
  return new CollectError(`${domain}: not supported on ${describeServer(info)}: ${reason}`, {
    unsupported: true,
    ...(cause === undefined ? {} : { cause }),
    ...(errno === undefined ? {} : { errno }),
    ...(opts.policy === undefined ? {} : { policy: opts.policy }),
    ...(opts.zero === undefined ? {} : { zero: opts.zero }),
  });
}

/** What a collector learns from the table at prepare. */
export interface PreparedSource {
  /** The sources to use, in try order; empty when the domain cannot work here. */
  sources: string[];
  /** Sources of the domain this server lacks, with the reason. */
  absent: Readonly<Record<string, string>>;
  /** What to tell the user when the source turns out to be missing at run time. */
  hint: string | undefined;
  /** The server, when the table needed it (flavor-neutral domains do not ask). */
  info: ServerInfo | undefined;
  /** Set when the table says the domain cannot work on this server. */
  unsupported: CollectError | undefined;
}

/**
 * Ask the table at prepare: a flavor-neutral domain gets its source without a round trip;
 * any other asks the server for its flavor and version first.
 */
export async function prepareSource(db: Db, domain: string, signal: AbortSignal): Promise<PreparedSource> {
  const fixed = uniformSource(domain);
  if (fixed !== undefined) {
    return {
      sources: sourceList(fixed),
      absent: {},
      hint: undefined,
      info: undefined,
      unsupported: undefined,
    };
  }
  const info = await db.serverInfo({ signal });
  const choice = sourceFor(domain, info);
  if ('unsupported' in choice) {
    const unsupported = unsupportedError(domain, info, choice.unsupported);
    return { sources: [], absent: {}, hint: undefined, info, unsupported };
  }
  return {
    sources: sourceList(choice.source),
    absent: choice.absent ?? {},
    hint: choice.hint,
    info,
    unsupported: undefined,
  };
}
