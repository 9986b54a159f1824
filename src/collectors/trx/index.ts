/**
 * trx — age of the oldest open InnoDB transaction.
 *
 * One cheap query over information_schema.INNODB_TRX (needs PROCESS): the difference
 * between now and the earliest `trx_started`, in whole seconds, 0 when nothing is open.
 * InnoDB serves INNODB_TRX from a snapshot refreshed at most every 100 ms, so a transaction
 * that began or ended in the last 0.1 s may not be seen yet (the age itself is exact: NOW()
 * is evaluated per query).
 * The source is the same on every flavor; it still goes through the source table so a
 * future server without INNODB_TRX gets "not supported" once instead of a failure per interval.
 */
import type {
  CollectError,
  CollectResult,
  CollectorHelp,
  CollectorRegistration,
} from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import type { DomainPlan } from '../../core/plan.js';
import { parseValue } from '../../db/values.js';
import { field, queryError } from '../kit/common.js';
import { PerLevelQueryCollector, type LevelQuery } from '../kit/per-level-query.js';

export const DOMAIN = 'trx';

/** Blip's query, verbatim: seconds since the oldest trx_started, 0 without one. */
export const TRX_SQL =
  'SELECT COALESCE(UNIX_TIMESTAMP(NOW()) - UNIX_TIMESTAMP(MIN(trx_started)), 0) t FROM information_schema.innodb_trx';

export const help: CollectorHelp = {
  domain: DOMAIN,
  description: 'Age of the oldest open InnoDB transaction (information_schema.INNODB_TRX)',
  sources: [TRX_SQL],
  options: [],
  errors: [],
  groups: [],
  meta: [],
  metrics: [
    {
      name: 'oldest',
      type: MetricType.Gauge,
      description: 'Seconds the oldest open InnoDB transaction has been running (0 when none)',
    },
  ],
};

/**
 * Check one level's metric list: non-empty and only `oldest` (plans may capitalise it).
 * Throws the Prepare error otherwise.
 */
export function checkTrxMetrics(metrics: readonly string[]): void {
  if (metrics.length === 0) throw new Error('no metrics specified; expected: oldest');
  for (const m of metrics) {
    if (m.toLowerCase() !== 'oldest') throw new Error(`invalid metric: ${m} (trx has only: oldest)`);
  }
}

/** Pure part of collect(): the one-row result → `oldest`, nothing when it does not parse. */
export function trxValues(rows: readonly Row[]): MetricValue[] {
  const row = rows[0];
  const value = row === undefined ? 0 : parseValue(field(row, 't') ?? null);
  return value === undefined ? [] : [{ name: 'oldest', value, type: MetricType.Gauge }];
}

export class TrxCollector extends PerLevelQueryCollector<LevelQuery> {
  readonly domain = DOMAIN;
  protected readonly source = 'innodb_trx';

  protected buildQuery(dp: DomainPlan): LevelQuery {
    checkTrxMetrics(dp.metrics);
    return { sql: TRX_SQL };
  }

  protected toResult(rows: Row[]): CollectResult {
    return { values: trxValues(rows) };
  }

  protected override queryFailure(err: unknown): CollectError {
    return queryError(err, { what: TRX_SQL });
  }
}

export const registration: CollectorRegistration = {
  help,
  create: (ctx) => new TrxCollector(ctx),
};
