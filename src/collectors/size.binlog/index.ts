/**
 * size.binlog — total size of the binary logs from `SHOW BINARY LOGS`.
 *
 * One metric, `bytes`: the File_size column summed over every log file. The statement is
 * the same everywhere but its shape is not: MariaDB and MySQL before 8.0.14 return two
 * columns (Log_name, File_size), MySQL 8.0.14+ a third (Encrypted). Blip picks the column
 * count from the version number, so MariaDB 10.x ("≥ 8.0.14") fails every interval. sonde
 * reads File_size by name (falling back to the second column), whatever the column count.
 *
 * Two errors have named policies: `binlog-not-enabled` (1381, the server runs without
 * --log-bin) and `access-denied` (1227, no REPLICATION CLIENT / BINLOG MONITOR privilege).
 * With `zero`, both emit `bytes` = 0.
 */
import type {
  CollectError,
  CollectResult,
  CollectorHelp,
  CollectorRegistration,
} from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import { ER_NO_BINARY_LOGGING, ER_SPECIFIC_ACCESS_DENIED } from '../../db/errnos.js';
import { parseValue } from '../../db/values.js';
import { field, queryError } from '../kit/common.js';
import { PerLevelQueryCollector, type LevelQuery } from '../kit/per-level-query.js';

export const DOMAIN = 'size.binlog';

export const help: CollectorHelp = {
  domain: DOMAIN,
  description: 'Total size of the binary logs (SHOW BINARY LOGS)',
  sources: ['SHOW BINARY LOGS'],
  options: [],
  errors: [
    {
      name: 'access-denied',
      description:
        'Error 1227: the user lacks REPLICATION CLIENT (MySQL) or BINLOG MONITOR (MariaDB); zero emits bytes=0',
      errnos: [ER_SPECIFIC_ACCESS_DENIED],
    },
    {
      name: 'binlog-not-enabled',
      description: 'Error 1381: binary logging is off on the server; zero emits bytes=0',
      errnos: [ER_NO_BINARY_LOGGING],
    },
  ],
  groups: [],
  meta: [],
  metrics: [
    { name: 'bytes', type: MetricType.Gauge, description: 'Sum of File_size over all binary log files' },
  ],
};

export const SQL = 'SHOW BINARY LOGS';

/**
 * Pure part of collect(): the sum of File_size over the rows. The column is found by name
 * (any case), else taken as the second column. Unparsable sizes are skipped; no rows → 0.
 */
export function binlogBytes(rows: readonly Row[]): number {
  let sum = 0;
  for (const row of rows) {
    let text = field(row, 'File_size');
    if (text === undefined) text = Object.values(row)[1];
    const n = parseValue(text);
    if (n !== undefined) sum += n;
  }
  return sum;
}

/** What `zero` emits for this domain. */
const ZERO: MetricValue[] = [{ name: 'bytes', value: 0, type: MetricType.Gauge }];

export class SizeBinlogCollector extends PerLevelQueryCollector<LevelQuery> {
  readonly domain = DOMAIN;
  protected readonly source = 'show-binary-logs';

  // No options and no metric list: a level either collects the domain or not. The statement
  // is the same on every flavor; only its column count differs (see binlogBytes).
  protected buildQuery(): LevelQuery {
    return { sql: SQL };
  }

  protected toResult(rows: Row[]): CollectResult {
    return { values: [{ name: 'bytes', value: binlogBytes(rows), type: MetricType.Gauge }] };
  }

  /** 1381 and 1227 map to the binlog-not-enabled and access-denied policies (help). */
  protected override queryFailure(err: unknown): CollectError {
    return queryError(err, { zero: ZERO });
  }
}

export const registration: CollectorRegistration = {
  help,
  create: (ctx) => new SizeBinlogCollector(ctx),
};
