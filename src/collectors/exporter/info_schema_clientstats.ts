/**
 * exporter.info_schema.clientstats — mysqld_exporter's `info_schema.clientstats` scraper (off by default).
 *
 * With userstat on (MariaDB, Percona Server: `userstat=1`), every row of
 * `information_schema.client_statistics` becomes one sample per column, labelled `client` with
 * the first column (CLIENT). Known columns have their own family, TYPE and HELP; any other column
 * becomes `mysql_info_schema_client_statistics_<column lowercase>`, untyped, HELP
 * `Unsupported metric from column <COLUMN>` — so the families follow the server's columns.
 * Without userstat (the variable missing or `OFF`) there is nothing, and no error.
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, upstreamHelp } from './common.js';
import { statisticsSamples, statisticsTable, userstatOn, USERSTAT_CHECK } from './userstat.js';

export const DOMAIN = 'exporter.info_schema.clientstats';

export const QUERY = 'SELECT * FROM information_schema.client_statistics';

/** The table's known columns and the families made for the others. */
// prettier-ignore
export const TABLE = statisticsTable('mysql_info_schema_client_statistics_', 'client', [
  ['TOTAL_CONNECTIONS', 'total_connections', 'counter', 'The number of connections created for this client.'],
  ['CONCURRENT_CONNECTIONS', 'concurrent_connections', 'gauge', 'The number of concurrent connections for this client.'],
  ['CONNECTED_TIME', 'connected_time_seconds_total', 'counter', 'The cumulative number of seconds elapsed while there were connections from this client.'],
  ['BUSY_TIME', 'busy_seconds_total', 'counter', 'The cumulative number of seconds there was activity on connections from this client.'],
  ['CPU_TIME', 'cpu_time_seconds_total', 'counter', "The cumulative CPU time elapsed, in seconds, while servicing this client's connections."],
  ['BYTES_RECEIVED', 'bytes_received_total', 'counter', 'The number of bytes received from this client’s connections.'],
  ['BYTES_SENT', 'bytes_sent_total', 'counter', 'The number of bytes sent to this client’s connections.'],
  ['BINLOG_BYTES_WRITTEN', 'binlog_bytes_written_total', 'counter', 'The number of bytes written to the binary log from this client’s connections.'],
  ['ROWS_READ', 'rows_read_total', 'counter', 'The number of rows read by this client’s connections.'],
  ['ROWS_SENT', 'rows_sent_total', 'counter', 'The number of rows sent by this client’s connections.'],
  ['ROWS_DELETED', 'rows_deleted_total', 'counter', 'The number of rows deleted by this client’s connections.'],
  ['ROWS_INSERTED', 'rows_inserted_total', 'counter', 'The number of rows inserted by this client’s connections.'],
  ['ROWS_FETCHED', 'rows_fetched_total', 'counter', 'The number of rows fetched by this client’s connections.'],
  ['ROWS_UPDATED', 'rows_updated_total', 'counter', 'The number of rows updated by this client’s connections.'],
  ['TABLE_ROWS_READ', 'table_rows_read_total', 'counter', 'The number of rows read from tables by this client’s connections. (It may be different from ROWS_FETCHED.)'],
  ['SELECT_COMMANDS', 'select_commands_total', 'counter', 'The number of SELECT commands executed from this client’s connections.'],
  ['UPDATE_COMMANDS', 'update_commands_total', 'counter', 'The number of UPDATE commands executed from this client’s connections.'],
  ['OTHER_COMMANDS', 'other_commands_total', 'counter', 'The number of other commands executed from this client’s connections.'],
  ['COMMIT_TRANSACTIONS', 'commit_transactions_total', 'counter', 'The number of COMMIT commands issued by this client’s connections.'],
  ['ROLLBACK_TRANSACTIONS', 'rollback_transactions_total', 'counter', 'The number of ROLLBACK commands issued by this client’s connections.'],
  ['DENIED_CONNECTIONS', 'denied_connections_total', 'counter', 'The number of connections denied to this client.'],
  ['LOST_CONNECTIONS', 'lost_connections_total', 'counter', 'The number of this client’s connections that were terminated uncleanly.'],
  ['ACCESS_DENIED', 'access_denied_total', 'counter', 'The number of times this client’s connections issued commands that were denied.'],
  ['EMPTY_QUERIES', 'empty_queries_total', 'counter', 'The number of times this client’s connections sent empty queries to the server.'],
  ['TOTAL_SSL_CONNECTIONS', 'total_ssl_connections_total', 'counter', 'The number of times this client’s connections connected using SSL to the server.'],
  ['MAX_STATEMENT_TIME_EXCEEDED', 'max_statement_time_exceeded_total', 'counter', 'The number of times a statement was aborted, because it was executed longer than its MAX_STATEMENT_TIME threshold.'],
]);

export class ClientStatsCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    if (!(await userstatOn(this.db, signal))) return;
    statisticsSamples(TABLE, await this.db.query(QUERY, [], { signal }), out);
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: [USERSTAT_CHECK, QUERY],
    families: [...TABLE.known.values()],
    labels: [TABLE.label],
  }),
  create: (ctx) => new ClientStatsCollector(ctx),
};
