import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MARIADB, lines, runScraper } from './perf_schema.fixture.js';
import { QUERY, registration } from './perf_schema_indexiowaits.js';

const row = (index: string, n: number) => ({
  OBJECT_SCHEMA: 'shop',
  OBJECT_NAME: 'orders',
  INDEX_NAME: index,
  COUNT_FETCH: `${n + 1}`,
  COUNT_INSERT: `${n + 2}`,
  COUNT_UPDATE: `${n + 3}`,
  COUNT_DELETE: `${n + 4}`,
  SUM_TIMER_FETCH: `${(n + 1) * 1e12}`,
  SUM_TIMER_INSERT: `${(n + 2) * 1e12}`,
  SUM_TIMER_UPDATE: `${(n + 3) * 1e12}`,
  SUM_TIMER_DELETE: `${(n + 4) * 1e12}`,
});

describe('exporter.perf_schema.indexiowaits on recorded result sets', () => {
  it('per index and operation; only the row without an index (NONE) has inserts', async () => {
    const r = await runScraper(registration, MARIADB, () => [row('PRIMARY', 0), row('NONE', 10)]);
    assert.equal(r.queries[0]?.sql, QUERY);
    assert.match(QUERY, /ifnull\(INDEX_NAME, 'NONE'\)/);
    const at = (i: string, op: string) => `{index="${i}",name="orders",operation="${op}",schema="shop"}`;
    const n = 'mysql_perf_schema_index_io_waits_total';
    const s = 'mysql_perf_schema_index_io_waits_seconds_total';
    assert.deepEqual(lines(r.values), [
      `${s}${at('NONE', 'delete')} 14`,
      `${s}${at('NONE', 'fetch')} 11`,
      `${s}${at('NONE', 'insert')} 12`,
      `${s}${at('NONE', 'update')} 13`,
      `${s}${at('PRIMARY', 'delete')} 4`,
      `${s}${at('PRIMARY', 'fetch')} 1`,
      `${s}${at('PRIMARY', 'update')} 3`,
      `${n}${at('NONE', 'delete')} 14`,
      `${n}${at('NONE', 'fetch')} 11`,
      `${n}${at('NONE', 'insert')} 12`,
      `${n}${at('NONE', 'update')} 13`,
      `${n}${at('PRIMARY', 'delete')} 4`,
      `${n}${at('PRIMARY', 'fetch')} 1`,
      `${n}${at('PRIMARY', 'update')} 3`,
    ]);
  });

  it('a malformed count is missing', async () => {
    const r = await runScraper(registration, MARIADB, () => [{ ...row('k', 0), COUNT_FETCH: 'x' }]);
    assert.equal(r.values.length, 5);
  });
});
