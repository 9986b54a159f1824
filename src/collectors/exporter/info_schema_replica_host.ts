/**
 * exporter.info_schema.replica_host — mysqld_exporter's `info_schema.replica_host` scraper:
 * Aurora MySQL's `information_schema.replica_host_status`, one row per instance of the
 * cluster (role `writer` for the row whose SESSION_ID is `MASTER_SESSION_ID`, else `reader`).
 *
 * Five gauges per row, labelled server_id and role: CPU (percent), the source-replica
 * latency (µs → s), the replica lag (ms → s), the log stream speed (KiB/s) and the replay
 * latency (µs → s). Servers without the table (error 1109: every MySQL but Aurora, and
 * MariaDB) give no series and no error. A value that does not read as a number fails the
 * scrape (the rows before it are kept).
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import { errnoOf } from '../../core/errors.js';
import type { MetricValue } from '../../core/metrics.js';
import { ER_UNKNOWN_TABLE } from '../../db/errnos.js';
import { UpstreamCollector, family, parseGoFloat, sample, upstreamHelp, type Family } from './common.js';

export const DOMAIN = 'exporter.info_schema.replica_host';

export const SQL = `SELECT SERVER_ID
     , if(SESSION_ID='MASTER_SESSION_ID','writer','reader') AS ROLE
     , CPU
     , MASTER_SLAVE_LATENCY_IN_MICROSECONDS
     , REPLICA_LAG_IN_MILLISECONDS
     , LOG_STREAM_SPEED_IN_KiB_PER_SECOND
     , CURRENT_REPLAY_LATENCY_IN_MICROSECONDS
  FROM information_schema.replica_host_status`;

const P = 'mysql_info_schema_replica_host_';

/** Column → family and the factor to its unit; the microsecond columns are integers. */
const COLUMNS: readonly { column: string; f: Family; scale: number; integer?: boolean }[] = [
  { column: 'CPU', f: family(`${P}cpu_percent`, 'The CPU usage as a percentage.', 'gauge'), scale: 1 },
  {
    column: 'MASTER_SLAVE_LATENCY_IN_MICROSECONDS',
    f: family(`${P}replica_latency_seconds`, 'The source-replica latency in seconds.', 'gauge'),
    scale: 0.000001,
    integer: true,
  },
  {
    column: 'REPLICA_LAG_IN_MILLISECONDS',
    f: family(`${P}lag_seconds`, 'The replica lag in seconds.', 'gauge'),
    scale: 0.001,
  },
  {
    column: 'LOG_STREAM_SPEED_IN_KiB_PER_SECOND',
    f: family(`${P}log_stream_speed`, 'The log stream speed in kilobytes per second.', 'gauge'),
    scale: 1,
  },
  {
    column: 'CURRENT_REPLAY_LATENCY_IN_MICROSECONDS',
    f: family(`${P}replay_latency_seconds`, 'The current replay latency in seconds.', 'gauge'),
    scale: 0.000001,
    integer: true,
  },
];

/** replica_host_status rows (columns by position, in SQL's order) → samples. */
export function replicaHostSamples(rows: readonly Row[], out: MetricValue[]): void {
  for (const row of rows) {
    const cells = Object.values(row);
    const labels = { server_id: cells[0] ?? '', role: cells[1] ?? '' };
    const values = COLUMNS.map(({ column, scale, integer }, i) => {
      const text = cells[i + 2] ?? '';
      const n = integer === true ? (/^\d+$/.test(text) ? Number(text) : undefined) : parseGoFloat(text);
      if (n === undefined)
        throw new Error(`replica_host_status: ${column} ${JSON.stringify(text)} is no number`);
      return n * scale;
    });
    COLUMNS.forEach(({ f }, i) => out.push(sample(f, values[i]!, labels)));
  }
}

export class ReplicaHostCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    let rows: Row[];
    try {
      rows = await this.db.query(SQL, [], { signal });
    } catch (err) {
      if (errnoOf(err) === ER_UNKNOWN_TABLE) return; // not Aurora: nothing to serve
      throw err;
    }
    replicaHostSamples(rows, out);
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: ['information_schema.replica_host_status (Aurora MySQL)'],
    families: COLUMNS.map((c) => c.f),
    labels: ['server_id', 'role'],
  }),
  create: (ctx) => new ReplicaHostCollector(ctx),
};
