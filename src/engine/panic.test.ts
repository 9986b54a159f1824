import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { CollectError } from '../core/collector.js';
import { MetricType } from '../core/metrics.js';
import { planOf } from '../collectors/kit/test-helpers.js';
import type { PooledDb } from '../db/pool.js';
import { connectAs, startMariaDB, type MariaDB } from '../../test/helpers/mariadb.js';
import { isPanic, panicText } from './panic.js';
import { engineFor } from './run.fixture.js';
import { Scripted } from './scripted.fixture.js';

/** What a thrown value turns into, caught. */
function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('did not throw');
}

describe('isPanic', () => {
  it('programming errors are panics', () => {
    const undef: { a?: { b: number } } = {};
    const cases: [string, unknown][] = [
      ['TypeError from JavaScript', caught(() => (undef.a as { b: number }).b)],
      ['RangeError', caught(() => 'x'.repeat(-1))],
      ['ReferenceError', new ReferenceError('x is not defined')],
      ['SyntaxError from JSON.parse', caught(() => JSON.parse('{'))],
      ["Node's own argument check (ERR_OUT_OF_RANGE)", caught(() => Buffer.alloc(-1))],
      ['a string', 'oops'],
      ['a number', 42],
      ['undefined', undefined],
      ['a plain object', { message: 'not an Error' }],
    ];
    for (const [what, err] of cases) assert.equal(isPanic(err), true, what);
  });

  it('expected failures are not', () => {
    const cases: [string, unknown][] = [
      ['a plain Error', new Error('boom')],
      ['a typed CollectError', new CollectError('odd')],
      ['an AbortSignal timeout', AbortSignal.timeout(0).reason ?? new DOMException('t', 'TimeoutError')],
      ['an abort', new DOMException('aborted', 'AbortError')],
      ['a TypeError carrying a MySQL errno', Object.assign(new TypeError('x'), { errno: 1146 })],
      ['a TypeError carrying a sqlState', Object.assign(new TypeError('x'), { sqlState: '42S02' })],
      [
        "fetch's TypeError around a socket error",
        new TypeError('fetch failed', {
          cause: Object.assign(new Error('connect ECONNREFUSED'), { syscall: 'connect', errno: -111 }),
        }),
      ],
    ];
    for (const [what, err] of cases) assert.equal(isPanic(err), false, what);
  });

  it('says what was thrown in one line', () => {
    assert.equal(panicText(new TypeError('x is not a function')), 'TypeError: x is not a function');
    assert.equal(panicText('oops'), 'non-error value thrown: "oops"');
    assert.equal(panicText(undefined), 'non-error value thrown: undefined');
    assert.equal(panicText({ a: 1 }), 'non-error value thrown: {"a":1}');
    const cyclic: { self?: unknown } = {};
    cyclic.self = cyclic;
    assert.equal(panicText(cyclic), 'non-error value thrown: [object Object]');
    assert.equal(panicText('x'.repeat(500)).length, 'non-error value thrown: '.length + 201);
  });
});

describe('collector-panic against a real MariaDB', () => {
  let server: MariaDB;
  let db: PooledDb;
  before(async () => {
    server = await startMariaDB();
    await server.createUser('mon', 'mon-pass-1', ['PROCESS ON *.*']);
    db = connectAs(server, 'mon', 'mon-pass-1');
  });
  after(async () => {
    await db?.close();
    await server?.stop();
  });

  it('driver errors are not panics: a failed query, a refused connection', async () => {
    const queryErr = await db.query('SELECT no_such_column FROM information_schema.TABLES LIMIT 1').then(
      () => undefined,
      (err: unknown) => err,
    );
    assert.equal((queryErr as { errno?: number }).errno, 1054, String(queryErr));
    assert.equal(isPanic(queryErr), false);
    const free = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as { port: number };
        s.close(() => resolve(port));
      });
    });
    const nowhere = connectAs({ host: '127.0.0.1', port: free }, 'mon', 'mon-pass-1');
    const refused = await nowhere.query('SELECT 1').then(
      () => undefined,
      (err: unknown) => err,
    );
    await nowhere.close();
    assert.ok(refused instanceof Error, String(refused));
    assert.equal(isPanic(refused), false, String(refused));
  });

  it('a collector that throws a TypeError on real rows: collector-panic; the other domains still produce metrics', async () => {
    const gauge = (name: string, value: number) => ({ name, value, type: MetricType.Gauge });
    const uptime = new Scripted('status.global', async (_call, signal) => {
      const rows = await db.query("SHOW GLOBAL STATUS LIKE 'Uptime'", [], { signal });
      return { values: [gauge('uptime', Number(rows[0]?.Value))] };
    });
    const missing = new Scripted('size.table', async (_call, signal) => {
      await db.query('SELECT no_such_column FROM information_schema.TABLES LIMIT 1', [], { signal });
      return { values: [] };
    });
    const buggy = new Scripted('innodb', async (_call, signal) => {
      const rows = await db.query("SHOW GLOBAL STATUS LIKE 'Uptime'", [], { signal });
      // The bug: the column is `Value`, not `value`.
      const v = (rows[0] as unknown as { value: { trim(): string } }).value.trim();
      return { values: [gauge('rows_read', Number(v))] };
    });
    const byDomain = new Map([uptime, missing, buggy].map((c) => [c.domain, c]));
    const errors: string[] = [];
    const plan = planOf({ l: { 'status.global': {}, 'size.table': {}, innodb: {} } });
    const e = await engineFor({
      plan,
      make: (d) => byDomain.get(d) ?? assert.fail(d),
      errors,
    });
    try {
      for (const n of [1, 2]) {
        const [m] = await e.collect(n, 'l');
        assert.deepEqual(Object.keys(m?.values ?? {}), ['status.global'], `interval ${n}`);
        assert.ok((m?.values['status.global']?.[0]?.value ?? -1) >= 0);
      }
      assert.equal(buggy.calls, 2, 'the panicking domain runs again at the next collection');
      const reported = errors.filter((l) => /^collector-(panic|error)/.test(l)).sort();
      assert.equal(reported.length, 4, reported.join('\n'));
      for (const n of [0, 1])
        assert.match(
          reported[n] ?? '',
          /^collector-error: test\/l\/[12]\/size\.table: Unknown column 'no_such_column'/,
        );
      for (const n of [2, 3])
        assert.match(
          reported[n] ?? '',
          /^collector-panic: test\/l\/[12]\/innodb: TypeError: Cannot read properties of undefined \(reading 'trim'\)$/,
        );
      assert.equal(e.engine.records().get('innodb')?.ok, false);
      assert.match(e.engine.records().get('innodb')?.error ?? '', /^TypeError: /);
    } finally {
      await e.close();
    }
  });
});
