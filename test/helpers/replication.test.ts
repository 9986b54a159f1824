import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startReplicationPair, type ReplicationPair } from './replication.js';

void describe('throwaway replication pair helper', () => {
  let pair: ReplicationPair;
  before(async () => {
    pair = await startReplicationPair();
  });
  after(async () => {
    await pair.stop();
  });

  void it('starts a binlogging primary and a read-only replica with both threads running', async () => {
    const [p] = await pair.primary.query('SELECT @@server_id AS id, @@log_bin AS lb, @@binlog_format AS f');
    assert.deepEqual(p, { id: 1, lb: 1, f: 'ROW' });
    const [r] = await pair.replica.query('SELECT @@server_id AS id, @@read_only AS ro');
    assert.deepEqual(r, { id: 2, ro: 1 });
    const st = await pair.replicaStatus();
    assert.equal(st?.['Master_Host'], '127.0.0.1');
    assert.equal(Number(st?.['Master_Port']), pair.primary.port);
    assert.equal(st?.['Using_Gtid'], 'Slave_Pos');
    assert.deepEqual(await pair.threads(), { io: 'Yes', sql: 'Yes', lastErrno: 0, lastError: '' });
    assert.equal(await pair.primary.query('SHOW SLAVE STATUS').then((rows) => rows.length), 0);
  });

  void it('replicates a write and waits until caught up', async () => {
    await pair.primary.query('CREATE DATABASE h');
    await pair.primary.query('CREATE TABLE h.t (id INT PRIMARY KEY, v VARCHAR(10))');
    await pair.primary.query("INSERT INTO h.t VALUES (1, 'one'), (2, 'two')");
    await pair.waitCaughtUp();
    assert.deepEqual(await pair.replica.query('SELECT id, v FROM h.t ORDER BY id'), [
      { id: 1, v: 'one' },
      { id: 2, v: 'two' },
    ]);
  });

  void it('stops and starts the SQL thread: writes wait, then apply', async () => {
    await pair.stopSqlThread();
    assert.deepEqual(await pair.threads(), { io: 'Yes', sql: 'No', lastErrno: 0, lastError: '' });
    await pair.primary.query("INSERT INTO h.t VALUES (3, 'three')");
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(await pair.replica.query('SELECT COUNT(*) AS n FROM h.t'), [{ n: 2 }]);
    await pair.startSqlThread();
    await pair.waitCaughtUp();
    assert.deepEqual(await pair.replica.query('SELECT COUNT(*) AS n FROM h.t'), [{ n: 3 }]);
  });

  void it('breaks replication with a duplicate key (1062) and repairs it', async () => {
    await pair.breakReplication();
    const t = await pair.threads();
    assert.equal(t.io, 'Yes');
    assert.equal(t.sql, 'No');
    assert.equal(t.lastErrno, 1062);
    assert.match(t.lastError, /Duplicate entry '1'/);
    await pair.repairReplication();
    assert.deepEqual(await pair.threads(), { io: 'Yes', sql: 'Yes', lastErrno: 0, lastError: '' });
    assert.deepEqual(await pair.replica.query('SELECT id FROM sonde_conflict.t'), [{ id: 1 }]);
  });
});
