import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CollectError } from '../../core/collector.js';
import { MetricType } from '../../core/metrics.js';
import { parseServerVersion } from '../../db/flavor.js';
import { FakeDb, NO_SIGNAL, planOf } from '../kit/test-helpers.js';
import { ReplCollector, help, replValues, replicaStatusSource, runningOf } from './index.js';

/** SHOW REPLICA STATUS on MySQL 8.0.36 (the columns this domain reads, plus neighbours). */
const MYSQL8_ROW = {
  Replica_IO_State: 'Waiting for source to send event',
  Source_Host: 'db1.example.com',
  Source_User: 'repl',
  Source_Port: '3306',
  Connect_Retry: '60',
  Source_Log_File: 'binlog.000012',
  Read_Source_Log_Pos: '1234',
  Relay_Log_File: 'relay.000003',
  Relay_Log_Pos: '456',
  Relay_Source_Log_File: 'binlog.000012',
  Replica_IO_Running: 'Yes',
  Replica_SQL_Running: 'Yes',
  Last_Errno: '0',
  Last_Error: '',
  Seconds_Behind_Source: '0',
  Last_IO_Errno: '0',
  Last_SQL_Errno: '0',
  Retrieved_Gtid_Set: '3e11fa47-71ca-11e1-9e33-c80aa9429562:1-105',
  Executed_Gtid_Set: '3e11fa47-71ca-11e1-9e33-c80aa9429562:1-105',
  Channel_Name: '',
};

/** SHOW SLAVE STATUS on MariaDB 10.11 / MySQL 5.7 (Slave_* and Master_* spelling). */
const SLAVE_ROW = {
  Slave_IO_State: 'Waiting for master to send event',
  Master_Host: '10.0.0.1',
  Master_User: 'repl',
  Master_Port: '3306',
  Slave_IO_Running: 'Yes',
  Slave_SQL_Running: 'Yes',
  Last_Errno: '0',
  Last_Error: '',
  Seconds_Behind_Master: '0',
};

void describe('repl: statement by flavor and version', () => {
  const src = (v: string) => replicaStatusSource(parseServerVersion(v)).sql;
  void it('uses SHOW REPLICA STATUS from MySQL 8.0.22 on, SHOW SLAVE STATUS before and on MariaDB', () => {
    assert.equal(src('8.0.22'), 'SHOW REPLICA STATUS');
    assert.equal(src('8.0.36'), 'SHOW REPLICA STATUS');
    assert.equal(src('8.4.2'), 'SHOW REPLICA STATUS');
    assert.equal(src('9.1.0'), 'SHOW REPLICA STATUS');
    assert.equal(src('8.0.21'), 'SHOW SLAVE STATUS');
    assert.equal(src('5.7.44-log'), 'SHOW SLAVE STATUS');
    assert.equal(src('8.0.35-27'), 'SHOW REPLICA STATUS'); // Percona Server
    assert.equal(src('10.11.6-MariaDB-0+deb12u1-log'), 'SHOW SLAVE STATUS');
    assert.equal(src('11.4.2-MariaDB'), 'SHOW SLAVE STATUS');
    assert.equal(src('weird'), 'SHOW SLAVE STATUS'); // version unknown
  });
});

void describe('repl: running from status rows', () => {
  void it('is 1 only when both threads say Yes and Last_Errno is 0, in either spelling', () => {
    assert.equal(runningOf(MYSQL8_ROW), 1);
    assert.equal(runningOf(SLAVE_ROW), 1);
    assert.equal(runningOf({ ...SLAVE_ROW, Slave_SQL_Running: 'No' }), 0);
    assert.equal(runningOf({ ...SLAVE_ROW, Slave_IO_Running: 'Connecting' }), 0);
    assert.equal(runningOf({ ...MYSQL8_ROW, Replica_IO_Running: 'No', Replica_SQL_Running: 'No' }), 0);
    assert.equal(runningOf({ ...SLAVE_ROW, Last_Errno: '1062', Last_Error: 'Duplicate entry' }), 0);
    assert.equal(runningOf({ Slave_IO_Running: 'Yes', Slave_SQL_Running: 'Yes' }), 0); // no Last_Errno: not proven
    assert.equal(runningOf({ slave_io_running: 'Yes', slave_sql_running: 'Yes', last_errno: '0' }), 1);
  });

  void it('reports the source host as meta, and -1 or nothing when not a replica', () => {
    assert.deepEqual(replValues([MYSQL8_ROW], false), [
      { name: 'running', value: 1, type: MetricType.Gauge, meta: { source: 'db1.example.com' } },
    ]);
    assert.deepEqual(replValues([{ ...SLAVE_ROW, Slave_SQL_Running: 'No' }], false), [
      { name: 'running', value: 0, type: MetricType.Gauge, meta: { source: '10.0.0.1' } },
    ]);
    assert.deepEqual(replValues([], true), [
      { name: 'running', value: -1, type: MetricType.Gauge, meta: { source: '' } },
    ]);
    assert.deepEqual(replValues([], false), []);
  });

  void it('uses the last row of a multi-channel replica', () => {
    const v = replValues(
      [MYSQL8_ROW, { ...MYSQL8_ROW, Source_Host: 'db9', Replica_SQL_Running: 'No' }],
      false,
    );
    assert.deepEqual(v, [{ name: 'running', value: 0, type: MetricType.Gauge, meta: { source: 'db9' } }]);
  });
});

void describe('repl collector', () => {
  void it('on MySQL 8.4 sends SHOW REPLICA STATUS and reads Replica_* columns', async () => {
    const db = new FakeDb('8.4.2', () => [MYSQL8_ROW]);
    const c = new ReplCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { repl: { metrics: ['running'] } } }), NO_SIGNAL);
    assert.deepEqual((await c.collect('l', NO_SIGNAL)).values, [
      { name: 'running', value: 1, type: MetricType.Gauge, meta: { source: 'db1.example.com' } },
    ]);
    assert.deepEqual(
      db.queries.map((q) => q.sql),
      ['SHOW REPLICA STATUS'],
    );
  });

  void it('applies report-not-a-replica per level (Blip boolean words)', async () => {
    const db = new FakeDb('10.11.6-MariaDB', () => []);
    const c = new ReplCollector({ monitorId: 'm', db });
    await c.prepare(
      planOf({
        a: { repl: { metrics: ['running'], options: { 'report-not-a-replica': 'yes' } } },
        b: { repl: { metrics: ['Running'], options: { 'report-not-a-replica': 'no' } } },
        c: { repl: { metrics: ['running'], options: { 'report-not-a-replica': 'Enabled' } } },
        d: { repl: { metrics: ['running'] } },
      }),
      NO_SIGNAL,
    );
    const minus = [{ name: 'running', value: -1, type: MetricType.Gauge, meta: { source: '' } }];
    assert.deepEqual((await c.collect('a', NO_SIGNAL)).values, minus);
    assert.deepEqual((await c.collect('b', NO_SIGNAL)).values, []);
    assert.deepEqual((await c.collect('c', NO_SIGNAL)).values, minus);
    assert.deepEqual((await c.collect('d', NO_SIGNAL)).values, []); // effective default: no
    assert.deepEqual((await c.collect('zz', NO_SIGNAL)).values, []);
  });

  void it('refuses plans without metrics or with other metrics', async () => {
    const c = new ReplCollector({ monitorId: 'm', db: new FakeDb('8.0.36', () => []) });
    await assert.rejects(c.prepare(planOf({ l: { repl: {} } }), NO_SIGNAL), /no metrics specified/);
    await assert.rejects(
      c.prepare(planOf({ l: { repl: { metrics: ['running', 'lag'] } } }), NO_SIGNAL),
      /invalid metric: lag; valid metrics: running/,
    );
  });

  void it('returns error 1227, which help maps to access-denied, with running = 0 as its zero', async () => {
    const db = new FakeDb('10.11.6-MariaDB', () => {
      throw Object.assign(
        new Error(
          'Access denied; you need (at least one of) the SUPER, SLAVE MONITOR privilege(s) for this operation',
        ),
        { errno: 1227 },
      );
    });
    const c = new ReplCollector({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { repl: { metrics: ['running'] } } }), NO_SIGNAL);
    const res = await c.collect('l', NO_SIGNAL);
    assert.deepEqual(res.values, []);
    assert.ok(res.error instanceof CollectError);
    assert.equal(res.error.errno, 1227);
    assert.equal(help.errors.find((e) => e.errnos?.includes(1227))?.name, 'access-denied');
    assert.deepEqual(res.error.zero, [
      { name: 'running', value: 0, type: MetricType.Gauge, meta: { source: '' } },
    ]);
  });

  void it('declares its option with the effective default and the 1227 policy', () => {
    assert.deepEqual(
      help.options.map((o) => [o.name, o.default, Object.keys(o.values ?? {})]),
      [['report-not-a-replica', 'no', ['yes', 'no']]],
    );
    assert.deepEqual(
      help.errors.map((e) => [e.name, e.errnos]),
      [['access-denied', [1227]]],
    );
    assert.deepEqual(
      help.metrics.map((m) => [m.name, m.type]),
      [['running', MetricType.Gauge]],
    );
  });
});
