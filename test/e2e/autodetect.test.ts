/**
 * Local auto-detect: with no monitor configured, sonde finds a MySQL server on this machine
 * through its unix socket and monitors it as `localhost`, and says which one it chose and why.
 * Each test limits auto-detect to its own throwaway servers (`monitor-loader.local.candidates`),
 * so another server running on the machine changes nothing.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { runSonde, writeConfig } from '../helpers/agent.js';

let db: MariaDB;
let db2: MariaDB;

/** Run `--run=false --print-monitors --log` with auto-detect limited to `candidates`. */
async function detect(candidates: string[], extra = ''): Promise<{ stdout: string; monitors: string }> {
  const list = candidates.map((c) => JSON.stringify(c)).join(', ');
  const [dir, path] = writeConfig(
    `api:\n  disable: true\nmonitor-loader:\n  local:\n    candidates: [${list}]\n${extra}`,
  );
  const r = await runSonde(['--config', path, '--run=false', '--print-monitors', '--log'], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  return { stdout: r.stdout, monitors: r.stdout.slice(r.stdout.indexOf('monitors:')) };
}

describe('local auto-detect', () => {
  before(async () => {
    [db, db2] = await Promise.all([startMariaDB(), startMariaDB()]);
  });
  after(async () => {
    await Promise.all([db?.stop(), db2?.stop()]);
  });

  it('finds its own server by its socket and says why it chose it', async () => {
    const { stdout } = await detect([db.socket]);
    assert.match(stdout, /- id: localhost\n/);
    assert.ok(stdout.includes(`socket: ${db.socket}\n`), stdout);
    assert.match(stdout, /username: root\n/);
    const event = stdout.split('\n').find((l) => l.includes('[monitors-autodetect'));
    assert.ok(event, stdout);
    assert.ok(
      event.includes(
        `chose socket ${db.socket} as root (blip: no candidate accepted it): the only candidate that answered`,
      ),
      event,
    );
  });

  it('with two servers answering, chooses the first in order and names the other', async () => {
    const missing = join(db.datadir, 'no-such.sock');
    const { stdout } = await detect([missing, db2.socket, db.socket]);
    assert.ok(stdout.includes(`socket: ${db2.socket}\n`), stdout);
    const event = stdout.split('\n').find((l) => l.includes('[monitors-autodetect')) ?? '';
    assert.ok(event.includes(`chose socket ${db2.socket} as root`), event);
    assert.ok(event.includes('the first of 2 candidates that answered'), event);
    assert.ok(event.includes(`not chosen: socket ${db.socket}`), event);
    assert.ok(!event.includes(missing), event);
  });

  it('says so when no candidate answers, and runs with no monitor', async () => {
    const { stdout } = await detect([join(db.datadir, 'no-such.sock')]);
    assert.doesNotMatch(stdout, /id: localhost/);
    assert.match(stdout, /\[monitors-autodetect\s*\] \[\] no server answered/);
  });

  it('does not look when monitor-loader.local.disable-auto is set', async () => {
    const [dir, path] = writeConfig(
      'api:\n  disable: true\nmonitor-loader:\n  local:\n    disable-auto: true\n',
    );
    const r = await runSonde(['--config', path, '--run=false', '--print-monitors', '--log'], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /id: localhost/);
    assert.doesNotMatch(r.stdout, /monitors-autodetect/);
  });
});
