/**
 * The demo's database setup and config, shared by scripts/demo.mjs and the test that checks
 * a healthy demo monitor shows no error: the heartbeat table, the monitoring account with
 * exactly the privileges the default plan needs on MariaDB, and the agent's config.
 */
import type { MariaDB } from './mariadb.js';

/** The demo account. */
export const DEMO_USER = 'sonde';
export const DEMO_PASSWORD = 'sonde-demo';

/** The heartbeat table, as docs/heartbeat.md creates it. */
export const HEARTBEAT_TABLE_SQL =
  'CREATE TABLE blip.heartbeat (src_id varchar(200) NOT NULL PRIMARY KEY, src_role varchar(200) NULL DEFAULT NULL, ts timestamp(3) NOT NULL, freq smallint unsigned NOT NULL) ENGINE=InnoDB';

/**
 * The grants of the MariaDB (10.5+) statements in docs/grants.md for the default plan and
 * the heartbeat, in `GRANT <entry> TO ...` form: `innodb` needs PROCESS, `repl` SLAVE
 * MONITOR, `size.binlog` BINLOG MONITOR, the heartbeat writer and reader the heartbeat
 * table. A test checks that these are the lines of the documented statements.
 */
export const MARIADB_DEFAULT_PLAN_GRANTS: readonly string[] = [
  'PROCESS, BINLOG MONITOR, SLAVE MONITOR ON *.*',
  'SELECT, INSERT, UPDATE, DELETE ON blip.heartbeat',
];

/** The server arguments the demo uses: a binary log, so `size.binlog` has something to read. */
export const DEMO_SERVER_ARGS: readonly string[] = ['--log-bin=mysql-bin', '--server-id=1'];

/** Create the heartbeat table and the demo account on a fresh server (as root). */
export async function setupDemoDatabase(db: MariaDB): Promise<void> {
  await db.query('CREATE DATABASE blip');
  await db.query(HEARTBEAT_TABLE_SQL);
  await db.createUser(DEMO_USER, DEMO_PASSWORD, [...MARIADB_DEFAULT_PLAN_GRANTS]);
}

/**
 * The demo config: one monitor on the server's socket, the default plan, a heartbeat
 * writer, and the mysqld_exporter emulation on `exporterListen`.
 */
export function demoConfig(opts: { apiBind: string; socket: string; exporterListen?: string }): string {
  const listen = opts.exporterListen ?? '127.0.0.1:9104';
  return `# sonde demo config: one monitor on a throwaway MariaDB, the default plan, the log sink,
# a heartbeat writer, and the mysqld_exporter emulation on ${listen}.
api:
  bind: ${opts.apiBind}
mysql:
  username: ${DEMO_USER}
  password: ${DEMO_PASSWORD}
heartbeat:
  freq: 1s
exporter:
  mode: dual
  flags:
    web.listen-address: ${listen}
monitors:
  - id: demo
    socket: ${opts.socket}
`;
}
