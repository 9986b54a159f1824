/**
 * sonde's mysqld_exporter emulation against the real thing, on one throwaway MariaDB:
 * Debian's prometheus-mysqld-exporter 0.14 with the collectors of sonde's default-exporter
 * plan, promtool, and a real Prometheus server scraping sonde.
 *
 * The ExporterSource is built from real parts (createScrapeReader with the monitor pool,
 * the built-in collectors and the default-exporter plan), without the monitor wiring.
 * Every InnoDB metric is enabled on the server so all INNODB_METRICS types and MariaDB's
 * odd `Buffer` subsystem row are compared too.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { builtinCollectors } from '../../src/collectors/builtin.js';
import { NO_EVENTS } from '../../src/core/events.js';
import type { ExporterHandle } from '../../src/core/exporter.js';
import { type PooledDb } from '../../src/db/pool.js';
import { createScrapeReader, type ScrapeReader } from '../../src/exporter/scrape-reader.js';
import { startExporter } from '../../src/exporter/server.js';
import { defaultPlan } from '../../src/plan/defaults.js';
import { connectAs, type MariaDB, rootDb, startMariaDB } from '../helpers/mariadb.js';
import {
  httpGet,
  parseExposition,
  promtoolCheck,
  rootSocketDsn,
  startMysqldExporter,
  startPrometheus,
  waitFor,
  withoutGoRuntime,
  type ParsedFamily,
  type Peer,
  type PrometheusPeer,
} from './exporter-peers.js';

/**
 * Every intended difference in family names (docs/exporter.md lists them). Go runtime,
 * process and promhttp families of the real exporter are not emulated and are filtered
 * out before comparing.
 */
const ONLY_REAL = ['mysqld_exporter_build_info'];
const ONLY_SONDE = ['mysql_exporter_collector_success'];

let server: MariaDB;
let db: PooledDb;
let source: ScrapeReader;
let sonde: ExporterHandle;
let real: Peer;
let prometheus: PrometheusPeer | undefined;
const status = new Map<string, string>();

async function scrape(address: string, query = ''): Promise<Map<string, ParsedFamily>> {
  const r = await httpGet(`http://${address}/metrics${query}`);
  assert.equal(r.status, 200, `${address}: ${r.body.slice(0, 300)}`);
  return withoutGoRuntime(parseExposition(r.body));
}

/** Names only in a, sorted. */
const minus = (a: Map<string, unknown>, b: Map<string, unknown>) =>
  [...a.keys()].filter((n) => !b.has(n)).sort();

describe('exporter emulation against the real mysqld_exporter', { timeout: 180_000 }, () => {
  before(async () => {
    server = await startMariaDB();
    await server.query("SET GLOBAL innodb_monitor_enable = 'all'");
    db = rootDb(server.socket);
    const plan = defaultPlan('default-exporter');
    assert.ok(plan !== undefined);
    source = createScrapeReader({ monitorId: 'db1', db, plan, collectors: builtinCollectors() });
    sonde = await startExporter({
      monitorId: 'db1',
      listen: '127.0.0.1:0',
      path: '/metrics',
      source,
      status: { set: (k, v) => status.set(k, v), delete: (k) => status.delete(k) },
      events: NO_EVENTS,
    });
    real = await startMysqldExporter(rootSocketDsn(server.socket));
  });

  after(async () => {
    await prometheus?.stop();
    await real?.stop();
    await sonde?.close();
    await source?.close();
    await db?.close();
    await server?.stop();
  });

  it('serves the families, TYPE, HELP and series of mysqld_exporter 0.14, differing only as documented', async () => {
    assert.equal(status.get('exporter'), `listening on ${sonde.address}`);
    const [r, s] = await Promise.all([scrape(real.address), scrape(sonde.address)]);
    assert.deepEqual(minus(r, s), ONLY_REAL, 'families only mysqld_exporter has');
    assert.deepEqual(minus(s, r), ONLY_SONDE, 'families only sonde has');

    let series = 0;
    const problems: string[] = [];
    for (const [name, rf] of r) {
      const sf = s.get(name);
      if (sf === undefined) continue;
      if (sf.type !== rf.type) problems.push(`${name}: TYPE ${sf.type}, mysqld_exporter ${rf.type}`);
      if (sf.help !== rf.help)
        problems.push(`${name}: HELP ${JSON.stringify(sf.help)}, mysqld_exporter ${JSON.stringify(rf.help)}`);
      const rk = [...rf.series.keys()].sort();
      const sk = [...sf.series.keys()].sort();
      if (JSON.stringify(rk) !== JSON.stringify(sk))
        problems.push(`${name}: series ${JSON.stringify(sk)}, mysqld_exporter ${JSON.stringify(rk)}`);
      series += rk.length;
    }
    assert.deepEqual(problems, []);
    // The comparison covered the whole output, not a sliver of it.
    const count = (prefix: string) => [...s.keys()].filter((n) => n.startsWith(prefix)).length;
    assert.ok(series > 1000, `${series} series compared`);
    assert.ok(count('mysql_global_status_') > 250, 'status families');
    assert.ok(count('mysql_global_variables_') > 400, 'variables families');
    assert.ok(count('mysql_info_schema_innodb_metrics_') > 150, 'innodb families');
    // Spot checks of the names users alert on.
    assert.equal(s.get('mysql_up')?.series.get(''), '1');
    assert.equal(s.get('mysql_global_status_wsrep_cluster_status')?.type, 'untyped');
    assert.equal(s.get('mysql_info_schema_innodb_metrics_transaction_trx_rseg_history_len')?.type, 'gauge');
    assert.ok(s.has('mysql_info_schema_innodb_metrics_Buffer_buffer_LRU_get_free_search_total'));
    assert.ok(
      s.get('mysql_info_schema_innodb_metrics_buffer_page_read_total')?.series.has('{type="index_leaf"}'),
    );
    const version = [...(s.get('mysql_version_info')?.series.keys() ?? [])][0] ?? '';
    assert.equal(version, [...(r.get('mysql_version_info')?.series.keys() ?? [])][0]);
    assert.match(version, /version="10\.\d+\.\d+-MariaDB/);
  });

  it('writes every number exactly as Go does', async () => {
    const [r, s] = await Promise.all([scrape(real.address), scrape(sonde.address)]);
    let compared = 0;
    const diffs: string[] = [];
    for (const [name, rf] of r) {
      for (const [key, rv] of rf.series) {
        const sv = s.get(name)?.series.get(key);
        if (sv === undefined || Number(sv) !== Number(rv)) continue; // counters moved between scrapes
        compared++;
        if (sv !== rv) diffs.push(`${name}${key}: sonde ${sv}, mysqld_exporter ${rv}`);
      }
    }
    assert.deepEqual(diffs, []);
    assert.ok(compared > 900, `${compared} equal values compared`);
    // and the formats Go-specific layouts actually occurred
    const texts = [...s.values()].flatMap((f) => [...f.series.values()]);
    assert.ok(
      texts.some((t) => /^\d\.\d+e\+\d\d$/.test(t)),
      'a scientific value',
    );
    assert.ok(texts.includes('1.8446744073709552e+19'), 'ULONGLONG_MAX');
  });

  it('passes promtool check metrics: no errors, and only lint findings mysqld_exporter has too', async () => {
    const [r, s] = await Promise.all([
      httpGet(`http://${real.address}/metrics`),
      httpGet(`http://${sonde.address}/metrics`),
    ]);
    const realCheck = promtoolCheck(r.body);
    const sondeCheck = promtoolCheck(s.body);
    assert.deepEqual(sondeCheck.errors, []);
    assert.notEqual(sondeCheck.code, 1, 'promtool exit code 1 = parse error');
    const realLint = new Set(realCheck.lint);
    assert.deepEqual(
      sondeCheck.lint.filter((l) => !realLint.has(l)),
      [],
      'lint findings mysqld_exporter does not have',
    );
    assert.ok(sondeCheck.lint.length > 0, 'the real names do carry lint findings (e.g. _count suffixes)');
  });

  it('filters with collect[] like mysqld_exporter', async () => {
    for (const q of [
      '?collect[]=global_variables',
      '?collect[]=global_status&collect[]=info_schema.innodb_metrics',
    ]) {
      const [r, s] = await Promise.all([scrape(real.address, q), scrape(sonde.address, q)]);
      assert.deepEqual(minus(r, s), ONLY_REAL, q);
      assert.deepEqual(minus(s, r), ONLY_SONDE, q);
      assert.deepEqual(
        [...(s.get('mysql_exporter_collector_duration_seconds')?.series.keys() ?? [])].sort(),
        [...(r.get('mysql_exporter_collector_duration_seconds')?.series.keys() ?? [])].sort(),
        q,
      );
    }
  });

  it('gzips when asked, as mysqld_exporter does', async () => {
    const [r, s] = await Promise.all([
      httpGet(`http://${real.address}/metrics`, { 'Accept-Encoding': 'gzip' }),
      httpGet(`http://${sonde.address}/metrics`, { 'Accept-Encoding': 'gzip' }),
    ]);
    assert.equal(s.headers['content-encoding'], r.headers['content-encoding']);
    assert.equal(s.headers['content-type'], r.headers['content-type']);
    assert.ok(parseExposition(s.body).has('mysql_up'));
  });

  it('is scraped by a real Prometheus server whose query API returns the series', async () => {
    prometheus = await startPrometheus(sonde.address);
    const p = prometheus;
    const up = await waitFor('mysql_up in Prometheus', async () => {
      const res = await p.query('mysql_up');
      return res.length > 0 ? res : undefined;
    });
    assert.equal(up[0]?.value[1], '1');
    assert.equal(up[0]?.metric.job, 'sonde');
    assert.equal(up[0]?.metric.instance, sonde.address);
    const threads = await p.query('mysql_global_status_threads_connected');
    assert.equal(threads.length, 1);
    assert.ok(Number(threads[0]?.value[1]) >= 1, `threads_connected ${threads[0]?.value[1]}`);
    const target = await p.query('up{job="sonde"}');
    assert.equal(target[0]?.value[1], '1', 'the scrape itself succeeded');
    const commands = await p.query('mysql_global_status_commands_total{command="select"}');
    assert.equal(commands.length, 1);
    // nothing was dropped by Prometheus for a bad sample or a type clash
    const samples = await p.query('scrape_samples_scraped{job="sonde"}');
    assert.ok(Number(samples[0]?.value[1]) > 1000);
  });

  it('reports a collector error with the self-metrics mysqld_exporter uses (user without PROCESS)', async () => {
    await server.createUser('noproc', 'noproc-pw-1', ['SELECT ON *.*']);
    const npDb = connectAs(server, 'noproc', 'noproc-pw-1');
    const plan = defaultPlan('default-exporter');
    assert.ok(plan !== undefined);
    const npSource = createScrapeReader({
      monitorId: 'np',
      db: npDb,
      plan,
      collectors: builtinCollectors(),
    });
    const npSonde = await startExporter({
      monitorId: 'np',
      listen: '127.0.0.1:0',
      path: '/metrics',
      source: npSource,
      status: { set: () => undefined, delete: () => undefined },
      events: NO_EVENTS,
    });
    const npReal = await startMysqldExporter(`noproc:noproc-pw-1@tcp(127.0.0.1:${server.port})/`);
    try {
      for (let i = 0; i < 2; i++) {
        const [r, s] = await Promise.all([scrape(npReal.address), scrape(npSonde.address)]);
        assert.deepEqual(minus(r, s), ONLY_REAL);
        assert.deepEqual(minus(s, r), ONLY_SONDE);
        for (const name of [
          'mysql_exporter_scrape_errors_total',
          'mysql_exporter_last_scrape_error',
          'mysql_up',
        ]) {
          assert.equal(s.get(name)?.help, r.get(name)?.help, name);
          assert.equal(s.get(name)?.type, r.get(name)?.type, name);
          assert.deepEqual([...(s.get(name)?.series ?? [])], [...(r.get(name)?.series ?? [])], name);
        }
        assert.equal(
          s
            .get('mysql_exporter_scrape_errors_total')
            ?.series.get('{collector="collect.info_schema.innodb_metrics"}'),
          String(i + 1),
        );
        assert.equal(
          s
            .get('mysql_exporter_collector_success')
            ?.series.get('{collector="collect.info_schema.innodb_metrics"}'),
          '0',
        );
        assert.ok(![...s.keys()].some((n) => n.startsWith('mysql_info_schema_innodb_metrics_')));
      }
    } finally {
      await npReal.stop();
      await npSonde.close();
      await npSource.close();
      await npDb.close();
    }
  });

  it('answers 200 with mysql_up 0 while MariaDB is down, like mysqld_exporter, and recovers', async () => {
    await server.kill();
    const [r, s] = await Promise.all([scrape(real.address), scrape(sonde.address)]);
    assert.deepEqual(minus(r, s), ONLY_REAL);
    assert.deepEqual([...s.keys()].sort(), [
      'mysql_exporter_last_scrape_error',
      'mysql_exporter_scrapes_total',
      'mysql_up',
    ]);
    assert.equal(s.get('mysql_up')?.series.get(''), '0');
    assert.equal(s.get('mysql_exporter_last_scrape_error')?.series.get(''), '1');
    await server.restart();
    const back = await waitFor('sonde sees MariaDB again', async () => {
      const fams = await scrape(sonde.address);
      return fams.get('mysql_up')?.series.get('') === '1' &&
        fams.has('mysql_global_variables_max_connections')
        ? fams
        : undefined;
    });
    assert.equal(back.get('mysql_exporter_last_scrape_error')?.series.get(''), '0');
  });
});
