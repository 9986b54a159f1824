import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { FakeDb } from '../kit/test-helpers.js';
import { LOG_BIN_SQL, SQL, binlogSamples, registration } from './binlog_size.js';
import { collectOnce, dbError, render } from './recorded.fixture.js';

function samples(rows: Row[]): string[] {
  const out: MetricValue[] = [];
  binlogSamples(rows, out);
  return render(out);
}

void describe('exporter.binlog_size', () => {
  void it('MariaDB / MySQL before 8.0.14: two columns', async () => {
    const db = new FakeDb('10.11.6-MariaDB', (sql) =>
      sql === LOG_BIN_SQL
        ? [{ '@@log_bin': '1' }]
        : [
            { Log_name: 'mysql-bin.000001', File_size: '1891' },
            { Log_name: 'mysql-bin.000002', File_size: '365' },
          ],
    );
    const { res } = await collectOnce(registration, db);
    assert.deepEqual(
      db.queries.map((q) => q.sql),
      [LOG_BIN_SQL, SQL],
    );
    assert.deepEqual(render(res.values), [
      'mysql_binlog_file_number 2',
      'mysql_binlog_files 2',
      'mysql_binlog_size_bytes 2256',
    ]);
    assert.ok(res.values.every((v) => v.type === 3 && v.group === undefined));
  });

  void it('MySQL 8.0.14+: three columns (Encrypted)', () => {
    assert.deepEqual(
      samples([
        { Log_name: 'binlog.000041', File_size: '1073741824', Encrypted: 'No' },
        { Log_name: 'binlog.000042', File_size: '157', Encrypted: 'No' },
      ]),
      ['mysql_binlog_file_number 42', 'mysql_binlog_files 2', 'mysql_binlog_size_bytes 1073741981'],
    );
  });

  void it('sizes are summed exactly beyond 2^53', () => {
    const big = { Log_name: 'b.000001', File_size: '9007199254740993' };
    assert.deepEqual(
      samples([big, { Log_name: 'b.000002', File_size: '9007199254740993' }])[2],
      'mysql_binlog_size_bytes 18014398509481984',
    );
  });

  void it('log_bin off: SHOW BINARY LOGS is not sent, nothing served', async () => {
    const db = new FakeDb('8.0.36', () => [{ '@@log_bin': '0' }]);
    const { res } = await collectOnce(registration, db);
    assert.deepEqual(res, { values: [] });
    assert.deepEqual(
      db.queries.map((q) => q.sql),
      [LOG_BIN_SQL],
    );
  });

  void it('the file number is the digits after the last dot; a name without them gives no file number', () => {
    assert.deepEqual(
      samples([{ Log_name: 'db.example-bin.000007', File_size: '1' }])[0],
      'mysql_binlog_file_number 7',
    );
    assert.deepEqual(samples([{ Log_name: 'binlog', File_size: '1' }]), [
      'mysql_binlog_files 1',
      'mysql_binlog_size_bytes 1',
    ]);
    assert.deepEqual(samples([]), ['mysql_binlog_files 0', 'mysql_binlog_size_bytes 0']);
  });

  void it('a size that is no unsigned integer, or another column count, fails with nothing served', async () => {
    const db = new FakeDb('8.0.36', (sql) =>
      sql === LOG_BIN_SQL
        ? [{ '@@log_bin': '1' }]
        : [
            { Log_name: 'binlog.000001', File_size: '10' },
            { Log_name: 'binlog.000002', File_size: null },
          ],
    );
    const { res } = await collectOnce(registration, db);
    assert.match(res.error?.message ?? '', /File_size null of binlog.000002 is no size/);
    assert.deepEqual(res.values, []);
    assert.throws(() => samples([{ Log_name: 'b.1' }]), /SHOW BINARY LOGS: 1 columns, expected 2 or 3/);
  });

  void it('a failing SHOW BINARY LOGS (no privilege) is the error', async () => {
    const db = new FakeDb('10.11.6-MariaDB', (sql) => {
      if (sql === LOG_BIN_SQL) return [{ '@@log_bin': '1' }];
      throw dbError(1227, 'Access denied; you need (at least one of) the BINLOG MONITOR privilege(s)');
    });
    assert.equal((await collectOnce(registration, db)).res.error?.errno, 1227);
  });
});
