/**
 * lock.wait's statements. Row-lock waits: information_schema.INNODB_LOCK_WAITS and
 * INNODB_LOCKS (MariaDB, MySQL 5.7) or performance_schema.data_lock_waits and data_locks
 * (MySQL 8), with information_schema.INNODB_TRX for both transactions and the processlist for
 * both connections (an idle blocker shows as COMMAND `Sleep`). Metadata-lock waits:
 * performance_schema.metadata_locks, pending against granted on the same object.
 * Every statement returns the same column names.
 */
import { ownStatement } from '../kit/query/texts.js';

const CONNECTIONS =
  'LEFT JOIN information_schema.PROCESSLIST pw ON pw.ID = r.trx_mysql_thread_id ' +
  'LEFT JOIN information_schema.PROCESSLIST pb ON pb.ID = b.trx_mysql_thread_id';
const COLUMNS =
  'r.trx_mysql_thread_id AS WAITING_ID, pw.USER AS WAITING_USER, r.trx_query AS WAITING_QUERY, ' +
  'TIMESTAMPDIFF(SECOND, r.trx_wait_started, NOW()) AS WAIT_S, ' +
  'b.trx_mysql_thread_id AS BLOCKING_ID, pb.USER AS BLOCKING_USER, b.trx_query AS BLOCKING_QUERY, ' +
  'pb.COMMAND AS BLOCKING_COMMAND, pb.TIME AS BLOCKING_TIME';

/** MariaDB and MySQL 5.7. */
export const ROW_LOCKS_IS = ownStatement(
  `SELECT ${COLUMNS}, l.lock_table AS LOCK_TABLE, l.lock_index AS LOCK_INDEX, l.lock_mode AS LOCK_MODE ` +
    'FROM information_schema.INNODB_LOCK_WAITS w ' +
    'JOIN information_schema.INNODB_TRX r ON r.trx_id = w.requesting_trx_id ' +
    'JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id ' +
    `LEFT JOIN information_schema.INNODB_LOCKS l ON l.lock_id = w.requested_lock_id ${CONNECTIONS}`,
);

/** MySQL 8. */
export const ROW_LOCKS_PFS = ownStatement(
  `SELECT ${COLUMNS}, CONCAT(l.OBJECT_SCHEMA, '.', l.OBJECT_NAME) AS LOCK_TABLE, l.INDEX_NAME AS LOCK_INDEX, l.LOCK_MODE AS LOCK_MODE ` +
    'FROM performance_schema.data_lock_waits w ' +
    'JOIN information_schema.INNODB_TRX r ON r.trx_id = w.REQUESTING_ENGINE_TRANSACTION_ID ' +
    'JOIN information_schema.INNODB_TRX b ON b.trx_id = w.BLOCKING_ENGINE_TRANSACTION_ID ' +
    `LEFT JOIN performance_schema.data_locks l ON l.ENGINE_LOCK_ID = w.REQUESTING_ENGINE_LOCK_ID ${CONNECTIONS}`,
);

/**
 * How many row-lock waits there are now, from the table each join above starts from: cheap
 * where the joins are not (each reads the whole processlist, and on a server with thousands
 * of connections that costs real time), so the joins run only when there is a wait.
 */
export const ROW_WAITS_IS = ownStatement('SELECT COUNT(*) AS N FROM information_schema.INNODB_LOCK_WAITS');
export const ROW_WAITS_PFS = ownStatement('SELECT COUNT(*) AS N FROM performance_schema.data_lock_waits');

/** How many metadata locks are pending now (the join below runs only when some are). */
export const MDL_PENDING = ownStatement(
  "SELECT COUNT(*) AS N FROM performance_schema.metadata_locks WHERE LOCK_STATUS = 'PENDING' AND OBJECT_TYPE = 'TABLE'",
);

/**
 * Pending metadata locks and the granted ones of other threads on the same object. The
 * tables are joined in the order written (STRAIGHT_JOIN), from the few pending locks out:
 * performance_schema tables have no indexes on MariaDB, and another order joins every
 * thread with every thread first.
 */
export const METADATA_LOCKS = ownStatement(
  'SELECT STRAIGHT_JOIN tw.PROCESSLIST_ID AS WAITING_ID, pw.USER AS WAITING_USER, pw.INFO AS WAITING_QUERY, pw.TIME AS WAIT_S, ' +
    'tb.PROCESSLIST_ID AS BLOCKING_ID, pb.USER AS BLOCKING_USER, pb.INFO AS BLOCKING_QUERY, ' +
    'pb.COMMAND AS BLOCKING_COMMAND, pb.TIME AS BLOCKING_TIME, ' +
    "CONCAT(w.OBJECT_SCHEMA, '.', w.OBJECT_NAME) AS LOCK_TABLE, NULL AS LOCK_INDEX, " +
    'w.LOCK_TYPE AS LOCK_MODE, b.LOCK_TYPE AS HELD_MODE ' +
    'FROM performance_schema.metadata_locks w ' +
    'JOIN performance_schema.metadata_locks b ON b.OBJECT_TYPE = w.OBJECT_TYPE AND b.OBJECT_SCHEMA <=> w.OBJECT_SCHEMA ' +
    "AND b.OBJECT_NAME <=> w.OBJECT_NAME AND b.LOCK_STATUS = 'GRANTED' AND b.OWNER_THREAD_ID <> w.OWNER_THREAD_ID " +
    'JOIN performance_schema.threads tw ON tw.THREAD_ID = w.OWNER_THREAD_ID ' +
    'JOIN performance_schema.threads tb ON tb.THREAD_ID = b.OWNER_THREAD_ID ' +
    'LEFT JOIN information_schema.PROCESSLIST pw ON pw.ID = tw.PROCESSLIST_ID ' +
    'LEFT JOIN information_schema.PROCESSLIST pb ON pb.ID = tb.PROCESSLIST_ID ' +
    "WHERE w.LOCK_STATUS = 'PENDING' AND w.OBJECT_TYPE = 'TABLE'",
);

/** The instrument metadata_locks needs. */
export const MDL_INSTRUMENT = 'wait/lock/metadata/sql/mdl';
export const MDL_INSTRUMENT_SQL = ownStatement(
  "SELECT ENABLED FROM performance_schema.setup_instruments WHERE NAME = 'wait/lock/metadata/sql/mdl'",
);
export const MDL_ENABLE_SQL =
  "UPDATE performance_schema.setup_instruments SET ENABLED = 'YES' WHERE NAME = 'wait/lock/metadata/sql/mdl'";

/** Shared metadata lock types that do not block one another (the data-access locks and SU). */
const SHARED = new Set(['SHARED', 'SHARED_HIGH_PRIO', 'SHARED_READ', 'SHARED_WRITE', 'SHARED_UPGRADABLE']);

/** Whether a granted metadata lock blocks a pending one (both shared: not). */
export function mdlBlocks(pending: string, held: string): boolean {
  return !(SHARED.has(pending) && SHARED.has(held));
}
