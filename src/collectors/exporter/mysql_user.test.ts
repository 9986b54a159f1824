import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Row } from '../../core/db.js';
import { FakeDb } from '../kit/test-helpers.js';
import { PRIVILEGE_COLUMNS, SQL, registration } from './mysql_user.js';
import { collectOnce, render } from './recorded.fixture.js';

/** One mysql.user row as the statement returns it (privileges Y for `granted`, N otherwise). */
function account(
  user: string,
  host: string,
  granted: readonly string[],
  limits: (string | null)[] = ['0', '0', '0', '0'],
): Row {
  const row: Row = { user, host };
  for (const c of PRIVILEGE_COLUMNS) row[c] = granted.includes(c) ? 'Y' : 'N';
  ['max_questions', 'max_updates', 'max_connections', 'max_user_connections'].forEach((c, i) => {
    row[c] = limits[i] ?? null;
  });
  return row;
}

const ROWS = [
  account('root', 'localhost', PRIVILEGE_COLUMNS),
  account('app', '10.0.%', ['Select_priv', 'Insert_priv'], ['100', '20', '5', '3']),
];

void describe('exporter.mysql.user', () => {
  void it('default: the four limits per account, no privileges', async () => {
    const db = new FakeDb('8.0.36', () => ROWS);
    const { res } = await collectOnce(registration, db);
    assert.deepEqual(
      db.queries.map((q) => q.sql),
      [SQL],
    );
    assert.deepEqual(render(res.values), [
      'mysql_mysql_max_connections{hostmask="10.0.%",mysql_user="app"} 5',
      'mysql_mysql_max_connections{hostmask="localhost",mysql_user="root"} 0',
      'mysql_mysql_max_questions{hostmask="10.0.%",mysql_user="app"} 100',
      'mysql_mysql_max_questions{hostmask="localhost",mysql_user="root"} 0',
      'mysql_mysql_max_updates{hostmask="10.0.%",mysql_user="app"} 20',
      'mysql_mysql_max_updates{hostmask="localhost",mysql_user="root"} 0',
      'mysql_mysql_max_user_connections{hostmask="10.0.%",mysql_user="app"} 3',
      'mysql_mysql_max_user_connections{hostmask="localhost",mysql_user="root"} 0',
    ]);
    const help = Object.fromEntries(res.values.map((v) => [v.name, v.meta?.help]));
    assert.equal(help.mysql_mysql_max_questions, 'The number of max_questions by user.');
    assert.equal(help.mysql_mysql_max_user_connections, 'The number of max_user_connections by user.');
  });

  void it('privileges=true: every *_priv column as 1 (Y) or 0 (N), HELP "<Column> by user."', async () => {
    const { res } = await collectOnce(registration, new FakeDb('8.0.36', () => ROWS), { privileges: 'true' });
    assert.equal(res.values.length, 2 * (PRIVILEGE_COLUMNS.length + 4));
    const app = render(res.values.filter((v) => v.group?.mysql_user === 'app' && v.name.endsWith('_priv')));
    assert.equal(app.length, 29);
    assert.ok(app.includes('mysql_mysql_select_priv{hostmask="10.0.%",mysql_user="app"} 1'));
    assert.ok(app.includes('mysql_mysql_create_tablespace_priv{hostmask="10.0.%",mysql_user="app"} 0'));
    const select = res.values.find((v) => v.name === 'mysql_mysql_select_priv');
    assert.equal(select?.meta?.help, 'Select_priv by user.');
    assert.equal(select?.type, 3);
  });

  void it('privileges: a value other than Y or N gives no sample; user and host are never privileges', async () => {
    const row = { ...account('Y', 'N', []), Select_priv: 'y', Insert_priv: '' };
    const { res } = await collectOnce(registration, new FakeDb('10.11.6-MariaDB', () => [row]), {
      privileges: '1',
    });
    const names = res.values.map((v) => v.name);
    assert.ok(!names.includes('mysql_mysql_select_priv'));
    assert.ok(!names.includes('mysql_mysql_insert_priv'));
    assert.ok(!names.includes('mysql_mysql_user') && !names.includes('mysql_mysql_host'));
    assert.ok(names.includes('mysql_mysql_update_priv'));
  });

  void it('refuses a privileges option that is no bool', async () => {
    await assert.rejects(
      collectOnce(registration, new FakeDb('8.0.36', () => []), { privileges: 'on' }),
      /invalid option privileges: on: not true or false/,
    );
  });

  void it('a limit that is no unsigned integer fails the scrape; accounts before it are kept', async () => {
    const bad = account('x', '%', [], ['1', null, '0', '0']);
    const { res } = await collectOnce(registration, new FakeDb('8.0.36', () => [ROWS[1]!, bad]));
    assert.match(res.error?.message ?? '', /mysql.user: max_updates null is no unsigned integer/);
    assert.equal(res.values.length, 4);
    assert.ok(res.values.every((v) => v.group?.mysql_user === 'app'));
  });
});
