/**
 * exporter.binlog_size — mysqld_exporter's `binlog_size` scraper: the binary logs the server
 * keeps, from `SHOW BINARY LOGS`.
 *
 * `SELECT @@log_bin` first: with binary logging off nothing is served (and SHOW BINARY LOGS,
 * which would fail, is not sent). Otherwise three gauges without labels: the summed
 * File_size, the number of files, and the number of the last file (the digits after the last
 * dot of its name: `mysql-bin.000042` → 42). The result has two columns (MariaDB, MySQL
 * before 8.0.14) or three (`Encrypted`); the name and size are read by position. Another
 * column count, or a size that is no unsigned integer, fails the scrape with nothing served;
 * a last name without a number after its last dot leaves the file number out.
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, family, parseStatus, sample, upstreamHelp } from './common.js';

export const DOMAIN = 'exporter.binlog_size';

export const LOG_BIN_SQL = 'SELECT @@log_bin';
export const SQL = 'SHOW BINARY LOGS';

const SIZE = family('mysql_binlog_size_bytes', 'Combined size of all registered binlog files.', 'gauge');
const FILES = family('mysql_binlog_files', 'Number of registered binlog files.', 'gauge');
const FILE_NUMBER = family('mysql_binlog_file_number', 'The last binlog file number.', 'gauge');

/** SHOW BINARY LOGS rows → the three samples (pure; exported for recorded result sets). */
export function binlogSamples(rows: readonly Row[], out: MetricValue[]): void {
  let size = 0n;
  let last = '';
  for (const row of rows) {
    const cells = Object.values(row);
    if (cells.length !== 2 && cells.length !== 3)
      throw new Error(`${SQL}: ${cells.length} columns, expected 2 or 3`);
    const [name, bytes] = cells;
    if (bytes === null || bytes === undefined || !/^\d+$/.test(bytes))
      throw new Error(`${SQL}: File_size ${JSON.stringify(bytes)} of ${name ?? ''} is no size`);
    size += BigInt(bytes);
    last = name ?? '';
  }
  out.push(sample(SIZE, Number(size)), sample(FILES, rows.length));
  const number = /\.(\d+)$/.exec(last)?.[1];
  if (number !== undefined) out.push(sample(FILE_NUMBER, Number(number)));
}

export class BinlogSizeCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    const [row] = await this.db.query(LOG_BIN_SQL, [], { signal });
    const logBin = parseStatus(Object.values(row ?? {})[0]);
    if (logBin === undefined) throw new Error(`${LOG_BIN_SQL}: no value`);
    if (logBin === 0) return;
    binlogSamples(await this.db.query(SQL, [], { signal }), out);
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: [LOG_BIN_SQL, SQL],
    families: [SIZE, FILES, FILE_NUMBER],
  }),
  create: (ctx) => new BinlogSizeCollector(ctx),
};
