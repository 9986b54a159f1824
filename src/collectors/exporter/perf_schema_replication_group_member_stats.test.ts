import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeDb } from '../kit/test-helpers.js';
import { SQL, registration } from './perf_schema_replication_group_member_stats.js';
import { collectOnce, render } from './recorded.fixture.js';

/** MySQL 8.0.36, this member's row (every column of the table). */
const ROW_80 = {
  CHANNEL_NAME: 'group_replication_applier',
  VIEW_ID: '17145648001234567:3',
  MEMBER_ID: 'aaaaaaaa-0000-0000-0000-000000000001',
  COUNT_TRANSACTIONS_IN_QUEUE: '2',
  COUNT_TRANSACTIONS_CHECKED: '1500',
  COUNT_CONFLICTS_DETECTED: '3',
  COUNT_TRANSACTIONS_ROWS_VALIDATING: '40',
  TRANSACTIONS_COMMITTED_ALL_MEMBERS: 'aaaaaaaa-0000-0000-0000-000000000000:1-1500',
  LAST_CONFLICT_FREE_TRANSACTION: 'aaaaaaaa-0000-0000-0000-000000000000:1500',
  COUNT_TRANSACTIONS_REMOTE_IN_APPLIER_QUEUE: '1',
  COUNT_TRANSACTIONS_REMOTE_APPLIED: '1000',
  COUNT_TRANSACTIONS_LOCAL_PROPOSED: '500',
  COUNT_TRANSACTIONS_LOCAL_ROLLBACK: '4',
};

const P = 'mysql_perf_schema_';

void describe('exporter.perf_schema.replication_group_member_stats', () => {
  void it('MySQL 8.0: eight counters and gauges of this member, no labels', async () => {
    const db = new FakeDb('8.0.36', () => [ROW_80]);
    const { res } = await collectOnce(registration, db);
    assert.deepEqual(
      db.queries.map((q) => q.sql),
      [SQL],
    );
    assert.deepEqual(render(res.values), [
      `${P}conflicts_detected_total 3`,
      `${P}transactions_checked_total 1500`,
      `${P}transactions_in_queue 2`,
      `${P}transactions_local_proposed_total 500`,
      `${P}transactions_local_rollback_total 4`,
      `${P}transactions_remote_applied_total 1000`,
      `${P}transactions_remote_in_applier_queue 1`,
      `${P}transactions_rows_validating_total 40`,
    ]);
    const types = Object.fromEntries(res.values.map((v) => [v.name, v.type]));
    assert.equal(types[`${P}transactions_in_queue`], 3);
    assert.equal(types[`${P}transactions_remote_in_applier_queue`], 3);
    assert.equal(types[`${P}transactions_checked_total`], 1);
    assert.equal(types[`${P}conflicts_detected_total`], 1);
  });

  void it('MySQL 5.7: the first four columns only', async () => {
    const row = {
      CHANNEL_NAME: 'group_replication_applier',
      VIEW_ID: '1:1',
      MEMBER_ID: 'x',
      COUNT_TRANSACTIONS_IN_QUEUE: '0',
      COUNT_TRANSACTIONS_CHECKED: '10',
      COUNT_CONFLICTS_DETECTED: '0',
      COUNT_TRANSACTIONS_ROWS_VALIDATING: '1',
      TRANSACTIONS_COMMITTED_ALL_MEMBERS: '',
      LAST_CONFLICT_FREE_TRANSACTION: '',
    };
    const { res } = await collectOnce(registration, new FakeDb('5.7.44', () => [row]));
    assert.deepEqual(render(res.values), [
      `${P}conflicts_detected_total 0`,
      `${P}transactions_checked_total 10`,
      `${P}transactions_in_queue 0`,
      `${P}transactions_rows_validating_total 1`,
    ]);
  });

  void it('not in a group: no row, nothing served', async () => {
    assert.deepEqual((await collectOnce(registration, new FakeDb('8.0.36', () => []))).res, { values: [] });
  });

  void it('a served column that is no number fails the scrape; the samples before it are kept', async () => {
    const row = { ...ROW_80, COUNT_CONFLICTS_DETECTED: null };
    const { res } = await collectOnce(registration, new FakeDb('8.0.36', () => [row]));
    assert.match(res.error?.message ?? '', /COUNT_CONFLICTS_DETECTED null is no number/);
    assert.deepEqual(render(res.values), [
      `${P}transactions_checked_total 1500`,
      `${P}transactions_in_queue 2`,
    ]);
  });

  void it('MySQL before 5.7: not run; MariaDB: not supported', async () => {
    const old = new FakeDb('5.6.51', () => []);
    assert.deepEqual((await collectOnce(registration, old)).res, { values: [] });
    assert.deepEqual(
      old.queries.filter((q) => q.sql === SQL),
      [],
    );
    const { res } = await collectOnce(registration, new FakeDb('10.11.6-MariaDB', () => []));
    assert.match(res.error?.message ?? '', /not supported on mariadb/i);
  });
});
