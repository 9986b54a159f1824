import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeDb } from '../kit/test-helpers.js';
import { SQL, registration } from './engine_innodb_status.js';
import { collectOnce, render } from './recorded.fixture.js';

/** The parts of MySQL 8.0's InnoDB monitor around the lines read. */
const MYSQL_STATUS = `
=====================================
2024-05-01 12:00:00 0x7f5b INNODB MONITOR OUTPUT
=====================================
--------------
ROW OPERATIONS
--------------
3 queries inside InnoDB, 1 queries in queue
2 read views open inside InnoDB
Process ID=1234, Main thread ID=140, state: sleeping
Number of rows inserted 20, updated 0, deleted 0, read 40
----------------------------
END OF INNODB MONITOR OUTPUT
============================
`;

/** MariaDB 10.11 prints no queue line. */
const MARIADB_STATUS = `
--------------
ROW OPERATIONS
--------------
0 read views open inside InnoDB
state: sleeping
`;

const row = (status: string) => ({ Type: 'InnoDB', Name: '', Status: status });

void describe('exporter.engine_innodb_status', () => {
  void it('MySQL: queries inside, queries in queue and read views', async () => {
    const db = new FakeDb('8.0.36', () => [row(MYSQL_STATUS)]);
    const { res } = await collectOnce(registration, db);
    assert.deepEqual(
      db.queries.map((q) => q.sql),
      [SQL],
    );
    assert.deepEqual(render(res.values), [
      'mysql_engine_innodb_queries_in_queue 1',
      'mysql_engine_innodb_queries_inside_innodb 3',
      'mysql_engine_innodb_read_views_open_inside_innodb 2',
    ]);
    assert.deepEqual(
      res.values.map((v) => [v.type, v.meta?.help]),
      [
        [3, 'Queries inside InnoDB.'],
        [3, 'Queries in queue.'],
        [3, 'Read views open inside InnoDB.'],
      ],
    );
  });

  void it('MariaDB 10.6+: only the read views line', async () => {
    const { res } = await collectOnce(
      registration,
      new FakeDb('10.11.6-MariaDB', () => [row(MARIADB_STATUS)]),
    );
    assert.deepEqual(render(res.values), ['mysql_engine_innodb_read_views_open_inside_innodb 0']);
  });

  void it('a line given twice is read once (the first); no rows or no status give nothing', async () => {
    const twice = `${MYSQL_STATUS}\n7 queries inside InnoDB, 9 queries in queue\n5 read views open inside InnoDB\n`;
    const { res } = await collectOnce(registration, new FakeDb('8.0.36', () => [row(twice)]));
    assert.deepEqual(render(res.values), [
      'mysql_engine_innodb_queries_in_queue 1',
      'mysql_engine_innodb_queries_inside_innodb 3',
      'mysql_engine_innodb_read_views_open_inside_innodb 2',
    ]);
    assert.deepEqual((await collectOnce(registration, new FakeDb('8.0.36', () => []))).res, { values: [] });
    const nul = { Type: 'InnoDB', Name: '', Status: null };
    assert.deepEqual((await collectOnce(registration, new FakeDb('8.0.36', () => [nul]))).res, {
      values: [],
    });
  });
});
