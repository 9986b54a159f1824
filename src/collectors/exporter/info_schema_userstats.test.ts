import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Row } from '../../core/db.js';
import { MetricType } from '../../core/metrics.js';
import { FakeDb } from '../kit/test-helpers.js';
import { DOMAIN, QUERY, registration } from './info_schema_userstats.js';
import { helps, lines, scrapeWith } from './scrape-fixture.js';
import { USERSTAT_CHECK } from './userstat.js';

const P = 'mysql_info_schema_user_statistics_';

function server(rows: Row[], value = 'ON'): FakeDb {
  return new FakeDb('10.11.6-MariaDB', (sql) => {
    if (sql === USERSTAT_CHECK) return [{ Variable_name: 'userstat', Value: value }];
    assert.equal(sql, QUERY);
    return rows;
  });
}

void describe(DOMAIN, () => {
  void it('MariaDB rows: labelled user; MAX_STATEMENT_TIME_EXCEEDED is unknown to upstream here, so untyped', async () => {
    const r = await scrapeWith(
      registration,
      server([
        {
          USER: 'root',
          TOTAL_CONNECTIONS: '4',
          CONCURRENT_CONNECTIONS: '2',
          ROWS_READ: '10',
          MAX_STATEMENT_TIME_EXCEEDED: '0',
        },
        {
          USER: 'app',
          TOTAL_CONNECTIONS: '1',
          CONCURRENT_CONNECTIONS: '0',
          ROWS_READ: '3',
          MAX_STATEMENT_TIME_EXCEEDED: '2',
        },
      ]),
    );
    assert.equal(r.error, undefined);
    assert.deepEqual(lines(r.values), [
      `${P}total_connections{user="root"} 4`,
      `${P}concurrent_connections{user="root"} 2`,
      `${P}rows_read_total{user="root"} 10`,
      `${P}max_statement_time_exceeded{user="root"} 0`,
      `${P}total_connections{user="app"} 1`,
      `${P}concurrent_connections{user="app"} 0`,
      `${P}rows_read_total{user="app"} 3`,
      `${P}max_statement_time_exceeded{user="app"} 2`,
    ]);
    const types = new Map(r.values.map((v) => [v.name, v.type]));
    assert.equal(types.get(`${P}total_connections`), MetricType.CumulativeCounter);
    assert.equal(types.get(`${P}concurrent_connections`), MetricType.Gauge);
    assert.equal(types.get(`${P}max_statement_time_exceeded`), MetricType.Unknown);
    assert.equal(
      helps(r.values).get(`${P}rows_read_total`),
      "The number of rows read by this user's connections.",
    );
    assert.equal(
      helps(r.values).get(`${P}max_statement_time_exceeded`),
      'Unsupported metric from column MAX_STATEMENT_TIME_EXCEEDED',
    );
  });

  void it('userstat OFF: nothing; any other value reads the table', async () => {
    assert.deepEqual(
      (await scrapeWith(registration, server([{ USER: 'a', ROWS_READ: '1' }], 'OFF'))).values,
      [],
    );
    assert.equal(
      (await scrapeWith(registration, server([{ USER: 'a', ROWS_READ: '1' }], 'off'))).values.length,
      1,
    );
  });

  void it('a NULL counter is a scan error naming the column', async () => {
    const r = await scrapeWith(registration, server([{ USER: 'a', ROWS_READ: null }]));
    assert.deepEqual(r.values, []);
    assert.match(r.error?.message ?? '', /column ROWS_READ: converting NULL to float64 is unsupported/);
  });
});
