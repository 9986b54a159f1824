import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeDb } from '../kit/test-helpers.js';
import { heartbeatQuery, registration } from './heartbeat.js';
import { collectOnce, render } from './recorded.fixture.js';

/** A row as the server names the columns of the heartbeat statement. */
const row = (ts: string | null, now: string | null, id: string | null) => ({
  'UNIX_TIMESTAMP(ts)': ts,
  'UNIX_TIMESTAMP(NOW(6))': now,
  server_id: id,
});

void describe('exporter.heartbeat', () => {
  void it('defaults: heartbeat.heartbeat with the local clock', async () => {
    const db = new FakeDb('8.0.36', () => [
      row('1714564800.250000', '1714564801.500000', '1'),
      row('1714564790.000000', '1714564801.500000', '2'),
    ]);
    const { res } = await collectOnce(registration, db);
    assert.deepEqual(
      db.queries.map((q) => q.sql),
      ['SELECT UNIX_TIMESTAMP(ts), UNIX_TIMESTAMP(NOW(6)), server_id from `heartbeat`.`heartbeat`'],
    );
    assert.deepEqual(render(res.values), [
      'mysql_heartbeat_now_timestamp_seconds{server_id="1"} 1714564801.5',
      'mysql_heartbeat_now_timestamp_seconds{server_id="2"} 1714564801.5',
      'mysql_heartbeat_stored_timestamp_seconds{server_id="1"} 1714564800.25',
      'mysql_heartbeat_stored_timestamp_seconds{server_id="2"} 1714564790',
    ]);
    assert.equal(res.values[0]?.meta?.help, 'Timestamp of the current server.');
    assert.equal(res.values[1]?.meta?.help, 'Timestamp stored in the heartbeat table.');
  });

  void it('options database, table and utc: another table, UTC_TIMESTAMP', async () => {
    const db = new FakeDb('10.11.6-MariaDB', () => []);
    const { res } = await collectOnce(registration, db, { database: 'ops', table: 'hb', utc: 'true' });
    assert.deepEqual(res, { values: [] });
    assert.deepEqual(
      db.queries.map((q) => q.sql),
      ['SELECT UNIX_TIMESTAMP(ts), UNIX_TIMESTAMP(UTC_TIMESTAMP(6)), server_id from `ops`.`hb`'],
    );
  });

  void it('quotes the names as identifiers', () => {
    assert.equal(
      heartbeatQuery('my`db', 'x` ; DROP TABLE t; --', false),
      'SELECT UNIX_TIMESTAMP(ts), UNIX_TIMESTAMP(NOW(6)), server_id from `my``db`.`x`` ; DROP TABLE t; --`',
    );
  });

  void it('refuses a utc option that is no bool and an unknown option', async () => {
    const db = new FakeDb('8.0.36', () => []);
    await assert.rejects(
      collectOnce(registration, db, { utc: 'yes' }),
      /invalid option utc: yes: not true or false/,
    );
    await assert.rejects(
      collectOnce(registration, db, { schema: 'x' }),
      /unknown option schema; valid options: database, table, utc/,
    );
  });

  void it('a ts that is no time (UNIX_TIMESTAMP gives NULL) fails the scrape; earlier rows are kept', async () => {
    const db = new FakeDb('8.0.36', () => [
      row('1714564800.000000', '1714564801.000000', '1'),
      row(null, '1714564801.000000', '2'),
    ]);
    const { res } = await collectOnce(registration, db);
    assert.match(res.error?.message ?? '', /heartbeat: ts null is no timestamp/);
    assert.deepEqual(render(res.values), [
      'mysql_heartbeat_now_timestamp_seconds{server_id="1"} 1714564801',
      'mysql_heartbeat_stored_timestamp_seconds{server_id="1"} 1714564800',
    ]);
  });

  void it('a server_id that is no integer fails the scrape; 007 is served as 7', async () => {
    const bad = await collectOnce(registration, new FakeDb('8.0.36', () => [row('1', '2', 'x')]));
    assert.match(bad.res.error?.message ?? '', /server_id "x" is no integer/);
    const ok = await collectOnce(registration, new FakeDb('8.0.36', () => [row('1', '2', '007')]));
    assert.deepEqual(render(ok.res.values), [
      'mysql_heartbeat_now_timestamp_seconds{server_id="7"} 2',
      'mysql_heartbeat_stored_timestamp_seconds{server_id="7"} 1',
    ]);
  });

  void it('a missing table is the error of the scrape (errno kept)', async () => {
    const db = new FakeDb('8.0.36', () => {
      throw Object.assign(new Error("Table 'heartbeat.heartbeat' doesn't exist"), { errno: 1146 });
    });
    const { res } = await collectOnce(registration, db);
    assert.equal(res.error?.errno, 1146);
  });
});
