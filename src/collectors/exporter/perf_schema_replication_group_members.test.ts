import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeDb } from '../kit/test-helpers.js';
import { SQL, registration } from './perf_schema_replication_group_members.js';
import { collectOnce, render } from './recorded.fixture.js';

/** MySQL 8.0.36, a three-member group (every column of the table). */
function member(id: string, host: string, role: string) {
  return {
    CHANNEL_NAME: 'group_replication_applier',
    MEMBER_ID: id,
    MEMBER_HOST: host,
    MEMBER_PORT: '3306',
    MEMBER_STATE: 'ONLINE',
    MEMBER_ROLE: role,
    MEMBER_VERSION: '8.0.36',
    MEMBER_COMMUNICATION_STACK: 'XCom',
  };
}

void describe('exporter.perf_schema.replication_group_members', () => {
  void it('MySQL 8.0: one info series per member, every column a lowercase label', async () => {
    const db = new FakeDb('8.0.36', () => [
      member('aaaaaaaa-0000-0000-0000-000000000001', 'gr1', 'PRIMARY'),
      member('aaaaaaaa-0000-0000-0000-000000000002', 'gr2', 'SECONDARY'),
    ]);
    const { res } = await collectOnce(registration, db);
    assert.deepEqual(
      db.queries.map((q) => q.sql),
      [SQL],
    );
    const l = (id: string, host: string, role: string) =>
      `{channel_name="group_replication_applier",member_communication_stack="XCom",member_host="${host}",member_id="${id}",member_port="3306",member_role="${role}",member_state="ONLINE",member_version="8.0.36"}`;
    assert.deepEqual(render(res.values), [
      `mysql_perf_schema_replication_group_member_info${l('aaaaaaaa-0000-0000-0000-000000000001', 'gr1', 'PRIMARY')} 1`,
      `mysql_perf_schema_replication_group_member_info${l('aaaaaaaa-0000-0000-0000-000000000002', 'gr2', 'SECONDARY')} 1`,
    ]);
    assert.equal(res.values[0]?.type, 3);
    assert.match(
      res.values[0]?.meta?.help ?? '',
      /^Information about the replication group member: channel_name/,
    );
  });

  void it('MySQL 5.7: five columns; a member without a host (NULL) gets the empty value', async () => {
    const row = {
      CHANNEL_NAME: 'group_replication_applier',
      MEMBER_ID: '',
      MEMBER_HOST: null,
      MEMBER_PORT: null,
      MEMBER_STATE: 'OFFLINE',
    };
    const { res } = await collectOnce(registration, new FakeDb('5.7.44', () => [row]));
    assert.deepEqual(render(res.values), [
      'mysql_perf_schema_replication_group_member_info{channel_name="group_replication_applier",member_host="",member_id="",member_port="",member_state="OFFLINE"} 1',
    ]);
  });

  void it('MySQL before 5.7: not run; MariaDB: not supported', async () => {
    const old = new FakeDb('5.6.51', () => []);
    assert.deepEqual((await collectOnce(registration, old)).res, { values: [] });
    assert.deepEqual(
      old.queries.filter((q) => q.sql === SQL),
      [],
    );
    const maria = new FakeDb('10.11.6-MariaDB', () => []);
    const { res } = await collectOnce(registration, maria);
    assert.match(res.error?.message ?? '', /not supported on mariadb.*no Group Replication/i);
  });
});
