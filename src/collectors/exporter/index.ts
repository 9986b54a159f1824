/**
 * The `exporter.*` domains: one per mysqld_exporter scraper that sonde's own domains do
 * not already serve (global_status, global_variables and info_schema.innodb_metrics are
 * status.global, var.global and innodb). Adding one is one file here plus one line below.
 */
import type { CollectorRegistration } from '../../core/collector.js';
import { registration as slaveStatus } from './slave_status.js';

export const EXPORTER_BUILTIN: readonly CollectorRegistration[] = [slaveStatus];
