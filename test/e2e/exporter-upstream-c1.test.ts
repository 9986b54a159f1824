/**
 * The replication, account and schema scrapers compared series by series with Debian's
 * prometheus-mysqld-exporter (0.14) on a MariaDB primary and its replica: label values, and
 * values where they cannot move between two scrapes (users and privileges, auto_increment
 * columns, binary logs, registered replicas, stored heartbeats). The family diff of
 * exporter-upstream.test.ts checks names, TYPE, HELP and label names; this file checks that
 * the same series come out, and that the sub-flags (mysql.user.privileges,
 * heartbeat.database / table / utc) do what mysqld_exporter's do.
 *
 * The servers run in time zone +05:00 so that heartbeat.utc (UTC_TIMESTAMP instead of NOW)
 * shows in the served value.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { builtinCollectors } from '../../src/collectors/builtin.js';
import { NO_EVENTS } from '../../src/core/events.js';
import type { ExporterHandle } from '../../src/core/exporter.js';
import { type PooledDb } from '../../src/db/pool.js';
import { startExporter } from '../../src/exporter/server.js';
import { createScrapeReader, type ScrapeReader } from '../../src/exporter/scrape-reader.js';
import { applyCollectFlags, upstreamPlan } from '../../src/plan/exporter-plan.js';
import type { MariaDB } from '../helpers/mariadb.js';
import { startReplicationPair, type ReplicationPair } from '../helpers/replication.js';
import {
  httpGet,
  parseExposition,
  rootSocketDsn,
  startMysqldExporter,
  type ParsedFamily,
  type Peer,
} from './exporter-peers.js';
import { rootDb } from '../helpers/mariadb.js';

const SCRAPERS = [
  'auto_increment.columns',
  'binlog_size',
  'engine_innodb_status',
  'heartbeat',
  'mysql.user',
  'slave_hosts',
  'slave_status',
];

/** The same flags for both exporters: every scraper above, privileges on. */
const FLAGS: Record<string, string> = {
  ...Object.fromEntries(SCRAPERS.map((s) => [`collect.${s}`, 'true'])),
  'collect.mysql.user.privileges': 'true',
};
/** The heartbeat of another table, written with pt-heartbeat --utc. */
const UTC_FLAGS: Record<string, string> = {
  'collect.heartbeat': 'true',
  'collect.heartbeat.database': 'ops',
  'collect.heartbeat.table': 'hb',
  'collect.heartbeat.utc': 'true',
};

interface Pair {
  sonde: ExporterHandle;
  real: Peer;
  close(): Promise<void>;
}

let repl: ReplicationPair;
const pairs: Record<string, Pair> = {};

/** sonde (through the scrape reader and exporter, as served) and the real exporter, same flags. */
async function startPair(server: MariaDB, flags: Record<string, string>): Promise<Pair> {
  const db: PooledDb = rootDb(server.socket);
  const plan = applyCollectFlags(upstreamPlan(), flags);
  const reader: ScrapeReader = createScrapeReader({
    monitorId: 'db',
    db,
    plan,
    collectors: builtinCollectors(),
  });
  const sonde = await startExporter({
    monitorId: 'db',
    listen: '127.0.0.1:0',
    path: '/metrics',
    source: reader,
    status: { set: () => undefined, delete: () => undefined },
    events: NO_EVENTS,
  });
  const real = await startMysqldExporter(
    rootSocketDsn(server.socket),
    Object.entries(flags).map(([k, v]) => (v === 'true' ? `--${k}` : `--${k}=${v}`)),
  );
  return {
    sonde,
    real,
    close: async () => {
      await sonde.close();
      await real.stop();
      await reader.close();
      await db.close();
    },
  };
}

async function scrape(address: string, scraper: string): Promise<Map<string, ParsedFamily>> {
  const r = await httpGet(`http://${address}/metrics?collect[]=${encodeURIComponent(scraper)}`);
  assert.equal(r.status, 200, `${address}: ${r.body.slice(0, 300)}`);
  const fams = parseExposition(r.body);
  return new Map(
    [...fams].filter(([n]) => !/^(mysql_up|mysql_exporter_|mysqld_exporter_|go_|process_|promhttp_)/.test(n)),
  );
}

/** Both exporters' families of one scraper. */
async function both(pair: string, scraper: string) {
  const p = pairs[pair];
  assert.ok(p !== undefined, pair);
  const [real, sonde] = await Promise.all([
    scrape(p.real.address, scraper),
    scrape(p.sonde.address, scraper),
  ]);
  return { real, sonde };
}

/** family → series key → value, for exact comparison. */
function seriesOf(fams: Map<string, ParsedFamily>, only?: (name: string) => boolean) {
  const out: Record<string, Record<string, string>> = {};
  for (const [name, f] of fams)
    if (only === undefined || only(name)) out[name] = Object.fromEntries(f.series);
  return out;
}

/** family → sorted series keys (label values), for series whose values move. */
function keysOf(fams: Map<string, ParsedFamily>, only?: (name: string) => boolean) {
  const out: Record<string, string[]> = {};
  for (const [name, f] of fams) if (only === undefined || only(name)) out[name] = [...f.series.keys()].sort();
  return out;
}

async function workload(p: ReplicationPair): Promise<void> {
  const q = (sql: string) => p.primary.query(sql);
  await q('CREATE DATABASE heartbeat');
  await q(
    'CREATE TABLE heartbeat.heartbeat (ts varchar(26) NOT NULL, server_id int unsigned NOT NULL PRIMARY KEY)',
  );
  await q("INSERT INTO heartbeat.heartbeat VALUES (DATE_FORMAT(NOW(6), '%Y-%m-%dT%H:%i:%s.%f'), 1)");
  await q('CREATE DATABASE ops');
  await q(
    'CREATE TABLE ops.hb (ts varchar(26) NOT NULL, server_id int unsigned NOT NULL PRIMARY KEY, file varchar(255) DEFAULT NULL, position bigint unsigned DEFAULT NULL)',
  );
  await q(
    "INSERT INTO ops.hb (ts, server_id) VALUES (DATE_FORMAT(UTC_TIMESTAMP(6), '%Y-%m-%dT%H:%i:%s.%f'), 1)",
  );
  await q("INSERT INTO ops.hb (ts, server_id) VALUES ('2024-05-01T12:00:00.250000', 7)");
  await q('CREATE DATABASE shop');
  await q('CREATE TABLE shop.orders (id int AUTO_INCREMENT PRIMARY KEY, v varchar(20))');
  await q('CREATE TABLE shop.Tiny (id tinyint unsigned AUTO_INCREMENT PRIMARY KEY)');
  await q('CREATE TABLE shop.big (n bigint NOT NULL AUTO_INCREMENT, KEY (n)) AUTO_INCREMENT=5000000000');
  await q('CREATE TABLE shop.plain (id int PRIMARY KEY)');
  for (let i = 0; i < 12; i++) await q(`INSERT INTO shop.orders (v) VALUES ('o${i}')`);
  await q('INSERT INTO shop.Tiny VALUES (), (), ()');
  await q('INSERT INTO shop.big VALUES ()');
  await q(
    "CREATE USER 'app'@'10.0.%' IDENTIFIED BY 'app-pw-test-only' WITH MAX_QUERIES_PER_HOUR 100 MAX_UPDATES_PER_HOUR 20 MAX_CONNECTIONS_PER_HOUR 5 MAX_USER_CONNECTIONS 3",
  );
  await q("GRANT SELECT, INSERT, PROCESS ON *.* TO 'app'@'10.0.%'");
  await q('FLUSH BINARY LOGS');
  await q('INSERT INTO shop.orders (v) VALUES (NULL)');
  await p.waitCaughtUp();
}

describe(
  'mysqld_exporter scrapers series by series against the real mysqld_exporter',
  { timeout: 300_000 },
  () => {
    before(async () => {
      repl = await startReplicationPair({
        args: ['--performance-schema=ON', '--report-host=127.0.0.1', '--default-time-zone=+05:00'],
      });
      await repl.waitRunning();
      await workload(repl);
      pairs.primary = await startPair(repl.primary, FLAGS);
      pairs.replica = await startPair(repl.replica, FLAGS);
      pairs.utc = await startPair(repl.primary, UTC_FLAGS);
    });

    after(async () => {
      for (const p of Object.values(pairs)) await p.close();
      await repl?.stop();
    });

    it('mysql.user with privileges: every account, privilege and limit as mysqld_exporter serves it', async () => {
      const { real, sonde } = await both('primary', 'mysql.user');
      assert.ok(real.size > 30, `families: ${[...real.keys()].join(', ')}`);
      assert.deepEqual(seriesOf(sonde), seriesOf(real));
      const app = '{hostmask="10.0.%",mysql_user="app"}';
      assert.equal(sonde.get('mysql_mysql_max_questions')?.series.get(app), '100');
      assert.equal(sonde.get('mysql_mysql_max_user_connections')?.series.get(app), '3');
      assert.equal(sonde.get('mysql_mysql_process_priv')?.series.get(app), '1');
      assert.equal(sonde.get('mysql_mysql_delete_priv')?.series.get(app), '0');
      assert.equal(sonde.get('mysql_mysql_create_tablespace_priv')?.help, 'Create_tablespace_priv by user.');
    });

    it('auto_increment.columns: the same columns, current values and maxima', async () => {
      const { real, sonde } = await both('primary', 'auto_increment.columns');
      assert.deepEqual(seriesOf(sonde), seriesOf(real));
      const max = sonde.get('mysql_info_schema_auto_increment_column_max')?.series;
      assert.equal(max?.get('{column="id",schema="shop",table="Tiny"}'), '255');
      assert.equal(max?.get('{column="n",schema="shop",table="big"}'), '9.223372036854776e+18');
      const cur = sonde.get('mysql_info_schema_auto_increment_column')?.series;
      assert.equal(cur?.get('{column="id",schema="shop",table="orders"}'), '14');
      assert.equal(cur?.get('{column="n",schema="shop",table="big"}'), '5.000000001e+09');
    });

    it('binlog_size: the same size, file count and last file number; nothing on the replica without a binlog', async () => {
      const { real, sonde } = await both('primary', 'binlog_size');
      assert.deepEqual(seriesOf(sonde), seriesOf(real));
      assert.equal(sonde.get('mysql_binlog_files')?.series.get(''), '2');
      assert.equal(sonde.get('mysql_binlog_file_number')?.series.get(''), '2');
      const replica = await both('replica', 'binlog_size');
      assert.deepEqual(seriesOf(replica.sonde), {});
      assert.deepEqual(seriesOf(replica.real), {});
    });

    it('slave_hosts: the replica registered with --report-host, on the primary only', async () => {
      const { real, sonde } = await both('primary', 'slave_hosts');
      assert.deepEqual(seriesOf(sonde), seriesOf(real));
      const keys = [...(sonde.get('mysql_heartbeat_mysql_slave_hosts_info')?.series.keys() ?? [])];
      assert.deepEqual(keys, [
        `{master_id="1",port="${repl.replica.port}",server_id="2",slave_host="127.0.0.1",slave_uuid=""}`,
      ]);
      const replica = await both('replica', 'slave_hosts');
      assert.deepEqual(seriesOf(replica.sonde), seriesOf(replica.real));
    });

    it('heartbeat: the same stored timestamps and server ids on both servers', async () => {
      for (const side of ['primary', 'replica']) {
        const { real, sonde } = await both(side, 'heartbeat');
        const stored = (n: string) => n === 'mysql_heartbeat_stored_timestamp_seconds';
        assert.deepEqual(seriesOf(sonde, stored), seriesOf(real, stored), side);
        assert.deepEqual(keysOf(sonde), keysOf(real), side);
        assert.deepEqual(keysOf(sonde, stored), {
          mysql_heartbeat_stored_timestamp_seconds: ['{server_id="1"}'],
        });
      }
    });

    it('heartbeat database, table and utc: the other table, and the UTC clock', async () => {
      const { real, sonde } = await both('utc', 'heartbeat');
      const stored = (n: string) => n === 'mysql_heartbeat_stored_timestamp_seconds';
      assert.deepEqual(seriesOf(sonde, stored), seriesOf(real, stored));
      // 2024-05-01T12:00:00.25 read in the server's zone (+05:00): 07:00:00.25 UTC.
      assert.equal(
        sonde.get('mysql_heartbeat_stored_timestamp_seconds')?.series.get('{server_id="7"}'),
        '1.71454680025e+09',
      );
      assert.deepEqual(keysOf(sonde), keysOf(real));
      // UTC_TIMESTAMP read as +05:00 local time lies 5 h before NOW: sonde used the UTC clock
      // as the real exporter did, and the default pair (NOW) did not.
      const nowOf = (f: Map<string, ParsedFamily>) =>
        Number(f.get('mysql_heartbeat_now_timestamp_seconds')?.series.get('{server_id="1"}'));
      const local = await both('primary', 'heartbeat');
      const shift = nowOf(local.sonde) - nowOf(sonde);
      assert.ok(Math.abs(shift - 5 * 3600) < 600, `NOW − UTC_TIMESTAMP read in +05:00: ${shift} s`);
      assert.ok(Math.abs(nowOf(real) - nowOf(sonde)) < 600, 'sonde and mysqld_exporter use the same clock');
    });

    it('slave_status: the same series on the replica, plus the GTID positions of SHOW ALL SLAVES STATUS', async () => {
      const { real, sonde } = await both('replica', 'slave_status');
      const generic = (n: string) => !n.startsWith('mysql_slave_status_gtid_');
      assert.ok(real.size > 10);
      assert.deepEqual(keysOf(sonde, generic), keysOf(real, generic));
      const [row] = await repl.replica.query('SELECT @@gtid_slave_pos AS pos');
      const [domain, server, seq] = String(row?.pos).split('-');
      const labels = `{channel_name="",connection_name="",domain_id="${domain}",master_host="127.0.0.1",master_uuid="",server_id="${server}"}`;
      assert.equal(sonde.get('mysql_slave_status_gtid_slave_pos')?.series.get(labels), seq);
      const primary = await both('primary', 'slave_status');
      assert.deepEqual(seriesOf(primary.sonde), {});
      assert.deepEqual(seriesOf(primary.real), {});
    });

    it('engine_innodb_status: the same families from the InnoDB monitor text', async () => {
      const { real, sonde } = await both('primary', 'engine_innodb_status');
      assert.deepEqual(keysOf(sonde), keysOf(real));
      assert.ok(sonde.has('mysql_engine_innodb_read_views_open_inside_innodb'));
    });
  },
);
