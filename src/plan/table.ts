/**
 * Reading plans from a plan table (sonde's form of it).
 *
 * Blip never managed to read its plan table (wrong column name, invalid quoting); sonde
 * runs `SELECT name, plan, monitor_id FROM `db`.`tbl` [WHERE monitor_id = ?] ORDER BY name`
 * and, for tables created after Blip's code rather than its docs, retries with the column
 * `monitorId` when `monitor_id` does not exist (errno 1054). Read errors are load errors.
 */
import type { Db, DbError, Row } from '../core/db.js';
import type { Plan } from '../core/plan.js';
import { PlanError, parsePlan } from './parse.js';

/** Timeout of a plan table read. */
export const PLAN_TABLE_TIMEOUT_MS = 5000;

/** MySQL ER_BAD_FIELD_ERROR: unknown column. */
const ER_BAD_FIELD_ERROR = 1054;

function quoteIdent(name: string): string {
  return '`' + name.replace(/`/g, '``') + '`';
}

/** `tbl` → `` `blip`.`tbl` ``; `db.tbl` → `` `db`.`tbl` `` (split at the first dot). */
export function planTableIdent(table: string): string {
  const dot = table.indexOf('.');
  const [db, tbl] = dot < 0 ? ['blip', table] : [table.slice(0, dot), table.slice(dot + 1)];
  return `${quoteIdent(db)}.${quoteIdent(tbl)}`;
}

/** The query for a plan table; `monitorScoped` adds `WHERE <col> = ?`. */
export function planTableQuery(table: string, monitorScoped: boolean, column = 'monitor_id'): string {
  const col = column === 'monitor_id' ? 'monitor_id' : `${quoteIdent(column)} AS monitor_id`;
  const where = monitorScoped ? ` WHERE ${quoteIdent(column)} = ?` : '';
  return `SELECT name, plan, ${col} FROM ${planTableIdent(table)}${where} ORDER BY name ASC`;
}

async function queryRows(db: Db, table: string, monitorId: string | undefined): Promise<Row[]> {
  const params = monitorId === undefined ? [] : [monitorId];
  const opts = { timeoutMs: PLAN_TABLE_TIMEOUT_MS };
  try {
    return await db.query(planTableQuery(table, monitorId !== undefined), params, opts);
  } catch (err) {
    if ((err as DbError).errno !== ER_BAD_FIELD_ERROR) throw err;
    return db.query(planTableQuery(table, monitorId !== undefined, 'monitorId'), params, opts);
  }
}

/**
 * Read plans from `table` through `db`. With `monitorId` undefined the shared plans are
 * read: rows whose `monitor_id` is NULL or empty (rows scoped to a monitor are that
 * monitor's, not everyone's). With a monitor id, only that monitor's rows. Rows come in
 * name order; each plan's source is `table`. Plans are parsed, not validated.
 * Throws PlanError `cannot read plan table <table>: <err>` or
 * `cannot decode YAML in plan table <table>, plan <name>: <err>`.
 */
export async function readPlanTable(db: Db, table: string, monitorId?: string): Promise<Plan[]> {
  let rows: Row[];
  try {
    rows = await queryRows(db, table, monitorId);
  } catch (err) {
    throw new PlanError(`cannot read plan table ${table}: ${(err as Error).message}`, { cause: err });
  }
  const plans: Plan[] = [];
  for (const row of rows) {
    if (
      monitorId === undefined &&
      row.monitor_id !== null &&
      row.monitor_id !== undefined &&
      row.monitor_id !== ''
    ) {
      continue;
    }
    const name = row.name ?? '';
    try {
      plans.push(parsePlan(name, table, row.plan ?? ''));
    } catch (err) {
      throw new PlanError(
        `cannot decode YAML in plan table ${table}, plan ${name}: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
  }
  return plans;
}
