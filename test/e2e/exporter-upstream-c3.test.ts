/**
 * The performance_schema and sys scrapers beyond the family diff of
 * exporter-upstream.test.ts: on one MariaDB with performance_schema and every instrument on,
 * sonde and Debian's mysqld_exporter 0.14 are scraped with `collect[]=<scraper>` and their
 * series compared — label values everywhere, and the numbers where nothing moves them between
 * the two scrapes (digests, tables and indexes of the `shop` schema, which no exporter
 * touches). A second pair runs with sub-flags (digest limit and text length, file filter and
 * prefix, memory prefix). exclude_schemas (not in 0.14) and sys.user_summary (not in 0.14)
 * are checked against the server's own tables.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createConnection } from 'mysql2/promise';
import { type PooledDb } from '../../src/db/pool.js';
import { applyCollectFlags, upstreamPlan } from '../../src/plan/exporter-plan.js';
import { type MariaDB, rootDb, startMariaDB } from '../helpers/mariadb.js';
import {
  httpGet,
  parseExposition,
  rootSocketDsn,
  startMysqldExporter,
  type ParsedFamily,
  type Peer,
} from './exporter-peers.js';
import { perfSchemaWorkload } from './perf-schema-workload.js';
import { startSondeExporter, type SondeExporter } from '../helpers/sonde-exporter.js';

const SCRAPERS = [
  'perf_schema.eventsstatements',
  'perf_schema.eventsstatementssum',
  'perf_schema.eventswaits',
  'perf_schema.file_events',
  'perf_schema.file_instances',
  'perf_schema.indexiowaits',
  'perf_schema.memory_events',
  'perf_schema.tableiowaits',
  'perf_schema.tablelocks',
];

interface Sonde {
  db: PooledDb;
  exporter: SondeExporter;
}

let server: MariaDB;
const sondes: Sonde[] = [];
const peers: Peer[] = [];

async function startSonde(flags: Record<string, string>): Promise<string> {
  const db = rootDb(server.socket);
  const all: Record<string, string> = { 'collect.sys.user_summary': 'true' };
  for (const s of SCRAPERS) all[`collect.${s}`] = 'true';
  const plan = applyCollectFlags(upstreamPlan(), { ...all, ...flags });
  const exporter = await startSondeExporter(db, plan);
  sondes.push({ db, exporter });
  return exporter.address;
}

async function startReal(flags: string[]): Promise<string> {
  const peer = await startMysqldExporter(rootSocketDsn(server.socket), [
    ...SCRAPERS.map((s) => `--collect.${s}`),
    ...flags,
  ]);
  peers.push(peer);
  return peer.address;
}

async function scrape(address: string, scraper: string): Promise<Map<string, ParsedFamily>> {
  const r = await httpGet(`http://${address}/metrics?collect[]=${encodeURIComponent(scraper)}`);
  assert.equal(r.status, 200, r.body.slice(0, 300));
  return new Map(
    [...parseExposition(r.body)].filter(
      ([n]) => !/^(mysql_up|mysql_exporter_|go_|process_|promhttp_|mysqld_exporter_)/.test(n),
    ),
  );
}

/** Both exporters' families of one scraper, scraped at the same time. */
async function both(real: string, sonde: string, scraper: string) {
  const [r, s] = await Promise.all([scrape(real, scraper), scrape(sonde, scraper)]);
  return { real: r, sonde: s };
}

const keys = (f: ParsedFamily | undefined) => [...(f?.series.keys() ?? [])].sort();

/** Series of a family restricted to those whose labels include `label`. */
function only(f: ParsedFamily | undefined, label: string): Map<string, string> {
  return new Map(
    [...(f?.series ?? [])].filter(([k]) => k.includes(label)).sort(([a], [b]) => (a < b ? -1 : 1)),
  );
}

let plain: { real: string; sonde: string };
let flagged: { real: string; sonde: string };
let excluding: string;

describe('performance_schema and sys scrapers: series, numbers and sub-flags', { timeout: 300_000 }, () => {
  before(async () => {
    server = await startMariaDB({
      args: [
        '--performance-schema=ON',
        '--performance-schema-instrument=%=ON',
        '--performance-schema-consumer-events-statements-history=ON',
      ],
    });
    await server.query('CREATE DATABASE shop');
    await server.query(
      'CREATE TABLE shop.orders (id int AUTO_INCREMENT PRIMARY KEY, v varchar(20), KEY v (v))',
    );
    for (let i = 0; i < 20; i++) await server.query(`INSERT INTO shop.orders (v) VALUES ('o${i}')`);
    await perfSchemaWorkload(server, true);
    // A second schema with digests of its own, for exclude_schemas.
    await server.query('CREATE DATABASE stats');
    const c = await createConnection({ socketPath: server.socket, user: 'root', database: 'stats' });
    await c.query('SELECT 1 + 1');
    await c.end();
    const datadir = String((await server.query('SELECT @@datadir AS d'))[0]?.d);
    const subflags: Record<string, string> = {
      'collect.perf_schema.eventsstatements.limit': '2',
      'collect.perf_schema.eventsstatements.digest_text_limit': '12',
      'collect.perf_schema.eventsstatements.timelimit': '3600',
      'collect.perf_schema.file_instances.filter': 'orders|ibdata',
      'collect.perf_schema.file_instances.remove_prefix': datadir,
      'collect.perf_schema.memory_events.remove_prefix': 'memory/sql/',
    };
    plain = { real: await startReal([]), sonde: await startSonde({}) };
    flagged = {
      real: await startReal(Object.entries(subflags).map(([k, v]) => `--${k}=${v}`)),
      sonde: await startSonde(subflags),
    };
    excluding = await startSonde({ 'collect.perf_schema.eventsstatements.exclude_schemas': 'shop, nosuch' });
  });

  after(async () => {
    for (const s of sondes) {
      await s.exporter.close();
      await s.db.close();
    }
    for (const p of peers) await p.stop();
    await server?.stop();
  });

  for (const scraper of SCRAPERS) {
    it(`${scraper}: every series of mysqld_exporter's families, with its label values`, async () => {
      const { real, sonde } = await both(plain.real, plain.sonde, scraper);
      assert.ok(real.size > 0, `mysqld_exporter served nothing for ${scraper}`);
      for (const [name, f] of real) {
        assert.ok(f.series.size > 0, name);
        assert.deepEqual(keys(sonde.get(name)), keys(f), `series of ${name}`);
      }
    });
  }

  it("eventsstatements, tableiowaits, indexiowaits, tablelocks: the shop schema's numbers equal mysqld_exporter's", async () => {
    for (const scraper of [
      'perf_schema.eventsstatements',
      'perf_schema.tableiowaits',
      'perf_schema.indexiowaits',
      'perf_schema.tablelocks',
    ]) {
      const { real, sonde } = await both(plain.real, plain.sonde, scraper);
      let compared = 0;
      for (const [name, f] of real) {
        const want = only(f, 'schema="shop"');
        assert.deepEqual(only(sonde.get(name), 'schema="shop"'), want, `${scraper}: ${name}`);
        compared += want.size;
      }
      assert.ok(compared > 0, `${scraper}: no shop series`);
    }
  });

  it('eventsstatements: the latency summary counts and sums each digest, without quantiles on MariaDB', async () => {
    const s = await scrape(plain.sonde, 'perf_schema.eventsstatements');
    assert.equal(s.get('mysql_perf_schema_events_statements_latency')?.type, 'summary');
    const total = s.get('mysql_perf_schema_events_statements_total');
    const secs = s.get('mysql_perf_schema_events_statements_seconds_total');
    assert.ok(total !== undefined && total.series.size > 0);
    const r = await httpGet(`http://${plain.sonde}/metrics?collect[]=perf_schema.eventsstatements`);
    const count = new Map<string, string>();
    const sum = new Map<string, string>();
    for (const m of r.body.matchAll(
      /^mysql_perf_schema_events_statements_latency_(count|sum)(\{.*\}) (\S+)$/gm,
    ))
      (m[1] === 'count' ? count : sum).set(m[2] ?? '', m[3] ?? '');
    assert.deepEqual([...count].sort(), [...total.series].sort());
    assert.deepEqual([...sum].sort(), [...(secs?.series ?? [])].sort());
    assert.doesNotMatch(r.body, /quantile=/);
    assert.doesNotMatch(r.body, /cpu_time/);
  });

  it('sub-flags limit, digest_text_limit, timelimit, filter and remove_prefix act as in mysqld_exporter', async () => {
    for (const scraper of [
      'perf_schema.eventsstatements',
      'perf_schema.file_instances',
      'perf_schema.memory_events',
    ]) {
      const { real, sonde } = await both(flagged.real, flagged.sonde, scraper);
      assert.ok(real.size > 0, scraper);
      for (const [name, f] of real) assert.deepEqual(keys(sonde.get(name)), keys(f), `${scraper}: ${name}`);
    }
    const { sonde } = await both(flagged.real, flagged.sonde, 'perf_schema.eventsstatements');
    const digests = keys(sonde.get('mysql_perf_schema_events_statements_total'));
    assert.equal(digests.length, 2);
    for (const k of digests) assert.match(k, /digest_text="[^"]{0,12}"/);
    const files = keys(
      (await scrape(flagged.sonde, 'perf_schema.file_instances')).get(
        'mysql_perf_schema_file_instances_total',
      ),
    );
    assert.ok(files.length > 0);
    for (const k of files) assert.match(k, /file_name="(shop\/orders\.(ibd|frm)|ibdata1)"/);
    const mem = keys(
      (await scrape(flagged.sonde, 'perf_schema.memory_events')).get(
        'mysql_perf_schema_memory_events_used_bytes',
      ),
    );
    assert.ok(
      mem.some((k) => k.includes('event_name="memory/')),
      'other prefixes are kept',
    );
    assert.ok(!mem.some((k) => k.includes('event_name="memory/sql/')));
  });

  it('exclude_schemas (comma-separated) drops those schemas and keeps the others', async () => {
    const name = 'mysql_perf_schema_events_statements_total';
    const all = keys((await scrape(plain.sonde, 'perf_schema.eventsstatements')).get(name));
    const some = keys((await scrape(excluding, 'perf_schema.eventsstatements')).get(name));
    assert.ok(all.some((k) => k.includes('schema="shop"')));
    assert.ok(all.some((k) => k.includes('schema="stats"')));
    assert.deepEqual(
      some,
      all.filter((k) => !k.includes('schema="shop"')),
    );
  });

  it('sys.user_summary: the families and users mysqld_exporter 0.20 serves from sys.x$user_summary', async () => {
    const rows = await server.query('SELECT user, unique_hosts FROM sys.x$user_summary');
    assert.ok(rows.length > 0);
    const users = rows.map((r) => `{user="${String(r.user)}"}`).sort();
    const s = await scrape(plain.sonde, 'sys.user_summary');
    const want: [string, string, string][] = [
      ['mysql_sys_statements_total', 'counter', ' The total number of statements for the user'],
      ['mysql_sys_statement_latency', 'counter', 'The total wait time of timed statements for the user'],
      ['mysql_sys_table_scans_total', 'counter', 'The total number of table scans for the user'],
      ['mysql_sys_file_ios_total', 'counter', 'The total number of file I/O events for the user'],
      [
        'mysql_sys_file_io_seconds_total',
        'counter',
        'The total wait time of timed file I/O events for the user',
      ],
      ['mysql_sys_current_connections', 'gauge', 'The current number of connections for the user'],
      ['mysql_sys_connections_total', 'counter', 'The total number of connections for the user'],
      [
        'mysql_sys_unique_hosts_total',
        'counter',
        'The number of distinct hosts from which connections for the user have originated',
      ],
      ['mysql_sys_current_memory_bytes', 'gauge', 'The current amount of allocated memory for the user'],
      [
        'mysql_sys_memory_allocated_bytes_total',
        'counter',
        'The total amount of allocated memory for the user',
      ],
    ];
    assert.deepEqual([...s.keys()].sort(), want.map(([n]) => n).sort());
    for (const [name, type, help] of want) {
      const f = s.get(name);
      assert.equal(f?.type, type, name);
      assert.equal(f?.help, help, name);
      assert.deepEqual(keys(f), users, name);
    }
    const hosts = s.get('mysql_sys_unique_hosts_total');
    for (const r of rows)
      assert.equal(hosts?.series.get(`{user="${String(r.user)}"}`), String(r.unique_hosts));
  });
});
