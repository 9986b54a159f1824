import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventLog, formatEventLine, redact } from './events.js';

// Each test file runs in its own process: fix the zone so line times are deterministic.
process.env.TZ = 'UTC';

class Collect {
  readonly writes: string[] = [];
  write(text: string): boolean {
    this.writes.push(text);
    return true;
  }
}

const T = new Date(Date.UTC(2024, 6, 19, 10, 0, 0, 123));

function setup(opts: { log?: boolean; debug?: boolean; secrets?: string[] } = {}): {
  ev: EventLog;
  out: Collect;
  err: Collect;
} {
  const out = new Collect();
  const err = new Collect();
  const ev = new EventLog({ ...opts, stdout: out, stderr: err, now: () => T });
  return { ev, out, err };
}

describe('event lines', () => {
  it('prints error events to stderr with ERROR: even without --log', () => {
    const { ev, out, err } = setup();
    ev.error('server-stopped', '', 'caught signal');
    assert.deepEqual(err.writes, [
      '2024/07/19 10:00:00.123000 [server-stopped           ] [] ERROR: caught signal\n',
    ]);
    assert.deepEqual(out.writes, []);
  });

  it('drops info events unless --log or debug is on', () => {
    const { ev, out, err } = setup();
    ev.info('monitor-started', 'db1', 'sonde:...@tcp(db1:3306)/');
    assert.deepEqual(out.writes, []);
    ev.setDebug(true);
    ev.info('monitor-started', 'db1', 'sonde:...@tcp(db1:3306)/');
    assert.deepEqual(out.writes, [
      '2024/07/19 10:00:00.123000 [monitor-started          ] [db1] sonde:...@tcp(db1:3306)/\n',
    ]);
    assert.deepEqual(err.writes, []);
  });

  it('prints info events to stdout with --log, keeping the space before an empty message', () => {
    const { ev, out } = setup({ log: true });
    ev.info('boot-config-loading', '');
    ev.info('boot-start', '', 'sonde 1.4.2');
    assert.deepEqual(out.writes, [
      '2024/07/19 10:00:00.123000 [boot-config-loading      ] [] \n',
      '2024/07/19 10:00:00.123000 [boot-start               ] [] sonde 1.4.2\n',
    ]);
  });

  it('does not cut event names longer than 25 characters', () => {
    assert.equal(
      formatEventLine(T, 'a-very-long-event-name-over-25', 'm', 'x', false),
      '2024/07/19 10:00:00.123000 [a-very-long-event-name-over-25] [m] x',
    );
  });

  it('does not double a trailing newline', () => {
    const { ev, err } = setup();
    ev.error('monitor-error', 'db1', 'oops\n');
    assert.deepEqual(err.writes, [
      '2024/07/19 10:00:00.123000 [monitor-error            ] [db1] ERROR: oops\n',
    ]);
  });

  it('prints debug lines to stderr with the caller file:line only while debugging', () => {
    const { ev, out, err } = setup();
    ev.debug('hidden');
    assert.deepEqual(err.writes, []);
    assert.equal(ev.debugging, false);
    ev.setDebug(true);
    assert.equal(ev.debugging, true);
    ev.debug('plan default-mysql ready');
    assert.equal(err.writes.length, 1);
    assert.match(
      err.writes[0] ?? '',
      /^2024\/07\/19 10:00:00\.123000 DEBUG events\.test\.js:\d+ plan default-mysql ready\n$/,
    );
    ev.setDebug(false);
    ev.debug('hidden again');
    assert.equal(err.writes.length, 1);
    assert.deepEqual(out.writes, []);
  });

  it('starts with debugging on when asked', () => {
    const { ev, out } = setup({ debug: true });
    assert.equal(ev.debugging, true);
    ev.info('server-run', '');
    assert.equal(out.writes.length, 1);
  });

  it('scrubs known secrets from every line', () => {
    const { ev, out, err } = setup({ log: true, secrets: ['hunter2'] });
    ev.addSecret('s3cr:t');
    ev.error('monitor-error', 'db1', 'connect with hunter2 failed');
    ev.info('db-reload-password-error', 'db1', 'dsn u:s3cr%3At@tcp(h)/ and s3cr:t');
    ev.setDebug(true);
    ev.debug('password hunter2');
    assert.equal(
      err.writes[0],
      '2024/07/19 10:00:00.123000 [monitor-error            ] [db1] ERROR: connect with ... failed\n',
    );
    assert.equal(
      out.writes[0],
      '2024/07/19 10:00:00.123000 [db-reload-password-error ] [db1] dsn u:...@tcp(h)/ and ...\n',
    );
    assert.match(err.writes[1] ?? '', / password \.\.\.\n$/);
  });
});

describe('redact', () => {
  it('replaces every occurrence of every secret with ...', () => {
    assert.equal(redact('a pw b pw c', ['pw']), 'a ... b ... c');
    assert.equal(redact('x=abc y=abcdef', ['abc', 'abcdef']), 'x=... y=...');
  });

  it('treats secrets literally, not as patterns', () => {
    assert.equal(redact('p.ss and pass', ['p.ss']), '... and pass');
    assert.equal(redact('a(b)*c', ['(b)*']), 'a...c');
  });

  it('ignores empty secrets and returns the text unchanged without secrets', () => {
    assert.equal(redact('nothing here', ['']), 'nothing here');
    assert.equal(redact('nothing here', []), 'nothing here');
  });

  it('also scrubs the URL-encoded form of a secret', () => {
    assert.equal(redact('u:p%40ss@tcp(h)/', ['p@ss']), 'u:...@tcp(h)/');
  });
});
