/**
 * Local auto-detect: with no monitor configured, sonde finds a MySQL server on this machine
 * through its unix socket (listed in /proc/net/unix) and monitors it as `localhost`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { runSonde, writeConfig } from '../helpers/agent.js';

let db: MariaDB;

describe('local auto-detect', () => {
  before(async () => {
    db = await startMariaDB();
  });
  after(async () => {
    await db?.stop();
  });

  it('finds a local server by its socket when no monitor is configured', async () => {
    const [dir, path] = writeConfig('api:\n  disable: true\n');
    const r = await runSonde(['--config', path, '--run=false', '--print-monitors'], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /- id: localhost\n/);
    // Other test files may run throwaway servers at the same time: any of them will do, but
    // it must be one reached through a socket of a running mariadbd.
    assert.match(r.stdout, /socket: \/\S+\/mysqld\.sock\n/);
    assert.match(r.stdout, /username: root\n/);
  });

  it('does not look when monitor-loader.local.disable-auto is set', async () => {
    const [dir, path] = writeConfig(
      'api:\n  disable: true\nmonitor-loader:\n  local:\n    disable-auto: true\n',
    );
    const r = await runSonde(['--config', path, '--run=false', '--print-monitors'], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /id: localhost/);
  });
});
