import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeDb } from '../kit/test-helpers.js';
import { SQL, registration, workerTimestamp } from './perf_schema_replication_applier_status_by_worker.js';
import { collectOnce, render } from './recorded.fixture.js';

const ZERO = '0000-00-00 00:00:00.000000';

/** MySQL 8.0.36, a replica with two applier workers on the default channel. */
const ROWS = [
  {
    CHANNEL_NAME: '',
    WORKER_ID: '1',
    LAST_APPLIED_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP: '2024-05-01 12:00:00.250000',
    LAST_APPLIED_TRANSACTION_IMMEDIATE_COMMIT_TIMESTAMP: '2024-05-01 12:00:00.250000',
    LAST_APPLIED_TRANSACTION_START_APPLY_TIMESTAMP: '2024-05-01 12:00:00.300000',
    LAST_APPLIED_TRANSACTION_END_APPLY_TIMESTAMP: '2024-05-01 12:00:00.312345',
    APPLYING_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP: ZERO,
    APPLYING_TRANSACTION_IMMEDIATE_COMMIT_TIMESTAMP: ZERO,
    APPLYING_TRANSACTION_START_APPLY_TIMESTAMP: ZERO,
  },
  {
    CHANNEL_NAME: '',
    WORKER_ID: '2',
    LAST_APPLIED_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP: ZERO,
    LAST_APPLIED_TRANSACTION_IMMEDIATE_COMMIT_TIMESTAMP: ZERO,
    LAST_APPLIED_TRANSACTION_START_APPLY_TIMESTAMP: ZERO,
    LAST_APPLIED_TRANSACTION_END_APPLY_TIMESTAMP: ZERO,
    APPLYING_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP: '2024-05-01 12:00:01.000001',
    APPLYING_TRANSACTION_IMMEDIATE_COMMIT_TIMESTAMP: '2024-05-01 12:00:01.000001',
    APPLYING_TRANSACTION_START_APPLY_TIMESTAMP: '2024-05-01 12:00:01.500000',
  },
];

void describe('exporter.perf_schema.replication_applier_status_by_worker', () => {
  void it('MySQL 8.0: seven timestamps per worker, the zero timestamp as 0', async () => {
    const db = new FakeDb('8.0.36', () => ROWS);
    const { res } = await collectOnce(registration, db);
    assert.deepEqual(
      db.queries.map((q) => q.sql),
      [SQL],
    );
    const w = (id: string) => `{channel_name="",member_id="${id}"}`;
    const P = 'mysql_perf_schema_';
    assert.deepEqual(render(res.values), [
      `${P}applying_transaction_immediate_commit_timestamp_seconds${w('1')} 0`,
      `${P}applying_transaction_immediate_commit_timestamp_seconds${w('2')} 1714564801.000001`,
      `${P}applying_transaction_original_commit_timestamp_seconds${w('1')} 0`,
      `${P}applying_transaction_original_commit_timestamp_seconds${w('2')} 1714564801.000001`,
      `${P}applying_transaction_start_apply_timestamp_seconds${w('1')} 0`,
      `${P}applying_transaction_start_apply_timestamp_seconds${w('2')} 1714564801.5`,
      `${P}last_applied_transaction_end_apply_timestamp_seconds${w('1')} 1714564800.312345`,
      `${P}last_applied_transaction_end_apply_timestamp_seconds${w('2')} 0`,
      // The nanosecond count rounded to a float64, then divided by 1e9 (mysqld_exporter's arithmetic): .25 gives …2499998.
      `${P}last_applied_transaction_immediate_commit_timestamp_seconds${w('1')} 1714564800.2499998`,
      `${P}last_applied_transaction_immediate_commit_timestamp_seconds${w('2')} 0`,
      `${P}last_applied_transaction_original_commit_timestamp_seconds${w('1')} 1714564800.2499998`,
      `${P}last_applied_transaction_original_commit_timestamp_seconds${w('2')} 0`,
      `${P}last_applied_transaction_start_apply_timestamp_seconds${w('1')} 1714564800.3`,
      `${P}last_applied_transaction_start_apply_timestamp_seconds${w('2')} 0`,
    ]);
    assert.ok(res.values.every((v) => v.type === 3));
  });

  void it('timestamps: UTC, microseconds kept, the zero values 0, anything else missing', () => {
    assert.equal(workerTimestamp('2024-05-01 12:00:00.000000'), 1714564800);
    assert.equal(workerTimestamp('1970-01-01 00:00:00.000001'), 0.000001);
    assert.equal(workerTimestamp('2024-02-29 23:59:59.999999'), 1709251199.999999);
    assert.equal(workerTimestamp(ZERO), 0);
    assert.equal(workerTimestamp('0001-01-01 00:00:00.000000'), 0);
    // One microsecond later is no zero time any more: served as a time (the microsecond is
    // below a float's precision that far from 1970).
    assert.equal(workerTimestamp('0001-01-01 00:00:00.000001'), -62135596800);
    for (const bad of [
      null,
      '',
      '2024-05-01 12:00:00',
      '2024-05-01 12:00:00.25',
      '2024-05-01T12:00:00.000000',
      '2023-02-29 00:00:00.000000',
      '2024-04-31 00:00:00.000000',
      '2024-13-01 00:00:00.000000',
      '2024-05-01 24:00:00.000000',
      '2024-05-01 12:60:00.000000',
    ])
      assert.equal(workerTimestamp(bad), undefined, String(bad));
  });

  void it('a worker with a timestamp that cannot be read: that sample is left out, the others served', async () => {
    const row = { ...ROWS[0]!, LAST_APPLIED_TRANSACTION_END_APPLY_TIMESTAMP: null };
    const { res } = await collectOnce(registration, new FakeDb('8.0.36', () => [row]));
    assert.equal(res.error, undefined);
    assert.equal(res.values.length, 6);
    assert.ok(!res.values.some((v) => v.name.includes('end_apply')));
  });

  void it('MySQL before 8.0: not run; MariaDB: not supported', async () => {
    const old = new FakeDb('5.7.44', () => []);
    assert.deepEqual((await collectOnce(registration, old)).res, { values: [] });
    assert.deepEqual(
      old.queries.filter((q) => q.sql === SQL),
      [],
    );
    const { res } = await collectOnce(registration, new FakeDb('10.11.6-MariaDB', () => []));
    assert.match(res.error?.message ?? '', /not supported on mariadb.*no transaction timestamp columns/i);
  });
});
