import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Row } from '../../core/db.js';
import { MetricType } from '../../core/metrics.js';
import { FakeDb } from '../kit/test-helpers.js';
import { DOMAIN, QUERY, registration } from './info_schema_clientstats.js';
import { helps, lines, scrapeWith } from './scrape-fixture.js';
import { USERSTAT_CHECK } from './userstat.js';

const P = 'mysql_info_schema_client_statistics_';

/** A Percona Server style CLIENT_STATISTICS row (ROWS_FETCHED, TABLE_ROWS_READ; no ROWS_READ/SENT/…). */
const PERCONA_ROW: Row = {
  CLIENT: '10.0.0.7',
  TOTAL_CONNECTIONS: '12',
  CONCURRENT_CONNECTIONS: '0',
  CONNECTED_TIME: '340',
  BUSY_TIME: '1.5',
  CPU_TIME: '0.25',
  BYTES_RECEIVED: '4096',
  BYTES_SENT: '65536',
  BINLOG_BYTES_WRITTEN: '0',
  ROWS_FETCHED: '900',
  ROWS_UPDATED: '3',
  TABLE_ROWS_READ: '1200',
  SELECT_COMMANDS: '50',
  UPDATE_COMMANDS: '3',
  OTHER_COMMANDS: '8',
  COMMIT_TRANSACTIONS: '3',
  ROLLBACK_TRANSACTIONS: '0',
  DENIED_CONNECTIONS: '1',
  LOST_CONNECTIONS: '0',
  ACCESS_DENIED: '0',
  EMPTY_QUERIES: '0',
  TOTAL_SSL_CONNECTIONS: '12',
};

function server(userstat: Row[] | Error, rows: Row[] = [PERCONA_ROW]): FakeDb {
  return new FakeDb('8.0.36-28', (sql) => {
    if (sql === USERSTAT_CHECK) {
      if (userstat instanceof Error) throw userstat;
      return userstat;
    }
    assert.equal(sql, QUERY);
    return rows;
  });
}

const ON: Row[] = [{ Variable_name: 'userstat', Value: 'ON' }];

void describe(DOMAIN, () => {
  void it('one family per column, labelled client; known columns typed with their HELP', async () => {
    const r = await scrapeWith(registration, server(ON));
    assert.equal(r.error, undefined);
    assert.equal(r.values.length, 21);
    assert.ok(lines(r.values).includes(`${P}total_connections{client="10.0.0.7"} 12`));
    assert.ok(lines(r.values).includes(`${P}busy_seconds_total{client="10.0.0.7"} 1.5`));
    assert.ok(lines(r.values).includes(`${P}total_ssl_connections_total{client="10.0.0.7"} 12`));
    const byName = new Map(r.values.map((v) => [v.name, v]));
    assert.equal(byName.get(`${P}concurrent_connections`)?.type, MetricType.Gauge);
    assert.equal(byName.get(`${P}rows_fetched_total`)?.type, MetricType.CumulativeCounter);
    assert.equal(
      helps(r.values).get(`${P}table_rows_read_total`),
      'The number of rows read from tables by this client’s connections. (It may be different from ROWS_FETCHED.)',
    );
    assert.equal(
      helps(r.values).get(`${P}cpu_time_seconds_total`),
      "The cumulative CPU time elapsed, in seconds, while servicing this client's connections.",
    );
  });

  void it('a column upstream does not know becomes an untyped family named after it', async () => {
    const r = await scrapeWith(
      registration,
      server(ON, [{ CLIENT: 'localhost', NEW_THING: '7', ROWS_READ: '2' }]),
    );
    assert.deepEqual(lines(r.values), [
      `${P}new_thing{client="localhost"} 7`,
      `${P}rows_read_total{client="localhost"} 2`,
    ]);
    const v = r.values[0];
    assert.equal(v?.type, MetricType.Unknown);
    assert.equal(helps(r.values).get(`${P}new_thing`), 'Unsupported metric from column NEW_THING');
  });

  void it('userstat OFF, missing (MySQL) or unreadable: no sample, no error, no statistics query', async () => {
    for (const check of [[{ Variable_name: 'userstat', Value: 'OFF' }], [], new Error('denied')]) {
      const db = server(check);
      const r = await scrapeWith(registration, db);
      assert.deepEqual([r.values, r.error], [[], undefined]);
      assert.deepEqual(
        db.queries.map((q) => q.sql),
        [USERSTAT_CHECK],
      );
    }
  });

  void it('the first variable row decides (old Percona: userstat_running); only `OFF` means off', async () => {
    const r = await scrapeWith(registration, server([{ Variable_name: 'userstat_running', Value: '1' }]));
    assert.equal(r.values.length, 21);
  });

  void it('a row that does not read stops the scrape with an error naming the column; earlier rows stay', async () => {
    const bad = { ...PERCONA_ROW, CLIENT: 'db2', BYTES_SENT: 'lots' };
    const r = await scrapeWith(registration, server(ON, [PERCONA_ROW, bad, PERCONA_ROW]));
    assert.equal(r.values.length, 21);
    assert.ok(r.values.every((v) => v.group?.client === '10.0.0.7'));
    assert.match(r.error?.message ?? '', /column BYTES_SENT: converting "lots" to a float64/);
    const nul = await scrapeWith(registration, server(ON, [{ ...PERCONA_ROW, CLIENT: null }]));
    assert.deepEqual(nul.values, []);
    assert.match(nul.error?.message ?? '', /column CLIENT: converting NULL to string/);
  });

  void it('a failing statistics query is the scrape error', async () => {
    const db = new FakeDb('10.11.6-MariaDB', (sql) => {
      if (sql === USERSTAT_CHECK) return ON;
      throw Object.assign(new Error("Unknown table 'CLIENT_STATISTICS' in information_schema"), {
        errno: 1109,
      });
    });
    const r = await scrapeWith(registration, db);
    assert.equal(r.error?.errno, 1109);
  });
});
