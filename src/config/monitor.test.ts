import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config, FinalMonitorConfig, MonitorConfig } from '../core/config.js';
import { ConfigError } from './errors.js';
import { DEFAULT_CONFIG, parseConfig } from './load.js';
import {
  finalizeMonitors,
  finalizePlansMonitor,
  inheritDefaults,
  monitorsEqual,
  validateMonitor,
} from './monitor.js';
import { parseMonitorFile } from './monitor-files.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sonde-monitor-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

function one(
  m: MonitorConfig,
  defaults: Config = DEFAULT_CONFIG,
  env: NodeJS.ProcessEnv = {},
): FinalMonitorConfig {
  const [f] = finalizeMonitors([m], defaults, env, { cwd: dir });
  assert.ok(f);
  return f;
}

describe('inheriting monitor defaults', () => {
  it('fills empty connection fields from mysql, including password-file', () => {
    const d: Config = {
      mysql: {
        socket: '/s',
        hostname: 'h',
        mycnf: '/my.cnf',
        username: 'u',
        password: 'p',
        'password-file': '/pw',
        'timeout-connect': '3s',
      },
    };
    assert.deepEqual(inheritDefaults({ id: 'a', hostname: '' }, d), {
      id: 'a',
      socket: '/s',
      hostname: 'h',
      mycnf: '/my.cnf',
      username: 'u',
      password: 'p',
      'password-file': '/pw',
      'timeout-connect': '3s',
    });
    const own = inheritDefaults({ id: 'a', hostname: 'mine', username: 'me', 'password-file': '/mine' }, d);
    assert.equal(own.hostname, 'mine');
    assert.equal(own.username, 'me');
    assert.equal(own['password-file'], '/mine');
  });

  it('merges tags key by key with the monitor winning', () => {
    const m = inheritDefaults({ tags: { env: 'dev', own: '1' } }, { tags: { env: 'prod', dc: 'x' } });
    assert.deepEqual(m.tags, { env: 'dev', own: '1', dc: 'x' });
  });

  it('never inherits meta, id, plan, plans.table, plans.monitor or plans.disable-default-plans', () => {
    const m = inheritDefaults(
      { meta: { a: '1' } },
      { plans: { table: 'blip.plans', monitor: { hostname: 'x' }, 'disable-default-plans': true } },
    );
    assert.deepEqual(m, { meta: { a: '1' } });
  });

  it('inherits aws strings when empty and aws booleans only when not set', () => {
    const d: Config = {
      aws: {
        'password-secret': 's',
        region: 'r',
        'iam-auth': true,
        'disable-auto-region': true,
        'disable-auto-tls': true,
      },
    };
    assert.deepEqual(inheritDefaults({ aws: { region: 'mine', 'iam-auth': false } }, d).aws, {
      region: 'mine',
      'password-secret': 's',
      'iam-auth': false,
      'disable-auto-region': true,
      'disable-auto-tls': true,
    });
  });

  it('leaves the exporter alone when no mode results', () => {
    const d: Config = { exporter: { plan: 'p', flags: { 'web.listen-address': ':1' } } };
    assert.equal(inheritDefaults({}, d).exporter, undefined);
  });

  it('inherits exporter plan (none when neither names one) and merges flags with monitor keys winning', () => {
    const d: Config = {
      exporter: { mode: 'dual', flags: { 'web.listen-address': ':1', 'web.telemetry-path': '/m' } },
    };
    assert.deepEqual(inheritDefaults({ exporter: { flags: { 'web.listen-address': ':2' } } }, d).exporter, {
      mode: 'dual',
      flags: { 'web.listen-address': ':2', 'web.telemetry-path': '/m' },
    });
    assert.equal(inheritDefaults({}, { exporter: { mode: 'legacy', plan: 'exp' } }).exporter?.plan, 'exp');
    assert.equal(
      inheritDefaults({ exporter: { mode: 'legacy', plan: 'own' } }, { exporter: { plan: 'exp' } }).exporter
        ?.plan,
      'own',
    );
  });

  it('inherits heartbeat keys one by one and defaults the table when freq is set', () => {
    assert.deepEqual(
      inheritDefaults({ heartbeat: { role: 'r' } }, { heartbeat: { freq: '1s', role: 'x' } }).heartbeat,
      {
        role: 'r',
        freq: '1s',
        table: 'blip.heartbeat',
      },
    );
    assert.equal(
      inheritDefaults({ heartbeat: { freq: '1s' } }, { heartbeat: { table: 'db.hb' } }).heartbeat?.table,
      'db.hb',
    );
  });

  it('copies plans.files only when the monitor has none, and change keys one by one', () => {
    const d: Config = {
      plans: {
        files: ['a.yaml', 'b.yaml'],
        change: { active: { after: '1s', plan: 'A' }, offline: { plan: 'O' } },
      },
    };
    assert.deepEqual(inheritDefaults({}, d).plans, {
      files: ['a.yaml', 'b.yaml'],
      change: { active: { after: '1s', plan: 'A' }, offline: { plan: 'O' } },
    });
    assert.deepEqual(
      inheritDefaults({ plans: { files: ['mine.yaml'], change: { active: { plan: 'M' } } } }, d).plans,
      {
        files: ['mine.yaml'],
        change: { active: { after: '1s', plan: 'M' }, offline: { plan: 'O' } },
      },
    );
  });

  it('merges sinks by sink name without merging options', () => {
    const d: Config = { sinks: { log: {}, datadog: { 'api-key-auth': 'k', host: 'h' } } };
    assert.deepEqual(inheritDefaults({ sinks: { datadog: { host: 'mine' } } }, d).sinks, {
      datadog: { host: 'mine' },
      log: {},
    });
  });

  it('inherits tls files when empty and tls booleans only when not set', () => {
    const d: Config = { tls: { ca: 'ca', cert: 'c', key: 'k', 'skip-verify': true, disable: true } };
    assert.deepEqual(inheritDefaults({ tls: { cert: 'mine', disable: false } }, d).tls, {
      cert: 'mine',
      disable: false,
      ca: 'ca',
      key: 'k',
      'skip-verify': true,
    });
  });

  it('does not modify its inputs', () => {
    const m: MonitorConfig = { tags: { a: '1' } };
    const d: Config = { tags: { b: '2' }, sinks: { log: {} } };
    inheritDefaults(m, d);
    assert.deepEqual(m, { tags: { a: '1' } });
    assert.deepEqual(d, { tags: { b: '2' }, sinks: { log: {} } });
  });
});

describe('${ENV} in monitors', () => {
  const cases: [string, NodeJS.ProcessEnv, string][] = [
    ['${HOME}/p.yaml', { HOME: '/h' }, '/h/p.yaml'],
    ['${FOO:-bar}', {}, 'bar'],
    ['x-${FOO:-bar}', {}, 'x-bar'],
    ['${A}-${B}', { A: '1', B: '2' }, '1-2'],
    ['${FOO}', { FOO: '' }, ''],
    ['${FOO:-}', {}, ''],
    ['${FOO:-bar}', { FOO: '' }, 'bar'],
    ['${X:-http://h}', { X: 'v' }, '${X:-http://h}'],
  ];
  for (const [input, env, want] of cases) {
    it(`turns ${input} with ${JSON.stringify(env)} into "${want}"`, () => {
      assert.equal(one({ id: 'm', tags: { v: input } }, DEFAULT_CONFIG, env).tags?.v, want);
    });
  }

  it('refuses an unset variable, naming the monitor and the key when the file is not known', () => {
    assert.throws(() => one({ id: 'm', sinks: { otlp: { endpoint: '${OTLP}' } } }, DEFAULT_CONFIG, {}), {
      name: 'ConfigError',
      message:
        'monitor m: key sinks.otlp.endpoint: environment variable OTLP is not set (use ${OTLP:-default} for a default)',
    });
  });

  it('refuses an unset variable in a monitor of the config file, naming the file and key path', () => {
    const c = parseConfig('monitors:\n  - id: a\n  - hostname: "${DB_HOST}"\n', {
      path: '/etc/s.yaml',
      env: {},
    });
    assert.throws(() => finalizeMonitors(c.monitors ?? [], c, {}), {
      message:
        '/etc/s.yaml: key monitors[1].hostname: environment variable DB_HOST is not set (use ${DB_HOST:-default} for a default)',
    });
  });

  it('refuses an unset variable in a monitor file, naming the file and key path', () => {
    const [m] = parseMonitorFile('username: "${U}"\n', 'mon.yaml');
    assert.throws(() => finalizeMonitors([m!], DEFAULT_CONFIG, {}), {
      message: 'mon.yaml: key username: environment variable U is not set (use ${U:-default} for a default)',
    });
  });

  it('runs after inheritance, so defaults are interpolated per monitor', () => {
    const env = { DIR: '/certs' };
    const d = parseConfig('tls: {ca: "${DIR}/%{monitor.hostname}.pem", disable: true}', { env });
    assert.equal(d.tls?.ca, '/certs/%{monitor.hostname}.pem');
    const ms = finalizeMonitors([{ hostname: 'db1' }, { hostname: 'db2' }], d, env, { cwd: dir });
    assert.deepEqual(
      ms.map((m) => m.tls?.ca),
      ['/certs/db1.pem', '/certs/db2.pem'],
    );
  });
});

describe('%{monitor.*}', () => {
  it('resolves fields, tags and meta, keeping surrounding text and inserting values literally', () => {
    const m = one({
      id: 'db1',
      hostname: 'db1.example.com:3307',
      username: 'u-$1',
      tags: { host: 'host=%{monitor.hostname}', who: '%{monitor.USERNAME}', nope: '[%{monitor.bogus}]' },
      meta: { dc: 'east' },
      heartbeat: { freq: '1s', role: '%{monitor.meta.dc}-%{monitor.tags.missing}-x' },
      sinks: { log: { prefix: '%{monitor.id}.' } },
      plan: 'plan-%{monitor.meta.dc}',
    });
    assert.deepEqual(m.tags, { host: 'host=db1.example.com:3307', who: 'u-$1', nope: '[]' });
    assert.equal(m.heartbeat?.role, 'east--x');
    assert.deepEqual(m.sinks, { log: { prefix: 'db1.' } });
    assert.equal(m.plan, 'plan-east');
  });

  it('lets tags read the hostname and the hostname read a literal tag', () => {
    assert.equal(one({ tags: { h: 'db7' }, hostname: '%{monitor.tags.h}' }).hostname, 'db7');
    assert.equal(one({ hostname: 'db8', tags: { h: '%{monitor.hostname}' } }).tags?.h, 'db8');
  });

  it('resolves %{monitor.id} to the derived id', () => {
    const m = one({ hostname: 'db1:3306', heartbeat: { freq: '1s', 'source-id': '%{monitor.id}' } });
    assert.equal(m.id, 'db1:3306');
    assert.equal(m.heartbeat?.['source-id'], 'db1:3306');
    const d = parseConfig('tags: {monitor: "%{monitor.monitor-id}"}', { env: {} });
    assert.deepEqual(finalizeMonitors([{ socket: '/tmp/a.sock' }], d, {}, { cwd: dir })[0]?.tags, {
      monitor: '/tmp/a.sock',
    });
  });

  it('does not apply to plans.change.*.after', () => {
    assert.throws(
      () =>
        one({ id: 'x', meta: { t: '1s' }, plans: { change: { active: { after: '%{monitor.meta.t}' } } } }),
      {
        message:
          'monitor x: invalid config.plans.change.active.after: %{monitor.meta.t}: time: invalid duration "%{monitor.meta.t}"',
      },
    );
    assert.equal(
      one({ id: 'x', plans: { change: { active: { after: '${T}' } } } }, DEFAULT_CONFIG, { T: '2s' }).plans
        ?.change?.active?.after,
      '2s',
    );
  });
});

describe('monitor id', () => {
  it('is the explicit id, else the hostname as written, else the socket, else ""', () => {
    assert.equal(one({ id: 'mine', hostname: 'h' }).id, 'mine');
    assert.equal(one({ hostname: 'db1:3307', socket: '/s' }).id, 'db1:3307');
    assert.equal(one({ socket: '/var/run/mysqld/mysqld.sock' }).id, '/var/run/mysqld/mysqld.sock');
    assert.equal(one({}).id, '');
  });

  it('counts inherited hostname and socket', () => {
    assert.equal(one({}, { mysql: { hostname: 'dflt' } }).id, 'dflt');
    assert.equal(one({}, { mysql: { socket: '/dflt.sock' } }).id, '/dflt.sock');
  });

  it('comes from my.cnf [client] host:port or socket when nothing else is set', async () => {
    const a = join(dir, 'a.cnf');
    const b = join(dir, 'b.cnf');
    const c = join(dir, 'c.cnf');
    await writeFile(a, '[mysql]\nhost=wrong\n[client]\nhost = db5\nport = 3310\n');
    await writeFile(b, '[client]\nsocket=/tmp/b.sock\n');
    await writeFile(c, '[client]\nuser=u\n');
    assert.equal(one({ mycnf: a }).id, 'db5:3310');
    assert.equal(one({ mycnf: b }).id, '/tmp/b.sock');
    const warnings: string[] = [];
    const warn = (w: string): number => warnings.push(w);
    assert.equal(finalizeMonitors([{ mycnf: c }], {}, {}, { warn, cwd: dir })[0]?.id, '');
    const missing = join(dir, 'missing.cnf');
    assert.equal(finalizeMonitors([{ mycnf: missing }], {}, {}, { warn, cwd: dir })[0]?.id, '');
    assert.deepEqual(warnings, [
      `monitor with mycnf ${c} has no id: set id, or host or socket in its [client] section`,
      `monitor with mycnf ${missing} has no id: open ${missing}: no such file or directory`,
    ]);
  });

  it('fails the load on a duplicate id across monitors', () => {
    assert.throws(
      () => finalizeMonitors([{ hostname: 'db1' }, { id: 'db1', socket: '/x' }], {}, {}),
      (err: unknown) => {
        return err instanceof ConfigError && err.message === 'duplicate monitor id: db1';
      },
    );
    assert.throws(() => finalizeMonitors([{}, {}], {}, {}), { message: 'duplicate monitor id: ' });
  });
});

describe('validateMonitor', () => {
  it('applies the section checks to the monitor, prefixed with its id', async () => {
    const v = (m: FinalMonitorConfig): void => validateMonitor(m, { cwd: dir });
    assert.throws(() => v({ id: 'a', exporter: { mode: 'x' } }), {
      message: 'monitor a: invalid config.exporter.mode: x; valid values: dual, legacy',
    });
    assert.throws(() => v({ id: 'a', heartbeat: { freq: '0' } }), {
      message: 'monitor a: invalid config.heartbeat.freq: 0: must be greater than zero',
    });
    assert.throws(() => v({ id: 'a', heartbeat: { role: 'r' } }), {
      message:
        'monitor a: invalid config.heartbeat: freq is not set but other values are set; set freq to enable heartbeat',
    });
    assert.throws(() => v({ id: 'a', 'timeout-connect': '5' }), {
      message: 'monitor a: invalid config.timeout-connect: 5: time: missing unit in duration "5"',
    });
    assert.throws(() => v({ id: 'a', tls: { ca: 'no.pem' } }), {
      message: 'monitor a: config.tls.ca: no.pem: file does not exist',
    });
    await writeFile(join(dir, 'k.pem'), 'k');
    assert.throws(() => v({ id: 'a', tls: { key: 'k.pem' } }), {
      message: 'monitor a: config.tls: missing cert (cert and key are mutually dependent)',
    });
    assert.doesNotThrow(() =>
      v({ id: 'a', tls: { key: 'k.pem', disable: true }, heartbeat: { freq: '1s' } }),
    );
  });

  it('database-type: mysql (the default) and database-config are accepted; another type names the key', () => {
    const m = parseConfig(
      'monitors:\n  - id: a\n    database-type: mysql\n    database-config:\n      charset: ${CS}\n  - id: b\n',
      { env: {} },
    ).monitors;
    const [a, b] = finalizeMonitors(m ?? [], {}, { CS: 'utf8mb4' });
    assert.equal(a?.['database-type'], 'mysql');
    assert.deepEqual(a?.['database-config'], { charset: 'utf8mb4' });
    assert.equal(b?.['database-type'], undefined);
    let err: unknown;
    try {
      finalizeMonitors([{ id: 'pg', 'database-type': 'postgres' }], {}, {});
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof ConfigError);
    assert.equal(err.key, 'database-type');
    assert.equal(
      err.message,
      'monitor pg: invalid database-type: postgres; valid values: mysql (sonde monitors MySQL and MariaDB)',
    );
  });

  it('runs during finalization', () => {
    assert.throws(() => finalizeMonitors([{ hostname: 'db1', exporter: { mode: 'nope' } }], {}, {}), {
      message: 'monitor db1: invalid config.exporter.mode: nope; valid values: dual, legacy',
    });
  });
});

describe('monitorsEqual', () => {
  it('compares finalized values, not key order or undefined members', () => {
    const d = parseConfig('tls: {skip-verify: true}\ntags: {a: "1"}\nsinks: {log: }', { env: {} });
    const [a] = finalizeMonitors([{ hostname: 'db1', tags: { b: '2' } }], d, {});
    const [b] = finalizeMonitors([{ tags: { b: '2' }, hostname: 'db1', password: undefined }], d, {});
    assert.ok(a && b);
    assert.ok(monitorsEqual(a, b));
    const [c] = finalizeMonitors([{ hostname: 'db1', tags: { b: '3' } }], d, {});
    assert.ok(c);
    assert.equal(monitorsEqual(a, c), false);
    assert.equal(monitorsEqual({ id: 'x', sinks: { log: {} } }, { id: 'x' }), false);
    assert.equal(monitorsEqual({ id: 'x', tls: { disable: false } }, { id: 'x', tls: {} }), false);
    assert.ok(
      monitorsEqual({ id: 'x', plans: { files: ['a', 'b'] } }, { id: 'x', plans: { files: ['a', 'b'] } }),
    );
    assert.equal(
      monitorsEqual({ id: 'x', plans: { files: ['a', 'b'] } }, { id: 'x', plans: { files: ['b', 'a'] } }),
      false,
    );
  });
});

describe('finalizePlansMonitor', () => {
  it('applies only the mysql defaults and interpolation to plans.monitor', () => {
    const c = parseConfig(
      'mysql: {username: mon, password: pw}\ntags: {a: "1"}\nplans: {table: blip.plans, monitor: {hostname: "${H}"}}',
      { env: {} },
    );
    assert.deepEqual(finalizePlansMonitor(c, { H: 'plansdb' }), {
      id: 'plansdb',
      hostname: 'plansdb',
      username: 'mon',
      password: 'pw',
      'timeout-connect': '10s',
    });
    assert.equal(finalizePlansMonitor(DEFAULT_CONFIG), undefined);
  });
});
