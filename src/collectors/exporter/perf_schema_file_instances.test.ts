import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MARIADB, lines, runScraper } from './perf_schema.fixture.js';
import { QUERY, registration } from './perf_schema_file_instances.js';

const ROWS = [
  {
    FILE_NAME: '/var/lib/mysql/shop/orders.ibd',
    EVENT_NAME: 'wait/io/file/innodb/innodb_data_file',
    COUNT_READ: '1',
    COUNT_WRITE: '2',
    SUM_NUMBER_OF_BYTES_READ: '16384',
    SUM_NUMBER_OF_BYTES_WRITE: '32768',
  },
  {
    FILE_NAME: '/tmp/x/var/lib/mysql/ib_logfile0',
    EVENT_NAME: 'wait/io/file/innodb/innodb_log_file',
    COUNT_READ: '0',
    COUNT_WRITE: 'n/a',
    SUM_NUMBER_OF_BYTES_READ: '0',
    SUM_NUMBER_OF_BYTES_WRITE: '512',
  },
];

describe('exporter.perf_schema.file_instances on recorded result sets', () => {
  it("the default filter and prefix: '.*' as the REGEXP parameter, /var/lib/mysql/ removed at the start only", async () => {
    const r = await runScraper(registration, MARIADB, () => ROWS);
    assert.deepEqual(r.queries, [{ sql: QUERY, params: ['.*'] }]);
    const d = 'event_name="wait/io/file/innodb/innodb_data_file",file_name="shop/orders.ibd"';
    const l = 'event_name="wait/io/file/innodb/innodb_log_file",file_name="/tmp/x/var/lib/mysql/ib_logfile0"';
    assert.deepEqual(lines(r.values), [
      `mysql_perf_schema_file_instances_bytes{${d},mode="read"} 16384`,
      `mysql_perf_schema_file_instances_bytes{${d},mode="write"} 32768`,
      `mysql_perf_schema_file_instances_bytes{${l},mode="read"} 0`,
      `mysql_perf_schema_file_instances_bytes{${l},mode="write"} 512`,
      `mysql_perf_schema_file_instances_total{${d},mode="read"} 1`,
      `mysql_perf_schema_file_instances_total{${d},mode="write"} 2`,
      `mysql_perf_schema_file_instances_total{${l},mode="read"} 0`,
    ]);
  });

  it('sub-flags filter and remove_prefix; an empty prefix keeps the names', async () => {
    const r = await runScraper(registration, MARIADB, () => ROWS, {
      filter: 'ibd$',
      remove_prefix: '/var/lib/mysql/shop/',
    });
    assert.deepEqual(r.queries[0]?.params, ['ibd$']);
    assert.ok(lines(r.values).some((l) => l.includes('file_name="orders.ibd"')));
    const keep = await runScraper(registration, MARIADB, () => ROWS, { remove_prefix: '' });
    assert.ok(lines(keep.values).some((l) => l.includes('file_name="/var/lib/mysql/shop/orders.ibd"')));
  });
});
