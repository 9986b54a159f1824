/**
 * exporter.heartbeat — mysqld_exporter's `heartbeat` scraper: the timestamps pt-heartbeat
 * (or any writer of the same table shape) stores, beside the server's own clock.
 *
 * The table has one row per writing server: `ts varchar(26)` (`2024-05-01T12:00:00.123456`)
 * and `server_id int unsigned`. One statement reads the stored time and the server's time at
 * the same instant:
 * `SELECT UNIX_TIMESTAMP(ts), UNIX_TIMESTAMP(NOW(6)), server_id from `db`.`table``, with
 * `UTC_TIMESTAMP(6)` instead of `NOW(6)` when option `utc` is true (pt-heartbeat --utc).
 * Options `database` and `table` name the table (default `heartbeat`.`heartbeat`); they are
 * quoted as identifiers.
 *
 * Per row: mysql_heartbeat_now_timestamp_seconds and mysql_heartbeat_stored_timestamp_seconds
 * (gauges, label server_id). A row whose time or server id does not read as a number fails
 * the scrape (the rows before it are kept).
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, boolOption, family, parseGoFloat, sample, upstreamHelp } from './common.js';

export const DOMAIN = 'exporter.heartbeat';

const NOW = family('mysql_heartbeat_now_timestamp_seconds', 'Timestamp of the current server.', 'gauge');
const STORED = family(
  'mysql_heartbeat_stored_timestamp_seconds',
  'Timestamp stored in the heartbeat table.',
  'gauge',
);

/** An identifier in backticks, inner backticks doubled. */
function quoteIdent(name: string): string {
  return '`' + name.replaceAll('`', '``') + '`';
}

/** The statement for the options' database, table and clock. */
export function heartbeatQuery(database: string, table: string, utc: boolean): string {
  const now = utc ? 'UTC_TIMESTAMP(6)' : 'NOW(6)';
  return `SELECT UNIX_TIMESTAMP(ts), UNIX_TIMESTAMP(${now}), server_id from ${quoteIdent(database)}.${quoteIdent(table)}`;
}

/** The heartbeat rows (stored time, server time, server id, by position) → samples. */
export function heartbeatSamples(rows: readonly Row[], out: MetricValue[]): void {
  for (const row of rows) {
    const [ts, now, id] = Object.values(row);
    const stored = parseGoFloat(ts ?? '');
    if (stored === undefined) throw new Error(`heartbeat: ts ${JSON.stringify(ts)} is no timestamp`);
    const current = parseGoFloat(now ?? '');
    if (current === undefined) throw new Error(`heartbeat: server time ${JSON.stringify(now)} is no number`);
    if (id === null || id === undefined || !/^-?\d+$/.test(id))
      throw new Error(`heartbeat: server_id ${JSON.stringify(id)} is no integer`);
    const labels = { server_id: BigInt(id).toString() };
    out.push(sample(NOW, current, labels), sample(STORED, stored, labels));
  }
}

export class HeartbeatCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    const sql = heartbeatQuery(
      this.options.database ?? 'heartbeat',
      this.options.table ?? 'heartbeat',
      boolOption(this.options.utc),
    );
    heartbeatSamples(await this.db.query(sql, [], { signal }), out);
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: ['SELECT UNIX_TIMESTAMP(ts), UNIX_TIMESTAMP(NOW(6)), server_id FROM heartbeat.heartbeat'],
    families: [NOW, STORED],
    labels: ['server_id'],
  }),
  create: (ctx) => new HeartbeatCollector(ctx),
};
