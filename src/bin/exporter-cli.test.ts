import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CLI_FLAGS,
  CLI_PLAN,
  ExporterCliError,
  exporterSetup,
  isExporterCommandLine,
  parseExporterCommandLine,
  type ExporterArgs,
} from './exporter-cli.js';

function run(argv: string[]): ExporterArgs {
  const cmd = parseExporterCommandLine(argv);
  assert.equal(cmd.kind, 'run');
  return (cmd as { args: ExporterArgs }).args;
}

function given(argv: string[]): Record<string, readonly string[]> {
  return Object.fromEntries(run(argv).given);
}

function refused(argv: string[]): string {
  try {
    parseExporterCommandLine(argv);
  } catch (err) {
    assert.ok(err instanceof ExporterCliError, String(err));
    return err.message;
  }
  assert.fail(`accepted ${argv.join(' ')}`);
}

describe('which command line sonde reads', () => {
  it('a dotted long flag or --timeout-offset means mysqld_exporter', () => {
    for (const argv of [
      ['--web.listen-address=:9104'],
      ['--config.my-cnf', '/etc/mysql/debian.cnf'],
      ['--no-collect.slave_status'],
      ['--timeout-offset', '1'],
      ['--timeout-offset=1'],
      ['--log.level=debug', '--web.listen-address=:9104'],
      ['--log.format', 'json', '--collect.binlog_size'],
    ])
      assert.equal(isExporterCommandLine(argv), true, argv.join(' '));
  });
  it('--log.level and --log.format alone are read by sonde, not as mysqld_exporter', () => {
    for (const argv of [
      ['--log.level=debug'],
      ['--log.level', 'warn'],
      ['--log.format=json'],
      ['--log.format', 'text', '--log.level=error', '--config', 'a.yaml'],
    ])
      assert.equal(isExporterCommandLine(argv), false, argv.join(' '));
    assert.equal(isExporterCommandLine(['--log.level=info'], '/usr/bin/mysqld_exporter'), true);
  });
  it("sonde's own flags have no dot", () => {
    for (const argv of [[], ['--config', 'a.yaml'], ['--log'], ['--debug', '--run=false'], ['--version']])
      assert.equal(isExporterCommandLine(argv), false, argv.join(' '));
  });
  it('the program name mysqld_exporter or prometheus-mysqld-exporter means mysqld_exporter', () => {
    assert.equal(isExporterCommandLine([], '/usr/bin/prometheus-mysqld-exporter'), true);
    assert.equal(isExporterCommandLine([], '/usr/local/bin/mysqld_exporter'), true);
    assert.equal(isExporterCommandLine([], '/usr/bin/sonde'), false);
  });
});

describe('parseExporterCommandLine', () => {
  it('reads --flag=value and --flag value', () => {
    assert.deepEqual(given(['--web.telemetry-path=/m', '--config.my-cnf', '/x.cnf']), {
      'web.telemetry-path': ['/m'],
      'config.my-cnf': ['/x.cnf'],
    });
  });
  it('bare booleans are true, --no- negates, =true|false is accepted', () => {
    assert.deepEqual(
      given(['--collect.mysql.user', '--no-collect.slave_status', '--exporter.log_slow_filter=false']),
      {
        'collect.mysql.user': ['true'],
        'collect.slave_status': ['false'],
        'exporter.log_slow_filter': ['false'],
      },
    );
  });
  it('numbers parse like kingpin: floats, integers truncated', () => {
    assert.deepEqual(given(['--exporter.lock_wait_timeout=1.9', '--timeout-offset=0.5']), {
      'exporter.lock_wait_timeout': ['1'],
      'timeout-offset': ['0.5'],
    });
    assert.equal(refused(['--exporter.query_timeout=x']), 'strconv.ParseFloat: parsing "x": invalid syntax');
  });
  it('list flags repeat, single flags do not', () => {
    assert.deepEqual(
      given([
        '--collect.perf_schema.eventsstatements.exclude_schemas=a',
        '--collect.perf_schema.eventsstatements.exclude_schemas',
        'b',
      ]),
      { 'collect.perf_schema.eventsstatements.exclude_schemas': ['a', 'b'] },
    );
    assert.equal(
      refused(['--web.telemetry-path=/a', '--web.telemetry-path=/b']),
      "flag 'web.telemetry-path' cannot be repeated",
    );
  });
  it('names what it refuses', () => {
    assert.equal(refused(['--collect.bogus']), "unknown long flag '--collect.bogus'");
    assert.equal(refused(['--config', 'x']), "unknown long flag '--config'");
    assert.equal(refused(['--no-web.telemetry-path']), "unknown long flag '--no-web.telemetry-path'");
    assert.equal(refused(['--web.telemetry-path']), "expected argument for flag '--web.telemetry-path'");
    assert.equal(refused(['stray']), 'unexpected stray');
    assert.equal(refused(['-x']), "unknown short flag '-x'");
    assert.equal(refused(['--no-collect.slave_status=true']), 'unexpected true');
    assert.equal(refused(['--log.level=loud']), 'unrecognized log level "loud"');
    assert.equal(refused(['--log.format=xml']), 'unrecognized log format "xml"');
    assert.equal(refused(['--web.systemd-socket']), '--web.systemd-socket is not supported by sonde');
    assert.equal(
      refused(['--exporter.max_open_connections=0']),
      'invalid value for --exporter.max_open_connections: 0: must be >= 1',
    );
    assert.equal(
      refused(['--exporter.query_timeout=-1']),
      'invalid value for --exporter.query_timeout: -1: must be >= 0',
    );
  });
  it('help and version win wherever they are', () => {
    assert.deepEqual(parseExporterCommandLine(['--collect.slave_status', '-h']), { kind: 'help' });
    assert.deepEqual(parseExporterCommandLine(['--version']), { kind: 'version' });
  });
  it('knows every scraper and sub-flag of mysqld_exporter', () => {
    const names = new Set(CLI_FLAGS.map((f) => f.name));
    for (const n of [
      'collect.info_schema.tables.databases',
      'collect.heartbeat.utc',
      'collect.sys.user_summary',
      'exporter.enable_lock_wait_timeout',
      'tls.insecure-skip-verify',
      'web.config.file',
    ])
      assert.ok(names.has(n), n);
  });
});

describe('exporterSetup', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sonde-cli-unit-'));
  const cnf = (name: string, lines: string[]): string => {
    const p = join(dir, name);
    writeFileSync(p, ['[client]', ...lines, ''].join('\n'));
    return p;
  };
  const env = { HOME: join(dir, 'nohome') };

  it('one legacy monitor, no API, no auto-detection, the upstream plan with collect flags', async () => {
    const path = cnf('a.cnf', ['user=u', 'password=p', 'host=db1', 'port=3307']);
    const s = await exporterSetup(
      run(['--config.my-cnf', path, '--collect.info_schema.processlist', '--no-collect.slave_status']),
      env,
      dir,
    );
    assert.equal(s.config.api?.disable, true);
    assert.equal(s.config['monitor-loader']?.local?.['disable-auto'], true);
    const [m] = s.config.monitors ?? [];
    assert.equal(m?.hostname, 'db1:3307');
    assert.equal(m?.username, 'u');
    assert.equal(m?.password, undefined, "my.cnf's password is read by the connection builder");
    assert.equal(m?.mycnf, path);
    assert.deepEqual(m?.exporter, {
      mode: 'legacy',
      plan: CLI_PLAN,
      flags: { 'web.listen-address': ':9104', 'exporter.query_timeout': '0' },
    });
    const domains = Object.keys(Object.values(s.plan.levels)[0]?.collect ?? {}).sort();
    assert.ok(domains.includes('exporter.info_schema.processlist'));
    assert.ok(!domains.includes('exporter.slave_status'));
    assert.ok(domains.includes('status.global') && domains.includes('var.global'));
  });

  it('the address, user and MYSQLD_EXPORTER_PASSWORD fill what my.cnf leaves empty', async () => {
    const path = cnf('b.cnf', ['port=3310']);
    const s = await exporterSetup(
      run(['--config.my-cnf', path, '--mysqld.address=10.0.0.5:3306', '--mysqld.username=mon']),
      { ...env, MYSQLD_EXPORTER_PASSWORD: 'envpw' },
      dir,
    );
    const [m] = s.config.monitors ?? [];
    assert.equal(m?.hostname, '10.0.0.5:3310');
    assert.equal(m?.username, 'mon');
    assert.equal(m?.password, 'envpw');
    assert.deepEqual(s.secrets, ['envpw']);
  });

  it('a unix:// address is a socket; my.cnf socket wins', async () => {
    const s = await exporterSetup(
      run(['--mysqld.address=unix:///run/mysqld/mysqld.sock', '--mysqld.username=u']),
      env,
      dir,
    );
    assert.equal(s.config.monitors?.[0]?.socket, '/run/mysqld/mysqld.sock');
    const path = cnf('c.cnf', ['user=u', 'socket=/tmp/my.sock']);
    const t = await exporterSetup(run(['--config.my-cnf', path]), env, dir);
    assert.equal(t.config.monitors?.[0]?.socket, '/tmp/my.sock');
  });

  it('other flags become exporter.flags; log.level and log.format set the logs', async () => {
    const s = await exporterSetup(
      run([
        '--mysqld.username=u',
        '--web.listen-address=127.0.0.1:9200',
        '--exporter.query_timeout=4',
        '--timeout-offset=1',
        '--log.level=debug',
      ]),
      env,
      dir,
    );
    assert.deepEqual(s.config.monitors?.[0]?.exporter?.flags, {
      'web.listen-address': '127.0.0.1:9200',
      'exporter.query_timeout': '4',
      'timeout-offset': '1',
    });
    assert.equal(s.logLevel, 'debug');
    assert.equal(s.logFormat, 'text');
    const quiet = await exporterSetup(run(['--mysqld.username=u', '--log.level=error']), env, dir);
    assert.equal(quiet.logLevel, 'error');
    const json = await exporterSetup(run(['--mysqld.username=u', '--log.format=json']), env, dir);
    assert.deepEqual([json.logLevel, json.logFormat], ['info', 'json']);
    const logfmt = await exporterSetup(run(['--mysqld.username=u', '--log.format=logfmt']), env, dir);
    assert.equal(logfmt.logFormat, 'text');
  });

  it('SONDE_LOG_LEVEL and SONDE_LOG_FORMAT fill what the flags leave unset', async () => {
    const e = { ...env, SONDE_LOG_LEVEL: 'warn', SONDE_LOG_FORMAT: 'json' };
    const s = await exporterSetup(run(['--mysqld.username=u']), e, dir);
    assert.deepEqual([s.logLevel, s.logFormat], ['warn', 'json']);
    const flags = await exporterSetup(
      run(['--mysqld.username=u', '--log.level=debug', '--log.format=logfmt']),
      e,
      dir,
    );
    assert.deepEqual([flags.logLevel, flags.logFormat], ['debug', 'text']);
    await assert.rejects(
      exporterSetup(run(['--mysqld.username=u']), { ...env, SONDE_LOG_LEVEL: 'loud' }, dir),
      { message: 'invalid value "loud" for SONDE_LOG_LEVEL; valid values: debug, info, warn, error' },
    );
    await assert.rejects(
      exporterSetup(run(['--mysqld.username=u']), { ...env, SONDE_EVENT_LOOP_STATS: 'maybe' }, dir),
      { message: 'invalid value "maybe" for SONDE_EVENT_LOOP_STATS; valid values: on, off' },
    );
  });

  it('reads .my.cnf of the working directory by default, as mysqld_exporter does; not ~/.my.cnf', async () => {
    const { mkdirSync, writeFileSync, rmSync } = await import('node:fs');
    const cwd = join(dir, 'workdir');
    const home = join(dir, 'home');
    mkdirSync(cwd, { recursive: true });
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, '.my.cnf'), '[client]\nuser=from_home\n');
    writeFileSync(join(cwd, '.my.cnf'), '[client]\nuser=from_cwd\n');
    try {
      const s = await exporterSetup(run([]), { HOME: home }, cwd);
      assert.equal(s.config.monitors?.[0]?.username, 'from_cwd');
      assert.equal(s.config.monitors?.[0]?.mycnf, join(cwd, '.my.cnf'));
      rmSync(join(cwd, '.my.cnf'));
      await assert.rejects(exporterSetup(run([]), { HOME: home }, cwd), { message: /^no MySQL user: / });
    } finally {
      rmSync(cwd, { recursive: true, force: true });
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('errors name the flag', async () => {
    await assert.rejects(exporterSetup(run(['--config.my-cnf', join(dir, 'none.cnf')]), env, dir), {
      message: /^--config\.my-cnf: open .*none\.cnf: no such file or directory$/,
    });
    await assert.rejects(exporterSetup(run(['--mysqld.address=nohost', '--mysqld.username=u']), env, dir), {
      message: /^--mysqld\.address: invalid address "nohost": want host:port$/,
    });
    await assert.rejects(exporterSetup(run([]), env, dir), { message: /^no MySQL user: / });
  });

  it('listens on every --web.listen-address given', async () => {
    const s = await exporterSetup(
      run(['--mysqld.username=u', '--web.listen-address=:1', '--web.listen-address=127.0.0.1:2']),
      env,
      dir,
    );
    assert.equal(s.config.monitors?.[0]?.exporter?.flags?.['web.listen-address'], ':1,127.0.0.1:2');
  });

  it('SONDE_API_BIND turns the API on', async () => {
    const s = await exporterSetup(
      run(['--mysqld.username=u']),
      { ...env, SONDE_API_BIND: '127.0.0.1:7600' },
      dir,
    );
    assert.equal(s.config.api?.bind, '127.0.0.1:7600');
    assert.notEqual(s.config.api?.disable, true);
  });

  it('cleans up', () => rmSync(dir, { recursive: true, force: true }));
});
