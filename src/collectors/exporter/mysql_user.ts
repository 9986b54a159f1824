/**
 * exporter.mysql.user — mysqld_exporter's `mysql.user` scraper: per account of `mysql.user`
 * (on MariaDB 10.4+ a view over mysql.global_priv), labelled mysql_user and hostmask:
 * - always the four resource limits: mysql_mysql_max_questions, _max_updates,
 *   _max_connections, _max_user_connections (gauges);
 * - with option `privileges` (default false), each of the 29 `*_priv` columns read as 1
 *   (`Y`) or 0 (`N`): `mysql_mysql_<column lowercase>`, gauge, HELP `<Column> by user.`
 *   (a value other than Y or N gives no sample).
 * A limit that is no unsigned integer fails the scrape (the accounts before it are kept).
 */
import type { CollectorRegistration } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { UpstreamCollector, boolOption, family, sample, upstreamHelp, type Family } from './common.js';

export const DOMAIN = 'exporter.mysql.user';

export const PRIVILEGE_COLUMNS: readonly string[] = [
  'Select_priv',
  'Insert_priv',
  'Update_priv',
  'Delete_priv',
  'Create_priv',
  'Drop_priv',
  'Reload_priv',
  'Shutdown_priv',
  'Process_priv',
  'File_priv',
  'Grant_priv',
  'References_priv',
  'Index_priv',
  'Alter_priv',
  'Show_db_priv',
  'Super_priv',
  'Create_tmp_table_priv',
  'Lock_tables_priv',
  'Execute_priv',
  'Repl_slave_priv',
  'Repl_client_priv',
  'Create_view_priv',
  'Show_view_priv',
  'Create_routine_priv',
  'Alter_routine_priv',
  'Create_user_priv',
  'Event_priv',
  'Trigger_priv',
  'Create_tablespace_priv',
];

const P = 'mysql_mysql_';

const LIMITS: readonly (readonly [string, Family])[] = [
  'max_questions',
  'max_updates',
  'max_connections',
  'max_user_connections',
].map((c) => [c, family(P + c, `The number of ${c} by user.`, 'gauge')] as const);

export const SQL = `SELECT user, host, ${PRIVILEGE_COLUMNS.join(', ')}, ${LIMITS.map(([c]) => c).join(', ')} FROM mysql.user`;

/** Privilege column (as the result names it) → family, made once per spelling. */
const privilegeFamilies = new Map<string, Family>();

function privilegeFamily(column: string): Family {
  let f = privilegeFamilies.get(column);
  if (f === undefined) {
    f = family(P + column.toLowerCase(), `${column} by user.`, 'gauge');
    privilegeFamilies.set(column, f);
  }
  return f;
}

/** mysql.user rows (user, host, privileges, limits, by position) → samples. */
export function userSamples(rows: readonly Row[], privileges: boolean, out: MetricValue[]): void {
  for (const row of rows) {
    const cells = Object.entries(row);
    const labels = { mysql_user: cells[0]?.[1] ?? '', hostmask: cells[1]?.[1] ?? '' };
    const limits = cells.slice(-LIMITS.length).map(([column, text]) => {
      if (text === null || !/^\d+$/.test(text))
        throw new Error(`mysql.user: ${column} ${JSON.stringify(text)} is no unsigned integer`);
      return Number(text);
    });
    if (privileges) {
      for (const [column, text] of cells.slice(2)) {
        const value = text === 'Y' ? 1 : text === 'N' ? 0 : undefined;
        if (value !== undefined) out.push(sample(privilegeFamily(column), value, labels));
      }
    }
    LIMITS.forEach(([, f], i) => out.push(sample(f, limits[i]!, labels)));
  }
}

export class MysqlUserCollector extends UpstreamCollector {
  readonly domain = DOMAIN;

  protected async scrape(out: MetricValue[], signal: AbortSignal): Promise<void> {
    userSamples(await this.db.query(SQL, [], { signal }), boolOption(this.options.privileges), out);
  }
}

export const registration: CollectorRegistration = {
  help: upstreamHelp(DOMAIN, {
    sources: ['mysql.user'],
    families: [...LIMITS.map(([, f]) => f), ...PRIVILEGE_COLUMNS.map(privilegeFamily)],
    labels: ['mysql_user', 'hostmask'],
  }),
  create: (ctx) => new MysqlUserCollector(ctx),
};
