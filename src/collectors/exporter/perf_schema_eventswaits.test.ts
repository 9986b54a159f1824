import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MARIADB, MYSQL_8_0_28, lines, runScraper } from './perf_schema.fixture.js';
import { QUERY, registration } from './perf_schema_eventswaits.js';

describe('exporter.perf_schema.eventswaits on recorded result sets', () => {
  it('one count and one time in seconds per instrument', async () => {
    const r = await runScraper(registration, MYSQL_8_0_28, () => [
      {
        EVENT_NAME: 'wait/io/file/innodb/innodb_data_file',
        COUNT_STAR: '12',
        SUM_TIMER_WAIT: '1500000000000',
      },
      { EVENT_NAME: 'idle', COUNT_STAR: '18446744073709551615', SUM_TIMER_WAIT: '0' },
    ]);
    assert.equal(r.queries[0]?.sql, QUERY);
    assert.deepEqual(lines(r.values), [
      'mysql_perf_schema_events_waits_seconds_total{event_name="idle"} 0',
      'mysql_perf_schema_events_waits_seconds_total{event_name="wait/io/file/innodb/innodb_data_file"} 1.5',
      'mysql_perf_schema_events_waits_total{event_name="idle"} 18446744073709552000',
      'mysql_perf_schema_events_waits_total{event_name="wait/io/file/innodb/innodb_data_file"} 12',
    ]);
  });

  it('a NULL timer (an instrument without timing) is missing, the count stays', async () => {
    const r = await runScraper(registration, MARIADB, () => [
      { EVENT_NAME: 'wait/x', COUNT_STAR: '3', SUM_TIMER_WAIT: null },
    ]);
    assert.deepEqual(lines(r.values), ['mysql_perf_schema_events_waits_total{event_name="wait/x"} 3']);
  });
});
