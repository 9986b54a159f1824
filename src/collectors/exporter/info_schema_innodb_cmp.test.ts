import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Row } from '../../core/db.js';
import { MetricType } from '../../core/metrics.js';
import { FakeDb } from '../kit/test-helpers.js';
import { DOMAIN, QUERY, registration } from './info_schema_innodb_cmp.js';
import { helps, lines, scrapeWith } from './scrape-fixture.js';

const P = 'mysql_info_schema_innodb_cmp_';

function server(rows: Row[]): FakeDb {
  return new FakeDb('8.0.36', (sql) => {
    assert.equal(sql, QUERY);
    return rows;
  });
}

void describe(DOMAIN, () => {
  void it('five counters per page size; MySQL 8 answers the columns in capitals', async () => {
    const r = await scrapeWith(
      registration,
      server([
        {
          PAGE_SIZE: '8192',
          COMPRESS_OPS: '20',
          COMPRESS_OPS_OK: '18',
          COMPRESS_TIME: '1',
          UNCOMPRESS_OPS: '4',
          UNCOMPRESS_TIME: '0',
        },
      ]),
    );
    assert.equal(r.error, undefined);
    assert.deepEqual(lines(r.values), [
      `${P}compress_ops_total{page_size="8192"} 20`,
      `${P}compress_ops_ok_total{page_size="8192"} 18`,
      `${P}compress_time_seconds_total{page_size="8192"} 1`,
      `${P}uncompress_ops_total{page_size="8192"} 4`,
      `${P}uncompress_time_seconds_total{page_size="8192"} 0`,
    ]);
    assert.ok(r.values.every((v) => v.type === MetricType.CumulativeCounter));
    assert.equal(
      helps(r.values).get(`${P}compress_ops_ok_total`),
      'Number of times a B-tree page of the size PAGE_SIZE has been successfully compressed.',
    );
  });

  void it('a value that is not a number is a scan error naming the column', async () => {
    const r = await scrapeWith(
      registration,
      server([
        {
          page_size: '1024',
          compress_ops: '0',
          compress_ops_ok: '0',
          compress_time: null,
          uncompress_ops: '0',
          uncompress_time: '0',
        },
      ]),
    );
    assert.deepEqual(r.values, []);
    assert.match(r.error?.message ?? '', /column compress_time: converting NULL/);
  });
});
