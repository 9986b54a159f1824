/**
 * repl — is this replica replicating?
 *
 * One metric, `running` (gauge): 1 when both replica threads run and the SQL thread has no
 * error, 0 when replication is stopped, connecting or broken, −1 (or dropped, per
 * `report-not-a-replica`) when the server is not a replica. Meta `source` = the source host.
 *
 * The statement comes from the source table (sources.ts): MySQL 8.0.22 renamed the command
 * and its columns (`SHOW REPLICA STATUS`, `Replica_*`, `Source_Host`) and 8.4 removed the
 * old one; MariaDB keeps `SHOW SLAVE STATUS` and its `Slave_*`/`Master_Host` columns (even for its own `SHOW REPLICA STATUS` alias). Rows are
 * read with both spellings accepted, so a surprising server still parses.
 *
 * Limitation (as Blip): only the last row is used. MySQL multi-channel replicas return one
 * row per channel; MariaDB multi-source connections other than the default one are only
 * visible through `SHOW ALL SLAVES STATUS`, which this domain does not read.
 */
import type {
  CollectResult,
  Collector,
  CollectorContext,
  CollectorHelp,
  CollectorRegistration,
} from '../../core/collector.js';
import type { Db, Row, ServerInfo } from '../../core/db.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import type { Plan } from '../../core/plan.js';
import { ER_SPECIFIC_ACCESS_DENIED } from '../../db/errnos.js';
import { isYes } from '../../util/text.js';
import { field, levelPlans, option, queryError } from '../kit/common.js';
import { sourceFor } from '../kit/sources.js';

export const DOMAIN = 'repl';

export const help: CollectorHelp = {
  domain: DOMAIN,
  description: 'Replication status: whether this replica is replicating (SHOW REPLICA/SLAVE STATUS)',
  sources: ['SHOW REPLICA STATUS (MySQL 8.0.22+)', 'SHOW SLAVE STATUS (MySQL before 8.0.22, MariaDB)'],
  options: [
    {
      name: 'report-not-a-replica',
      description: 'Report running = -1 when the server is not a replica',
      default: 'no',
      values: {
        yes: 'Report running = -1 when the server is not a replica',
        no: 'Drop the metric when the server is not a replica',
      },
    },
  ],
  errors: [
    {
      name: 'access-denied',
      description:
        'Lacking the privilege to read replica status (MySQL: REPLICATION CLIENT; MariaDB: SLAVE MONITOR), error 1227; zero reports running = 0',
      errnos: [ER_SPECIFIC_ACCESS_DENIED],
    },
  ],
  groups: [],
  meta: [{ key: 'source', description: 'Source (primary) host of this replica; empty when not a replica' }],
  metrics: [
    {
      name: 'running',
      type: MetricType.Gauge,
      description: '1 = replicating without error, 0 = stopped, connecting or broken, -1 = not a replica',
    },
  ],
};

/** Which statement reads replica status on a server, and the column spelling it returns. */
export interface ReplicaStatusSource {
  sql: 'SHOW REPLICA STATUS' | 'SHOW SLAVE STATUS';
  columns: 'replica' | 'slave';
}

/** The statement and column spelling of each source key the source table gives for repl. */
const STATEMENTS: Readonly<Record<string, ReplicaStatusSource>> = {
  'show-replica-status': { sql: 'SHOW REPLICA STATUS', columns: 'replica' },
  'show-slave-status': { sql: 'SHOW SLAVE STATUS', columns: 'slave' },
};

/**
 * The statement that reads replica status on this server (the source table decides: MySQL
 * 8.0.22+ `SHOW REPLICA STATUS` with Replica_* / Source_Host columns; older MySQL, unknown
 * versions and MariaDB `SHOW SLAVE STATUS` with Slave_* / Master_Host columns).
 */
export function replicaStatusSource(info: ServerInfo): ReplicaStatusSource {
  const choice = sourceFor(DOMAIN, info);
  const statement = 'source' in choice ? STATEMENTS[choice.source] : undefined;
  if (statement === undefined) throw new Error(`repl: no statement for ${JSON.stringify(choice)}`);
  return statement;
}

/** A column under either spelling (`Replica_IO_Running` or `Slave_IO_Running`). */
function either(row: Row, a: string, b: string): string | null | undefined {
  return field(row, a) ?? field(row, b);
}

/**
 * `running` of one status row: 1 only when the I/O thread and the SQL thread both say `Yes`
 * and `Last_Errno` is `0`; anything else (`No`, `Connecting`, an error, a missing column)
 * is 0, so a stopped or broken replica is never reported as running.
 */
export function runningOf(row: Row): number {
  const io = either(row, 'Replica_IO_Running', 'Slave_IO_Running');
  const sql = either(row, 'Replica_SQL_Running', 'Slave_SQL_Running');
  const errno = field(row, 'Last_Errno') ?? field(row, 'Last_SQL_Errno');
  return io === 'Yes' && sql === 'Yes' && errno === '0' ? 1 : 0;
}

/** The source host of one status row (`Source_Host` or `Master_Host`). */
function sourceOf(row: Row): string {
  return either(row, 'Source_Host', 'Master_Host') ?? '';
}

/** Pure part of collect(): status rows → values. The last row wins (see the module comment). */
export function replValues(rows: readonly Row[], reportNotAReplica: boolean): MetricValue[] {
  const row = rows[rows.length - 1];
  if (row === undefined) {
    return reportNotAReplica
      ? [{ name: 'running', value: -1, type: MetricType.Gauge, meta: { source: '' } }]
      : [];
  }
  return [
    { name: 'running', value: runningOf(row), type: MetricType.Gauge, meta: { source: sourceOf(row) } },
  ];
}

/** Values for the `zero` part of the access-denied policy (fresh objects each time). */
function zeroValues(): MetricValue[] {
  return [{ name: 'running', value: 0, type: MetricType.Gauge, meta: { source: '' } }];
}

export class ReplCollector implements Collector {
  readonly domain = DOMAIN;
  readonly #db: Db;
  /** level → report-not-a-replica */
  #levels = new Map<string, boolean>();
  #source: ReplicaStatusSource = { sql: 'SHOW SLAVE STATUS', columns: 'slave' };

  constructor(ctx: CollectorContext) {
    this.#db = ctx.db;
  }

  /** The statement chosen in prepare (for tests and docs). */
  get source(): ReplicaStatusSource {
    return this.#source;
  }

  async prepare(plan: Plan, signal: AbortSignal): Promise<void> {
    const levels = new Map<string, boolean>();
    for (const [level, dp] of levelPlans(plan, DOMAIN)) {
      if (dp.metrics.length === 0) throw new Error('no metrics specified; valid metrics: running');
      for (const m of dp.metrics) {
        if (m.toLowerCase() !== 'running') throw new Error(`invalid metric: ${m}; valid metrics: running`);
      }
      levels.set(level, isYes(option(dp, 'report-not-a-replica')));
    }
    this.#levels = levels;
    if (levels.size > 0) this.#source = replicaStatusSource(await this.#db.serverInfo({ signal }));
  }

  async collect(level: string, signal: AbortSignal): Promise<CollectResult> {
    const report = this.#levels.get(level);
    if (report === undefined) return { values: [] };
    let rows: Row[];
    try {
      rows = await this.#db.query(this.#source.sql, [], { signal });
    } catch (err) {
      // 1227 maps to the access-denied policy (help); its `zero` reports running = 0.
      return { values: [], error: queryError(err, { zero: zeroValues() }) };
    }
    return { values: replValues(rows, report) };
  }
}

export const registration: CollectorRegistration = {
  help,
  create: (ctx) => new ReplCollector(ctx),
};
