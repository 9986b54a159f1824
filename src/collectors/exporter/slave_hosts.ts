/**
 * exporter.slave_hosts — mysqld_exporter's `slave_hosts` scraper: one info series per
 * replica registered with this primary.
 *
 * `SHOW SLAVE HOSTS` is tried first; when the server does not know that statement (parse
 * error 1064, MySQL 8.4+) `SHOW REPLICAS` is sent instead. Any other error is the scrape's
 * error. The result has three shapes, told apart by the column count:
 * - 4 columns (MariaDB, MySQL 5.5): Server_id, Host, Port, Master_id;
 * - 5 columns, the fifth a UUID (MySQL 5.6+): Server_id, Host, Port, Master_id, Slave_UUID;
 * - 5 columns, the fifth no UUID (older MySQL): Server_id, Host, Port, Rpl_recovery_rank,
 *   Master_id.
 * Columns are read by position, as their names changed across versions (Replica_UUID,
 * Source_id). Any other column count fails the scrape.
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import { errnoOf } from '../../core/errors.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, family, sample, upstreamHelp } from './common.js';

export const DOMAIN = 'exporter.slave_hosts';

/** The parse error a server gives for a statement it does not have. */
const ER_PARSE_ERROR = 1064;

export const SHOW_SLAVE_HOSTS = 'SHOW SLAVE HOSTS';
export const SHOW_REPLICAS = 'SHOW REPLICAS';

const LABELS = ['server_id', 'slave_host', 'port', 'master_id', 'slave_uuid'] as const;

// The name really has `heartbeat` as its subsystem and `mysql_` twice.
const INFO = family('mysql_heartbeat_mysql_slave_hosts_info', 'Information about running slaves', 'gauge');

const HEX = '[0-9a-fA-F]';
/** The UUID spellings a UUID parser accepts: plain, braced, URN, and 32 bare hex digits. */
const UUID = new RegExp(
  `^(?:(?:\\{|urn:uuid:)?${HEX}{8}-${HEX}{4}-${HEX}{4}-${HEX}{4}-${HEX}{12}\\}?|${HEX}{32})$`,
  'i',
);

/** True when `text` is a UUID in one of the accepted spellings. */
export function isUuid(text: string): boolean {
  if (!UUID.test(text)) return false;
  if (text.startsWith('{')) return text.endsWith('}');
  return !text.endsWith('}');
}

/** The replica rows → one info sample each (pure; exported for recorded result sets). */
export function slaveHostsSamples(rows: readonly Row[], out: MetricValue[]): void {
  for (const row of rows) {
    const cells = Object.values(row).map((v) => v ?? '');
    if (cells.length !== 4 && cells.length !== 5)
      throw new Error(`${SHOW_SLAVE_HOSTS}: ${cells.length} columns, expected 4 or 5`);
    const [serverId = '', host = '', port = '', fourth = '', fifth] = cells;
    let masterId = fourth;
    let uuid = '';
    if (fifth !== undefined) {
      if (isUuid(fifth)) uuid = fifth;
      else masterId = fifth; // the fourth column is Rpl_recovery_rank
    }
    out.push(
      sample(INFO, 1, { server_id: serverId, slave_host: host, port, master_id: masterId, slave_uuid: uuid }),
    );
  }
}

export class SlaveHostsCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    let rows: Row[];
    try {
      rows = await this.db.query(SHOW_SLAVE_HOSTS, [], { signal });
    } catch (err) {
      if (errnoOf(err) !== ER_PARSE_ERROR) throw err;
      rows = await this.db.query(SHOW_REPLICAS, [], { signal });
    }
    slaveHostsSamples(rows, out);
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: [SHOW_SLAVE_HOSTS, SHOW_REPLICAS],
    families: [INFO],
    labels: LABELS,
  }),
  create: (ctx) => new SlaveHostsCollector(ctx),
};
