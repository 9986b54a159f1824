import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Row } from '../../core/db.js';
import type { MetricValue } from '../../core/metrics.js';
import { FakeDb } from '../kit/test-helpers.js';
import { collectOnce, dbError, render } from './recorded.fixture.js';
import { SHOW_REPLICAS, SHOW_SLAVE_HOSTS, isUuid, registration, slaveHostsSamples } from './slave_hosts.js';

const INFO = 'mysql_heartbeat_mysql_slave_hosts_info';

function samples(rows: Row[]): string[] {
  const out: MetricValue[] = [];
  slaveHostsSamples(rows, out);
  return render(out);
}

void describe('exporter.slave_hosts on recorded result sets', () => {
  void it('MariaDB / MySQL 5.5: four columns, no UUID', () => {
    assert.deepEqual(samples([{ Server_id: '2', Host: '127.0.0.1', Port: '46477', Master_id: '1' }]), [
      `${INFO}{master_id="1",port="46477",server_id="2",slave_host="127.0.0.1",slave_uuid=""} 1`,
    ]);
  });

  void it('MySQL 5.6+: the fifth column is the replica UUID', () => {
    const rows: Row[] = [
      {
        Server_id: '3',
        Host: 'r1',
        Port: '3306',
        Master_id: '1',
        Slave_UUID: 'c5d2a5e2-1b2c-11ef-9a3d-0242ac120002',
      },
      {
        Server_id: '4',
        Host: '',
        Port: '3306',
        Master_id: '1',
        Slave_UUID: 'C5D2A5E21B2C11EF9A3D0242AC120003',
      },
    ];
    assert.deepEqual(samples(rows), [
      `${INFO}{master_id="1",port="3306",server_id="3",slave_host="r1",slave_uuid="c5d2a5e2-1b2c-11ef-9a3d-0242ac120002"} 1`,
      `${INFO}{master_id="1",port="3306",server_id="4",slave_host="",slave_uuid="C5D2A5E21B2C11EF9A3D0242AC120003"} 1`,
    ]);
  });

  void it('old MySQL: the fifth column is Master_id when it is no UUID (the fourth is Rpl_recovery_rank)', () => {
    const row: Row = { Server_id: '5', Host: 'r5', Port: '3307', Rpl_recovery_rank: '0', Master_id: '1' };
    assert.deepEqual(samples([row]), [
      `${INFO}{master_id="1",port="3307",server_id="5",slave_host="r5",slave_uuid=""} 1`,
    ]);
  });

  void it('MySQL 8.4 SHOW REPLICAS spelling reads the same (columns by position)', () => {
    const row: Row = {
      Server_id: '6',
      Host: 'r6',
      Port: '3306',
      Source_Id: '1',
      Replica_UUID: '{c5d2a5e2-1b2c-11ef-9a3d-0242ac120006}',
    };
    assert.deepEqual(samples([row]), [
      `${INFO}{master_id="1",port="3306",server_id="6",slave_host="r6",slave_uuid="{c5d2a5e2-1b2c-11ef-9a3d-0242ac120006}"} 1`,
    ]);
  });

  void it('another column count fails with the count named', () => {
    assert.throws(
      () => samples([{ a: '1', b: '2', c: '3' }]),
      /SHOW SLAVE HOSTS: 3 columns, expected 4 or 5/,
    );
  });

  void it('recognizes the UUID spellings', () => {
    for (const u of [
      'c5d2a5e2-1b2c-11ef-9a3d-0242ac120002',
      '{c5d2a5e2-1b2c-11ef-9a3d-0242ac120002}',
      'urn:uuid:c5d2a5e2-1b2c-11ef-9a3d-0242ac120002',
      'URN:UUID:C5D2A5E2-1B2C-11EF-9A3D-0242AC120002',
      'c5d2a5e21b2c11ef9a3d0242ac120002',
    ])
      assert.ok(isUuid(u), u);
    for (const u of [
      '1',
      '',
      'c5d2a5e2-1b2c-11ef-9a3d-0242ac12000',
      'c5d2a5e2-1b2c-11ef-9a3d-0242ac120002}',
      '{c5d2a5e2-1b2c-11ef-9a3d-0242ac120002',
      'g5d2a5e2-1b2c-11ef-9a3d-0242ac120002',
      'c5d2a5e2x1b2c-11ef-9a3d-0242ac120002',
    ])
      assert.ok(!isUuid(u), u);
  });
});

void describe('exporter.slave_hosts statements', () => {
  void it('MySQL 8.4: SHOW SLAVE HOSTS is a parse error, SHOW REPLICAS answers', async () => {
    const db = new FakeDb('8.4.2', (sql) => {
      if (sql === SHOW_SLAVE_HOSTS) throw dbError(1064, 'You have an error in your SQL syntax');
      return [{ Server_id: '2', Host: 'h', Port: '3306', Source_Id: '1', Replica_UUID: '' }];
    });
    const { res } = await collectOnce(registration, db);
    assert.equal(res.error, undefined);
    assert.deepEqual(
      db.queries.map((q) => q.sql),
      [SHOW_SLAVE_HOSTS, SHOW_REPLICAS],
    );
    // '' is no UUID: the fifth column is taken as the master id, as upstream reads it.
    assert.deepEqual(render(res.values), [
      `${INFO}{master_id="",port="3306",server_id="2",slave_host="h",slave_uuid=""} 1`,
    ]);
  });

  void it('another error (no REPLICATION SLAVE privilege) is the error, SHOW REPLICAS is not tried', async () => {
    const db = new FakeDb('10.11.6-MariaDB', () => {
      throw dbError(
        1227,
        'Access denied; you need (at least one of) the REPLICATION MASTER ADMIN privilege(s)',
      );
    });
    const { res } = await collectOnce(registration, db);
    assert.equal(res.error?.errno, 1227);
    assert.deepEqual(res.values, []);
    assert.deepEqual(
      db.queries.map((q) => q.sql),
      [SHOW_SLAVE_HOSTS],
    );
  });

  void it('no replicas: nothing served', async () => {
    const { res } = await collectOnce(registration, new FakeDb('10.11.6-MariaDB', () => []));
    assert.deepEqual(res, { values: [] });
  });
});
