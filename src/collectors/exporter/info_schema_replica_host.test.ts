import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeDb } from '../kit/test-helpers.js';
import { SQL, registration } from './info_schema_replica_host.js';
import { collectOnce, dbError, render } from './recorded.fixture.js';

/** Aurora MySQL 3 (8.0.32): a writer and a reader. */
const ROWS = [
  {
    SERVER_ID: 'db-1',
    ROLE: 'writer',
    CPU: '12.5',
    MASTER_SLAVE_LATENCY_IN_MICROSECONDS: '0',
    REPLICA_LAG_IN_MILLISECONDS: '0',
    LOG_STREAM_SPEED_IN_KiB_PER_SECOND: '3.1',
    CURRENT_REPLAY_LATENCY_IN_MICROSECONDS: '0',
  },
  {
    SERVER_ID: 'db-2',
    ROLE: 'reader',
    CPU: '4',
    MASTER_SLAVE_LATENCY_IN_MICROSECONDS: '1500000',
    REPLICA_LAG_IN_MILLISECONDS: '17.5',
    LOG_STREAM_SPEED_IN_KiB_PER_SECOND: '2.25',
    CURRENT_REPLAY_LATENCY_IN_MICROSECONDS: '250',
  },
];

void describe('exporter.info_schema.replica_host', () => {
  void it('Aurora: five gauges per instance, in seconds where the column is µs or ms', async () => {
    const db = new FakeDb('8.0.32', () => ROWS);
    const { res } = await collectOnce(registration, db);
    assert.deepEqual(
      db.queries.map((q) => q.sql),
      [SQL],
    );
    const P = 'mysql_info_schema_replica_host_';
    assert.deepEqual(render(res.values), [
      `${P}cpu_percent{role="reader",server_id="db-2"} 4`,
      `${P}cpu_percent{role="writer",server_id="db-1"} 12.5`,
      `${P}lag_seconds{role="reader",server_id="db-2"} 0.0175`,
      `${P}lag_seconds{role="writer",server_id="db-1"} 0`,
      `${P}log_stream_speed{role="reader",server_id="db-2"} 2.25`,
      `${P}log_stream_speed{role="writer",server_id="db-1"} 3.1`,
      `${P}replay_latency_seconds{role="reader",server_id="db-2"} 0.00025`,
      `${P}replay_latency_seconds{role="writer",server_id="db-1"} 0`,
      `${P}replica_latency_seconds{role="reader",server_id="db-2"} 1.5`,
      `${P}replica_latency_seconds{role="writer",server_id="db-1"} 0`,
    ]);
    assert.ok(res.values.every((v) => v.type === 3));
  });

  void it('no such table (1109: not Aurora): nothing and no error', async () => {
    const db = new FakeDb('10.11.6-MariaDB', () => {
      throw dbError(1109, "Unknown table 'replica_host_status' in information_schema");
    });
    assert.deepEqual((await collectOnce(registration, db)).res, { values: [] });
  });

  void it('another error is the error', async () => {
    const db = new FakeDb('8.0.32', () => {
      throw dbError(1227, 'Access denied');
    });
    assert.equal((await collectOnce(registration, db)).res.error?.errno, 1227);
  });

  void it('a value that is no number fails the scrape, the rows before it are kept', async () => {
    const bad = { ...ROWS[1]!, CURRENT_REPLAY_LATENCY_IN_MICROSECONDS: '2.5' };
    const { res } = await collectOnce(registration, new FakeDb('8.0.32', () => [ROWS[0]!, bad]));
    assert.match(res.error?.message ?? '', /CURRENT_REPLAY_LATENCY_IN_MICROSECONDS "2.5" is no number/);
    assert.equal(res.values.length, 5);
    assert.ok(res.values.every((v) => v.group?.server_id === 'db-1'));
  });
});
