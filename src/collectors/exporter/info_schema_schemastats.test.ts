import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Row } from '../../core/db.js';
import { FakeDb } from '../kit/test-helpers.js';
import { DOMAIN, QUERY, registration } from './info_schema_schemastats.js';
import { helps, lines, scrapeWith } from './scrape-fixture.js';
import { USERSTAT_CHECK } from './userstat.js';

const P = 'mysql_info_schema_schema_statistics_';

function server(rows: Row[], value = 'ON'): FakeDb {
  return new FakeDb('10.11.6-MariaDB', (sql) => {
    if (sql === USERSTAT_CHECK) return [{ Variable_name: 'userstat', Value: value }];
    assert.equal(sql, QUERY);
    return rows;
  });
}

void describe(DOMAIN, () => {
  void it('the per-schema sums, labelled schema', async () => {
    const r = await scrapeWith(
      registration,
      server([
        { TABLE_SCHEMA: 'mysql', ROWS_READ: '10', ROWS_CHANGED: '0', ROWS_CHANGED_X_INDEXES: '0' },
        { TABLE_SCHEMA: 'shop', ROWS_READ: '1', ROWS_CHANGED: '7', ROWS_CHANGED_X_INDEXES: '9' },
      ]),
    );
    assert.equal(r.error, undefined);
    assert.deepEqual(lines(r.values), [
      `${P}rows_read_total{schema="mysql"} 10`,
      `${P}rows_changed_total{schema="mysql"} 0`,
      `${P}rows_changed_x_indexes_total{schema="mysql"} 0`,
      `${P}rows_read_total{schema="shop"} 1`,
      `${P}rows_changed_total{schema="shop"} 7`,
      `${P}rows_changed_x_indexes_total{schema="shop"} 9`,
    ]);
    assert.equal(helps(r.values).get(`${P}rows_read_total`), 'The number of rows read from the schema.');
  });

  void it('userstat OFF: the table is not read', async () => {
    const r = await scrapeWith(registration, server([], 'OFF'));
    assert.deepEqual([r.values, r.error], [[], undefined]);
  });

  void it('a sum that is not an unsigned integer is a scan error', async () => {
    const r = await scrapeWith(
      registration,
      server([{ TABLE_SCHEMA: 'shop', ROWS_READ: 'x', ROWS_CHANGED: '7', ROWS_CHANGED_X_INDEXES: '9' }]),
    );
    assert.deepEqual(r.values, []);
    assert.match(r.error?.message ?? '', /column ROWS_READ/);
  });
});
