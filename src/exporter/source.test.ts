import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  CollectError,
  type CollectResult,
  type Collector,
  type CollectorContext,
} from '../core/collector.js';
import type { Db, QueryOptions, Row, ServerInfo } from '../core/db.js';
import { MetricType, type MetricValue } from '../core/metrics.js';
import type { Plan } from '../core/plan.js';
import { statusValues } from '../collectors/status.global/index.js';
import {
  addInnodbMeta,
  collectorTimeoutMs,
  createExporterSource,
  exporterLevel,
  upstreamValues,
  type CollectorFactory,
} from './source.js';

const plan = (levels: Plan['levels']): Plan => ({ name: 'exp', source: 'test', levels });
const ONE_LEVEL = plan({
  prom: {
    name: 'prom',
    freq: '1s',
    freqMs: 1000,
    collect: {
      'status.global': { metrics: [], options: { all: 'yes' }, errors: {} },
      innodb: { metrics: [], options: { all: 'enabled' }, errors: {} },
    },
  },
});

/** A Db double at the contract level: canned rows per SQL, a switchable ping. */
class CannedDb implements Db {
  up = true;
  queries: string[] = [];
  rows = new Map<string, Row[]>();
  async query(sql: string, _p?: readonly unknown[], opts?: QueryOptions): Promise<Row[]> {
    opts?.signal?.throwIfAborted();
    this.queries.push(sql);
    if (!this.up) throw new Error('connect ECONNREFUSED');
    return (this.rows.get(sql) ?? []).map((r) => ({ ...r }));
  }
  async serverInfo(): Promise<ServerInfo> {
    return { flavor: 'mariadb', version: [10, 11, 19], versionString: '10.11.19-MariaDB' };
  }
  async ping(): Promise<void> {
    if (!this.up) throw new Error('connect ECONNREFUSED');
  }
}

/** Collectors that run one query through the Db they were given, like the real ones. */
class Factory implements CollectorFactory {
  made: string[] = [];
  prepared: string[] = [];
  failPrepare = new Set<string>();
  failCollect = new Set<string>();
  slow = new Set<string>();
  has(domain: string): boolean {
    return domain === 'status.global' || domain === 'innodb';
  }
  make(domain: string, ctx: CollectorContext): Collector {
    this.made.push(domain);
    return this.#collector(domain, ctx);
  }
  #collector(domain: string, ctx: CollectorContext): Collector {
    const { failPrepare, failCollect, slow, prepared } = this;
    return {
      domain,
      async prepare() {
        if (failPrepare.has(domain)) throw new Error('no privilege');
        prepared.push(domain);
      },
      async collect(_level: string, signal: AbortSignal): Promise<CollectResult> {
        if (slow.has(domain)) {
          await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
          signal.throwIfAborted();
        }
        if (failCollect.has(domain)) return { values: [], error: new CollectError('boom') };
        if (domain === 'status.global') {
          const rows = await ctx.db.query('SHOW GLOBAL STATUS', [], { signal });
          return { values: statusValues(rows, { all: true, names: new Set() }) };
        }
        return {
          values: [
            {
              name: 'buffer_lru_batch_flush_total_pages',
              value: 3,
              type: MetricType.CumulativeCounter,
              meta: { subsystem: 'buffer' },
            },
          ],
        };
      },
    };
  }
}

function setup() {
  const db = new CannedDb();
  db.rows.set('SHOW GLOBAL STATUS', [
    { Variable_name: 'Threads_connected', Value: '2' },
    { Variable_name: 'wsrep_cluster_status', Value: 'Disconnected' },
    { Variable_name: 'Slave_running', Value: 'off' },
    { Variable_name: 'wsrep_local_state_uuid', Value: 'abc-123' },
    { Variable_name: 'Ssl_cipher', Value: '' },
  ]);
  db.rows.set('SELECT name, type, comment FROM information_schema.innodb_metrics', [
    { name: 'buffer_LRU_batch_flush_total_pages', type: 'status_counter', comment: 'Total pages flushed' },
  ]);
  const factory = new Factory();
  const source = createExporterSource({ monitorId: 'db1', db, plan: ONE_LEVEL, collectors: factory });
  return { db, factory, source };
}

describe('createExporterSource', () => {
  it('refuses a plan without exactly one level', () => {
    assert.throws(() => exporterLevel(plan({})), { message: 'exporter plan has 0 levels, expected 1' });
    const two = plan({
      a: { name: 'a', freq: '1s', freqMs: 1000, collect: {} },
      b: { name: 'b', freq: '2s', freqMs: 2000, collect: {} },
    });
    assert.throws(
      () =>
        createExporterSource({ monitorId: 'x', db: new CannedDb(), plan: two, collectors: new Factory() }),
      { message: 'exporter plan has 2 levels, expected 1' },
    );
  });

  it('derives the collector deadline from the level frequency', () => {
    assert.equal(collectorTimeoutMs(10_000), 8000);
    assert.equal(collectorTimeoutMs(60_000), 58_000);
    assert.equal(collectorTimeoutMs(1000), 800);
  });

  it('collects the single level, reads values like mysqld_exporter and keeps text values', async () => {
    const { source } = setup();
    assert.deepEqual(source.domains(), ['status.global', 'innodb']);
    const r = await source.scrape(new AbortController().signal);
    assert.equal(r.up, true);
    assert.equal(r.error, '');
    assert.deepEqual(
      r.domains.map((d) => [d.domain, d.ok]),
      [
        ['status.global', true],
        ['innodb', true],
      ],
    );
    assert.ok(typeof r.connectSeconds === 'number' && r.connectSeconds >= 0);
    assert.equal(r.metrics?.plan, 'exp');
    assert.equal(r.metrics?.level, 'prom');
    assert.equal(r.metrics?.monitorId, 'db1');
    assert.equal(r.metrics?.interval, 1);
    assert.deepEqual(r.metrics?.values['status.global'], [
      { name: 'threads_connected', value: 2, type: MetricType.Gauge },
      { name: 'wsrep_cluster_status', value: 0, type: MetricType.CumulativeCounter },
      { name: 'slave_running', value: 0, type: MetricType.CumulativeCounter },
    ]);
    assert.deepEqual(r.text, { wsrep_local_state_uuid: 'abc-123' });
    assert.deepEqual(r.metrics?.values.innodb?.[0]?.meta, {
      subsystem: 'buffer',
      name: 'buffer_LRU_batch_flush_total_pages',
      type: 'status_counter',
      comment: 'Total pages flushed',
    });
  });

  it('prepares once, prepares a domain again only after it failed, and counts intervals', async () => {
    const { source, factory } = setup();
    factory.failPrepare.add('innodb');
    const r1 = await source.scrape(new AbortController().signal);
    assert.match(r1.error, /^innodb: while preparing exp\/prom\/innodb: no privilege$/);
    assert.deepEqual(
      r1.domains.map((d) => [d.domain, d.ok]),
      [
        ['status.global', true],
        ['innodb', false],
      ],
    );
    assert.ok(r1.metrics?.values['status.global'] !== undefined);
    factory.failPrepare.clear();
    await source.scrape(new AbortController().signal);
    const r3 = await source.scrape(new AbortController().signal);
    assert.equal(r3.metrics?.interval, 3);
    assert.deepEqual(factory.made, ['status.global', 'innodb', 'innodb']);
    factory.failCollect.add('status.global');
    const r4 = await source.scrape(new AbortController().signal);
    assert.equal(r4.error, 'status.global: boom');
    factory.failCollect.clear();
    await source.scrape(new AbortController().signal);
    assert.deepEqual(factory.made, ['status.global', 'innodb', 'innodb', 'status.global']);
  });

  it('collects only the requested domains', async () => {
    const { source, db } = setup();
    const r = await source.scrape(new AbortController().signal, ['innodb']);
    assert.deepEqual(Object.keys(r.metrics?.values ?? {}), ['innodb']);
    assert.ok(!db.queries.includes('SHOW GLOBAL STATUS'));
  });

  it('reports MySQL down without collecting, then recovers', async () => {
    const { source, db, factory } = setup();
    db.up = false;
    const r = await source.scrape(new AbortController().signal);
    assert.deepEqual(r, { up: false, metrics: undefined, domains: [], error: 'connect ECONNREFUSED' });
    assert.deepEqual(factory.made, []);
    assert.equal(await source.serverInfo(new AbortController().signal).then((i) => i?.flavor), 'mariadb');
    db.up = true;
    assert.equal((await source.scrape(new AbortController().signal)).up, true);
  });

  it('pings alongside the collection while MySQL is up, and first again once it went down', async () => {
    const { source, db, factory } = setup();
    assert.equal((await source.scrape(new AbortController().signal)).up, true);
    assert.deepEqual(factory.made, ['status.global', 'innodb']);
    db.up = false;
    const down = await source.scrape(new AbortController().signal);
    assert.deepEqual(down, { up: false, metrics: undefined, domains: [], error: 'connect ECONNREFUSED' });
    // the status collector failed with the server and is prepared again later
    db.queries = [];
    await source.scrape(new AbortController().signal);
    assert.deepEqual(db.queries, [], 'no collector runs while the ping fails');
    db.up = true;
    const back = await source.scrape(new AbortController().signal);
    assert.equal(back.up, true);
    assert.equal(back.error, '');
    assert.deepEqual(factory.made, ['status.global', 'innodb', 'status.global']);
  });

  it('stops a domain at the scrape deadline and serializes scrapes', async () => {
    const { source, factory } = setup();
    factory.slow.add('innodb');
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(new Error('scrape timeout after 0.1 s')), 100);
    const t0 = Date.now();
    const [a, b] = await Promise.all([
      source.scrape(ctl.signal),
      source.scrape(new AbortController().signal),
    ]);
    assert.equal(a.error, 'innodb: scrape timeout after 0.1 s');
    // The second scrape started after the first ended, then hit the 800 ms collector deadline.
    assert.equal(b.error, 'innodb: timeout after 800ms');
    assert.ok(Date.now() - t0 >= 850, `${Date.now() - t0} ms`);
    assert.equal(b.metrics?.interval, 2);
    await source.close();
  });
});

describe('upstreamValues', () => {
  it('rewrites mysqld_exporter keywords (any case) and keeps wanted text values', () => {
    const rows: Row[] = [
      { Variable_name: 'a', Value: 'ON' },
      { Variable_name: 'b', Value: 'Off' },
      { Variable_name: 'c', Value: 'Primary' },
      { Variable_name: 'd', Value: 'non-Primary' },
      { Variable_name: 'e', Value: 'CONNECTING' },
      { Variable_name: 'f', Value: 'yes' },
      { Variable_name: 'g', Value: '12' },
      { Variable_name: 'h', Value: 'AUTH_MASTER' },
      { Variable_name: 'version', Value: '10.11.19-MariaDB' },
      { Variable_name: 'Version_Comment', Value: 'Debian 12' },
      { Variable_name: 'i', Value: null },
    ];
    const text: Record<string, string> = {};
    upstreamValues(rows, new Set(['version', 'version_comment']), text);
    assert.deepEqual(
      rows.map((r) => r.Value),
      ['1', '0', '1', '0', '0', '1', '12', 'AUTH_MASTER', '10.11.19-MariaDB', 'Debian 12', null],
    );
    assert.deepEqual(text, { version: '10.11.19-MariaDB', version_comment: 'Debian 12' });
  });

  it('adds INNODB_METRICS columns to innodb values by lowercase name', () => {
    const values: MetricValue[] = [
      { name: 'lock_timeouts', value: 0, type: MetricType.CumulativeCounter, meta: { subsystem: 'lock' } },
      { name: 'unknown', value: 0, type: MetricType.CumulativeCounter, meta: { subsystem: 'x' } },
    ];
    addInnodbMeta(
      values,
      new Map([
        ['lock_timeouts', { name: 'lock_timeouts', type: 'value', comment: 'Number of lock timeouts' }],
      ]),
    );
    assert.deepEqual(values[0]?.meta, {
      subsystem: 'lock',
      name: 'lock_timeouts',
      type: 'value',
      comment: 'Number of lock timeouts',
    });
    assert.deepEqual(values[1]?.meta, { subsystem: 'x' });
  });
});
