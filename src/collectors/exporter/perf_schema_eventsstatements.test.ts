import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Row } from '../../core/db.js';
import { sourceFor } from '../kit/sources.js';
import { parseServerVersion } from '../../db/flavor.js';
import { MARIADB, MYSQL_8_0_27, MYSQL_8_0_28, lines, runScraper } from './perf_schema.fixture.js';
import {
  DOMAIN,
  SOURCE_DIGEST,
  SOURCE_DIGEST_QUANTILES,
  registration,
  schemaList,
} from './perf_schema_eventsstatements.js';

/** A digest row as MariaDB (and MySQL before 8.0.28) returns it. */
const PLAIN: Row = {
  SCHEMA_NAME: 'shop',
  DIGEST: 'd1',
  DIGEST_TEXT: 'SELECT * FROM `orders`',
  COUNT_STAR: '4',
  SUM_TIMER_WAIT: '2500000000000',
  SUM_LOCK_TIME: '1000000',
  SUM_ERRORS: '1',
  SUM_WARNINGS: '2',
  SUM_ROWS_AFFECTED: '3',
  SUM_ROWS_SENT: '40',
  SUM_ROWS_EXAMINED: '80',
  SUM_CREATED_TMP_DISK_TABLES: '5',
  SUM_CREATED_TMP_TABLES: '6',
  SUM_SORT_MERGE_PASSES: '7',
  SUM_SORT_ROWS: '8',
  SUM_NO_INDEX_USED: '9',
};

/** The same digest from MySQL 8.0.28+, with CPU time and quantiles. */
const QUANTILED: Row = {
  ...PLAIN,
  SUM_CPU_TIME: '500000000000',
  QUANTILE_95: '1000000000',
  QUANTILE_99: '2000000000',
  QUANTILE_999: '3000000000',
};

const L = '{digest="d1",digest_text="SELECT * FROM `orders`",schema="shop"}';
const P = 'mysql_perf_schema_events_statements_';

const COMMON = [
  `${P}errors_total${L} 1`,
  `${P}latency${L} 4`,
  `${P}lock_time_seconds_total${L} 0.000001`,
  `${P}no_index_used_total${L} 9`,
  `${P}rows_affected_total${L} 3`,
  `${P}rows_examined_total${L} 80`,
  `${P}rows_sent_total${L} 40`,
  `${P}seconds_total${L} 2.5`,
  `${P}sort_merge_passes_total${L} 7`,
  `${P}sort_rows_total${L} 8`,
  `${P}tmp_disk_tables_total${L} 5`,
  `${P}tmp_tables_total${L} 6`,
  `${P}total${L} 4`,
  `${P}warnings_total${L} 2`,
];

describe('exporter.perf_schema.eventsstatements on recorded result sets', () => {
  it('MariaDB: the digest query with the default limits, counters, lock time and a summary without quantiles', async () => {
    const r = await runScraper(registration, MARIADB, () => [PLAIN]);
    assert.equal(r.error, undefined);
    const q = r.queries[0];
    assert.ok(q !== undefined);
    assert.match(q.sql, /LEFT\(DIGEST_TEXT, 120\) AS DIGEST_TEXT/);
    assert.match(q.sql, /INTERVAL 86400 SECOND/);
    assert.match(q.sql, /LIMIT 250$/);
    assert.match(q.sql, /SCHEMA_NAME NOT IN \(\?, \?, \?\)/);
    assert.match(q.sql, /SUM_LOCK_TIME/);
    assert.doesNotMatch(q.sql, /SUM_CPU_TIME|QUANTILE/);
    assert.deepEqual(q.params, ['mysql', 'performance_schema', 'information_schema']);
    assert.deepEqual(lines(r.values), COMMON);
    const summary = r.values.find((v) => v.dist !== undefined);
    assert.deepEqual(summary?.dist, { kind: 'summary', points: [], sum: 2.5, count: 4 });
  });

  it('MySQL before 8.0.28 reads the same columns as MariaDB', async () => {
    const r = await runScraper(registration, MYSQL_8_0_27, () => [PLAIN]);
    assert.doesNotMatch(r.queries[0]?.sql ?? '', /SUM_CPU_TIME|QUANTILE/);
    assert.deepEqual(lines(r.values), COMMON);
  });

  it('MySQL 8.0.28+: CPU time and the 95/99/999 quantiles in seconds', async () => {
    const r = await runScraper(registration, MYSQL_8_0_28, () => [QUANTILED]);
    assert.match(r.queries[0]?.sql ?? '', /SUM_CPU_TIME, .*QUANTILE_95, QUANTILE_99, QUANTILE_999/s);
    assert.match(r.queries[0]?.sql ?? '', /Q\.QUANTILE_999\n/);
    assert.deepEqual(
      lines(r.values),
      [...COMMON.slice(0, 1), `${P}cpu_time_seconds_total${L} 0.5`, ...COMMON.slice(1)].sort(),
    );
    const summary = r.values.find((v) => v.dist !== undefined);
    assert.deepEqual(summary?.dist, {
      kind: 'summary',
      points: [
        [95, 0.001],
        [99, 0.002],
        [999, 0.003],
      ],
      sum: 2.5,
      count: 4,
    });
  });

  it('the source table picks the quantile query from MySQL 8.0.28 only', () => {
    const at = (v: string) => sourceFor(DOMAIN, parseServerVersion(v));
    assert.deepEqual(at(MYSQL_8_0_28), { source: SOURCE_DIGEST_QUANTILES });
    assert.deepEqual(at('8.4.3'), { source: SOURCE_DIGEST_QUANTILES });
    assert.deepEqual(at(MYSQL_8_0_27), { source: SOURCE_DIGEST });
    assert.deepEqual(at('5.7.44-log'), { source: SOURCE_DIGEST });
    assert.deepEqual(at(MARIADB), { source: SOURCE_DIGEST });
  });

  it('sub-flags: limit, timelimit, digest_text_limit and a comma-separated exclude_schemas', async () => {
    const r = await runScraper(registration, MARIADB, () => [], {
      limit: '5',
      timelimit: '60',
      digest_text_limit: '30',
      exclude_schemas: " app, o'neil,,mysql , ",
    });
    const q = r.queries[0];
    assert.match(q?.sql ?? '', /LEFT\(DIGEST_TEXT, 30\)/);
    assert.match(q?.sql ?? '', /INTERVAL 60 SECOND/);
    assert.match(q?.sql ?? '', /LIMIT 5$/);
    assert.match(q?.sql ?? '', /NOT IN \(\?, \?, \?, \?, \?\)/);
    assert.doesNotMatch(q?.sql ?? '', /neil/);
    assert.deepEqual(q?.params, ['mysql', 'performance_schema', 'information_schema', 'app', "o'neil"]);
    assert.deepEqual(schemaList(''), []);
    assert.deepEqual(schemaList(undefined), []);
  });

  it('refuses a negative limit and an unknown option, naming them', async () => {
    for (const name of ['limit', 'timelimit', 'digest_text_limit']) {
      await assert.rejects(
        runScraper(registration, MARIADB, () => [], { [name]: '-1' }),
        new RegExp(`^CollectError: invalid option ${name}: -1: must be 0 or more$`),
      );
    }
    await assert.rejects(
      runScraper(registration, MARIADB, () => [], { limit: 'ten' }),
      /invalid option limit: ten: not an integer/,
    );
    await assert.rejects(
      runScraper(registration, MARIADB, () => [], { exclude: 'x' }),
      /unknown option exclude; valid options: limit, timelimit, digest_text_limit, exclude_schemas/,
    );
  });

  it('a malformed or NULL column is missing, never 0; without count or time there is no summary', async () => {
    const r = await runScraper(registration, MARIADB, () => [
      { ...PLAIN, SUM_ERRORS: null, SUM_ROWS_SENT: 'lots', COUNT_STAR: '' },
      { ...PLAIN, DIGEST: 'd2', SCHEMA_NAME: 'NONE' },
    ]);
    const d1 = new Set(r.values.filter((v) => v.group?.digest === 'd1').map((v) => v.name.slice(P.length)));
    for (const missing of ['errors_total', 'rows_sent_total', 'total', 'latency'])
      assert.ok(!d1.has(missing), missing);
    assert.equal(d1.size, COMMON.length - 4);
    const got = lines(r.values);
    assert.ok(got.includes(`${P}seconds_total${L} 2.5`));
    assert.ok(
      got.includes(`${P}latency{digest="d2",digest_text="SELECT * FROM \`orders\`",schema="NONE"} 4`),
    );
    assert.equal(r.values.filter((v) => v.dist !== undefined).length, 1);
  });

  it('an aborted scrape reports the abort and serves nothing', async () => {
    const ac = new AbortController();
    ac.abort(new Error('deadline'));
    const r = await runScraper(registration, MARIADB, () => [PLAIN], {}, ac.signal);
    assert.ok(r.error !== undefined);
    assert.deepEqual(r.values, []);
  });
});
