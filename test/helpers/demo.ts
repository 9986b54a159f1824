/**
 * The demo's database setup and config, shared by scripts/demo.mjs and the test that checks
 * a healthy demo monitor shows no error: the heartbeat table, the monitoring account with
 * exactly the privileges the default plan needs on MariaDB, and the agent's config.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './agent.js';
import type { MariaDB } from './mariadb.js';

/** The demo account. */
export const DEMO_USER = 'sonde';
export const DEMO_PASSWORD = 'sonde-demo';

/** The heartbeat table, as docs/heartbeat.md creates it. */
export const HEARTBEAT_TABLE_SQL =
  'CREATE TABLE blip.heartbeat (src_id varchar(200) NOT NULL PRIMARY KEY, src_role varchar(200) NULL DEFAULT NULL, ts timestamp(3) NOT NULL, freq smallint unsigned NOT NULL) ENGINE=InnoDB';

/** Titles (first line) of the SQL blocks in docs/grants.md the demo runs on MariaDB. */
export const MARIADB_DEFAULT_PLAN_BLOCK = '-- MariaDB 10.5 and later: default plan';
export const HEARTBEAT_BLOCK = '-- Heartbeat writer and reader (every flavor)';

/** docs/grants.md, read from the repository. */
export function grantsDoc(): string {
  return readFileSync(join(ROOT, 'docs/grants.md'), 'utf8');
}

/**
 * The statements of the ```sql block of `markdown` whose first line is `title`, with
 * `<password>` replaced. Throws when there is no such block, so a renamed block fails loudly.
 */
export function documentedStatements(markdown: string, title: string, password: string): string[] {
  for (const block of markdown.split('```sql\n').slice(1)) {
    const body = block.slice(0, block.indexOf('```'));
    if (body.split('\n')[0]?.trim() !== title) continue;
    return body
      .split(';')
      .map((st) => st.replace(/^\s*--.*$/gm, '').trim())
      .filter((st) => st !== '')
      .map((st) => st.replaceAll('<password>', password));
  }
  throw new Error(`docs/grants.md: no sql block starting with "${title}"`);
}

/** The server arguments the demo uses: a binary log, so `size.binlog` has something to read. */
export const DEMO_SERVER_ARGS: readonly string[] = ['--log-bin=mysql-bin', '--server-id=1'];

/**
 * Create the heartbeat table and the demo account on a fresh server (as root), with exactly
 * the statements docs/grants.md gives for MariaDB: the default plan and the heartbeat.
 */
export async function setupDemoDatabase(db: MariaDB): Promise<void> {
  await db.query('CREATE DATABASE blip');
  await db.query(HEARTBEAT_TABLE_SQL);
  const doc = grantsDoc();
  for (const title of [MARIADB_DEFAULT_PLAN_BLOCK, HEARTBEAT_BLOCK])
    for (const st of documentedStatements(doc, title, DEMO_PASSWORD)) await db.query(st);
}

/**
 * The demo config: one monitor on the server's socket, the default plan, a heartbeat
 * writer, and the mysqld_exporter emulation on `exporterListen`. Its sink is `noop` (the web
 * page and /metrics show the values), or `log` (every collection on stdout) with `logSink`.
 */
export function demoConfig(opts: {
  apiBind: string;
  socket: string;
  exporterListen?: string;
  logSink?: boolean;
}): string {
  const listen = opts.exporterListen ?? '127.0.0.1:9104';
  const sink = opts.logSink === true ? 'log' : 'noop';
  return `# sonde demo config: one monitor on a throwaway MariaDB, the default plan, the ${sink} sink,
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
sinks:
  ${sink}: {}
monitors:
  - id: demo
    socket: ${opts.socket}
`;
}
