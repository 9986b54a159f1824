/**
 * mysqld_exporter's scrapers and flags, as data: what sonde's exporter accepts as
 * `exporter.flags`, `collect[]` values and command-line flags, and which sonde domain
 * serves each scraper. Shared by config validation, the exporter plan builder, the exporter
 * HTTP side and the drop-in command line.
 *
 * Names, defaults and help texts are those of mysqld_exporter 0.20, the newest release.
 */

/** One `--collect.<scraper>.<x>` sub-flag and the domain option it sets. */
export interface UpstreamSubflag {
  /** Full flag name, e.g. `collect.info_schema.processlist.min_time`. */
  flag: string;
  /** The domain option in the exporter plan (the part after the scraper name). */
  option: string;
  /** Upstream's default, as text. */
  default: string;
  kind: 'bool' | 'int' | 'string' | 'strings';
  help: string;
}

export interface UpstreamScraper {
  /** mysqld_exporter's scraper name (`slave_status`, `info_schema.tables`, …). */
  name: string;
  /** The sonde domain that serves it. */
  domain: string;
  /** On without a flag in mysqld_exporter. */
  enabled: boolean;
  help: string;
  subflags: readonly UpstreamSubflag[];
}

/** Prefix of the domains that exist to serve one mysqld_exporter scraper each. */
export const EXPORTER_DOMAIN_PREFIX = 'exporter.';

/**
 * Meta key on the values of `exporter.*` domains: the family's HELP text. The value's name
 * is the full Prometheus family name and its group the label set, so the exporter serves
 * them as they are. Collectors share one frozen meta object per family.
 */
export const PROM_HELP_META = 'help';

function sub(scraper: string, option: string, dflt: string, kind: UpstreamSubflag['kind'], help: string) {
  return { flag: `collect.${scraper}.${option}`, option, default: dflt, kind, help };
}

function scraper(
  name: string,
  enabled: boolean,
  help: string,
  subflags: UpstreamSubflag[] = [],
  domain = EXPORTER_DOMAIN_PREFIX + name,
): UpstreamScraper {
  return { name, domain, enabled, help, subflags };
}

/** Every scraper of mysqld_exporter 0.20, sorted by name (its flag registration order). */
export const UPSTREAM_SCRAPERS: readonly UpstreamScraper[] = [
  scraper(
    'auto_increment.columns',
    false,
    'Collect auto_increment columns and max values from information_schema',
  ),
  scraper('binlog_size', false, 'Collect the current size of all registered binlog files'),
  scraper('engine_innodb_status', false, 'Collect from SHOW ENGINE INNODB STATUS'),
  scraper('engine_tokudb_status', false, 'Collect from SHOW ENGINE TOKUDB STATUS'),
  scraper('global_status', true, 'Collect from SHOW GLOBAL STATUS', [], 'status.global'),
  scraper('global_variables', true, 'Collect from SHOW GLOBAL VARIABLES', [], 'var.global'),
  scraper('heartbeat', false, 'Collect from heartbeat', [
    sub('heartbeat', 'database', 'heartbeat', 'string', 'Database from where to collect heartbeat data'),
    sub('heartbeat', 'table', 'heartbeat', 'string', 'Table from where to collect heartbeat data'),
    sub(
      'heartbeat',
      'utc',
      'false',
      'bool',
      'Use UTC for timestamps of the current server (`pt-heartbeat` is called with `--utc`)',
    ),
  ]),
  scraper(
    'info_schema.clientstats',
    false,
    'If running with userstat=1, set to true to collect client statistics',
  ),
  scraper('info_schema.innodb_cmp', true, 'Collect metrics from information_schema.innodb_cmp'),
  scraper('info_schema.innodb_cmpmem', true, 'Collect metrics from information_schema.innodb_cmpmem'),
  scraper(
    'info_schema.innodb_metrics',
    false,
    'Collect metrics from information_schema.innodb_metrics',
    [],
    'innodb',
  ),
  scraper(
    'info_schema.innodb_tablespaces',
    false,
    'Collect metrics from information_schema.innodb_sys_tablespaces',
  ),
  scraper(
    'info_schema.processlist',
    false,
    'Collect current thread state counts from the information_schema.processlist',
    [
      sub(
        'info_schema.processlist',
        'min_time',
        '0',
        'int',
        'Minimum time a thread must be in each state to be counted',
      ),
      sub(
        'info_schema.processlist',
        'processes_by_user',
        'true',
        'bool',
        'Enable collecting the number of processes by user',
      ),
      sub(
        'info_schema.processlist',
        'processes_by_host',
        'true',
        'bool',
        'Enable collecting the number of processes by host',
      ),
    ],
  ),
  scraper(
    'info_schema.query_response_time',
    true,
    'Collect query response time distribution if query_response_time_stats is ON.',
  ),
  scraper('info_schema.replica_host', false, 'Collect metrics from information_schema.replica_host_status'),
  scraper(
    'info_schema.rocksdb_perf_context',
    false,
    'Collect metrics from information_schema.ROCKSDB_PERF_CONTEXT',
  ),
  scraper(
    'info_schema.schemastats',
    false,
    'If running with userstat=1, set to true to collect schema statistics',
  ),
  scraper('info_schema.tables', false, 'Collect metrics from information_schema.tables', [
    sub(
      'info_schema.tables',
      'databases',
      '*',
      'string',
      "The list of databases to collect table stats for, or '*' for all",
    ),
  ]),
  scraper(
    'info_schema.tablestats',
    false,
    'If running with userstat=1, set to true to collect table statistics',
  ),
  scraper(
    'info_schema.userstats',
    false,
    'If running with userstat=1, set to true to collect user statistics',
  ),
  scraper('mysql.user', false, 'Collect data from mysql.user', [
    sub('mysql.user', 'privileges', 'false', 'bool', 'Enable collecting user privileges from mysql.user'),
  ]),
  scraper(
    'perf_schema.eventsstatements',
    false,
    'Collect metrics from performance_schema.events_statements_summary_by_digest',
    [
      sub(
        'perf_schema.eventsstatements',
        'limit',
        '250',
        'int',
        'Limit the number of events statements digests by response time',
      ),
      sub(
        'perf_schema.eventsstatements',
        'timelimit',
        '86400',
        'int',
        "Limit how old the 'last_seen' events statements can be, in seconds",
      ),
      sub(
        'perf_schema.eventsstatements',
        'digest_text_limit',
        '120',
        'int',
        'Maximum length of the normalized statement text',
      ),
      sub(
        'perf_schema.eventsstatements',
        'exclude_schemas',
        '',
        'strings',
        'Additional schema name to exclude (always excludes mysql, performance_schema, information_schema). Repeatable',
      ),
    ],
  ),
  scraper(
    'perf_schema.eventsstatementssum',
    false,
    'Collect metrics of grand sums from performance_schema.events_statements_summary_by_digest',
  ),
  scraper(
    'perf_schema.eventswaits',
    false,
    'Collect metrics from performance_schema.events_waits_summary_global_by_event_name',
  ),
  scraper(
    'perf_schema.file_events',
    false,
    'Collect metrics from performance_schema.file_summary_by_event_name',
  ),
  scraper(
    'perf_schema.file_instances',
    false,
    'Collect metrics from performance_schema.file_summary_by_instance',
    [
      sub(
        'perf_schema.file_instances',
        'filter',
        '.*',
        'string',
        'RegEx file_name filter for performance_schema.file_summary_by_instance',
      ),
      sub(
        'perf_schema.file_instances',
        'remove_prefix',
        '/var/lib/mysql/',
        'string',
        'Remove path prefix in performance_schema.file_summary_by_instance',
      ),
    ],
  ),
  scraper(
    'perf_schema.indexiowaits',
    false,
    'Collect metrics from performance_schema.table_io_waits_summary_by_index_usage',
  ),
  scraper(
    'perf_schema.memory_events',
    false,
    'Collect metrics from performance_schema.memory_summary_global_by_event_name',
    [
      sub(
        'perf_schema.memory_events',
        'remove_prefix',
        'memory/',
        'string',
        'Remove instrument prefix in performance_schema.memory_summary_global_by_event_name',
      ),
    ],
  ),
  scraper(
    'perf_schema.replication_applier_status_by_worker',
    false,
    'Collect metrics from performance_schema.replication_applier_status_by_worker',
  ),
  scraper(
    'perf_schema.replication_group_member_stats',
    false,
    'Collect metrics from performance_schema.replication_group_member_stats',
  ),
  scraper(
    'perf_schema.replication_group_members',
    false,
    'Collect metrics from performance_schema.replication_group_members',
  ),
  scraper(
    'perf_schema.tableiowaits',
    false,
    'Collect metrics from performance_schema.table_io_waits_summary_by_table',
  ),
  scraper(
    'perf_schema.tablelocks',
    false,
    'Collect metrics from performance_schema.table_lock_waits_summary_by_table',
  ),
  scraper('slave_hosts', false, "Scrape information from 'SHOW SLAVE HOSTS'"),
  scraper('slave_status', true, 'Collect from SHOW SLAVE STATUS'),
  scraper(
    'sys.user_summary',
    false,
    'Collect per user metrics from sys.x$user_summary. See https://dev.mysql.com/doc/refman/5.7/en/sys-user-summary.html for details',
  ),
];

const BY_NAME: ReadonlyMap<string, UpstreamScraper> = new Map(UPSTREAM_SCRAPERS.map((s) => [s.name, s]));
const BY_DOMAIN: ReadonlyMap<string, UpstreamScraper> = new Map(UPSTREAM_SCRAPERS.map((s) => [s.domain, s]));
const BY_SUBFLAG: ReadonlyMap<string, [UpstreamScraper, UpstreamSubflag]> = new Map(
  UPSTREAM_SCRAPERS.flatMap((s) => s.subflags.map((f) => [f.flag, [s, f]] as const)),
);

/** The scraper of a mysqld_exporter name (`slave_status`), or undefined. */
export function scraperByName(name: string): UpstreamScraper | undefined {
  return BY_NAME.get(name);
}

/** The scraper a sonde domain serves (`status.global` → global_status), or undefined. */
export function scraperByDomain(domain: string): UpstreamScraper | undefined {
  return BY_DOMAIN.get(domain);
}

/** The scraper and sub-flag of a full sub-flag name, or undefined. */
export function subflagByName(flag: string): [UpstreamScraper, UpstreamSubflag] | undefined {
  return BY_SUBFLAG.get(flag);
}

/**
 * mysqld_exporter's own flags that are not collector switches, with their defaults: the
 * connection and HTTP settings sonde honours (see docs/exporter.md for what each does).
 */
export const UPSTREAM_EXPORTER_FLAGS: Readonly<Record<string, string>> = {
  'web.listen-address': ':9104',
  'web.telemetry-path': '/metrics',
  'web.config.file': '',
  'timeout-offset': '0.25',
  'tls.insecure-skip-verify': 'false',
  'exporter.lock_wait_timeout': '2',
  'exporter.enable_lock_wait_timeout': 'true',
  'exporter.log_slow_filter': 'false',
  'exporter.query_timeout': '0',
  'exporter.max_open_connections': '2',
};
