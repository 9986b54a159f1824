/**
 * size.binlog — total size of the binary logs from `SHOW BINARY LOGS` (spec domains.md §2.7).
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
import {
  CollectError,
  type CollectResult,
  type CollectorHelp,
  type CollectorRegistration,
} from '../../core/collector.js';
import type { Row, ServerInfo } from '../../core/db.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import { versionAtLeast } from '../../db/flavor.js';
import { parseValue } from '../../db/values.js';
import { field, queryError } from '../common.js';
import { PerLevelQueryCollector, type LevelQuery } from '../per-level-query.js';

export const DOMAIN = 'size.binlog';

/** ER_NO_BINARY_LOGGING: "You are not using binary logging". */
export const ER_NO_BINARY_LOGGING = 1381;
/** ER_SPECIFIC_ACCESS_DENIED_ERROR: a privilege such as REPLICATION CLIENT is missing. */
export const ER_SPECIFIC_ACCESS_DENIED = 1227;

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
 * The columns `SHOW BINARY LOGS` returns, per flavor and version (for docs and tests; the
 * parser does not depend on it).
 */
export function binlogColumns(info: ServerInfo): string[] {
  if (info.flavor === 'mysql' && versionAtLeast(info, 8, 0, 14))
    return ['Log_name', 'File_size', 'Encrypted'];
  return ['Log_name', 'File_size'];
}

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

const POLICY_BY_ERRNO: ReadonlyMap<number, string> = new Map([
  [ER_NO_BINARY_LOGGING, 'binlog-not-enabled'],
  [ER_SPECIFIC_ACCESS_DENIED, 'access-denied'],
]);

export class SizeBinlogCollector extends PerLevelQueryCollector<LevelQuery> {
  readonly domain = DOMAIN;

  // No options and no metric list: a level either collects the domain or not. The statement
  // is the same on every flavor; only its column count differs (binlogColumns).
  protected buildQuery(): LevelQuery {
    return { sql: SQL };
  }

  protected toResult(rows: Row[]): CollectResult {
    return { values: [{ name: 'bytes', value: binlogBytes(rows), type: MetricType.Gauge }] };
  }

  /** 1381 and 1227 are governed by the binlog-not-enabled and access-denied policies. */
  protected override queryFailure(err: unknown): CollectError {
    const e = queryError(err);
    const policy = e.errno === undefined ? undefined : POLICY_BY_ERRNO.get(e.errno);
    if (policy === undefined) return e;
    return new CollectError(e.message, {
      policy,
      zero: ZERO,
      ...(e.errno === undefined ? {} : { errno: e.errno }),
      cause: err,
    });
  }
}

export const registration: CollectorRegistration = {
  help,
  create: (ctx) => new SizeBinlogCollector(ctx),
};
