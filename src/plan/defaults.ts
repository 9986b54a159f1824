/**
 * The built-in plans, as defined before leveling-up. They are loaded only
 * when no shared plan was loaded and `plans.disable-default-plans` is false (see store.ts).
 */
import type { DomainPlan, Level, Plan } from '../core/plan.js';
import { parseDuration } from '../util/duration.js';

/** Source of every built-in plan. */
export const DEFAULT_PLAN_SOURCE = 'sonde';

/**
 * Built-in plan names in load order. `default-none` (zero levels) is loaded too (sonde's
 * choice).
 */
export const DEFAULT_PLAN_NAMES: readonly string[] = ['default-mysql', 'default-exporter', 'default-none'];

/** default-mysql, level `performance` (5s): global status counters and gauges. */
const PERFORMANCE_STATUS: readonly string[] = [
  'queries',
  'threads_running',
  'com_begin',
  'com_commit',
  'com_rollback',
  'com_select',
  'com_delete',
  'com_delete_multi',
  'com_insert',
  'com_insert_select',
  'com_replace',
  'com_replace_select',
  'com_update',
  'com_update_multi',
  'innodb_data_reads',
  'innodb_data_writes',
  'innodb_data_written',
  'innodb_data_read',
  'innodb_buffer_pool_read_requests',
  'innodb_buffer_pool_reads',
  'innodb_buffer_pool_wait_free',
  'innodb_buffer_pool_pages_dirty',
  'innodb_buffer_pool_pages_free',
  'innodb_buffer_pool_pages_total',
  'innodb_buffer_pool_pages_flushed',
  'innodb_os_log_written',
];

/** default-mysql, level `performance` (5s): InnoDB metrics. */
const PERFORMANCE_INNODB: readonly string[] = [
  'trx_active_transactions',
  'lock_timeouts',
  'lock_row_lock_current_waits',
  'lock_row_lock_waits',
  'lock_row_lock_time',
  'buffer_flush_adaptive_total_pages',
  'buffer_LRU_batch_flush_total_pages',
  'buffer_flush_background_total_pages',
  'log_lsn_checkpoint_age',
  'log_max_modified_age_async',
  'innodb_os_log_pending_writes',
  'innodb_log_waits',
  'trx_rseg_history_len',
  'lock_deadlocks',
];

/** default-mysql, level `additional` (20s): more global status. */
const ADDITIONAL_STATUS: readonly string[] = [
  'created_tmp_disk_tables',
  'created_tmp_tables',
  'created_tmp_files',
  'connections',
  'threads_connected',
  'max_used_connections',
  'bytes_sent',
  'bytes_received',
  'binlog_cache_disk_use',
  'prepared_stmt_count',
  'com_stmt_execute',
  'com_stmt_prepare',
  'aborted_clients',
  'aborted_connects',
  'select_full_join',
  'select_full_range_join',
  'select_range_check',
  'select_scan',
  'com_flush',
  'com_kill',
  'com_purge',
  'com_admin_commands',
  'com_show_processlist',
  'com_show_slave_status',
  'com_show_status',
  'com_show_variables',
  'com_show_warnings',
];

function domain(
  metrics: readonly string[] = [],
  options: Record<string, string> = {},
  errors: Record<string, string> = {},
): DomainPlan {
  return { metrics: [...metrics], options, errors };
}

function level(name: string, freq: string, collect: Record<string, DomainPlan>): Level {
  return { name, freq, freqMs: parseDuration(freq), collect };
}

function defaultMysql(): Plan {
  return {
    name: 'default-mysql',
    source: DEFAULT_PLAN_SOURCE,
    levels: {
      performance: level('performance', '5s', {
        'status.global': domain(PERFORMANCE_STATUS),
        innodb: domain(PERFORMANCE_INNODB),
        repl: domain(['running'], {}, { 'access-denied': 'ignore,drop,retry' }),
        'repl.lag': domain(),
      }),
      additional: level('additional', '20s', {
        'status.global': domain(ADDITIONAL_STATUS),
      }),
      'data-size': level('data-size', '5m', {
        'size.database': domain(),
        'size.table': domain(),
        'size.binlog': domain([], {}, { 'access-denied': 'ignore,drop,retry' }),
      }),
      sysvars: level('sysvars', '15m', {
        'var.global': domain(['max_connections', 'max_prepared_stmt_count', 'innodb_log_file_size']),
      }),
    },
  };
}

function defaultExporter(): Plan {
  return {
    name: 'default-exporter',
    source: DEFAULT_PLAN_SOURCE,
    levels: {
      prom: level('prom', '10s', {
        'status.global': domain([], { all: 'yes' }),
        'var.global': domain([], { all: 'yes' }),
        innodb: domain([], { all: 'enabled' }),
      }),
    },
  };
}

function defaultNone(): Plan {
  return { name: 'default-none', source: DEFAULT_PLAN_SOURCE, levels: {} };
}

/** Fresh copies of the built-in plans, in DEFAULT_PLAN_NAMES order; callers may mutate them. */
export function defaultPlans(): Plan[] {
  return [defaultMysql(), defaultExporter(), defaultNone()];
}

/** A fresh copy of one built-in plan, or undefined for another name. */
export function defaultPlan(name: string): Plan | undefined {
  return defaultPlans().find((p) => p.name === name);
}
