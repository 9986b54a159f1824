/**
 * Every mysqld_exporter scraper sonde serves, diffed live against Debian's
 * prometheus-mysqld-exporter (0.14) run with **all** its collectors on, on the same servers:
 * a MariaDB primary and its replica, with performance_schema, userstat, the
 * query_response_time plugin, a pt-heartbeat table, compressed and auto-increment tables.
 *
 * Per scraper and per server, both exporters are scraped with `collect[]=<scraper>` and
 * their families compared: names, TYPE, HELP and label names. The differences sonde
 * intends (what mysqld_exporter 0.20 changed since 0.14, where sonde follows 0.20) are
 * listed in INTENDED below and in docs/exporter.md; any other difference fails.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { builtinCollectors } from '../../src/collectors/builtin.js';
import { UPSTREAM_SCRAPERS } from '../../src/core/upstream.js';
import { type PooledDb } from '../../src/db/pool.js';
import { applyCollectFlags, upstreamPlan } from '../../src/plan/exporter-plan.js';
import { connectAs, type MariaDB, rootDb } from '../helpers/mariadb.js';
import { startReplicationPair, type ReplicationPair } from '../helpers/replication.js';
import {
  httpGet,
  parseExposition,
  rootSocketDsn,
  startMysqldExporter,
  withoutGoRuntime,
  type ParsedFamily,
  type Peer,
} from './exporter-peers.js';
import { SERIES_CHECKS } from './exporter-series.js';
import { perfSchemaWorkload } from './perf-schema-workload.js';
import { startSondeExporter, type SondeExporter } from '../helpers/sonde-exporter.js';

/** Scrapers of the newest release that Debian's 0.14 does not have: tested on recorded result sets. */
const NOT_IN_014 = new Set(['info_schema.rocksdb_perf_context', 'sys.user_summary']);

/**
 * Differences sonde intends, per scraper: families only the real 0.14 serves, families only
 * sonde serves, and families whose HELP or label names differ — each because 0.20 changed it.
 */
interface Intended {
  onlyReal?: string[];
  onlySonde?: string[];
  /** family → why its HELP, TYPE or label names differ */
  changed?: Record<string, string>;
}
const INTENDED: Readonly<Record<string, Intended>> = {
  // 0.14 asks MariaDB for SPACE_TYPE, which 10.5 dropped, so its scrape fails; 0.20 leaves the
  // column out on MariaDB 10.5+ (space_type="") and serves the three families.
  'info_schema.innodb_tablespaces': {
    onlySonde: [
      'mysql_info_schema_innodb_tablespace_allocated_size_bytes',
      'mysql_info_schema_innodb_tablespace_file_size_bytes',
      'mysql_info_schema_innodb_tablespace_space_info',
    ],
  },
  // 0.20 added the lock time and the latency summary (its quantiles only on MySQL 8.0.28+;
  // the CPU-time counter too, so MariaDB has none).
  'perf_schema.eventsstatements': {
    onlySonde: [
      'mysql_perf_schema_events_statements_latency',
      'mysql_perf_schema_events_statements_lock_time_seconds_total',
    ],
  },
  // MariaDB GTID positions per domain and server (added after 0.14).
  slave_status: { onlySonde: ['mysql_slave_status_gtid_io_pos', 'mysql_slave_status_gtid_slave_pos'] },
};

/** Scrapers with nothing to serve on MariaDB 10.11, and why (their recorded-set tests cover them). */
const EMPTY_ON_MARIADB: Readonly<Record<string, string>> = {
  engine_tokudb_status: 'MariaDB 10.6+ has no TokuDB engine: SHOW ENGINE TOKUDB STATUS fails',
  'info_schema.replica_host': 'information_schema.replica_host_status exists only on Aurora MySQL',
  'perf_schema.replication_applier_status_by_worker':
    "MariaDB's replication_applier_status_by_worker lacks the transaction timestamp columns (MySQL 8.0+)",
  'perf_schema.replication_group_member_stats': 'MariaDB has no Group Replication',
  'perf_schema.replication_group_members': 'MariaDB has no Group Replication',
  'info_schema.innodb_tablespaces':
    "0.14's query names SPACE_TYPE, gone since MariaDB 10.5 (sonde is checked against the table in exporter-series)",
};

/** Families that describe the exporter itself, not the scraper. */
const SELF = /^(mysql_up|mysql_exporter_|mysqld_exporter_|mysql_version_info$)/;

interface Side {
  server: MariaDB;
  db: PooledDb;
  sonde: SondeExporter;
  real: Peer;
}

let pair: ReplicationPair;
const sides: Record<string, Side> = {};

async function scrape(address: string, scraper: string): Promise<Map<string, ParsedFamily>> {
  const r = await httpGet(`http://${address}/metrics?collect[]=${encodeURIComponent(scraper)}`);
  assert.equal(r.status, 200, `${address}: ${r.body.slice(0, 300)}`);
  return new Map([...withoutGoRuntime(parseExposition(r.body))].filter(([n]) => !SELF.test(n)));
}

/** Label names of a family's series, as one sorted text per distinct set. */
function labelNames(f: ParsedFamily): string[] {
  const sets = new Set<string>();
  for (const key of f.series.keys()) {
    const names = [...key.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)].map((m) => m[1] ?? '');
    sets.add(
      names
        .filter((n) => n !== 'le' && n !== 'quantile')
        .sort()
        .join(','),
    );
  }
  return [...sets].sort();
}

async function startSide(server: MariaDB): Promise<Side> {
  const db = rootDb(server.socket);
  // Every scraper sonde serves switched on by its flag, as a user would.
  const registry = builtinCollectors();
  const flags: Record<string, string> = {};
  for (const s of UPSTREAM_SCRAPERS) if (registry.has(s.domain)) flags[`collect.${s.name}`] = 'true';
  const plan = applyCollectFlags(upstreamPlan(), flags);
  const sonde = await startSondeExporter(db, plan);
  const real = await startMysqldExporter(
    rootSocketDsn(server.socket),
    UPSTREAM_SCRAPERS.filter((s) => !NOT_IN_014.has(s.name)).map((s) => `--collect.${s.name}`),
  );
  return { server, db, sonde, real };
}

/** Make every scraper's source non-empty where MariaDB can. */
async function workload(p: ReplicationPair): Promise<void> {
  const q = (sql: string) => p.primary.query(sql);
  await q('CREATE DATABASE heartbeat');
  await q(
    'CREATE TABLE heartbeat.heartbeat (ts varchar(26) NOT NULL, server_id int unsigned NOT NULL PRIMARY KEY)',
  );
  await q("INSERT INTO heartbeat.heartbeat VALUES (DATE_FORMAT(NOW(6), '%Y-%m-%dT%H:%i:%s.%f'), 1)");
  await q('CREATE DATABASE shop');
  await q('CREATE TABLE shop.orders (id int AUTO_INCREMENT PRIMARY KEY, v varchar(20)) ENGINE=InnoDB');
  await q('CREATE TABLE shop.packed (id int PRIMARY KEY, b blob) ENGINE=InnoDB ROW_FORMAT=COMPRESSED');
  for (let i = 0; i < 20; i++) await q(`INSERT INTO shop.orders (v) VALUES ('o${i}')`);
  // A second user and client (TCP from 127.0.0.1) for the userstat tables.
  await q("CREATE USER 'shopper'@'%' IDENTIFIED BY 'shopper-pw'");
  await q("GRANT SELECT ON shop.* TO 'shopper'@'%'");
  await q("INSERT INTO shop.packed VALUES (1, REPEAT('x', 5000)), (2, REPEAT('y', 5000))");
  await q('SELECT COUNT(*) FROM shop.orders WHERE v LIKE "o1%"');
  await q('SELECT * FROM shop.packed WHERE id = 1');
  await perfSchemaWorkload(p.primary, true);
  await p.waitCaughtUp();
  await perfSchemaWorkload(p.replica, false);
  for (const s of [p.primary, p.replica]) {
    await s.query('SELECT COUNT(*) FROM shop.orders');
    await s.query('SELECT v FROM shop.orders WHERE id = 3');
    const shopper = connectAs(s, 'shopper', 'shopper-pw');
    await shopper.query('SELECT COUNT(*) FROM shop.packed');
    await shopper.close();
  }
}

describe('every mysqld_exporter scraper against the real mysqld_exporter', { timeout: 300_000 }, () => {
  before(async () => {
    pair = await startReplicationPair({
      args: [
        '--performance-schema=ON',
        '--performance-schema-instrument=%=ON',
        '--performance-schema-consumer-events-statements-history=ON',
        '--userstat=1',
        '--plugin-load-add=query_response_time',
        '--query-response-time-stats=ON',
        '--report-host=127.0.0.1',
      ],
    });
    await pair.waitRunning();
    await workload(pair);
    sides.primary = await startSide(pair.primary);
    sides.replica = await startSide(pair.replica);
  });

  after(async () => {
    for (const s of Object.values(sides)) {
      await s.sonde.close();
      await s.real.stop();
      await s.db.close();
    }
    await pair?.stop();
  });

  const served = new Set(builtinCollectors().domains());
  for (const scraper of UPSTREAM_SCRAPERS) {
    if (NOT_IN_014.has(scraper.name) || !served.has(scraper.domain)) continue;
    it(`${scraper.name}: the same families, TYPE, HELP and label names as mysqld_exporter`, async () => {
      const intended = INTENDED[scraper.name] ?? {};
      let seen = 0;
      for (const [where, side] of Object.entries(sides)) {
        const [real, sonde] = await Promise.all([
          scrape(side.real.address, scraper.name),
          scrape(side.sonde.address, scraper.name),
        ]);
        seen += real.size;
        const onlyReal = [...real.keys()].filter((n) => !sonde.has(n) && !intended.onlyReal?.includes(n));
        const onlySonde = [...sonde.keys()].filter((n) => !real.has(n) && !intended.onlySonde?.includes(n));
        assert.deepEqual(onlyReal, [], `${where}: families only mysqld_exporter serves`);
        assert.deepEqual(onlySonde, [], `${where}: families only sonde serves`);
        for (const [name, r] of real) {
          const s = sonde.get(name);
          if (s === undefined || intended.changed?.[name] !== undefined) continue;
          assert.equal(s.type, r.type, `${where}: TYPE of ${name}`);
          assert.equal(s.help, r.help, `${where}: HELP of ${name}`);
          assert.deepEqual(labelNames(s), labelNames(r), `${where}: label names of ${name}`);
        }
      }
      // Nothing to compare proves nothing: only scrapers MariaDB cannot feed may be empty.
      if (EMPTY_ON_MARIADB[scraper.name] === undefined)
        assert.ok(seen > 0, `mysqld_exporter served no family for ${scraper.name}; feed it in workload()`);
    });
  }

  for (const [scraper, check] of Object.entries(SERIES_CHECKS)) {
    it(`${scraper}: the same series (label values) as mysqld_exporter`, async () => {
      for (const [where, side] of Object.entries(sides))
        await check({
          where,
          realAddress: side.real.address,
          sondeAddress: side.sonde.address,
          db: side.db,
        });
    });
  }
});
