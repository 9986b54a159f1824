import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MYSQL_8_0_28, lines, runScraper } from './perf_schema.fixture.js';
import { QUERY, registration } from './perf_schema_tableiowaits.js';

describe('exporter.perf_schema.tableiowaits on recorded result sets', () => {
  it('per table and operation, times in seconds, system schemas excluded in SQL', async () => {
    const r = await runScraper(registration, MYSQL_8_0_28, () => [
      {
        OBJECT_SCHEMA: 'shop',
        OBJECT_NAME: 'orders',
        COUNT_FETCH: '1',
        COUNT_INSERT: '2',
        COUNT_UPDATE: '3',
        COUNT_DELETE: '4',
        SUM_TIMER_FETCH: '5000000000000',
        SUM_TIMER_INSERT: '6000000000000',
        SUM_TIMER_UPDATE: null,
        SUM_TIMER_DELETE: '8000000000000',
      },
    ]);
    assert.equal(r.queries[0]?.sql, QUERY);
    assert.match(QUERY, /WHERE OBJECT_SCHEMA NOT IN \('mysql', 'performance_schema'\)$/);
    const at = (op: string) => `{name="orders",operation="${op}",schema="shop"}`;
    assert.deepEqual(lines(r.values), [
      `mysql_perf_schema_table_io_waits_seconds_total${at('delete')} 8`,
      `mysql_perf_schema_table_io_waits_seconds_total${at('fetch')} 5`,
      `mysql_perf_schema_table_io_waits_seconds_total${at('insert')} 6`,
      `mysql_perf_schema_table_io_waits_total${at('delete')} 4`,
      `mysql_perf_schema_table_io_waits_total${at('fetch')} 1`,
      `mysql_perf_schema_table_io_waits_total${at('insert')} 2`,
      `mysql_perf_schema_table_io_waits_total${at('update')} 3`,
    ]);
  });
});
