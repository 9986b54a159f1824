import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Row } from '../../core/db.js';
import { FakeDb } from '../kit/test-helpers.js';
import { CHECK_QUERY, DOMAIN, TABLES, registration } from './info_schema_query_response_time.js';
import { helps, scrapeWith } from './scrape-fixture.js';

const r = (time: string, count: string, total: string): Row => ({ TIME: time, COUNT: count, TOTAL: total });

/** MariaDB's QUERY_RESPONSE_TIME as it answers (right-aligned text, a TOO LONG row). */
const MARIADB: Row[] = [
  r('      0.000001', '0', '      0.000000'),
  r('      0.000010', '1', '      0.000005'),
  r('      0.000100', '0', '      0.000000'),
  r('      0.001000', '3', '      0.001925'),
  r('      0.010000', '5', '      0.011530'),
  r('      0.100000', '2', '      0.045332'),
  r('      1.000000', '0', '      0.000000'),
  r('1000000.000000', '0', '      0.000000'),
  r('TOO LONG', '4', 'TOO LONG'),
];

type Answer = Row[] | Error;

function server(check: Answer, total: Answer, read: Answer, write: Answer): FakeDb {
  const answers = new Map<string, Answer>([
    [CHECK_QUERY, check],
    [TABLES[0]![0], total],
    [TABLES[1]![0], read],
    [TABLES[2]![0], write],
  ]);
  return new FakeDb('10.11.6-MariaDB', (sql) => {
    const a = answers.get(sql);
    if (a === undefined) throw new Error(`unexpected ${sql}`);
    if (a instanceof Error) throw a;
    return a;
  });
}

const ON: Row[] = [{ Variable_name: 'query_response_time_stats', Value: 'ON' }];
const noTable = (name: string) =>
  Object.assign(new Error(`Unknown table '${name}' in information_schema`), { errno: 1109 });

void describe(DOMAIN, () => {
  void it('a histogram: buckets at each TIME bound with the running count; TOO LONG counts but is no bucket', async () => {
    const res = await scrapeWith(
      registration,
      server(ON, MARIADB, noTable('QUERY_RESPONSE_TIME_READ'), noTable('x')),
    );
    assert.equal(res.error, undefined);
    assert.equal(res.values.length, 1);
    const v = res.values[0]!;
    assert.equal(v.name, 'mysql_info_schema_query_response_time_seconds');
    assert.equal(v.group, undefined);
    assert.equal(v.value, 15);
    assert.equal(v.dist?.kind, 'histogram');
    assert.deepEqual(v.dist?.points, [
      [0.000001, 0],
      [0.00001, 1],
      [0.0001, 1],
      [0.001, 4],
      [0.01, 9],
      [0.1, 11],
      [1, 11],
      [1000000, 11],
    ]);
    assert.equal(v.dist?.count, 15);
    assert.ok(Math.abs((v.dist?.sum ?? 0) - 0.058792) < 1e-12);
    assert.equal(
      helps(res.values).get(v.name),
      'The number of all queries by duration they took to execute.',
    );
  });

  void it('Percona 5.7: the read and write tables give their own histograms', async () => {
    const res = await scrapeWith(
      registration,
      server(ON, MARIADB, [r('0.000100', '2', '0.000150')], [r('0.001000', '1', '0.0005')]),
    );
    assert.deepEqual(
      res.values.map((v) => [v.name, v.value, v.dist?.points]),
      [
        ['mysql_info_schema_query_response_time_seconds', 15, res.values[0]?.dist?.points],
        ['mysql_info_schema_read_query_response_time_seconds', 2, [[0.0001, 2]]],
        ['mysql_info_schema_write_query_response_time_seconds', 1, [[0.001, 1]]],
      ],
    );
    assert.equal(
      helps(res.values).get('mysql_info_schema_write_query_response_time_seconds'),
      'The number of write queries by duration they took to execute.',
    );
  });

  void it('stats off, the variable unknown (no plugin) or not a byte: nothing, no error, no table read', async () => {
    const checks: Answer[] = [
      [{ Variable_name: 'query_response_time_stats', Value: 'OFF' }],
      [], // the plugin is not loaded
      Object.assign(new Error('Access denied'), { errno: 1227 }),
      [{ Variable_name: 'query_response_time_stats', Value: '' }],
    ];
    for (const check of checks) {
      const db = server(check, MARIADB, MARIADB, MARIADB);
      const res = await scrapeWith(registration, db);
      assert.deepEqual([res.values, res.error], [[], undefined]);
      assert.deepEqual(
        db.queries.map((q) => q.sql),
        [CHECK_QUERY],
      );
    }
  });

  void it('the main table must answer: its failure or a COUNT that does not read is the scrape error', async () => {
    const gone = await scrapeWith(registration, server(ON, noTable('QUERY_RESPONSE_TIME'), MARIADB, MARIADB));
    assert.equal(gone.error?.errno, 1109);
    assert.deepEqual(gone.values, []);
    const bad = await scrapeWith(registration, server(ON, [r('0.1', 'x', '0')], MARIADB, MARIADB));
    assert.match(bad.error?.message ?? '', /column COUNT/);
    const readBad = await scrapeWith(registration, server(ON, MARIADB, [r('0.1', '-1', '0')], MARIADB));
    assert.equal(readBad.error, undefined);
    assert.deepEqual(
      readBad.values.map((v) => v.name),
      [
        'mysql_info_schema_query_response_time_seconds',
        'mysql_info_schema_write_query_response_time_seconds',
      ],
    );
  });
});
