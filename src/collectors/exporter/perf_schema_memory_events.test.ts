import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseServerVersion } from '../../db/flavor.js';
import { sourceFor } from '../kit/sources.js';
import { MARIADB, MYSQL_8_0_28, lines, runScraper } from './perf_schema.fixture.js';
import { DOMAIN, QUERY, registration } from './perf_schema_memory_events.js';

const ROWS = [
  {
    EVENT_NAME: 'memory/innodb/buf_buf_pool',
    SUM_NUMBER_OF_BYTES_ALLOC: '137428992',
    SUM_NUMBER_OF_BYTES_FREE: '0',
    CURRENT_NUMBER_OF_BYTES_USED: '137428992',
  },
  {
    EVENT_NAME: 'memory/sql/THD::main_mem_root',
    SUM_NUMBER_OF_BYTES_ALLOC: '100',
    SUM_NUMBER_OF_BYTES_FREE: '300',
    CURRENT_NUMBER_OF_BYTES_USED: '-200',
  },
];

describe('exporter.perf_schema.memory_events on recorded result sets', () => {
  it("allocated and freed counters and a used gauge (negative allowed); 'memory/' removed by default", async () => {
    const r = await runScraper(registration, MYSQL_8_0_28, () => ROWS);
    assert.equal(r.queries[0]?.sql, QUERY);
    assert.match(QUERY, /WHERE COUNT_ALLOC > 0$/);
    assert.deepEqual(lines(r.values), [
      'mysql_perf_schema_memory_events_alloc_bytes_total{event_name="innodb/buf_buf_pool"} 137428992',
      'mysql_perf_schema_memory_events_alloc_bytes_total{event_name="sql/THD::main_mem_root"} 100',
      'mysql_perf_schema_memory_events_free_bytes_total{event_name="innodb/buf_buf_pool"} 0',
      'mysql_perf_schema_memory_events_free_bytes_total{event_name="sql/THD::main_mem_root"} 300',
      'mysql_perf_schema_memory_events_used_bytes{event_name="innodb/buf_buf_pool"} 137428992',
      'mysql_perf_schema_memory_events_used_bytes{event_name="sql/THD::main_mem_root"} -200',
    ]);
    assert.equal(r.values.find((v) => v.name.endsWith('used_bytes'))?.type, 3 /* gauge */);
  });

  it('remove_prefix only at the start; an empty one keeps the names', async () => {
    const r = await runScraper(registration, MARIADB, () => ROWS, { remove_prefix: 'memory/sql/' });
    const names = new Set(r.values.map((v) => v.group?.event_name));
    assert.deepEqual([...names].sort(), ['THD::main_mem_root', 'memory/innodb/buf_buf_pool']);
    const keep = await runScraper(registration, MARIADB, () => ROWS, { remove_prefix: '' });
    assert.ok(keep.values.every((v) => v.group?.event_name?.startsWith('memory/')));
  });

  it('not supported where the table cannot exist: MySQL before 5.7, MariaDB before 10.5', async () => {
    const at = (v: string) => sourceFor(DOMAIN, parseServerVersion(v));
    assert.match(JSON.stringify(at('5.6.51')), /unsupported.*MySQL 5\.7/);
    assert.match(JSON.stringify(at('10.4.34-MariaDB')), /unsupported.*MariaDB 10\.5/);
    assert.deepEqual(at('10.5.0-MariaDB'), { source: 'memory_summary_global_by_event_name' });
    assert.deepEqual(at('5.7.44'), { source: 'memory_summary_global_by_event_name' });
    const r = await runScraper(registration, '10.4.34-MariaDB', () => ROWS);
    assert.match(r.error?.message ?? '', /not supported on mariadb 10\.4\.34: .*MariaDB 10\.5 and later/);
    assert.deepEqual(
      r.queries.filter((q) => q.sql === QUERY),
      [],
    );
  });
});
