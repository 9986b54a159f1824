import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Row } from '../../core/db.js';
import { MetricType } from '../../core/metrics.js';
import { FakeDb } from '../kit/test-helpers.js';
import { DOMAIN, QUERY, registration } from './info_schema_innodb_cmpmem.js';
import { helps, lines, scrapeWith } from './scrape-fixture.js';

const P = 'mysql_info_schema_innodb_cmpmem_';

const row = (size: string, pool: string, used: string, time: string): Row => ({
  page_size: size,
  buffer_pool_instance: pool,
  pages_used: used,
  pages_free: '1',
  relocation_ops: '3',
  relocation_time: time,
});

function server(rows: Row[]): FakeDb {
  return new FakeDb('10.11.6-MariaDB', (sql) => {
    assert.equal(sql, QUERY);
    return rows;
  });
}

void describe(DOMAIN, () => {
  void it('four counters per page size and buffer pool; relocation time in seconds (ms / 1000)', async () => {
    const r = await scrapeWith(
      registration,
      server([row('8192', '0', '4', '1500'), row('8192', '1', '2', '0')]),
    );
    assert.equal(r.error, undefined);
    assert.deepEqual(lines(r.values).slice(0, 4), [
      `${P}pages_used_total{page_size="8192",buffer_pool="0"} 4`,
      `${P}pages_free_total{page_size="8192",buffer_pool="0"} 1`,
      `${P}relocation_ops_total{page_size="8192",buffer_pool="0"} 3`,
      `${P}relocation_time_seconds_total{page_size="8192",buffer_pool="0"} 1.5`,
    ]);
    assert.equal(r.values.length, 8);
    assert.ok(r.values.every((v) => v.type === MetricType.CumulativeCounter));
    assert.equal(
      helps(r.values).get(`${P}relocation_time_seconds_total`),
      'Total time in seconds spent in relocating blocks.',
    );
  });

  void it('a malformed row stops the scrape; the rows before it stay', async () => {
    const r = await scrapeWith(
      registration,
      server([row('1024', '0', '0', '0'), row('2048', '0', 'many', '0')]),
    );
    assert.equal(r.values.length, 4);
    assert.match(r.error?.message ?? '', /column pages_used: converting "many" to a float64/);
  });
});
