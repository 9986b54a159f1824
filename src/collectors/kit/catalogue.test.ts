import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Row } from '../../core/db.js';
import { CatalogueReader, TooSlowError, catalogueReuseMs } from './common.js';
import { FakeDb } from './test-helpers.js';

/** A database whose catalogue query "takes" `costMs` on the injected clock, or fails as too slow. */
function setup(): {
  db: FakeDb;
  clock: { t: number };
  state: { costMs: number; slow: boolean; rows: Row[] };
} {
  const clock = { t: 1_000_000 };
  const state = { costMs: 10, slow: false, rows: [{ n: '1' }] as Row[] };
  const db = new FakeDb('10.11.6-MariaDB', () => {
    clock.t += state.costMs;
    if (state.slow) throw Object.assign(new Error('max_statement_time exceeded'), { errno: 1969 });
    return state.rows;
  });
  return { db, clock, state };
}

const SQL = 'SELECT n FROM information_schema.TABLES';

describe('CatalogueReader', () => {
  it('reuses a result for 60 times what it cost, once it cost a second or more', async () => {
    assert.equal(catalogueReuseMs(999), 0);
    assert.equal(catalogueReuseMs(2000), 120_000);
    assert.equal(catalogueReuseMs(600_000), 3_600_000);
    const { db, clock, state } = setup();
    const reader = new CatalogueReader(db, () => clock.t);
    const signal = new AbortController().signal;
    await reader.read(SQL, [], signal);
    await reader.read(SQL, [], signal);
    assert.equal(db.queries.length, 2, 'a cheap query runs every time');
    state.costMs = 2000;
    await reader.read(SQL, [], signal);
    clock.t += 60_000;
    await reader.read(SQL, [], signal);
    assert.equal(db.queries.length, 3, 'a 2 s query is not run again within 2 minutes');
    clock.t += 61_000;
    await reader.read(SQL, [], signal);
    assert.equal(db.queries.length, 4);
  });

  it('serves the last rows with the error when a refresh runs out of time, and backs off', async () => {
    const { db, clock, state } = setup();
    const reader = new CatalogueReader(db, () => clock.t);
    const signal = new AbortController().signal;
    assert.deepEqual((await reader.read(SQL, [], signal)).rows, [{ n: '1' }]);
    state.slow = true;
    const read = await reader.read(SQL, [], signal);
    assert.deepEqual(read.rows, [{ n: '1' }]);
    assert.ok(read.error instanceof TooSlowError);
    assert.match(read.error.message, /^too slow on this server: .*max_statement_time.*; values read at /);
    const again = await reader.read(SQL, [], signal);
    assert.equal(db.queries.length, 2, 'not asked again before the back-off ends');
    assert.ok(again.error instanceof TooSlowError);
  });

  it('fails without rows when the first read runs out of time', async () => {
    const { db, clock, state } = setup();
    state.slow = true;
    const reader = new CatalogueReader(db, () => clock.t);
    await assert.rejects(reader.read(SQL, [], new AbortController().signal), TooSlowError);
  });
});
