import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Row } from '../../core/db.js';
import { MetricType } from '../../core/metrics.js';
import { FakeDb } from '../kit/test-helpers.js';
import { DOMAIN, QUERY, registration } from './info_schema_tablestats.js';
import { helps, lines, scrapeWith } from './scrape-fixture.js';
import { USERSTAT_CHECK } from './userstat.js';

const P = 'mysql_info_schema_table_statistics_';

function server(rows: Row[], check: Row[] = [{ Variable_name: 'userstat', Value: 'ON' }]): FakeDb {
  return new FakeDb('8.0.36-28', (sql) => {
    if (sql === USERSTAT_CHECK) return check;
    assert.equal(sql, QUERY);
    return rows;
  });
}

const row = (schema: string, table: string, read: string, changed: string, x: string): Row => ({
  TABLE_SCHEMA: schema,
  TABLE_NAME: table,
  ROWS_READ: read,
  ROWS_CHANGED: changed,
  ROWS_CHANGED_X_INDEXES: x,
});

void describe(DOMAIN, () => {
  void it('three counters per table, labelled schema and table', async () => {
    const r = await scrapeWith(registration, server([row('shop', 'orders', '120', '7', '14')]));
    assert.equal(r.error, undefined);
    assert.deepEqual(lines(r.values), [
      `${P}rows_read_total{schema="shop",table="orders"} 120`,
      `${P}rows_changed_total{schema="shop",table="orders"} 7`,
      `${P}rows_changed_x_indexes_total{schema="shop",table="orders"} 14`,
    ]);
    assert.ok(r.values.every((v) => v.type === MetricType.CumulativeCounter));
    assert.equal(
      helps(r.values).get(`${P}rows_changed_x_indexes_total`),
      'The number of rows changed in the table, multiplied by the number of indexes changed.',
    );
  });

  void it('without userstat (MySQL has no variable): nothing and no error', async () => {
    const r = await scrapeWith(registration, server([row('a', 'b', '1', '1', '1')], []));
    assert.deepEqual([r.values, r.error], [[], undefined]);
  });

  void it('counters are unsigned integers: a negative or fractional value stops the scrape', async () => {
    for (const bad of ['-1', '1.5', '18446744073709551616']) {
      const r = await scrapeWith(
        registration,
        server([row('a', 'ok', '1', '2', '3'), row('a', 'b', '1', bad, '1')]),
      );
      assert.equal(r.values.length, 3, bad);
      assert.match(r.error?.message ?? '', /column ROWS_CHANGED: converting ".*" to a uint64/, bad);
    }
  });
});
