import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  CollectError,
  type CollectResult,
  type Collector,
  type CollectorContext,
} from '../core/collector.js';
import type { Db, QueryOptions, Row, ServerInfo } from '../core/db.js';
import { MetricType } from '../core/metrics.js';
import type { Plan } from '../core/plan.js';
import { FakeClock } from '../util/fake-clock.fixture.js';
import {
  createScrapeReader,
  exporterActivePlan,
  exporterLevel,
  type CollectorFactory,
} from './scrape-reader.js';

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
  /** Answer every query with a server error (MySQL is up, the user lacks a privilege). */
  deny = false;
  queries: string[] = [];
  rows = new Map<string, Row[]>();
  async query(sql: string, _p?: readonly unknown[], opts?: QueryOptions): Promise<Row[]> {
    opts?.signal?.throwIfAborted();
    this.queries.push(sql);
    if (!this.up) throw new Error('connect ECONNREFUSED');
    if (this.deny) throw Object.assign(new Error('Access denied'), { errno: 1227, sqlState: '42000' });
    return (this.rows.get(sql) ?? []).map((r) => ({ ...r }));
  }
  async serverInfo(): Promise<ServerInfo> {
    return { flavor: 'mariadb', version: [10, 11, 19], versionString: '10.11.19-MariaDB' };
  }
  pings = 0;
  async ping(): Promise<void> {
    this.pings++;
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
          // The real collector reads keywords and keeps text values this way under ExporterReading.
          const rows = await ctx.db.query('SHOW GLOBAL STATUS', [], { signal });
          const text: Record<string, string> = {};
          const values = [];
          for (const r of rows) {
            const name = (r.Variable_name ?? '').toLowerCase();
            if (ctx.exporterReading?.keepText.has(name) === true) text[name] = r.Value ?? '';
            else if (r.Value === 'Disconnected')
              values.push({ name, value: 0, type: MetricType.CumulativeCounter });
            else if (r.Value !== null && r.Value !== '' && !Number.isNaN(Number(r.Value)))
              values.push({ name, value: Number(r.Value), type: MetricType.Gauge });
          }
          return { values, text };
        }
        return {
          values: [
            {
              name: 'buffer_lru_batch_flush_total_pages',
              value: 3,
              type: MetricType.CumulativeCounter,
              meta: ctx.exporterReading
                ? { subsystem: 'buffer', name: 'buffer_LRU_batch_flush_total_pages', type: 'status_counter' }
                : { subsystem: 'buffer' },
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
    { Variable_name: 'wsrep_local_state_uuid', Value: 'abc-123' },
    { Variable_name: 'Ssl_cipher', Value: '' },
  ]);
  const factory = new Factory();
  const clock = new FakeClock();
  const source = createScrapeReader({ monitorId: 'db1', db, plan: ONE_LEVEL, collectors: factory, clock });
  return { db, factory, source, clock };
}

describe('createScrapeReader', () => {
  it('refuses a plan without exactly one level', () => {
    assert.throws(() => exporterLevel(plan({})), { message: 'exporter plan has 0 levels, expected 1' });
    const two = plan({
      a: { name: 'a', freq: '1s', freqMs: 1000, collect: {} },
      b: { name: 'b', freq: '2s', freqMs: 2000, collect: {} },
    });
    assert.throws(
      () => createScrapeReader({ monitorId: 'x', db: new CannedDb(), plan: two, collectors: new Factory() }),
      { message: 'exporter plan has 2 levels, expected 1' },
    );
  });

  it('derives the collector deadline from the level frequency: freq minus 20 %, at most 2 s less', () => {
    const deadline = (freqMs: number) =>
      exporterActivePlan(
        plan({
          l: {
            name: 'l',
            freq: `${freqMs}ms`,
            freqMs,
            collect: { d: { metrics: [], options: {}, errors: {} } },
          },
        }),
      ).cmrMs.get('d');
    assert.equal(deadline(10_000), 8000);
    assert.equal(deadline(60_000), 58_000);
    assert.equal(deadline(1000), 800);
  });

  it('collects the single level with collectors reading for the exporter, and passes their text values on', async () => {
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
    ]);
    assert.deepEqual(r.text, { wsrep_local_state_uuid: 'abc-123' });
    assert.deepEqual(r.metrics?.values.innodb?.[0]?.meta, {
      subsystem: 'buffer',
      name: 'buffer_LRU_batch_flush_total_pages',
      type: 'status_counter',
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

  it('pings first, then not while MySQL answers the collectors, and after a collection nobody answered', async () => {
    const { source, db, factory } = setup();
    const first = await source.scrape(new AbortController().signal);
    assert.equal(first.up, true);
    assert.equal(db.pings, 1, 'the first scrape pings before collecting');
    assert.deepEqual(factory.made, ['status.global', 'innodb']);
    const second = await source.scrape(new AbortController().signal);
    assert.equal(second.up, true);
    assert.equal(db.pings, 1, 'MySQL answered the status query: no ping');
    assert.equal(second.connectSeconds, 0, 'no connection step was needed');
    const withoutQueries = await source.scrape(new AbortController().signal, ['innodb']);
    assert.equal(withoutQueries.up, true);
    assert.equal(db.pings, 2, 'no query was answered (innodb reads none here): the ping decides');
    db.deny = true;
    const denied = await source.scrape(new AbortController().signal, ['status.global']);
    assert.equal(denied.up, true);
    assert.equal(db.pings, 2, 'an error from the server is an answer: no ping');
    db.deny = false;
    db.up = false;
    const down = await source.scrape(new AbortController().signal);
    assert.deepEqual(down, { up: false, metrics: undefined, domains: [], error: 'connect ECONNREFUSED' });
    assert.equal(db.pings, 3, 'no query was answered: the ping tells up from down');
    // the status collector failed with the server and is prepared again later
    db.queries = [];
    await source.scrape(new AbortController().signal);
    assert.deepEqual(db.queries, [], 'no collector runs while the ping fails');
    db.up = true;
    const back = await source.scrape(new AbortController().signal);
    assert.equal(back.up, true);
    assert.equal(back.error, '');
    // status.global is made again after each of its failures (denied, then MySQL down)
    assert.deepEqual(factory.made, ['status.global', 'innodb', 'status.global', 'status.global']);
  });

  it('stops a domain at the scrape deadline and serializes scrapes', async () => {
    const { source, factory, clock } = setup();
    factory.slow.add('innodb');
    const ctl = new AbortController();
    const first = source.scrape(ctl.signal);
    const second = source.scrape(new AbortController().signal);
    await clock.advance(100);
    ctl.abort(new Error('scrape timeout after 0.1 s'));
    const a = await first;
    assert.equal(a.error, 'innodb: scrape timeout after 0.1 s');
    // The second scrape started after the first ended, then hit the 800 ms collector deadline.
    await clock.advance(799);
    let settled = false;
    void second.then(() => (settled = true));
    await clock.advance(0);
    assert.equal(settled, false);
    await clock.advance(1);
    const b = await second;
    assert.equal(b.error, 'innodb: timeout after 800ms');
    assert.equal(b.metrics?.interval, 2);
    await source.close();
  });
});

/** CannedDb that also batches, as the server runs a multi-statement request: in order, stopping at the first failure. */
class BatchingDb extends CannedDb {
  batches: string[][] = [];
  /** Statements that take `slowMs` on the test's clock, alone or in a batch. */
  slow = new Set<string>();
  slowMs = 60;
  clock: FakeClock | undefined;
  /** Statements the server refuses (a privilege missing). */
  failing = new Set<string>();
  override async query(sql: string, p?: readonly unknown[], opts?: QueryOptions): Promise<Row[]> {
    const rows = await super.query(sql, p, opts);
    if (this.slow.has(sql)) await this.clock?.advance(this.slowMs);
    if (this.failing.has(sql))
      throw Object.assign(new Error(`denied: ${sql}`), { errno: 1227, sqlState: '42000' });
    return rows;
  }
  /** Refuse every batch, as a proxy that takes no multi-statement requests. */
  refuseBatches = false;
  /**
   * Tell each statement's rows as its result set completes (the pool's handler); the last
   * statement's only once `hold` resolves. Off: everything comes at the end, as from a Db
   * without the handler.
   */
  stream = false;
  hold: Promise<void> | undefined;
  async queryBatch(
    sqls: readonly string[],
    opts?: QueryOptions,
    onResult?: (i: number, rows: Row[]) => void,
  ): Promise<Row[][]> {
    opts?.signal?.throwIfAborted();
    this.batches.push([...sqls]);
    if (!this.up) throw new Error('connect ECONNREFUSED');
    if (this.refuseBatches)
      throw Object.assign(new Error('syntax error'), { errno: 1064, sqlState: '42000' });
    const bad = sqls.find((s) => this.failing.has(s));
    if (bad !== undefined)
      throw Object.assign(new Error(`denied: ${bad}`), { errno: 1227, sqlState: '42000' });
    for (const s of sqls) if (this.slow.has(s)) await this.clock?.advance(this.slowMs);
    const results = sqls.map((s) => this.rows.get(s) ?? []);
    if (this.stream) {
      for (const [i, rows] of results.entries()) {
        if (i === results.length - 1) await this.hold;
        onResult?.(i, rows);
      }
    }
    return results;
  }
}

/** One collector per domain, each running `SELECT '<domain>' AS v` and reporting v's length. */
const SELECTING: CollectorFactory = {
  has: () => true,
  make: (domain, ctx) => ({
    domain,
    prepare: async () => undefined,
    async collect(_level: string, signal: AbortSignal): Promise<CollectResult> {
      try {
        const rows = await ctx.db.query(`SELECT '${domain}' AS v`, [], { signal });
        return { values: rows.map((r) => ({ name: r.v ?? '', value: 1, type: MetricType.Gauge })) };
      } catch (err) {
        return { values: [], error: new CollectError(err instanceof Error ? err.message : String(err)) };
      }
    },
  }),
};

describe('createScrapeReader: statement batches', () => {
  const three = plan({
    prom: {
      name: 'prom',
      freq: '10s',
      freqMs: 10_000,
      collect: Object.fromEntries(['a', 'b', 'c'].map((d) => [d, { metrics: [], options: {}, errors: {} }])),
    },
  });
  function batching(collectors: CollectorFactory = SELECTING, session?: QueryOptions['session']) {
    const db = new BatchingDb();
    for (const d of ['a', 'b', 'c']) db.rows.set(`SELECT '${d}' AS v`, [{ v: d }]);
    db.clock = new FakeClock();
    const source = createScrapeReader({
      monitorId: 'm',
      db,
      plan: three,
      collectors,
      clock: db.clock,
      ...(session === undefined ? {} : { session }),
    });
    const scrape = async (only?: string[]) => {
      db.queries = [];
      db.batches = [];
      const r = await source.scrape(new AbortController().signal, only);
      return { r, names: Object.values(r.metrics?.values ?? {}).flatMap((vs) => vs.map((v) => v.name)) };
    };
    return { db, source, scrape };
  }

  it('sends the statements of the last scrape together and answers the collectors from that batch', async () => {
    const { db, scrape } = batching();
    const first = await scrape();
    assert.deepEqual(db.queries, ["SELECT 'a' AS v", "SELECT 'b' AS v", "SELECT 'c' AS v"]);
    assert.deepEqual(db.batches, []);
    for (let i = 0; i < 2; i++) {
      const next = await scrape();
      assert.deepEqual(db.batches, [["SELECT 'a' AS v", "SELECT 'b' AS v", "SELECT 'c' AS v"]]);
      assert.deepEqual(db.queries, [], 'no statement sent on its own');
      assert.deepEqual(next.names, first.names);
      assert.equal(next.r.error, '');
      assert.equal(next.r.up, true);
    }
  });

  it("answers each collector as soon as its statement's rows are in, before the batch ends", async () => {
    const finished: string[] = [];
    const { db, scrape } = batching(
      {
        has: () => true,
        make: (domain, ctx) => {
          const c = SELECTING.make(domain, ctx);
          return {
            ...c,
            collect: async (level, signal) => {
              const r = await c.collect(level, signal);
              finished.push(domain);
              return r;
            },
          };
        },
      },
      // with the exporter's session variables: the handler goes through their wrapper too
      { lock_wait_timeout: 7 },
    );
    await scrape();
    db.stream = true;
    let release: () => void = () => undefined;
    db.hold = new Promise((r) => (release = r));
    finished.length = 0;
    let settled = false;
    const running = scrape().finally(() => (settled = true));
    // a and b finish with their rows (the stagger lets each next one start) while the
    // batch still holds c's
    for (let i = 0; i < 100 && finished.length < 2; i++) await new Promise((r) => setImmediate(r));
    assert.deepEqual(finished, ['a', 'b']);
    assert.equal(settled, false);
    release();
    const { r, names } = await running;
    assert.deepEqual(finished, ['a', 'b', 'c']);
    assert.deepEqual(db.batches, [["SELECT 'a' AS v", "SELECT 'b' AS v", "SELECT 'c' AS v"]]);
    assert.deepEqual(db.queries, [], 'no statement sent on its own');
    assert.deepEqual(names, ['a', 'b', 'c']);
    assert.equal(r.error, '');
  });

  it('runs every statement on its own when the batch fails, and leaves a failing one out of the next', async () => {
    const { db, scrape } = batching();
    await scrape();
    db.failing.add("SELECT 'b' AS v");
    const failed = await scrape();
    assert.equal(db.batches.length, 1);
    assert.deepEqual(db.queries, ["SELECT 'a' AS v", "SELECT 'b' AS v", "SELECT 'c' AS v"]);
    assert.equal(failed.r.error, "b: denied: SELECT 'b' AS v");
    assert.deepEqual(failed.names, ['a', 'c']);
    const next = await scrape();
    assert.deepEqual(db.batches, [["SELECT 'a' AS v", "SELECT 'c' AS v"]]);
    assert.deepEqual(db.queries, ["SELECT 'b' AS v"]);
    assert.equal(next.r.error, "b: denied: SELECT 'b' AS v");
    assert.deepEqual(next.names, ['a', 'c']);
  });

  it('sends no more batches once one failed where each of its statements worked alone', async () => {
    const { db, scrape } = batching();
    await scrape();
    db.refuseBatches = true;
    const refused = await scrape();
    assert.equal(db.batches.length, 1);
    assert.equal(refused.r.error, '');
    assert.deepEqual(refused.names, ['a', 'b', 'c']);
    for (let i = 0; i < 2; i++) {
      const next = await scrape();
      assert.deepEqual(db.batches, []);
      assert.equal(db.queries.length, 3);
      assert.deepEqual(next.names, ['a', 'b', 'c']);
    }
  });

  it('keeps a slow statement out of batches, so it does not hold up the quick ones', async () => {
    const { db, scrape } = batching();
    db.slow.add("SELECT 'b' AS v");
    await scrape();
    const next = await scrape();
    assert.deepEqual(db.batches, [["SELECT 'a' AS v", "SELECT 'c' AS v"]]);
    assert.deepEqual(db.queries, ["SELECT 'b' AS v"]);
    assert.deepEqual(next.names, ['a', 'b', 'c']);
    // quick again: back in the batch after a scrape that ran it alone
    db.slow.clear();
    await scrape();
    assert.deepEqual(db.batches, [["SELECT 'a' AS v", "SELECT 'c' AS v"]]);
    await scrape();
    assert.deepEqual(db.batches, [["SELECT 'a' AS v", "SELECT 'b' AS v", "SELECT 'c' AS v"]]);
    // a batch that turns slow: one scrape one by one, which finds the slow one
    db.slow.add("SELECT 'c' AS v");
    await scrape();
    assert.equal(db.batches.length, 1);
    await scrape();
    assert.deepEqual(db.batches, []);
    assert.equal(db.queries.length, 3);
    await scrape();
    assert.deepEqual(db.batches, [["SELECT 'a' AS v", "SELECT 'b' AS v"]]);
  });

  it('keeps a batch per set of domains scraped, and starts afresh after MySQL was down', async () => {
    const { db, scrape } = batching();
    await scrape();
    const one = await scrape(['a']);
    assert.deepEqual(db.batches, [], 'one statement: nothing to batch');
    assert.deepEqual(one.names, ['a']);
    await scrape();
    assert.deepEqual(db.batches, [["SELECT 'a' AS v", "SELECT 'b' AS v", "SELECT 'c' AS v"]]);
    db.up = false;
    assert.equal((await scrape()).r.up, false);
    db.up = true;
    const back = await scrape();
    assert.equal(back.r.up, true);
    assert.deepEqual(db.batches, []);
    assert.deepEqual(back.names, ['a', 'b', 'c']);
  });
});
