/**
 * The source table's rows for the `exporter.*` domains (sources.ts spreads them into
 * SOURCE_TABLE). mysqld_exporter gates almost none of its scrapers by flavor or version: it
 * runs the query and reports the failure. These rows do the same (a source on both flavors)
 * except where the server cannot have the source at all.
 */
import type { SourceRule } from '../sources.js';

const both = (source: string): SourceRule[] => [
  { flavor: 'mysql', source },
  { flavor: 'mariadb', source },
];

export const EXPORTER_SOURCES: Readonly<Record<string, readonly SourceRule[]>> = {
  'exporter.slave_status': both('show-slave-status'),
};
