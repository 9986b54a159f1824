import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentEvent } from '../core/events.js';
import { ErrorGate } from '../monitor/error-gate.js';
import { FakeClock } from '../util/fake-clock.fixture.js';
import { EventLog, formatEventLine, loadJsonFormat, redact, type EventLogOptions } from './event-log.js';

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

function setup(opts: Omit<EventLogOptions, 'stdout' | 'stderr' | 'now'> = {}): {
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
      /^2024\/07\/19 10:00:00\.123000 DEBUG event-log\.test\.js:\d+ plan default-mysql ready\n$/,
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

/** One of each kind of line, in this order. */
function everyKind(ev: EventLog): void {
  ev.error('monitor-error', 'db1', 'e');
  ev.notice('server-stopped', '', 'n');
  ev.warn('plan-freq-warning', 'db1', 'w');
  ev.info('monitor-started', 'db1', 'i');
  ev.debug('d');
}

/** The kinds printed, read back from the text lines of both streams. */
function kinds(out: Collect, err: Collect): string[] {
  return [...out.writes, ...err.writes]
    .map((l) => /(?:ERROR: (e)|\] (n|w|i)|DEBUG \S+ (d))\n$/.exec(l)?.slice(1).join('') ?? l)
    .sort();
}

describe('levels', () => {
  const cases: [string, Omit<EventLogOptions, 'stdout' | 'stderr' | 'now'>, string[]][] = [
    ['no flag (Blip): errors and notices', {}, ['e', 'n']],
    ['error', { level: 'error' }, ['e', 'n']],
    ['warn', { level: 'warn' }, ['e', 'n', 'w']],
    ['info', { level: 'info' }, ['e', 'i', 'n', 'w']],
    ['--log', { log: true }, ['e', 'i', 'n', 'w']],
    ['debug', { level: 'debug' }, ['d', 'e', 'i', 'n', 'w']],
    ['--debug', { debug: true }, ['d', 'e', 'i', 'n', 'w']],
    ['--log.level wins over --log', { log: true, level: 'error' }, ['e', 'n']],
    ['--debug over level warn', { debug: true, level: 'warn' }, ['d', 'e', 'i', 'n', 'w']],
  ];
  for (const [name, opts, want] of cases)
    it(`${name}: ${want.join(' ')}`, () => {
      const { ev, out, err } = setup(opts);
      everyKind(ev);
      assert.deepEqual(kinds(out, err), want);
    });

  it('switching debugging off returns to the configured level', () => {
    for (const [opts, want] of [
      [{ level: 'debug' }, ['e', 'i', 'n', 'w']],
      [{ debug: true }, ['e', 'n']],
      [{ debug: true, level: 'warn' }, ['e', 'n', 'w']],
    ] as const) {
      const { ev, out, err } = setup(opts);
      ev.setDebug(false);
      everyKind(ev);
      assert.deepEqual(kinds(out, err), want, JSON.stringify(opts));
      ev.setDebug(true);
      ev.debug('d');
      assert.equal(err.writes.filter((l) => / DEBUG /.test(l)).length, 1);
    }
  });

  it('warnings print as info lines on stdout in the text format', () => {
    const { ev, out, err } = setup({ level: 'warn' });
    ev.warn('plan-freq-warning', 'db1', 'p: level l: freq 1500ms is not a whole number of seconds');
    assert.deepEqual(out.writes, [
      '2024/07/19 10:00:00.123000 [plan-freq-warning        ] [db1] p: level l: freq 1500ms is not a whole number of seconds\n',
    ]);
    assert.deepEqual(err.writes, []);
  });

  it('builds a debug message given as a function only while debugging', () => {
    const { ev, err } = setup();
    let built = 0;
    const message = (): string => `built ${++built}`;
    ev.debug(message, 'db1');
    assert.equal(built, 0);
    ev.setDebug(true);
    ev.debug(message, 'db1');
    assert.equal(built, 1);
    assert.match(err.writes[0] ?? '', / DEBUG event-log\.test\.js:\d+ \[db1\] built 1\n$/);
  });
});

/** Every line of the stream parsed as JSON (each write one line). */
function parsed(c: Collect): Record<string, unknown>[] {
  const text = c.writes.join('');
  assert.ok(text === '' || text.endsWith('\n'));
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('JSON lines', () => {
  before(loadJsonFormat);

  const json = (opts: Omit<EventLogOptions, 'stdout' | 'stderr' | 'now' | 'format'> = {}) =>
    setup({ ...opts, format: 'json' });

  it('one object per line with time, level, event, monitor and message, all on stderr', () => {
    const { ev, out, err } = json({ level: 'debug' });
    assert.equal(ev.format, 'json');
    everyKind(ev);
    ev.info('boot-start', '', 'sonde 0.1.0');
    assert.deepEqual(out.writes, []);
    assert.equal(err.writes.length, 6);
    const lines = parsed(err);
    assert.deepEqual(
      lines.map((l) => [l.level, l.event, l.monitor, l.message]),
      [
        ['error', 'monitor-error', 'db1', 'e'],
        ['notice', 'server-stopped', undefined, 'n'],
        ['warn', 'plan-freq-warning', 'db1', 'w'],
        ['info', 'monitor-started', 'db1', 'i'],
        ['debug', 'debug', undefined, 'd'],
        ['info', 'boot-start', undefined, 'sonde 0.1.0'],
      ],
    );
    for (const l of lines) {
      assert.equal(l.time, '2024-07-19T10:00:00.123+00:00');
      assert.equal(Date.parse(String(l.time)), T.getTime());
      assert.match(String(l.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d$/);
    }
    assert.match(String(lines[4]?.caller), /^event-log\.test\.js:\d+$/);
    assert.equal(lines[0]?.caller, undefined);
    assert.deepEqual(Object.keys(lines[0] ?? {}).sort(), ['event', 'level', 'message', 'monitor', 'time']);
  });

  it('the time carries the local zone offset', () => {
    const saved = process.env.TZ;
    process.env.TZ = 'America/Sao_Paulo'; // UTC−3, no daylight saving since 2019
    try {
      const { ev, err } = json();
      ev.error('monitor-error', 'db1', 'x');
      const [line] = parsed(err);
      assert.equal(line?.time, '2024-07-19T07:00:00.123-03:00');
      assert.equal(Date.parse(String(line?.time)), T.getTime());
    } finally {
      process.env.TZ = saved;
    }
  });

  it('filters by level as the text format does', () => {
    const { ev, err } = json({ level: 'error' });
    everyKind(ev);
    assert.deepEqual(
      parsed(err).map((l) => l.level),
      ['error', 'notice'],
    );
  });

  it('keeps the message as it is: quotes, newlines inside, printf patterns; drops a trailing newline', () => {
    const { ev, err } = json({ log: true });
    ev.info('monitor-started', 'db1', 'a "quoted" %s %d \\ line\nnext\n');
    ev.info('server-run', '');
    const lines = parsed(err);
    assert.equal(lines[0]?.message, 'a "quoted" %s %d \\ line\nnext');
    assert.equal(lines[1]?.message, '');
  });

  it('never shows a secret, in any field or line kind', () => {
    const pw = 'pa"ss\\w0rd';
    const { ev, err } = json({ level: 'debug', secrets: [pw] });
    ev.addSecret('hunter2');
    ev.error('monitor-error', 'db1', `connect with ${pw} failed`);
    ev.info('db-reload-password-error', 'db1', `u:${encodeURIComponent(pw)}@tcp(h)/ and hunter2`);
    ev.notice('server-reload', '', `hunter2 ${pw}`);
    ev.warn('plan-freq-warning', 'hunter2', 'x');
    ev.debug(() => `password ${pw}`, 'db1');
    const text = err.writes.join('');
    for (const form of [pw, JSON.stringify(pw).slice(1, -1), encodeURIComponent(pw), 'hunter2'])
      assert.ok(!text.includes(form), `${form} in ${text}`);
    assert.deepEqual(
      parsed(err).map((l) => l.message),
      ['connect with ... failed', 'u:...@tcp(h)/ and ...', '... ...', 'x', 'password ...'],
    );
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

describe('event stream', () => {
  it('delivers every event at every level, printed or not, but no debug line', () => {
    const { ev, out, err } = setup(); // level error: info and warn are not printed
    const got: AgentEvent[] = [];
    ev.subscribe((e) => got.push(e));
    everyKind(ev);
    assert.deepEqual(
      got.map((e) => [e.level, e.name, e.monitorId, e.message]),
      [
        ['error', 'monitor-error', 'db1', 'e'],
        ['notice', 'server-stopped', '', 'n'],
        ['warn', 'plan-freq-warning', 'db1', 'w'],
        ['info', 'monitor-started', 'db1', 'i'],
      ],
    );
    assert.ok(got.every((e) => e.time.getTime() === T.getTime()));
    assert.deepEqual(kinds(out, err), ['e', 'n'], 'printing still follows the level');
  });

  it('delivers after printing', () => {
    const { ev, err } = setup();
    const printedBefore: number[] = [];
    ev.subscribe(() => printedBefore.push(err.writes.length));
    ev.error('monitor-error', 'db1', 'x');
    assert.deepEqual(printedBefore, [1]);
  });

  it('stops delivering to a listener once it unsubscribes; the others go on', () => {
    const { ev } = setup();
    const a: string[] = [];
    const b: string[] = [];
    const offA = ev.subscribe((e) => a.push(e.name));
    ev.subscribe((e) => b.push(e.name));
    ev.info('server-run', '');
    offA();
    offA(); // twice is harmless
    ev.info('boot-success', '', 'booted in 1s, loaded 0 monitors');
    assert.deepEqual(a, ['server-run']);
    assert.deepEqual(b, ['server-run', 'boot-success']);
  });

  it('the same function subscribed twice gets each event twice, and one unsubscribe removes one', () => {
    const { ev } = setup();
    const got: string[] = [];
    const f = (e: AgentEvent): void => void got.push(e.name);
    const off = ev.subscribe(f);
    ev.subscribe(f);
    ev.info('server-run', '');
    off();
    ev.info('boot-success', '');
    assert.deepEqual(got, ['server-run', 'server-run', 'boot-success']);
  });

  it('a listener that throws breaks neither the emitter nor the others, and is reported once', () => {
    const { ev, err } = setup();
    const seen: string[] = [];
    ev.subscribe(() => {
      throw new TypeError('listener bug');
    });
    ev.subscribe((e) => seen.push(e.name));
    ev.info('server-run', '');
    ev.info('boot-success', '');
    ev.error('monitor-error', 'db1', 'x');
    assert.deepEqual(seen, ['server-run', 'event-listener-error', 'boot-success', 'monitor-error']);
    const reports = err.writes.filter((l) => l.includes('[event-listener-error'));
    assert.equal(reports.length, 1);
    assert.match(
      reports[0] ?? '',
      /ERROR: an event listener threw \(later failures not reported\): TypeError: listener bug\n$/,
    );
  });

  it('listeners that throw on the report itself do not loop', () => {
    const { ev, err } = setup();
    let calls = 0;
    for (let i = 0; i < 3; i++)
      ev.subscribe(() => {
        calls++;
        throw new Error(`listener ${i}`);
      });
    ev.info('server-run', '');
    assert.equal(err.writes.filter((l) => l.includes('[event-listener-error')).length, 3);
    assert.ok(calls < 20, `${calls} calls`);
  });

  it('a listener whose promise rejects is reported too', async () => {
    const { ev, err } = setup();
    const asyncListener = async (): Promise<void> => {
      await Promise.resolve();
      throw new Error('async listener failed');
    };
    // An async listener: subscribe does not await it, but watches its promise for a rejection.
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the returned promise is the point
    ev.subscribe(asyncListener);
    ev.info('server-run', '');
    await new Promise((r) => setImmediate(r));
    assert.match(
      err.writes.join(''),
      /\[event-listener-error\s*\] \[\] ERROR: .*: Error: async listener failed\n/,
    );
  });

  it('scrubs secrets from the message and the monitor id before delivering', () => {
    const { ev } = setup({ secrets: ['hunter2'] });
    ev.addSecret('pa@ss');
    const got: AgentEvent[] = [];
    ev.subscribe((e) => got.push(e));
    ev.error('monitor-error', 'hunter2', 'connect u:pa%40ss@tcp(h)/ with hunter2 failed\n');
    ev.info('db-reload-password-error', 'db1', 'pa@ss');
    assert.deepEqual(
      got.map((e) => [e.monitorId, e.message]),
      [
        ['...', 'connect u:...@tcp(h)/ with ... failed'],
        ['db1', '...'],
      ],
    );
  });

  it('builds nothing for an unprinted event while nobody subscribes', () => {
    let reads = 0;
    const ev = new EventLog({ stdout: new Collect(), stderr: new Collect(), now: () => (reads++, T) });
    ev.info('server-run', '');
    ev.warn('plan-freq-warning', 'db1', 'w');
    assert.equal(reads, 0, 'not even the clock is read');
    const off = ev.subscribe(() => undefined);
    ev.info('server-run', '');
    assert.equal(reads, 1);
    off();
    ev.info('server-run', '');
    assert.equal(reads, 1);
  });

  it('unprinted events reach the subscribers only', () => {
    const { ev, out, err } = setup({ log: true });
    ev.unprinted('error', 'collector-error', 'db1', 'held');
    const got: string[] = [];
    ev.subscribe((e) => got.push(`${e.level} ${e.name} ${e.message}`));
    ev.unprinted('error', 'collector-error', 'db1', 'held');
    assert.deepEqual(got, ['error collector-error held']);
    assert.deepEqual([...out.writes, ...err.writes], []);
  });

  it('an error line the monitor error gate holds back still reaches the stream', () => {
    const { ev, err } = setup();
    const gate = new ErrorGate(ev, new FakeClock(), () => 0.5);
    const got: string[] = [];
    ev.subscribe((e) => got.push(`${e.name} ${e.message}`));
    gate.error('collector-error', 'db1', 'first');
    gate.error('collector-error', 'db1', 'second'); // within the gate's first second: held back
    assert.equal(err.writes.length, 1, 'the second line is held back');
    assert.deepEqual(got, ['collector-error first', 'collector-error second']);
  });
});

describe('--debug prints every event', () => {
  for (const format of ['text', 'json'] as const)
    it(`${format}: error, notice, warn, info and debug lines all print while debugging`, () => {
      const { ev, out, err } = setup({ debug: true, format });
      everyKind(ev);
      if (format === 'text') {
        assert.deepEqual(kinds(out, err), ['d', 'e', 'i', 'n', 'w']);
        assert.equal(out.writes.length, 3, 'notice, warn and info on stdout');
      } else {
        assert.deepEqual(
          parsed(err).map((l) => l.level),
          ['error', 'notice', 'warn', 'info', 'debug'],
        );
      }
    });
});

describe('event receiver (the output replaced) and hidden events', () => {
  it('a receiver gets every event at every level instead of the printed lines; listeners still get them', () => {
    const got: AgentEvent[] = [];
    const heard: string[] = [];
    const { ev, out, err } = setup({ receiver: (e) => void got.push(e), secrets: ['s3cret'] });
    ev.subscribe((e) => void heard.push(e.name));
    ev.info('boot-start', '', 'sonde 1');
    ev.error('collector-error', 'db1', 'bad password s3cret');
    ev.warn('plans-load-shared', '', 'w');
    assert.deepEqual(out.writes, []);
    assert.deepEqual(err.writes, []);
    assert.deepEqual(
      got.map((e) => [e.level, e.name, e.monitorId, e.message]),
      [
        ['info', 'boot-start', '', 'sonde 1'],
        ['error', 'collector-error', 'db1', 'bad password ...'],
        ['warn', 'plans-load-shared', '', 'w'],
      ],
    );
    assert.equal(got[0]?.time.getTime(), T.getTime());
    assert.deepEqual(heard, ['boot-start', 'collector-error', 'plans-load-shared']);
  });

  it('debug lines still print while debugging with a receiver', () => {
    const { ev, err } = setup({ receiver: () => undefined, debug: true });
    ev.debug('a debug line');
    assert.equal(err.writes.length, 1);
    assert.match(err.writes[0] ?? '', / DEBUG .*a debug line\n$/);
  });

  it('a receiver that throws is reported once on stderr and keeps receiving', () => {
    let n = 0;
    const { ev, err } = setup({
      receiver: () => {
        n++;
        throw new Error('down');
      },
    });
    ev.error('collector-error', 'db1', 'x');
    ev.error('collector-error', 'db1', 'y');
    assert.equal(n, 2);
    assert.deepEqual(err.writes, [
      '2024/07/19 10:00:00.123000 [event-listener-error     ] [] ERROR: the event receiver threw (later failures not reported): Error: down\n',
    ]);
  });

  it('hidden events are not printed, in text or JSON, but reach the listeners', () => {
    for (const format of ['text', 'json'] as const) {
      const heard: string[] = [];
      const { ev, out, err } = setup({ hide: ['boot-config-invalid'], format });
      ev.subscribe((e) => void heard.push(`${e.level} ${e.name}`));
      ev.error('boot-config-invalid', '', 'invalid config.api.bind');
      ev.error('boot-error', '', 'other');
      assert.deepEqual(heard, ['error boot-config-invalid', 'error boot-error'], format);
      assert.deepEqual(out.writes, [], format);
      assert.equal(err.writes.length, 1, format);
      assert.match(err.writes[0] ?? '', /boot-error/, format);
    }
  });
});

describe('the JSON format’s writer', () => {
  it('is imported only when asked for: before loadJsonFormat a JSON EventLog is refused', async () => {
    const { execFile } = await import('node:child_process');
    const mod = new URL('./event-log.js', import.meta.url).href;
    const script = [
      `const m = await import(${JSON.stringify(mod)});`,
      "new m.EventLog({ format: 'text', stdout: { write() {} } }).info('boot-start', '', 'text needs no writer');",
      "try { new m.EventLog({ format: 'json' }); console.log('made'); } catch (e) { console.log(e.message); }",
      'await m.loadJsonFormat();',
      "const lines = []; new m.EventLog({ format: 'json', stderr: { write: (t) => lines.push(t) } }).error('boot-error', '', 'x');",
      'console.log(JSON.parse(lines[0]).event);',
    ].join('\n');
    const { promisify } = await import('node:util');
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script]);
    assert.equal(
      stdout,
      'EventLog: the JSON format is not loaded (await loadJsonFormat() first)\nboot-error\n',
    );
  });
});
