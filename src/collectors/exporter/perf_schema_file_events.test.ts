import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MARIADB, lines, runScraper } from './perf_schema.fixture.js';
import { QUERY, registration } from './perf_schema_file_events.js';

const E = 'event_name="wait/io/file/sql/binlog"';

describe('exporter.perf_schema.file_events on recorded result sets', () => {
  it('counts, seconds and bytes per mode; misc moves no bytes', async () => {
    const r = await runScraper(registration, MARIADB, () => [
      {
        EVENT_NAME: 'wait/io/file/sql/binlog',
        COUNT_READ: '1',
        SUM_TIMER_READ: '2000000000000',
        SUM_NUMBER_OF_BYTES_READ: '3',
        COUNT_WRITE: '4',
        SUM_TIMER_WRITE: '5000000',
        SUM_NUMBER_OF_BYTES_WRITE: '6',
        COUNT_MISC: '7',
        SUM_TIMER_MISC: '8000000000000',
      },
    ]);
    assert.equal(r.queries[0]?.sql, QUERY);
    assert.deepEqual(lines(r.values), [
      `mysql_perf_schema_file_events_bytes_total{${E},mode="read"} 3`,
      `mysql_perf_schema_file_events_bytes_total{${E},mode="write"} 6`,
      `mysql_perf_schema_file_events_seconds_total{${E},mode="misc"} 8`,
      `mysql_perf_schema_file_events_seconds_total{${E},mode="read"} 2`,
      `mysql_perf_schema_file_events_seconds_total{${E},mode="write"} 0.000005`,
      `mysql_perf_schema_file_events_total{${E},mode="misc"} 7`,
      `mysql_perf_schema_file_events_total{${E},mode="read"} 1`,
      `mysql_perf_schema_file_events_total{${E},mode="write"} 4`,
    ]);
  });

  it('malformed columns are missing', async () => {
    const r = await runScraper(registration, MARIADB, () => [
      { EVENT_NAME: 'x', COUNT_READ: '-', COUNT_MISC: '2' },
    ]);
    assert.deepEqual(lines(r.values), ['mysql_perf_schema_file_events_total{event_name="x",mode="misc"} 2']);
  });
});
