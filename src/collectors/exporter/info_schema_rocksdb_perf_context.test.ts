import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Row } from '../../core/db.js';
import { MetricType } from '../../core/metrics.js';
import { FakeDb } from '../kit/test-helpers.js';
import { DOMAIN, FAMILIES, QUERY, registration } from './info_schema_rocksdb_perf_context.js';
import { helps, lines, scrapeWith } from './scrape-fixture.js';

const row = (table: string, part: string, stat: string, value: string | null): Row => ({
  TABLE_SCHEMA: 'shop',
  TABLE_NAME: table,
  PARTITION_NAME: part,
  STAT_TYPE: stat,
  VALUE: value,
});

function server(rows: Row[] | Error): FakeDb {
  return new FakeDb('8.0.36-28', (sql) => {
    assert.equal(sql, QUERY);
    if (rows instanceof Error) throw rows;
    return rows;
  });
}

void describe(DOMAIN, () => {
  void it('known statistics become counters labelled schema, table, part; others are skipped', async () => {
    const r = await scrapeWith(
      registration,
      server([
        row('events', '', 'USER_KEY_COMPARISON_COUNT', '1234'),
        row('events', 'p2024', 'BLOCK_CACHE_HIT_COUNT', '56'),
        row('events', '', 'WRITE_WAL_TIME', '99'),
        row('events', '', 'IO_BYTES_READ', '4096'),
      ]),
    );
    assert.equal(r.error, undefined);
    assert.deepEqual(lines(r.values), [
      'mysql_info_schema_rocksdb_perf_context_user_key_comparison_count{schema="shop",table="events",part=""} 1234',
      'mysql_info_schema_rocksdb_perf_context_block_cache_hit_count{schema="shop",table="events",part="p2024"} 56',
      'mysql_info_schema_rocksdb_perf_context_io_bytes_read{schema="shop",table="events",part=""} 4096',
    ]);
    assert.ok(r.values.every((v) => v.type === MetricType.CumulativeCounter));
    assert.equal(
      helps(r.values).get('mysql_info_schema_rocksdb_perf_context_block_cache_hit_count'),
      'Total number of block read operations from cache.',
    );
    assert.equal(FAMILIES.size, 23);
  });

  void it('without RocksDB the query fails and the scrape reports it', async () => {
    const r = await scrapeWith(
      registration,
      server(
        Object.assign(new Error("Unknown table 'ROCKSDB_PERF_CONTEXT' in information_schema"), {
          errno: 1109,
        }),
      ),
    );
    assert.equal(r.error?.errno, 1109);
  });

  void it('a VALUE that is not a number stops the scrape, even for a statistic that would be skipped', async () => {
    const r = await scrapeWith(
      registration,
      server([
        row('t', '', 'BLOCK_READ_COUNT', '1'),
        row('t', '', 'UNKNOWN_STAT', null),
        row('t', '', 'BLOCK_READ_BYTE', '2'),
      ]),
    );
    assert.deepEqual(lines(r.values), [
      'mysql_info_schema_rocksdb_perf_context_block_read_count{schema="shop",table="t",part=""} 1',
    ]);
    assert.match(r.error?.message ?? '', /column VALUE: converting NULL/);
  });
});
