/**
 * A throwaway MariaDB primary/replica pair for replication tests (built on startMariaDB).
 *
 * The primary runs with a ROW binary log (server id 1); the replica (server id 2) is
 * read-only with a relay log and replicates from the primary over TCP with GTID
 * (`MASTER_USE_GTID=slave_pos`) as user `repl`. startReplicationPair() returns once both
 * replica threads run.
 *
 * Root bypasses `read_only` (it has READ_ONLY ADMIN), so a test that needs the replica's
 * read-only errors must use an ordinary user.
 *
 * ```ts
 * let pair: ReplicationPair;
 * before(async () => { pair = await startReplicationPair(); });
 * after(async () => { await pair.stop(); });
 * ```
 */
import { startMariaDB, type MariaDB } from './mariadb.js';

/** Replication account created on the primary (it replicates to the replica too). */
export const REPL_USER = 'repl';
const REPL_PASSWORD = 'repl-pw-test-only';
/** How long the wait helpers wait by default. */
const WAIT_MS = 20_000;

export interface ReplicaThreads {
  io: string;
  sql: string;
  lastErrno: number;
  lastError: string;
}

export interface ReplicationPair {
  primary: MariaDB;
  replica: MariaDB;
  /** Stop both servers and remove their data. Idempotent. */
  stop(): Promise<void>;
  /** The replica's SHOW SLAVE STATUS row (root), or undefined when it is not a replica. */
  replicaStatus(): Promise<Record<string, unknown> | undefined>;
  /** Slave_IO_Running / Slave_SQL_Running / Last_Errno / Last_Error of the replica. */
  threads(): Promise<ReplicaThreads>;
  /** STOP SLAVE SQL_THREAD and wait until it has stopped. */
  stopSqlThread(): Promise<void>;
  /** START SLAVE SQL_THREAD and wait until both threads run. */
  startSqlThread(): Promise<void>;
  /** Wait until both replica threads report Yes. */
  waitRunning(timeoutMs?: number): Promise<void>;
  /** Wait until the replica has applied everything the primary has binlogged so far. */
  waitCaughtUp(timeoutMs?: number): Promise<void>;
  /**
   * Break replication with a duplicate-key conflict: a row is inserted on the replica
   * directly, then the same key on the primary; the SQL thread stops with error 1062.
   * Resolves once the replica shows the error.
   */
  breakReplication(): Promise<void>;
  /** Undo breakReplication(): remove the conflicting replica row, restart the SQL thread, catch up. */
  repairReplication(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function text(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint') return v.toString();
  return '';
}

/** Poll `check` until it returns true or the time is up (then throw with `what`). */
async function waitFor(
  what: string,
  timeoutMs: number,
  check: () => Promise<boolean>,
  detail?: () => Promise<string>,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${detail ? `: ${await detail()}` : ''}`,
      );
    }
    await sleep(50);
  }
}

/** Start a primary and a replica replicating from it; `args` are added to both servers' arguments. */
export async function startReplicationPair(opts: { args?: string[] } = {}): Promise<ReplicationPair> {
  const extra = opts.args ?? [];
  const primary = await startMariaDB({
    args: ['--log-bin=mysql-bin', '--server-id=1', '--binlog-format=ROW', ...extra],
  });
  let replica: MariaDB | undefined;
  try {
    replica = await startMariaDB({
      args: ['--server-id=2', '--read-only=ON', '--relay-log=relay-bin', '--skip-slave-start', ...extra],
    });
    await primary.query(`CREATE USER ?@'%' IDENTIFIED BY ?`, [REPL_USER, REPL_PASSWORD]);
    await primary.query(`GRANT REPLICATION SLAVE ON *.* TO ?@'%'`, [REPL_USER]);
    await replica.query(
      `CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=${primary.port}, MASTER_USER=?, MASTER_PASSWORD=?, MASTER_CONNECT_RETRY=1, MASTER_USE_GTID=slave_pos`,
      [REPL_USER, REPL_PASSWORD],
    );
    await replica.query('START SLAVE');
  } catch (err) {
    await replica?.stop();
    await primary.stop();
    throw err;
  }
  const r = replica;

  const replicaStatus = async (): Promise<Record<string, unknown> | undefined> =>
    (await r.query('SHOW SLAVE STATUS'))[0];

  const threads = async (): Promise<ReplicaThreads> => {
    const row = (await replicaStatus()) ?? {};
    return {
      io: text(row['Slave_IO_Running']),
      sql: text(row['Slave_SQL_Running']),
      lastErrno: Number(text(row['Last_Errno']) || '0'),
      lastError: text(row['Last_Error']),
    };
  };
  const describeThreads = async () => JSON.stringify(await threads());

  const waitRunning = async (timeoutMs = WAIT_MS) =>
    waitFor(
      'both replica threads to run',
      timeoutMs,
      async () => {
        const t = await threads();
        return t.io === 'Yes' && t.sql === 'Yes';
      },
      describeThreads,
    );

  const waitCaughtUp = async (timeoutMs = WAIT_MS): Promise<void> => {
    const [row] = await primary.query('SELECT @@gtid_binlog_pos AS pos');
    const pos = text(row?.['pos']);
    if (pos === '') return;
    // MASTER_GTID_WAIT returns 0 once the replica has applied `pos`, -1 on timeout.
    const [res] = await r.query('SELECT MASTER_GTID_WAIT(?, ?) AS w', [pos, timeoutMs / 1000]);
    if (Number(res?.['w']) !== 0) {
      throw new Error(`replica did not reach ${pos} within ${timeoutMs} ms: ${await describeThreads()}`);
    }
  };

  let stopped = false;
  const pair: ReplicationPair = {
    primary,
    replica: r,
    async stop() {
      if (stopped) return;
      stopped = true;
      await r.query('STOP SLAVE').catch(() => undefined);
      await Promise.allSettled([r.stop(), primary.stop()]);
    },
    replicaStatus,
    threads,
    async stopSqlThread() {
      await r.query('STOP SLAVE SQL_THREAD');
      await waitFor(
        'the SQL thread to stop',
        WAIT_MS,
        async () => (await threads()).sql === 'No',
        describeThreads,
      );
    },
    async startSqlThread() {
      await r.query('START SLAVE SQL_THREAD');
      await waitRunning();
    },
    waitRunning,
    waitCaughtUp,
    async breakReplication() {
      await primary.query('CREATE DATABASE IF NOT EXISTS sonde_conflict');
      await primary.query('CREATE TABLE IF NOT EXISTS sonde_conflict.t (id INT PRIMARY KEY)');
      await primary.query('DELETE FROM sonde_conflict.t');
      await waitCaughtUp();
      await r.query('INSERT INTO sonde_conflict.t VALUES (1)');
      await primary.query('INSERT INTO sonde_conflict.t VALUES (1)');
      await waitFor(
        'the SQL thread to stop on the duplicate key',
        WAIT_MS,
        async () => {
          const t = await threads();
          return t.sql === 'No' && t.lastErrno === 1062;
        },
        describeThreads,
      );
    },
    async repairReplication() {
      await r.query('DELETE FROM sonde_conflict.t WHERE id = 1');
      await r.query('START SLAVE SQL_THREAD');
      await waitRunning();
      await waitCaughtUp();
    },
  };
  try {
    await waitRunning();
  } catch (err) {
    await pair.stop();
    throw err;
  }
  return pair;
}
