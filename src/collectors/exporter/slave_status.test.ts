import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CollectResult } from '../../core/collector.js';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { FakeDb, NO_SIGNAL, planOf } from '../kit/test-helpers.js';
import { connectAs, startMariaDB, type MariaDB } from '../../../test/helpers/mariadb.js';
import { collectOnce, render } from './recorded.fixture.js';
import { DOMAIN, STATEMENTS, registration, slaveStatusSamples } from './slave_status.js';

function samples(rows: Row[]): string[] {
  const out: MetricValue[] = [];
  slaveStatusSamples(rows, out);
  return render(out);
}

async function collect(db: FakeDb, options: Record<string, string> = {}) {
  return collectOnce(registration, db, options);
}

const parseError = (sql: string) =>
  Object.assign(new Error(`You have an error in your SQL syntax near '${sql}'`), { errno: 1064 });

/** SHOW REPLICA STATUS on MySQL 8.4.2 (every column, in the server's order). */
const MYSQL84_ROW: Row = {
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
  Replicate_Do_DB: '',
  Replicate_Ignore_DB: '',
  Replicate_Do_Table: '',
  Replicate_Ignore_Table: '',
  Replicate_Wild_Do_Table: '',
  Replicate_Wild_Ignore_Table: '',
  Last_Errno: '0',
  Last_Error: '',
  Skip_Counter: '0',
  Exec_Source_Log_Pos: '1234',
  Relay_Log_Space: '873',
  Until_Condition: 'None',
  Until_Log_File: '',
  Until_Log_Pos: '0',
  Source_SSL_Allowed: 'No',
  Source_SSL_CA_File: '',
  Source_SSL_CA_Path: '',
  Source_SSL_Cert: '',
  Source_SSL_Cipher: '',
  Source_SSL_Key: '',
  Seconds_Behind_Source: '2',
  Source_SSL_Verify_Server_Cert: 'No',
  Last_IO_Errno: '0',
  Last_IO_Error: '',
  Last_SQL_Errno: '0',
  Last_SQL_Error: '',
  Replicate_Ignore_Server_Ids: '',
  Source_Server_Id: '1',
  Source_UUID: '3e11fa47-71ca-11e1-9e33-c80aa9429562',
  Source_Info_File: 'mysql.slave_master_info',
  SQL_Delay: '0',
  SQL_Remaining_Delay: null,
  Replica_SQL_Running_State: 'Replica has read all relay log; waiting for more updates',
  Source_Retry_Count: '86400',
  Source_Bind: '',
  Last_IO_Error_Timestamp: '',
  Last_SQL_Error_Timestamp: '',
  Source_SSL_Crl: '',
  Source_SSL_Crlpath: '',
  Retrieved_Gtid_Set: '3e11fa47-71ca-11e1-9e33-c80aa9429562:1-105',
  Executed_Gtid_Set: '3e11fa47-71ca-11e1-9e33-c80aa9429562:1-105',
  Auto_Position: '1',
  Replicate_Rewrite_DB: '',
  Channel_Name: '',
  Source_TLS_Version: '',
  Source_public_key_path: '',
  Get_Source_public_key: '0',
  Network_Namespace: '',
};

const MYSQL84_LABELS =
  'channel_name="",connection_name="",master_host="db1.example.com",master_uuid="3e11fa47-71ca-11e1-9e33-c80aa9429562"';

/** SHOW ALL SLAVES STATUS on MariaDB 10.11: two connections (the default one and `dc2`). */
function mariadbRow(connection: string, host: string, io: string, slave: string): Row {
  return {
    Connection_name: connection,
    Slave_SQL_State: 'Slave has read all relay log; waiting for more updates',
    Slave_IO_State: 'Waiting for master to send event',
    Master_Host: host,
    Master_User: 'repl',
    Master_Port: '3306',
    Connect_Retry: '60',
    Master_Log_File: 'mysql-bin.000004',
    Read_Master_Log_Pos: '1891',
    Relay_Log_File: 'relay-bin.000002',
    Relay_Log_Pos: '2011',
    Relay_Master_Log_File: 'mysql-bin.000004',
    Slave_IO_Running: 'Yes',
    Slave_SQL_Running: 'Yes',
    Last_Errno: '0',
    Last_Error: '',
    Exec_Master_Log_Pos: '1891',
    Seconds_Behind_Master: '0',
    Master_Server_Id: '1',
    Using_Gtid: 'Slave_Pos',
    Gtid_IO_Pos: io,
    SQL_Delay: '0',
    SQL_Remaining_Delay: null,
    Slave_DDL_Groups: '6',
    Slave_Non_Transactional_Groups: '0',
    Slave_Transactional_Groups: '2',
    Retried_transactions: '0',
    Max_relay_log_size: '1073741824',
    Executed_log_entries: '27',
    Slave_received_heartbeats: '0',
    Slave_heartbeat_period: '30.000',
    Gtid_Slave_Pos: slave,
  };
}

void describe('exporter.slave_status on recorded result sets', () => {
  void it('MySQL 8.4: Source_* columns fill master_host and master_uuid; numbers and Yes/No served, text skipped', async () => {
    const db = new FakeDb('8.4.2', (sql) => {
      if (sql === 'SHOW REPLICA STATUS') return [MYSQL84_ROW];
      throw parseError(sql);
    });
    const { res } = await collect(db);
    assert.equal(res.error, undefined);
    const want = [
      ['auto_position', 1],
      ['connect_retry', 60],
      ['exec_source_log_pos', 1234],
      ['get_source_public_key', 0],
      ['last_errno', 0],
      ['last_io_errno', 0],
      ['last_sql_errno', 0],
      ['read_source_log_pos', 1234],
      ['relay_log_pos', 456],
      ['relay_log_space', 873],
      ['replica_io_running', 1],
      ['replica_sql_running', 1],
      ['seconds_behind_source', 2],
      ['skip_counter', 0],
      ['source_port', 3306],
      ['source_retry_count', 86400],
      ['source_server_id', 1],
      ['source_ssl_allowed', 0],
      ['source_ssl_verify_server_cert', 0],
      ['sql_delay', 0],
      ['until_log_pos', 0],
    ].map(([n, v]) => `mysql_slave_status_${n}{${MYSQL84_LABELS}} ${v}`);
    assert.deepEqual(render(res.values), want);
    for (const v of res.values) {
      assert.equal(v.meta?.help, 'Generic metric from SHOW SLAVE STATUS.');
      assert.equal(v.type, 0); // untyped
    }
  });

  void it('MySQL multi-channel: one set of series per row, told apart by channel_name', () => {
    const east = { ...MYSQL84_ROW, Channel_Name: 'east', Source_Host: 'e1', Seconds_Behind_Source: '5' };
    const west = { ...MYSQL84_ROW, Channel_Name: 'west', Source_Host: 'w1', Seconds_Behind_Source: null };
    const lag = samples([east, west]).filter((s) => s.startsWith('mysql_slave_status_seconds_behind_source'));
    const uuid = 'master_uuid="3e11fa47-71ca-11e1-9e33-c80aa9429562"';
    // A NULL lag (SQL thread stopped) is no sample, never 0.
    assert.deepEqual(lag, [
      `mysql_slave_status_seconds_behind_source{channel_name="east",connection_name="",master_host="e1",${uuid}} 5`,
    ]);
    const running = samples([east, west]).filter((s) =>
      s.startsWith('mysql_slave_status_replica_io_running'),
    );
    assert.deepEqual(running, [
      `mysql_slave_status_replica_io_running{channel_name="east",connection_name="",master_host="e1",${uuid}} 1`,
      `mysql_slave_status_replica_io_running{channel_name="west",connection_name="",master_host="w1",${uuid}} 1`,
    ]);
  });

  void it('MySQL before 8.0.22 spelling: Master_* columns win, empty ones fall back to Source_*', () => {
    const row: Row = {
      Master_Host: 'old',
      Source_Host: 'new',
      Master_UUID: '',
      Source_UUID: 'u2',
      Last_Errno: '0',
    };
    assert.deepEqual(samples([row]), [
      'mysql_slave_status_last_errno{channel_name="",connection_name="",master_host="old",master_uuid="u2"} 0',
    ]);
    const nulls: Row = { Master_Host: null, Master_UUID: null, Last_Errno: '0', Channel_Name: null };
    assert.deepEqual(samples([nulls]), [
      'mysql_slave_status_last_errno{channel_name="",connection_name="",master_host="",master_uuid=""} 0',
    ]);
  });

  void it('MariaDB SHOW ALL SLAVES STATUS: connection_name per connection, GTID positions per domain', async () => {
    const rows = [
      mariadbRow('', '10.0.0.1', '0-1-42,1-2-7', '0-1-40'),
      mariadbRow('dc2', '10.0.0.2', '3-9-1000', '3-9-999'),
    ];
    const db = new FakeDb('10.11.6-MariaDB-0+deb12u1-log', () => rows);
    const { res } = await collect(db);
    assert.deepEqual(
      db.queries.map((q) => q.sql),
      ['SHOW ALL SLAVES STATUS'],
    );
    const gtid = render(res.values).filter((s) => s.startsWith('mysql_slave_status_gtid_'));
    const l = (conn: string, host: string, d: string, s: string) =>
      `{channel_name="",connection_name="${conn}",domain_id="${d}",master_host="${host}",master_uuid="",server_id="${s}"}`;
    assert.deepEqual(gtid, [
      `mysql_slave_status_gtid_io_pos${l('', '10.0.0.1', '0', '1')} 42`,
      `mysql_slave_status_gtid_io_pos${l('', '10.0.0.1', '1', '2')} 7`,
      `mysql_slave_status_gtid_io_pos${l('dc2', '10.0.0.2', '3', '9')} 1000`,
      `mysql_slave_status_gtid_slave_pos${l('', '10.0.0.1', '0', '1')} 40`,
      `mysql_slave_status_gtid_slave_pos${l('dc2', '10.0.0.2', '3', '9')} 999`,
    ]);
    const gtidValue = res.values.find((v) => v.name === 'mysql_slave_status_gtid_io_pos');
    assert.equal(gtidValue?.type, 3); // gauge
    assert.equal(gtidValue?.meta?.help, 'Gtid_IO_Pos metric from SHOW SLAVE STATUS.');
    const dc2 = render(res.values).filter((s) => s.includes('connection_name="dc2"') && !s.includes('gtid'));
    assert.ok(
      dc2.includes(
        'mysql_slave_status_slave_heartbeat_period{channel_name="",connection_name="dc2",master_host="10.0.0.2",master_uuid=""} 30',
      ),
    );
    assert.ok(
      dc2.includes(
        'mysql_slave_status_max_relay_log_size{channel_name="",connection_name="dc2",master_host="10.0.0.2",master_uuid=""} 1073741824',
      ),
    );
    // Master_Log_File (a binlog name), Using_Gtid and the states are no numbers.
    assert.ok(!dc2.some((s) => /master_log_file|using_gtid|_state\{/.test(s)));
  });

  void it('GTID positions: malformed parts skipped, sequence numbers up to 2^64-1', () => {
    const pos = [
      '0-1-42',
      'bad',
      '1-2',
      '3-4-x',
      '5-6-18446744073709551615',
      '7-8-18446744073709551616',
      '9-10-007',
      '11-12--1',
      '13-14-+5',
      '1-2-3-4',
      ' 15-16-3',
    ].join(',');
    const gtid = samples([{ Gtid_Slave_Pos: pos }]).map((s) =>
      s.replace('channel_name="",connection_name="",', '').replace('master_host="",master_uuid="",', ''),
    );
    assert.deepEqual(gtid, [
      'mysql_slave_status_gtid_slave_pos{domain_id=" 15",server_id="16"} 3',
      'mysql_slave_status_gtid_slave_pos{domain_id="0",server_id="1"} 42',
      'mysql_slave_status_gtid_slave_pos{domain_id="5",server_id="6"} 18446744073709552000',
      'mysql_slave_status_gtid_slave_pos{domain_id="9",server_id="10"} 7',
    ]);
    assert.deepEqual(samples([{ Gtid_IO_Pos: '', Gtid_Slave_Pos: null }]), []);
  });

  void it('reads values as mysqld_exporter does: Connecting is 0, dates are Unix seconds', () => {
    const row: Row = {
      Slave_IO_Running: 'Connecting',
      Slave_SQL_Running: 'no',
      Last_IO_Error_Timestamp: '2024-05-01 12:00:00',
      Last_SQL_Error_Timestamp: '240501 12:00:00',
      Master_Log_File: 'mysql-bin.000012',
      Seconds_Behind_Master: '',
    };
    assert.deepEqual(
      samples([row]).map((s) => s.replace(/\{.*\}/, '')),
      [
        'mysql_slave_status_last_io_error_timestamp 1714564800',
        'mysql_slave_status_slave_io_running 0',
        'mysql_slave_status_slave_sql_running 0',
      ],
    );
  });

  void it('not a replica: no rows, no samples, no error', async () => {
    const { res } = await collect(new FakeDb('10.11.6-MariaDB', () => []));
    assert.deepEqual(res, { values: [] });
  });
});

void describe('exporter.slave_status statement order', () => {
  void it('lists each statement followed by its NONBLOCKING and NOLOCK variants', () => {
    assert.deepEqual(STATEMENTS, [
      'SHOW ALL SLAVES STATUS',
      'SHOW ALL SLAVES STATUS NONBLOCKING',
      'SHOW ALL SLAVES STATUS NOLOCK',
      'SHOW SLAVE STATUS',
      'SHOW SLAVE STATUS NONBLOCKING',
      'SHOW SLAVE STATUS NOLOCK',
      'SHOW REPLICA STATUS',
      'SHOW REPLICA STATUS NONBLOCKING',
      'SHOW REPLICA STATUS NOLOCK',
    ]);
  });

  void it('MySQL 8.4: probes in order up to SHOW REPLICA STATUS, then sends only that until prepared again', async () => {
    const db = new FakeDb('8.4.2', (sql) => {
      if (sql === 'SHOW REPLICA STATUS') return [MYSQL84_ROW];
      throw parseError(sql);
    });
    const { c } = await collect(db);
    assert.deepEqual(
      db.queries.map((q) => q.sql),
      STATEMENTS.slice(0, 7),
    );
    db.queries.length = 0;
    await c.collect('l', NO_SIGNAL);
    assert.deepEqual(
      db.queries.map((q) => q.sql),
      ['SHOW REPLICA STATUS'],
    );
    db.queries.length = 0;
    await c.prepare(planOf({ l: { [DOMAIN]: {} } }), NO_SIGNAL);
    await c.collect('l', NO_SIGNAL);
    assert.equal(db.queries.filter((q) => q.sql.startsWith('SHOW ')).length, 7);
  });

  void it('MySQL 8.0: SHOW SLAVE STATUS answers first (Master_* spelling)', async () => {
    const db = new FakeDb('8.0.36', (sql) => {
      if (sql.startsWith('SHOW ALL')) throw parseError(sql);
      return [{ Master_Host: 'h', Slave_IO_Running: 'Yes' }];
    });
    const { res } = await collect(db);
    assert.deepEqual(
      db.queries.map((q) => q.sql),
      STATEMENTS.slice(0, 4),
    );
    assert.deepEqual(render(res.values), [
      'mysql_slave_status_slave_io_running{channel_name="",connection_name="",master_host="h",master_uuid=""} 1',
    ]);
  });

  void it('a lock-free variant is used when the plain statement fails', async () => {
    const db = new FakeDb('5.7.44-48', (sql) => {
      if (sql === 'SHOW SLAVE STATUS NONBLOCKING') return [{ Master_Host: 'p', Last_Errno: '0' }];
      throw Object.assign(new Error('Lock wait timeout exceeded'), { errno: 1205 });
    });
    const { c, res } = await collect(db);
    assert.equal(res.values.length, 1);
    assert.deepEqual(
      db.queries.map((q) => q.sql),
      STATEMENTS.slice(0, 5),
    );
    db.queries.length = 0;
    await c.collect('l', NO_SIGNAL);
    assert.deepEqual(
      db.queries.map((q) => q.sql),
      ['SHOW SLAVE STATUS NONBLOCKING'],
    );
  });

  void it('MariaDB without SLAVE MONITOR: the refusal is told, not the syntax error of the last variant', async () => {
    const db = new FakeDb('10.11.6-MariaDB-0+deb12u1', (sql) => {
      if (/NONBLOCKING|NOLOCK/.test(sql)) throw parseError(sql);
      throw Object.assign(
        new Error(
          'Access denied; you need (at least one of) the SUPER, SLAVE MONITOR privilege(s) for this operation',
        ),
        { errno: 1227 },
      );
    });
    const { res }: { res: CollectResult } = await collect(db);
    assert.equal(res.error?.errno, 1227);
    assert.match(res.error?.message ?? '', /SLAVE MONITOR/);
    assert.equal(db.queries.length, STATEMENTS.length, 'every statement was tried');
  });

  void it('every statement failing: the first error that is not a syntax error (errno kept), no values', async () => {
    const db = new FakeDb('8.4.2', (sql) => {
      throw Object.assign(new Error(`denied: ${sql}`), {
        errno: sql.endsWith('REPLICA STATUS NOLOCK') ? 1227 : 1064,
      });
    });
    const { res }: { res: CollectResult } = await collect(db);
    assert.deepEqual(res.values, []);
    assert.equal(res.error?.errno, 1227);
    assert.match(res.error?.message ?? '', /SHOW REPLICA STATUS NOLOCK/);
    assert.equal(db.queries.length, STATEMENTS.length);
  });

  void it('stops probing when the scrape is aborted', async () => {
    const db = new FakeDb('8.4.2', () => []);
    const c = registration.create({ monitorId: 'm', db });
    await c.prepare(planOf({ l: { [DOMAIN]: {} } }), NO_SIGNAL);
    const ac = new AbortController();
    ac.abort();
    const res = await c.collect('l', ac.signal);
    assert.ok(res.error !== undefined);
    assert.deepEqual(db.queries, []);
  });

  void it('refuses options: the scraper has none', async () => {
    const c = registration.create({ monitorId: 'm', db: new FakeDb('8.4.2', () => []) });
    await assert.rejects(
      c.prepare(planOf({ l: { [DOMAIN]: { options: { nonblocking: 'true' } } } }), NO_SIGNAL),
      /unknown option nonblocking; the domain has no options/,
    );
  });
});

void describe('exporter.slave_status against a real MariaDB', () => {
  let server: MariaDB;
  before(async () => {
    server = await startMariaDB();
    // mysqld_exporter's README grant; on MariaDB 10.5+ REPLICATION CLIENT is BINLOG MONITOR.
    await server.createUser('readme', 'readme-pw-1', ['PROCESS, REPLICATION CLIENT, SELECT ON *.*']);
    await server.createUser('monitor', 'monitor-pw-1', [
      'PROCESS, BINLOG MONITOR, SLAVE MONITOR, SELECT ON *.*',
    ]);
  });
  after(async () => {
    await server.stop();
  });

  const collectAs = async (user: string, password: string): Promise<CollectResult> => {
    const db = connectAs(server, user, password);
    try {
      const c = registration.create({ monitorId: 'm', db });
      await c.prepare(planOf({ l: { [DOMAIN]: {} } }), NO_SIGNAL);
      return await c.collect('l', NO_SIGNAL);
    } finally {
      await db.close();
    }
  };

  void it("without SLAVE MONITOR: the server's refusal naming the privilege, not a syntax error", async () => {
    const res = await collectAs('readme', 'readme-pw-1');
    assert.equal(res.error?.errno, 1227, JSON.stringify(res.error));
    assert.match(res.error?.message ?? '', /SLAVE MONITOR/);
    assert.deepEqual(res.values, []);
  });

  void it('with SLAVE MONITOR, not a replica: no error, no samples', async () => {
    const res = await collectAs('monitor', 'monitor-pw-1');
    assert.equal(res.error, undefined);
    assert.deepEqual(res.values, []);
  });
});
