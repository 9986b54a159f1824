import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MARIADB, MYSQL_8_0_28, lines, runScraper } from './perf_schema.fixture.js';
import { QUERY, registration } from './perf_schema_eventsstatementssum.js';

const P = 'mysql_perf_schema_events_statements_sum_';

const COLUMNS = [
  'COUNT_STAR',
  'SUM_CREATED_TMP_DISK_TABLES',
  'SUM_CREATED_TMP_TABLES',
  'SUM_ERRORS',
  'SUM_LOCK_TIME',
  'SUM_NO_GOOD_INDEX_USED',
  'SUM_NO_INDEX_USED',
  'SUM_ROWS_AFFECTED',
  'SUM_ROWS_EXAMINED',
  'SUM_ROWS_SENT',
  'SUM_SELECT_FULL_JOIN',
  'SUM_SELECT_FULL_RANGE_JOIN',
  'SUM_SELECT_RANGE',
  'SUM_SELECT_RANGE_CHECK',
  'SUM_SELECT_SCAN',
  'SUM_SORT_MERGE_PASSES',
  'SUM_SORT_RANGE',
  'SUM_SORT_ROWS',
  'SUM_SORT_SCAN',
  'SUM_TIMER_WAIT',
  'SUM_WARNINGS',
];

/** The sums row, every column i+1 (SUM() of DECIMAL comes back as a decimal text). */
const ROW = Object.fromEntries(COLUMNS.map((c, i) => [`SUM_${c}`, `${i + 1}`]));

describe('exporter.perf_schema.eventsstatementssum on recorded result sets', () => {
  it('sums every column of the digest table under its alias', async () => {
    const r = await runScraper(registration, MARIADB, () => [ROW]);
    assert.equal(r.queries[0]?.sql, QUERY);
    for (const c of COLUMNS) assert.ok(QUERY.includes(`SUM(${c}) AS SUM_${c}`), c);
    assert.match(QUERY, /FROM performance_schema\.events_statements_summary_by_digest$/);
  });

  it('one unlabelled counter per sum; the wait time in seconds, the lock time in picoseconds', async () => {
    const r = await runScraper(registration, MYSQL_8_0_28, () => [
      { ...ROW, SUM_SUM_TIMER_WAIT: '3000000000000' },
    ]);
    assert.equal(r.error, undefined);
    assert.deepEqual(lines(r.values), [
      `${P}created_tmp_disk_tables 2`,
      `${P}created_tmp_tables 3`,
      `${P}errors 4`,
      `${P}lock_time 5`,
      `${P}no_good_index_used 6`,
      `${P}no_index_used 7`,
      `${P}rows_affected 8`,
      `${P}rows_examined 9`,
      `${P}rows_sent 10`,
      `${P}select_full_join 11`,
      `${P}select_full_range_join 12`,
      `${P}select_range 13`,
      `${P}select_range_check 14`,
      `${P}select_scan 15`,
      `${P}sort_merge_passes 16`,
      `${P}sort_range 17`,
      `${P}sort_rows 18`,
      `${P}sort_scan 19`,
      `${P}timer_wait 3`,
      `${P}total 1`,
      `${P}warnings 21`,
    ]);
    assert.ok(r.values.every((v) => v.meta?.help !== undefined && v.meta.help !== ''));
  });

  it('an empty digest table (NULL sums) serves nothing and no error; a malformed sum is missing', async () => {
    const empty = await runScraper(registration, MARIADB, () => [
      Object.fromEntries(Object.keys(ROW).map((k) => [k, null])),
    ]);
    assert.deepEqual(empty, { values: [], queries: empty.queries });
    const bad = await runScraper(registration, MARIADB, () => [
      { ...ROW, SUM_SUM_ERRORS: 'x', SUM_COUNT_STAR: '1.5e3' },
    ]);
    const got = lines(bad.values);
    assert.equal(got.length, COLUMNS.length - 1);
    assert.ok(!got.some((l) => l.startsWith(`${P}errors `)));
    assert.ok(got.includes(`${P}total 1500`));
  });
});
