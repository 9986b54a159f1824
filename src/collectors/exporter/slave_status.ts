/**
 * exporter.slave_status — mysqld_exporter's `slave_status` scraper (on by default upstream).
 *
 * Every column of the replica status that reads as a number (parseStatus: `Yes`/`No`,
 * `Connecting`, dates, numbers) becomes `mysql_slave_status_<column lowercase>`, untyped,
 * labelled master_host, master_uuid, channel_name (MySQL) and connection_name (MariaDB);
 * MySQL 8.0.22+'s `Source_*` spellings fill master_host/master_uuid. MariaDB's GTID
 * positions (`Gtid_IO_Pos`, `Gtid_Slave_Pos`, `domain-server-seq` lists) become
 * `mysql_slave_status_gtid_io_pos` / `_gtid_slave_pos` gauges per domain_id and server_id.
 *
 * Statements are tried in upstream's order: `SHOW ALL SLAVES STATUS` (MariaDB: every
 * connection), then `SHOW SLAVE STATUS` and `SHOW REPLICA STATUS`, each failing one retried
 * with the lock-free suffixes ` NONBLOCKING` and ` NOLOCK` (Percona, older MySQL). The first
 * statement that works is remembered until the next preparation. When none works, the error
 * told is the first that is not a syntax error: on MariaDB 10.5 and later without the SLAVE
 * MONITOR privilege every plain statement is refused (1227) and every suffixed one is a
 * syntax error (1064), and the last of those would hide the missing privilege.
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { ER_PARSE_ERROR } from '../../db/errnos.js';
import { UpstreamCollector, family, parseStatus, sample, upstreamHelp, type Family } from './common.js';

export const DOMAIN = 'exporter.slave_status';

const PREFIX = 'mysql_slave_status_';
const HELP = 'Generic metric from SHOW SLAVE STATUS.';
const LABELS = ['master_host', 'master_uuid', 'channel_name', 'connection_name'] as const;

/** Statements in upstream's order, each followed by its lock-free variants. */
export const STATEMENTS: readonly string[] = [
  'SHOW ALL SLAVES STATUS',
  'SHOW SLAVE STATUS',
  'SHOW REPLICA STATUS',
].flatMap((q) => [q, `${q} NONBLOCKING`, `${q} NOLOCK`]);

const GTID: Readonly<Record<string, Family>> = {
  Gtid_IO_Pos: family(`${PREFIX}gtid_io_pos`, 'Gtid_IO_Pos metric from SHOW SLAVE STATUS.', 'gauge'),
  Gtid_Slave_Pos: family(`${PREFIX}gtid_slave_pos`, 'Gtid_Slave_Pos metric from SHOW SLAVE STATUS.', 'gauge'),
};

/** Families of generic columns, made once per column name. */
const columnFamilies = new Map<string, Family>();

function columnFamily(column: string): Family {
  let f = columnFamilies.get(column);
  if (f === undefined) {
    f = family(PREFIX + column.toLowerCase(), HELP, 'untyped');
    columnFamilies.set(column, f);
  }
  return f;
}

/** The replica status rows → samples (pure; exported for recorded result sets). */
export function slaveStatusSamples(rows: readonly Row[], out: MetricValue[]): void {
  for (const row of rows) {
    const labels = {
      master_host: row.Master_Host || row.Source_Host || '',
      master_uuid: row.Master_UUID || row.Source_UUID || '',
      channel_name: row.Channel_Name ?? '',
      connection_name: row.Connection_name ?? '',
    };
    for (const [column, text] of Object.entries(row)) {
      const value = parseStatus(text);
      if (value !== undefined) out.push(sample(columnFamily(column), value, labels));
    }
    for (const [column, f] of Object.entries(GTID)) gtidSamples(f, row[column] ?? '', labels, out);
  }
}

/** `0-1-42,1-2-7` → one sample per GTID, labelled domain_id and server_id; malformed parts skipped. */
function gtidSamples(f: Family, text: string, labels: Record<string, string>, out: MetricValue[]): void {
  if (text === '') return;
  for (const gtid of text.split(',')) {
    const parts = gtid.split('-');
    if (parts.length !== 3) continue;
    const [domainId = '', serverId = '', seq = ''] = parts;
    if (!/^\d+$/.test(seq) || BigInt(seq) > 0xffff_ffff_ffff_ffffn) continue;
    out.push(sample(f, Number(seq), { ...labels, domain_id: domainId, server_id: serverId }));
  }
}

export class SlaveStatusCollector extends UpstreamCollector {
  readonly domain = DOMAIN;
  /** The statement that worked last (reset by prepare). */
  #statement: string | undefined;

  override async prepare(...args: Parameters<UpstreamCollector['prepare']>): Promise<void> {
    this.#statement = undefined;
    await super.prepare(...args);
  }

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    slaveStatusSamples(await this.#rows(signal), out);
  }

  async #rows(signal: AbortSignal): Promise<Row[]> {
    if (this.#statement !== undefined) return this.db.query(this.#statement, [], { signal });
    let last: unknown;
    let told: unknown;
    for (const sql of STATEMENTS) {
      signal.throwIfAborted();
      try {
        const rows = await this.db.query(sql, [], { signal });
        this.#statement = sql;
        return rows;
      } catch (err) {
        last = err;
        if (told === undefined && (err as { errno?: unknown }).errno !== ER_PARSE_ERROR) told = err;
      }
    }
    throw told ?? last;
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: ['SHOW ALL SLAVES STATUS', 'SHOW SLAVE STATUS', 'SHOW REPLICA STATUS'],
    families: [...Object.values(GTID)],
    labels: LABELS,
  }),
  create: (ctx) => new SlaveStatusCollector(ctx),
};
