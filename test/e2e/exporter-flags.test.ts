/**
 * mysqld_exporter's exporter-wide flags, each shown doing what it says on a real MariaDB:
 *
 * - in process, through the scrape reader sonde's exporter runs on (its engine, its Db with
 *   the exporter's session, the monitor's pool), with small collectors that run one SQL
 *   statement each: the session variables as the server reports them, a metadata lock
 *   given up after lock_wait_timeout, a slow statement cut by query_timeout, and how many
 *   collectors overlap under max_open_connections;
 * - through the real sonde binary started with mysqld_exporter's command line: the slow log
 *   with and without `--exporter.log_slow_filter`, and `--tls.insecure-skip-verify` against
 *   a server whose certificate the client cannot verify.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection, type Connection } from 'mysql2/promise';
import type { Collector, CollectorContext, CollectResult } from '../../src/core/collector.js';
import { MetricType } from '../../src/core/metrics.js';
import type { Plan } from '../../src/core/plan.js';
import { type PooledDb } from '../../src/db/pool.js';
import { Limiter } from '../../src/engine/limiter.js';
import { exporterSettings } from '../../src/exporter/flags.js';
import { createScrapeReader, type CollectorFactory } from '../../src/exporter/scrape-reader.js';
import { startSondeCli } from '../helpers/exporter-cli.js';
import { freePort, type MariaDB, rootDb, startMariaDB } from '../helpers/mariadb.js';
import { makeTlsFiles, type TlsFiles } from '../helpers/tls.js';

/** A one-level exporter plan of the given test domains. */
function planOf(domains: string[]): Plan {
  const collect = Object.fromEntries(domains.map((d) => [d, { metrics: [], options: {}, errors: {} }]));
  return {
    name: 'flags',
    source: 'test',
    levels: { prom: { name: 'prom', freq: '10s', freqMs: 10_000, collect } },
  };
}

/** What the test collectors saw. */
interface Seen {
  rows: Record<string, Record<string, string | null>[]>;
  active: number;
  maxActive: number;
}

/**
 * Collectors that each run one SQL statement through the Db the scrape reader gives them,
 * as real collectors do. `overlap.*` domains wait (up to 1.5 s) for a second one to run
 * before their statement, so the most that ran at once is seen.
 */
class SqlCollectors implements CollectorFactory {
  readonly seen: Seen = { rows: {}, active: 0, maxActive: 0 };
  constructor(readonly sql: Record<string, string>) {}
  has(domain: string): boolean {
    return domain in this.sql;
  }
  make(domain: string, ctx: CollectorContext): Collector {
    const { seen, sql } = this;
    return {
      domain,
      async prepare() {},
      async collect(_level: string, signal: AbortSignal): Promise<CollectResult> {
        seen.active++;
        seen.maxActive = Math.max(seen.maxActive, seen.active);
        try {
          if (domain.startsWith('overlap.')) {
            for (let i = 0; i < 30 && seen.active < 2; i++) await new Promise((r) => setTimeout(r, 50));
          }
          const rows = await ctx.db.query(sql[domain] ?? '', [], { signal });
          seen.rows[domain] = rows;
          return { values: [{ name: 'rows', value: rows.length, type: MetricType.Gauge }] };
        } finally {
          seen.active--;
        }
      },
    };
  }
}

let server: MariaDB;
let db: PooledDb;

/** One scrape of `domains` with `flags` (exporter.flags); the reader is closed afterwards. */
async function scrapeWith(flags: Record<string, string>, collectors: SqlCollectors) {
  const s = exporterSettings(flags);
  const reader = createScrapeReader({
    monitorId: 'flags',
    db,
    plan: planOf(Object.keys(collectors.sql)),
    collectors,
    limiter: new Limiter(),
    session: s.session,
    maxCollectors: s.maxCollectors,
    ...(s.queryTimeoutMs === undefined ? {} : { queryTimeoutMs: s.queryTimeoutMs }),
  });
  try {
    return await reader.scrape(AbortSignal.timeout(20_000));
  } finally {
    await reader.close();
  }
}

const SESSION_SQL =
  'SELECT @@session.lock_wait_timeout AS lwt, @@session.log_slow_filter AS lsf, CONNECTION_ID() AS id';

describe('exporter-wide flags on a real MariaDB, in process', { timeout: 120_000 }, () => {
  before(async () => {
    server = await startMariaDB();
    await server.query('CREATE DATABASE shop');
    await server.query('CREATE TABLE shop.t (id int PRIMARY KEY) ENGINE=InnoDB');
    await server.query('SET GLOBAL lock_wait_timeout = 3600');
    db = rootDb(server.socket);
  });
  after(async () => {
    await db?.close();
    await server?.stop();
  });

  it('lock_wait_timeout and log_slow_filter are the session values of the exporter queries', async () => {
    const c = new SqlCollectors({ 'probe.session': SESSION_SQL });
    const r = await scrapeWith({ 'exporter.lock_wait_timeout': '3', 'exporter.log_slow_filter': 'true' }, c);
    assert.equal(r.up, true, r.error);
    const seen = c.seen.rows['probe.session']?.[0];
    assert.equal(seen?.lwt, '3');
    assert.equal(seen?.lsf, 'filesort_on_disk,tmp_table_on_disk');
    // The monitor's own statements on the same connection get the pool's values back.
    const plain = (await db.query(SESSION_SQL))[0];
    assert.equal(plain?.id, seen?.id, 'the same pooled connection');
    assert.equal(plain?.lwt, '5');
    assert.equal(plain?.lsf, (await server.query('SELECT @@global.log_slow_filter AS g'))[0]?.g);
  });

  it('the default flags give lock_wait_timeout=2 and leave log_slow_filter alone', async () => {
    const c = new SqlCollectors({ 'probe.session': SESSION_SQL });
    assert.equal((await scrapeWith({}, c)).up, true);
    assert.equal(c.seen.rows['probe.session']?.[0]?.lwt, '2');
    const global = (await server.query('SELECT @@global.log_slow_filter AS g'))[0]?.g;
    assert.equal(c.seen.rows['probe.session']?.[0]?.lsf, global);
  });

  it('enable_lock_wait_timeout=false leaves the server global lock_wait_timeout', async () => {
    const c = new SqlCollectors({ 'probe.session': SESSION_SQL });
    await scrapeWith({ 'exporter.enable_lock_wait_timeout': 'false' }, c);
    assert.equal(c.seen.rows['probe.session']?.[0]?.lwt, '3600');
  });

  describe('a metadata lock held by another session', () => {
    let holder: Connection;
    before(async () => {
      holder = await createConnection({ socketPath: server.socket, user: 'root' });
      await holder.query('LOCK TABLES shop.t WRITE');
    });
    after(async () => {
      await holder?.query('UNLOCK TABLES').catch(() => undefined);
      await holder?.end();
    });

    it('the exporter query gives up after lock_wait_timeout with the server error', async () => {
      const c = new SqlCollectors({ 'probe.locked': 'SELECT COUNT(*) AS n FROM shop.t' });
      const r = await scrapeWith({ 'exporter.lock_wait_timeout': '1' }, c);
      assert.equal(r.up, true);
      assert.deepEqual(
        r.domains.map((d) => [d.domain, d.ok]),
        [['probe.locked', false]],
      );
      assert.match(r.error, /Lock wait timeout exceeded/);
    });

    it('without lock_wait_timeout the query waits until the collector deadline kills it', async () => {
      const c = new SqlCollectors({ 'probe.locked': 'SELECT COUNT(*) AS n FROM shop.t' });
      const r = await scrapeWith(
        { 'exporter.enable_lock_wait_timeout': 'false', 'exporter.query_timeout': '1' },
        c,
      );
      assert.equal(r.domains[0]?.ok, false);
      assert.doesNotMatch(r.error, /Lock wait timeout exceeded/);
      assert.match(r.error, /timeout after 1s/);
    });
  });

  it('query_timeout cuts a slow collector at its own deadline, not the plan one', async () => {
    const c = new SqlCollectors({ 'probe.slow': 'SELECT SLEEP(30) AS s', 'probe.fast': 'SELECT 1 AS one' });
    const r = await scrapeWith({ 'exporter.query_timeout': '1' }, c);
    const ok = Object.fromEntries(r.domains.map((d) => [d.domain, d.ok]));
    assert.deepEqual(ok, { 'probe.slow': false, 'probe.fast': true });
    assert.match(r.error, /probe\.slow: .*timeout after 1s/);
    // the plan alone would have allowed 8s (10s level)
    const plain = await scrapeWith({}, new SqlCollectors({ 'probe.fast': 'SELECT 1 AS one' }));
    assert.equal(plain.error, '');
  });

  it('a session variable the server does not have fails the ping: mysql_up 0, the pool unaffected', async () => {
    // What --exporter.log_slow_filter meets on Oracle MySQL, shown with a name MariaDB lacks.
    const c = new SqlCollectors({ 'probe.session': SESSION_SQL });
    const reader = createScrapeReader({
      monitorId: 'flags',
      db,
      plan: planOf(['probe.session']),
      collectors: c,
      session: { ...exporterSettings({}).session, no_such_variable: 1 },
    });
    try {
      const r = await reader.scrape(AbortSignal.timeout(20_000));
      assert.equal(r.up, false);
      assert.match(r.error, /Unknown system variable 'no_such_variable'/);
      assert.equal(c.seen.rows['probe.session'], undefined, 'no collector ran');
    } finally {
      await reader.close();
    }
    assert.equal((await db.query(SESSION_SQL))[0]?.lwt, '5');
  });

  it('max_open_connections=1 runs one collector at a time; 2 runs two', async () => {
    const sql = { 'overlap.a': 'SELECT 1 AS one', 'overlap.b': 'SELECT 2 AS two' };
    const one = new SqlCollectors(sql);
    await scrapeWith({ 'exporter.max_open_connections': '1' }, one);
    assert.equal(one.seen.maxActive, 1);
    const two = new SqlCollectors(sql);
    await scrapeWith({ 'exporter.max_open_connections': '2' }, two);
    assert.equal(two.seen.maxActive, 2);
    // above the pool's collector share it is still 2
    const many = new SqlCollectors({ ...sql, 'overlap.c': 'SELECT 3 AS three' });
    await scrapeWith({ 'exporter.max_open_connections': '8' }, many);
    assert.equal(many.seen.maxActive, 2);
  });
});

/** A my.cnf in a temp dir; returns its path. */
function writeMyCnf(dir: string, name: string, lines: string[]): string {
  const path = join(dir, name);
  writeFileSync(path, ['[client]', ...lines, ''].join('\n'));
  return path;
}

describe('exporter-wide flags through the sonde binary', { timeout: 180_000 }, () => {
  let plain: MariaDB;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sonde-flags-'));
    plain = await startMariaDB();
    await plain.query(
      "SET GLOBAL log_output = 'TABLE', GLOBAL long_query_time = 0, GLOBAL slow_query_log = 1",
    );
  });
  after(async () => {
    await plain?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Scrape once with `extra` flags as `user`; the scrape statements the slow log then holds. */
  async function slowLogged(user: string, extra: string[]): Promise<string[]> {
    await plain.createUser(user, 'slow-Pass-1', ['PROCESS ON *.*', 'REPLICATION CLIENT ON *.*']);
    const cnf = writeMyCnf(dir, `${user}.cnf`, [
      `user=${user}`,
      'password=slow-Pass-1',
      'host=127.0.0.1',
      `port=${plain.port}`,
    ]);
    const address = `127.0.0.1:${await freePort()}`;
    const cli = await startSondeCli(
      ['--config.my-cnf', cnf, `--web.listen-address=${address}`, ...extra],
      address,
    );
    try {
      const r = await cli.get('/metrics');
      assert.equal(r.status, 200);
      assert.match(r.body, /^mysql_up 1$/m, cli.stderr());
    } finally {
      await cli.stop();
    }
    // The same user's own statement is slow-logged: the log works for this user.
    const own = await createConnection({
      host: '127.0.0.1',
      port: plain.port,
      user,
      password: 'slow-Pass-1',
    });
    await own.query("SELECT 'control statement'");
    await own.end();
    // The server writes a statement to the slow log after its answer: wait for the control
    // statement (the last one run), so everything before it is in the log too.
    const logged = async () =>
      (
        await plain.query(
          'SELECT CONVERT(sql_text USING utf8mb4) AS s FROM mysql.slow_log WHERE user_host LIKE ?',
          [`${user}[%`],
        )
      )
        .map((r) => String(r.s))
        .filter((s) => !/^SET /i.test(s));
    for (let i = 0; i < 50 && !(await logged()).includes("SELECT 'control statement'"); i++)
      await new Promise((r) => setTimeout(r, 100));
    return logged();
  }

  it("sonde's statements stay out of the slow log, with or without --exporter.log_slow_filter", async () => {
    // long_query_time=0: every statement is slow; the server lets a session leave the log.
    for (const [user, flags] of [
      ['slowa', []],
      ['slowb', ['--exporter.log_slow_filter']],
    ] as const) {
      const logged = await slowLogged(user, [...flags]);
      assert.deepEqual(logged, ["SELECT 'control statement'"], `${user}: ${logged.join('\n')}`);
    }
  });

  describe('--tls.insecure-skip-verify', () => {
    let tlsServer: MariaDB;
    let served: TlsFiles;
    let other: TlsFiles;
    before(async () => {
      served = makeTlsFiles();
      other = makeTlsFiles();
      tlsServer = await startMariaDB({
        args: [`--ssl-ca=${served.ca}`, `--ssl-cert=${served.cert}`, `--ssl-key=${served.key}`],
      });
      await tlsServer.createUser('tlsu', 'tls-Pass-9', ['PROCESS ON *.*']);
      await tlsServer.query("ALTER USER 'tlsu'@'%' REQUIRE SSL");
    });
    after(async () => {
      await tlsServer?.stop();
      for (const t of [served, other]) if (t) rmSync(t.dir, { recursive: true, force: true });
    });

    async function up(cnfLines: string[], extra: string[]): Promise<string> {
      const cnf = writeMyCnf(dir, `tls-${Math.random().toString(36).slice(2)}.cnf`, [
        'user=tlsu',
        'password=tls-Pass-9',
        'host=127.0.0.1',
        `port=${tlsServer.port}`,
        ...cnfLines,
      ]);
      const address = `127.0.0.1:${await freePort()}`;
      const cli = await startSondeCli(
        ['--config.my-cnf', cnf, `--web.listen-address=${address}`, ...extra],
        address,
      );
      try {
        const r = await cli.get('/metrics?collect[]=global_status');
        return /^mysql_up (\d)$/m.exec(r.body)?.[1] ?? 'missing';
      } finally {
        await cli.stop();
      }
    }

    it('a CA that did not sign the server certificate fails, and connects with the flag', async () => {
      assert.equal(await up([`ssl-ca=${other.ca}`], []), '0');
      assert.equal(await up([`ssl-ca=${other.ca}`], ['--tls.insecure-skip-verify']), '1');
    });

    it('without TLS files the flag still connects over TLS (the user requires SSL)', async () => {
      assert.equal(await up([], []), '0');
      assert.equal(await up([], ['--tls.insecure-skip-verify']), '1');
    });
  });

  it('--exporter.query_timeout=0: a collector slower than the plan deadline (8 s) ends with the scrape', async () => {
    await plain.query('CREATE DATABASE heartbeat');
    await plain.query(
      'CREATE TABLE heartbeat.heartbeat (ts varchar(26) NOT NULL, server_id int unsigned NOT NULL PRIMARY KEY)',
    );
    await plain.query(
      "INSERT INTO heartbeat.heartbeat VALUES (DATE_FORMAT(NOW(6), '%Y-%m-%dT%H:%i:%s.%f'), 1)",
    );
    await plain.createUser('qto', 'qto-Pass-4', ['PROCESS ON *.*', 'SELECT ON heartbeat.*']);
    const cnf = writeMyCnf(dir, 'qto.cnf', [
      'user=qto',
      'password=qto-Pass-4',
      'host=127.0.0.1',
      `port=${plain.port}`,
    ]);
    const address = `127.0.0.1:${await freePort()}`;
    const cli = await startSondeCli(
      [
        '--config.my-cnf',
        cnf,
        `--web.listen-address=${address}`,
        '--collect.heartbeat',
        '--no-exporter.enable_lock_wait_timeout',
        '--exporter.query_timeout=0',
      ],
      address,
    );
    const holder = await createConnection({ socketPath: plain.socket, user: 'root' });
    try {
      // The heartbeat read waits for this lock for 9 s: longer than the plan's 8 s deadline,
      // well within the 30 s Prometheus allows.
      await holder.query('LOCK TABLES heartbeat.heartbeat WRITE');
      const scrape = cli.get('/metrics?collect[]=heartbeat', { 'X-Prometheus-Scrape-Timeout-Seconds': '30' });
      await new Promise((r) => setTimeout(r, 9000));
      await holder.query('UNLOCK TABLES');
      const r = await scrape;
      assert.match(r.body, /^mysql_exporter_collector_success\{collector="collect.heartbeat"\} 1$/m, r.body);
      assert.match(r.body, /^mysql_heartbeat_stored_timestamp_seconds\{server_id="1"\} /m);
    } finally {
      await holder.end();
      await cli.stop();
    }
  });

  it('--timeout-offset is taken off the scrape-timeout header', async () => {
    await plain.createUser('offs', 'offs-Pass-3', ['PROCESS ON *.*']);
    const cnf = writeMyCnf(dir, 'offs.cnf', [
      'user=offs',
      'password=offs-Pass-3',
      'host=127.0.0.1',
      `port=${plain.port}`,
    ]);
    const address = `127.0.0.1:${await freePort()}`;
    const cli = await startSondeCli(
      [
        '--config.my-cnf',
        cnf,
        `--web.listen-address=${address}`,
        '--timeout-offset=2.5',
        '--log.level=debug',
      ],
      address,
    );
    // A frozen server: the scrape ends at its deadline, whose length the debug line names.
    process.kill(plain.pid, 'SIGSTOP');
    try {
      const r = await cli.get('/metrics', { 'X-Prometheus-Scrape-Timeout-Seconds': '3' });
      assert.match(r.body, /^mysql_up 0$/m);
    } finally {
      process.kill(plain.pid, 'SIGCONT');
      await cli.stop();
    }
    assert.match(cli.stderr(), /MySQL is down: .*scrape timeout after 0\.5 s/);
  });
});
