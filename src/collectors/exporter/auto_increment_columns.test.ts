import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeDb, NO_SIGNAL, planOf } from '../kit/test-helpers.js';
import { SQL, registration } from './auto_increment_columns.js';
import { collectOnce, render } from './recorded.fixture.js';

const row = (schema: string, table: string, column: string, value: string | null, max: string | null) => ({
  table_schema: schema,
  table_name: table,
  column_name: column,
  auto_increment: value,
  max_int: max,
});

void describe('exporter.auto_increment.columns', () => {
  void it('current value and type maximum per column', async () => {
    const db = new FakeDb('8.0.36', () => [
      row('shop', 'orders', 'id', '14', '2147483647'),
      row('shop', 'Tiny', 'id', '4', '255'),
      row('shop', 'big', 'n', '5000000001', '9.223372036854776e18'),
    ]);
    const { res } = await collectOnce(registration, db);
    assert.deepEqual(
      db.queries.map((q) => q.sql),
      [SQL],
    );
    assert.deepEqual(render(res.values), [
      'mysql_info_schema_auto_increment_column_max{column="id",schema="shop",table="Tiny"} 255',
      'mysql_info_schema_auto_increment_column_max{column="id",schema="shop",table="orders"} 2147483647',
      'mysql_info_schema_auto_increment_column_max{column="n",schema="shop",table="big"} 9223372036854776000',
      'mysql_info_schema_auto_increment_column{column="id",schema="shop",table="Tiny"} 4',
      'mysql_info_schema_auto_increment_column{column="id",schema="shop",table="orders"} 14',
      'mysql_info_schema_auto_increment_column{column="n",schema="shop",table="big"} 5000000001',
    ]);
    assert.ok(res.values.every((v) => v.type === 3));
  });

  void it('a column of another type (FLOAT auto_increment on MariaDB): no maximum, the value served', async () => {
    const { res } = await collectOnce(
      registration,
      new FakeDb('10.11.6-MariaDB', () => [row('s', 't', 'f', '7', null)]),
    );
    assert.equal(res.error, undefined);
    assert.deepEqual(render(res.values), [
      'mysql_info_schema_auto_increment_column{column="f",schema="s",table="t"} 7',
    ]);
  });

  void it('a current value that is no number fails the scrape; rows before it are kept', async () => {
    const { res } = await collectOnce(
      registration,
      new FakeDb('8.0.36', () => [row('a', 'b', 'c', '1', '255'), row('a', 'x', 'y', null, '255')]),
    );
    assert.match(res.error?.message ?? '', /auto_increment of a\.x\.y: null is no number/);
    assert.equal(res.values.length, 2);
  });

  void it('passes the abort signal to the query', async () => {
    const db = new FakeDb('8.0.36', () => []);
    const c = registration.create({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { 'exporter.auto_increment.columns': {} } }), NO_SIGNAL);
    const ac = new AbortController();
    ac.abort();
    const res = await c.collect('l', ac.signal);
    assert.ok(res.error !== undefined);
    assert.deepEqual(
      db.queries.filter((q) => q.sql === SQL),
      [],
    );
  });
});
