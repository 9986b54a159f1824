import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MARIADB, lines, runScraper } from './perf_schema.fixture.js';
import { QUERY, registration } from './perf_schema_tablelocks.js';

const SUFFIXES = [
  'READ_NORMAL',
  'READ_WITH_SHARED_LOCKS',
  'READ_HIGH_PRIORITY',
  'READ_NO_INSERT',
  'READ_EXTERNAL',
  'WRITE_ALLOW_WRITE',
  'WRITE_CONCURRENT_INSERT',
  'WRITE_LOW_PRIORITY',
  'WRITE_NORMAL',
  'WRITE_EXTERNAL',
];

describe('exporter.perf_schema.tablelocks on recorded result sets', () => {
  it('SQL locks and external locks in their own families, counts and seconds', async () => {
    const row: Record<string, string> = { OBJECT_SCHEMA: 'shop', OBJECT_NAME: 'orders' };
    SUFFIXES.forEach((s, i) => {
      row[`COUNT_${s}`] = `${i + 1}`;
      row[`SUM_TIMER_${s}`] = `${(i + 1) * 1e12}`;
    });
    const r = await runScraper(registration, MARIADB, () => [row]);
    assert.equal(r.queries[0]?.sql, QUERY);
    for (const s of SUFFIXES) assert.ok(QUERY.includes(`COUNT_${s}`) && QUERY.includes(`SUM_TIMER_${s}`), s);
    assert.match(QUERY, /NOT IN \('mysql', 'performance_schema', 'information_schema'\)$/);
    const at = (op: string) => `{name="orders",operation="${op}",schema="shop"}`;
    const sql: [string, number][] = [
      ['read_normal', 1],
      ['read_with_shared_locks', 2],
      ['read_high_priority', 3],
      ['read_no_insert', 4],
      ['write_allow_write', 6],
      ['write_concurrent_insert', 7],
      ['write_low_priority', 8],
      ['write_normal', 9],
    ];
    const ext: [string, number][] = [
      ['read', 5],
      ['write', 10],
    ];
    const want = [
      ...sql.flatMap(([op, n]) => [
        `mysql_perf_schema_sql_lock_waits_total${at(op)} ${n}`,
        `mysql_perf_schema_sql_lock_waits_seconds_total${at(op)} ${n}`,
      ]),
      ...ext.flatMap(([op, n]) => [
        `mysql_perf_schema_external_lock_waits_total${at(op)} ${n}`,
        `mysql_perf_schema_external_lock_waits_seconds_total${at(op)} ${n}`,
      ]),
    ].sort();
    assert.deepEqual(lines(r.values), want);
  });

  it('missing columns give missing samples', async () => {
    const r = await runScraper(registration, MARIADB, () => [
      { OBJECT_SCHEMA: 's', OBJECT_NAME: 't', COUNT_READ_EXTERNAL: '2' },
    ]);
    assert.deepEqual(lines(r.values), [
      'mysql_perf_schema_external_lock_waits_total{name="t",operation="read",schema="s"} 2',
    ]);
  });
});
