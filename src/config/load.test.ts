import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, DEFAULT_CONFIG, loadConfig, mergeConfig, parseConfig, validateConfig } from './load.js';
import type { Config } from '../core/config.js';
import { MAX_YAML_BYTES } from './decode.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sonde-config-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Write a config file in a fresh sub-directory and return [dir, absolute path]. */
async function writeConfig(name: string, text: string, file = 'sonde.yaml'): Promise<[string, string]> {
  const d = join(dir, name);
  await mkdir(d, { recursive: true });
  const p = join(d, file);
  await writeFile(p, text);
  return [d, p];
}

function decodeError(text: string): ConfigError {
  try {
    parseConfig(text, { path: '/abs/sonde.yaml', env: {} });
  } catch (err) {
    assert.ok(err instanceof ConfigError, `not a ConfigError: ${String(err)}`);
    assert.ok(!err.message.includes('\n'), 'message must be one line');
    return err;
  }
  assert.fail('no error');
}

describe('strict decoding', () => {
  it('names file, line and key path of an unknown key inside a monitor', () => {
    const err = decodeError(
      [
        'api:',
        '  bind: ":9000"',
        'monitors:',
        '  - id: db1',
        '    hostname: db1',
        '  - id: db2',
        '    hostnme: db2',
        '',
      ].join('\n'),
    );
    assert.equal(
      err.message,
      'cannot decode YAML in /abs/sonde.yaml: line 7: unknown key monitors[1].hostnme (did you mean hostname?)',
    );
    assert.equal(err.kind, 'load');
    assert.equal(err.line, 7);
    assert.equal(err.key, 'monitors[1].hostnme');
    assert.equal(err.code, 'CONFIG_INVALID');
  });

  it('suggests the key meant for a typo, at any depth', () => {
    assert.equal(
      decodeError('monitors:\n  - id: a\n    hostnme: db1\n').message,
      'cannot decode YAML in /abs/sonde.yaml: line 3: unknown key monitors[0].hostnme (did you mean hostname?)',
    );
    assert.equal(
      decodeError('mysql:\n  pasword: x\n').message,
      'cannot decode YAML in /abs/sonde.yaml: line 2: unknown key mysql.pasword (did you mean password?)',
    );
  });

  it('names the file and line of a value that fails validation, and the value meant', () => {
    let caught: unknown;
    try {
      parseConfig('api:\n  bind: 127.0.0.1:0\nexporter:\n  mode: duel\n', {
        path: '/abs/sonde.yaml',
        env: {},
      });
    } catch (err) {
      caught = err;
    }
    assert.ok(caught instanceof ConfigError);
    assert.equal(
      caught.message,
      '/abs/sonde.yaml: line 4: invalid config.exporter.mode: duel (did you mean dual?); valid values: dual, legacy',
    );
    assert.equal(caught.line, 4);
  });

  it('rejects an unknown top-level key and an unknown key in a section', () => {
    assert.equal(
      decodeError('api:\n  bind: x\nhttps:\n  proxy: y\n').message,
      'cannot decode YAML in /abs/sonde.yaml: line 3: unknown key https (did you mean http?)',
    );
    assert.equal(
      decodeError('heartbeat:\n  freq: 1s\n  source: x\n').message,
      'cannot decode YAML in /abs/sonde.yaml: line 3: unknown key heartbeat.source',
    );
    assert.equal(
      decodeError('aws:\n  auth-token: true\n').message,
      'cannot decode YAML in /abs/sonde.yaml: line 2: unknown key aws.auth-token',
    );
    assert.equal(
      decodeError('ha:\n  x: 1\n').message,
      'cannot decode YAML in /abs/sonde.yaml: line 2: unknown key ha.x',
    );
  });

  it('reports the earliest problem in the file when there are several', () => {
    assert.equal(
      decodeError('tls:\n  bogus: 1\napi:\n  nope: 2\n').message,
      'cannot decode YAML in /abs/sonde.yaml: line 2: unknown key tls.bogus',
    );
  });

  it('rejects a duplicate key with its line and path', () => {
    const err = decodeError('monitors:\n  - id: a\n    tags:\n      x: "1"\n      x: "2"\n');
    assert.equal(
      err.message,
      'cannot decode YAML in /abs/sonde.yaml: line 5: duplicate key monitors[0].tags.x',
    );
    assert.equal(
      decodeError('api:\n  bind: a\napi:\n  bind: b\n').message,
      'cannot decode YAML in /abs/sonde.yaml: line 3: duplicate key api',
    );
  });

  it('rejects a wrong type with the expected and found kinds', () => {
    assert.equal(
      decodeError('api:\n  disable: 1\n').message,
      'cannot decode YAML in /abs/sonde.yaml: line 2: wrong type for key api.disable: expected boolean, got number',
    );
    assert.equal(
      decodeError('plans:\n  files: plan.yaml\n').message,
      'cannot decode YAML in /abs/sonde.yaml: line 2: wrong type for key plans.files: expected list, got string',
    );
    assert.equal(
      decodeError('monitors:\n  - id: a\n    tls:\n      disable: "yes"\n').message,
      'cannot decode YAML in /abs/sonde.yaml: line 4: wrong type for key monitors[0].tls.disable: expected boolean, got string',
    );
    assert.equal(
      decodeError('mysql:\n  hostname: [a, b]\n').message,
      'cannot decode YAML in /abs/sonde.yaml: line 2: wrong type for key mysql.hostname: expected string, got list',
    );
    assert.equal(
      decodeError('- a\n- b\n').message,
      'cannot decode YAML in /abs/sonde.yaml: line 1: expected a mapping at the top level, got list',
    );
  });

  it('reports YAML syntax errors with their line', () => {
    const err = decodeError('api:\n  bind: x\n   foo: 1\n');
    assert.match(err.message, /^cannot decode YAML in \/abs\/sonde\.yaml: line 2: /);
  });

  it('keeps the text of numbers and booleans where a string is expected', () => {
    const c = parseConfig(
      [
        'sinks:',
        '  prom-pushgateway:',
        '    port: 3306',
        '    ratio: 1.10',
        '    flag: yes',
        'tags: {zip: 02134, on: true, empty: }',
        'mysql:',
        '  password: 0123',
        '',
      ].join('\n'),
      { env: {} },
    );
    assert.deepEqual(c.sinks, { 'prom-pushgateway': { port: '3306', ratio: '1.10', flag: 'yes' } });
    assert.deepEqual(c.tags, { zip: '02134', on: 'true', empty: '' });
    assert.equal(c.mysql?.password, '0123');
  });

  it('accepts YAML 1.1 booleans for boolean keys, a sink with no options, anchors and merge keys', () => {
    const c = parseConfig(
      [
        'api:',
        '  disable: yes',
        'sinks:',
        '  log:',
        'tls: &t',
        '  ca: ""',
        '  disable: on',
        'monitors:',
        '  - id: a',
        '    tls:',
        '      <<: *t',
        '      disable: off',
        '',
      ].join('\n'),
      { env: {} },
    );
    assert.equal(c.api?.disable, true);
    assert.deepEqual(c.sinks, { log: {} });
    assert.equal(c.tls?.disable, true);
    assert.deepEqual(c.monitors?.[0]?.tls, { ca: '', disable: false });
  });

  it('accepts http.proxy (Blip fails on any http mapping)', () => {
    assert.equal(parseConfig('http:\n  proxy: http://p:3128\n', { env: {} }).http?.proxy, 'http://p:3128');
  });
});

describe('defaults', () => {
  it('are api.bind 127.0.0.1:7522, mysql.username blip, mysql.timeout-connect 10s', () => {
    assert.deepEqual(DEFAULT_CONFIG, {
      api: { bind: '127.0.0.1:7522' },
      mysql: { username: 'blip', 'timeout-connect': '10s' },
    });
    assert.deepEqual(parseConfig('', { env: {} }), DEFAULT_CONFIG);
    assert.deepEqual(parseConfig('# only a comment\n', { env: {} }), DEFAULT_CONFIG);
  });

  it('keep absent keys, merge maps key by key and let lists replace', () => {
    const c = parseConfig('mysql:\n  hostname: db\napi:\n  disable: true\n', { env: {} });
    assert.deepEqual(c.mysql, { username: 'blip', 'timeout-connect': '10s', hostname: 'db' });
    assert.deepEqual(c.api, { bind: '127.0.0.1:7522', disable: true });
    const base: Config = { plans: { files: ['a', 'b'] }, tags: { a: '1' } };
    const merged = mergeConfig(base, { plans: { files: ['c'] }, tags: { b: '2' } });
    assert.deepEqual(merged, { plans: { files: ['c'] }, tags: { a: '1', b: '2' } });
    assert.deepEqual(base, { plans: { files: ['a', 'b'] }, tags: { a: '1' } }, 'inputs untouched');
  });

  it('use the default api.bind when the file sets it empty', () => {
    assert.equal(parseConfig('api:\n  bind: ""\n', { env: {} }).api?.bind, '127.0.0.1:7522');
  });

  it('let the file override a default', () => {
    assert.equal(parseConfig('mysql:\n  username: mon\n', { env: {} }).mysql?.username, 'mon');
  });
});

describe('locating the file', () => {
  it('fails when the given file does not exist, naming it as given', async () => {
    await assert.rejects(
      loadConfig('nope.yaml', { cwd: dir }),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.message === 'config file nope.yaml does not exist' &&
        err.kind === 'load',
    );
  });

  it('reads the given file, relative to cwd, and returns its absolute path', async () => {
    const [d, p] = await writeConfig('given', 'mysql:\n  hostname: db9\n', 'my.yaml');
    const { config, path } = await loadConfig('my.yaml', { cwd: d, env: {} });
    assert.equal(path, p);
    assert.equal(config.mysql?.hostname, 'db9');
  });

  it('tries sonde.yaml, then blip.yaml, then runs on defaults', async () => {
    const [d1] = await writeConfig('both', 'mysql:\n  hostname: from-sonde\n');
    await writeFile(join(d1, 'blip.yaml'), 'mysql:\n  hostname: from-blip\n');
    assert.equal((await loadConfig(undefined, { cwd: d1, env: {} })).config.mysql?.hostname, 'from-sonde');

    const [d2, p2] = await writeConfig('blip-only', 'mysql:\n  hostname: from-blip\n', 'blip.yaml');
    const r2 = await loadConfig(undefined, { cwd: d2, env: {} });
    assert.equal(r2.config.mysql?.hostname, 'from-blip');
    assert.equal(r2.path, p2);

    const empty = join(dir, 'none');
    await mkdir(empty);
    // The machine's /etc/sonde/sonde.yaml (last on the default list) is left out here.
    const r3 = await loadConfig(undefined, { cwd: empty, env: {}, search: ['sonde.yaml', 'blip.yaml'] });
    assert.equal(r3.path, undefined);
    assert.deepEqual(r3.config, DEFAULT_CONFIG);
  });

  it('names the absolute path in decode errors', async () => {
    const [d, p] = await writeConfig('bad', 'api:\n  bnd: x\n');
    await assert.rejects(loadConfig(undefined, { cwd: d, env: {} }), {
      message: `cannot decode YAML in ${p}: line 2: unknown key api.bnd (did you mean bind?)`,
    });
  });

  it('reports a read failure with the OS error text', async () => {
    const d = join(dir, 'dir-as-file');
    await mkdir(join(d, 'sonde.yaml'), { recursive: true });
    await assert.rejects(loadConfig('sonde.yaml', { cwd: d, env: {} }), {
      message: `cannot read config file: read ${join(d, 'sonde.yaml')}: is a directory`,
    });
  });
});

describe('top-level ${ENV} interpolation', () => {
  const env = { H: 'h1', P: 'pw', D: '/etc/tls', F: '5s', S: '10%' };

  it('applies to exactly the server-config keys that take ${ENV}', () => {
    const c = parseConfig(
      [
        'api: {bind: "${H}:1"}',
        'http: {proxy: "http://${H}"}',
        'probe: {bind: "${H}:9104", web-config-file: "${D}/web.yml"}',
        'monitor-loader: {stop-loss: "${S}", files: ["${D}/m.yaml"]}',
        'aws: {password-secret: "${P}", region: "${H}"}',
        'exporter: {mode: "${M:-dual}", flags: {web.listen-address: "${H}:9104"}}',
        'heartbeat: {freq: "${F}", source-id: "${H}", role: "${H}", table: "${H}.hb"}',
        'mysql: {hostname: "${H}", socket: "${H}", username: "${H}", password: "${P}", mycnf: "${D}/my.cnf", password-file: "${D}/pw", timeout-connect: "${F}"}',
        'plans: {files: ["${D}/p.yaml"], table: "${H}.plans", change: {active: {after: "${F}", plan: "${H}"}}}',
        'sinks: {log: {x: "${H}"}}',
        'tags: {"${H}": "${H}"}',
        'tls: {ca: "${D}/ca.pem", cert: "${D}/c.pem", key: "${D}/k.pem", disable: true}',
        'monitors: [{id: "${H}"}]',
        '',
      ].join('\n'),
      { env },
    );
    assert.equal(c.api?.bind, 'h1:1');
    assert.equal(c.http?.proxy, 'http://h1');
    assert.deepEqual(c.probe, { bind: 'h1:9104', 'web-config-file': '/etc/tls/web.yml' });
    assert.deepEqual(c['monitor-loader'], { 'stop-loss': '10%', files: ['/etc/tls/m.yaml'] });
    assert.deepEqual(c.aws, { 'password-secret': 'pw', region: 'h1' });
    assert.deepEqual(c.exporter, { mode: 'dual', flags: { 'web.listen-address': 'h1:9104' } });
    assert.deepEqual(c.heartbeat, { freq: '5s', 'source-id': 'h1', role: 'h1', table: 'h1.hb' });
    assert.deepEqual(c.mysql, {
      hostname: '${H}', // not interpolated at this level
      socket: '${H}',
      username: 'h1',
      password: 'pw',
      mycnf: '/etc/tls/my.cnf',
      'password-file': '/etc/tls/pw',
      'timeout-connect': '5s',
    });
    assert.deepEqual(c.plans, {
      files: ['/etc/tls/p.yaml'],
      table: 'h1.plans',
      change: { active: { after: '5s', plan: 'h1' } },
    });
    assert.deepEqual(c.sinks, { log: { x: 'h1' } });
    assert.deepEqual(c.tags, { '${H}': 'h1' }, 'map keys are never interpolated');
    assert.deepEqual(c.tls, {
      ca: '/etc/tls/ca.pem',
      cert: '/etc/tls/c.pem',
      key: '/etc/tls/k.pem',
      disable: true,
    });
    assert.deepEqual(c.monitors, [{ id: '${H}' }], 'monitors are interpolated when finalized');
  });
});

describe('validation', () => {
  function invalid(text: string, env: NodeJS.ProcessEnv = {}): string {
    try {
      parseConfig(text, { env, cwd: dir });
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.kind, 'invalid');
      return err.message;
    }
    assert.fail('no error');
  }

  it('checks monitor-loader.stop-loss', () => {
    assert.equal(invalid('monitor-loader: {stop-loss: "5x"}'), `'5x' does not match /^(\\d+)(%?)$/`);
    for (const ok of ['', '0', '0%', '5', '50%', '150%']) {
      assert.doesNotThrow(() => parseConfig(`monitor-loader: {stop-loss: "${ok}"}`, { env: {} }));
    }
  });

  it('checks monitor-loader.aws: region names or auto, once each; filters only with regions', () => {
    assert.equal(
      invalid('monitor-loader: {aws: {regions: [us-east-1, us-east]}}'),
      'invalid config.monitor-loader.aws.regions[1]: "us-east": want a region name such as us-east-1, or auto',
    );
    assert.equal(
      invalid('monitor-loader: {aws: {regions: [auto, eu-west-1, auto]}}'),
      'invalid config.monitor-loader.aws.regions[2]: auto is listed twice',
    );
    assert.equal(
      invalid('monitor-loader: {aws: {regions: [us-east-1], engines: [mysql, ""]}}'),
      'invalid config.monitor-loader.aws.engines[1]: empty engine name',
    );
    assert.equal(
      invalid('monitor-loader: {aws: {tags: {env: prod}}}'),
      'invalid config.monitor-loader.aws: engines and tags filter RDS discovery, which is off without regions',
    );
    const c = parseConfig(
      'monitor-loader: {aws: {regions: [auto, us-gov-west-1, eusc-de-east-1], engines: [mysql, aurora-mysql], tags: {env: prod}}}',
      { env: {} },
    );
    assert.deepEqual(c['monitor-loader']?.aws, {
      regions: ['auto', 'us-gov-west-1', 'eusc-de-east-1'],
      engines: ['mysql', 'aurora-mysql'],
      tags: { env: 'prod' },
    });
  });

  it('checks probe: bind is host:port, web-config-file needs bind, unknown keys refused', () => {
    assert.equal(
      invalid('probe: {bind: localhost}'),
      'invalid config.probe.bind: "localhost": want host:port or :port',
    );
    assert.equal(
      invalid('probe: {bind: "127.0.0.1:70000"}'),
      'invalid config.probe.bind: "127.0.0.1:70000": want host:port or :port',
    );
    assert.equal(
      invalid('probe: {web-config-file: /etc/sonde/web.yml}'),
      'invalid config.probe.web-config-file: probe.bind is not set, so there is no probe listener to protect',
    );
    assert.throws(() => parseConfig('probe: {bind: ":9104", path: /probe}', { env: {} }), {
      message: /unknown key probe\.path/,
    });
    for (const ok of ['', '"127.0.0.1:9104"', '":9104"', '"[::1]:9104"']) {
      assert.doesNotThrow(() => parseConfig(`probe: {bind: ${ok || '""'}}`, { env: {} }), ok);
    }
    assert.deepEqual(parseConfig('probe: {bind: ":9104"}', { env: {} }).probe, { bind: ':9104' });
  });

  it('checks exporter.mode', () => {
    assert.equal(
      invalid('exporter: {mode: single}'),
      'invalid config.exporter.mode: single; valid values: dual, legacy',
    );
  });

  it('refuses an exporter flag sonde does not implement, naming it', () => {
    assert.equal(
      invalid('exporter: {mode: dual, flags: {web.systemd-socket: "true"}}'),
      'invalid config.exporter.flags: web.systemd-socket: not supported; supported flags: web.listen-address, web.telemetry-path, web.config.file, timeout-offset, tls.insecure-skip-verify, exporter.lock_wait_timeout, exporter.enable_lock_wait_timeout, exporter.log_slow_filter, exporter.query_timeout, exporter.max_open_connections, collect.<collector> and its sub-flags',
    );
    assert.equal(
      invalid('exporter: {mode: dual, flags: {collect.info_schema.processlist.min_time: "x"}}'),
      'invalid config.exporter.flags: collect.info_schema.processlist.min_time: x: not an integer',
    );
    assert.equal(
      invalid('exporter: {mode: dual, flags: {collect.slave_status: "maybe"}}'),
      'invalid config.exporter.flags: collect.slave_status: maybe: not true or false',
    );
    assert.equal(
      invalid('exporter: {mode: dual, flags: {exporter.max_open_connections: "0"}}'),
      'invalid config.exporter.flags: exporter.max_open_connections: 0: must be >= 1',
    );
    assert.equal(
      invalid('exporter: {mode: dual, flags: {collect.info_schema.table: "true"}}'),
      'invalid config.exporter.flags: collect.info_schema.table: no such mysqld_exporter collector or collector flag',
    );
    assert.doesNotThrow(() =>
      parseConfig('exporter: {flags: {web.listen-address: ":9104", web.telemetry-path: /m}}', {
        env: {},
        cwd: dir,
      }),
    );
  });

  it('checks web.listen-address as one address or a comma-separated list', () => {
    assert.equal(
      invalid('exporter: {mode: dual, flags: {web.listen-address: "127.0.0.1:9104,9105"}}'),
      'invalid config.exporter.flags: web.listen-address: invalid listen address "9105": want host:port',
    );
    assert.equal(
      invalid('exporter: {mode: dual, flags: {web.listen-address: "127.0.0.1:9104,"}}'),
      'invalid config.exporter.flags: web.listen-address: 127.0.0.1:9104,: empty address in the list',
    );
    const c = parseConfig('exporter: {flags: {web.listen-address: "127.0.0.1:9104, [::1]:9104"}}', {
      env: {},
      cwd: dir,
    });
    assert.equal(c.exporter?.flags?.['web.listen-address'], '127.0.0.1:9104, [::1]:9104');
  });

  it('checks heartbeat.freq and the other heartbeat keys', () => {
    assert.equal(
      invalid('heartbeat: {freq: "0"}'),
      'invalid config.heartbeat.freq: 0: must be greater than zero',
    );
    assert.equal(
      invalid('heartbeat: {freq: 5}'),
      'invalid config.heartbeat.freq: 5: time: missing unit in duration "5"',
    );
    assert.equal(
      invalid('heartbeat: {freq: 1d}'),
      'invalid config.heartbeat.freq: 1d: time: invalid duration "1d"',
    );
    assert.equal(
      invalid('heartbeat: {freq: -1s}'),
      'invalid config.heartbeat.freq: -1s (-1000000000): value <= 0; must be greater than zero',
    );
    assert.equal(
      invalid('heartbeat: {table: blip.hb}'),
      'invalid config.heartbeat: freq is not set but other values are set; set freq to enable heartbeat',
    );
  });

  it('checks durations of mysql.timeout-connect and plans.change.*.after', () => {
    assert.equal(
      invalid('mysql: {timeout-connect: soon}'),
      'invalid config.mysql.timeout-connect: soon: time: invalid duration "soon"',
    );
    assert.equal(
      invalid('plans: {change: {read-only: {after: 10}}}'),
      'invalid config.plans.change.read-only.after: 10: time: missing unit in duration "10"',
    );
  });

  it('checks tls files and the cert/key pair', async () => {
    await writeFile(join(dir, 'ca.pem'), 'x');
    await writeFile(join(dir, 'cert.pem'), 'x');
    await writeFile(join(dir, 'key.pem'), 'x');
    assert.equal(invalid('tls: {ca: missing.pem}'), 'config.tls.ca: missing.pem: file does not exist');
    assert.equal(
      invalid('tls: {ca: ca.pem, cert: nope.pem}'),
      'config.tls.cert: nope.pem: file does not exist',
    );
    assert.equal(
      invalid('tls: {key: key.pem}'),
      'config.tls: missing cert (cert and key are mutually dependent)',
    );
    assert.equal(
      invalid('tls: {cert: cert.pem}'),
      'config.tls: missing key (cert and key are mutually dependent)',
    );
    for (const ok of [
      '{ca: ca.pem}',
      '{cert: cert.pem, key: key.pem}',
      '{ca: ca.pem, cert: cert.pem, key: key.pem}',
    ]) {
      assert.doesNotThrow(() => parseConfig(`tls: ${ok}`, { env: {}, cwd: dir }));
    }
    assert.doesNotThrow(() => parseConfig('tls: {ca: missing.pem, disable: true}', { env: {}, cwd: dir }));
  });

  it('stops at the first failing section in section order', () => {
    assert.equal(
      invalid('tls: {key: k}\nheartbeat: {freq: "0"}\nexporter: {mode: x}\n'),
      'invalid config.exporter.mode: x; valid values: dual, legacy',
    );
  });

  it('refuses an unset variable without a default, naming the file and the key path', () => {
    assert.equal(
      decodeError('sinks:\n  otlp:\n    endpoint: "http://${OTLP_HOST}:4318"\n').message,
      '/abs/sonde.yaml: key sinks.otlp.endpoint: environment variable OTLP_HOST is not set (use ${OTLP_HOST:-default} for a default)',
    );
    assert.equal(
      decodeError('plans: {files: [a.yaml, "${PLANS}/b.yaml"]}\n').message,
      '/abs/sonde.yaml: key plans.files[1]: environment variable PLANS is not set (use ${PLANS:-default} for a default)',
    );
  });

  it('accepts a default, an explicitly empty default and a variable set to empty', () => {
    const c = parseConfig('mysql: {username: "${U:-mon}", password: "${P:-}"}\ntags: {e: "${E}"}\n', {
      env: { E: '' },
    });
    assert.equal(c.mysql?.username, 'mon');
    assert.equal(c.mysql?.password, '');
    assert.deepEqual(c.tags, { e: '' });
  });

  it('validates interpolated values', () => {
    assert.equal(
      invalid('heartbeat: {freq: "${F}"}', { F: 'fast' }),
      'invalid config.heartbeat.freq: fast: time: invalid duration "fast"',
    );
  });

  it('is exported for configs built elsewhere', () => {
    assert.throws(() => validateConfig({ exporter: { mode: 'x' } }), {
      message: 'invalid config.exporter.mode: x; valid values: dual, legacy',
    });
    assert.doesNotThrow(() => validateConfig({ ...DEFAULT_CONFIG }));
  });
});

describe('hostile or unusual YAML', () => {
  it('caps alias expansion', () => {
    const lines = ['x0: &a0 [v, v, v, v, v, v, v, v, v, v]'];
    for (let i = 1; i < 8; i++)
      lines.push(
        `x${i}: &a${i} [${Array(10)
          .fill(`*a${i - 1}`)
          .join(', ')}]`,
      );
    lines.push('tags: {a: "1"}');
    assert.match(
      decodeError(lines.join('\n')).message,
      /^cannot decode YAML in \/abs\/sonde\.yaml: line \d+: too many alias expansions$/,
    );
  });

  it('resolves each alias to the last anchor of that name written before it', () => {
    const c = parseConfig(
      'tags: &t {a: "1"}\nmonitors:\n  - id: x\n    tags: *t\n  - id: y\n    tags: &t {b: "2"}\n  - id: z\n    tags: *t\n',
      {
        env: {},
      },
    );
    assert.deepEqual(
      c.monitors?.map((m) => m.tags),
      [{ a: '1' }, { b: '2' }, { b: '2' }],
    );
  });

  it('refuses text over the size limit before parsing it', () => {
    const text = `# ${'x'.repeat(MAX_YAML_BYTES)}\n`;
    assert.equal(
      decodeError(text).message,
      `cannot decode YAML in /abs/sonde.yaml: ${MAX_YAML_BYTES + 3} bytes, more than the limit of ${MAX_YAML_BYTES} (4 MiB)`,
    );
  });

  it('refuses a config file over the size limit before reading it', async () => {
    const [d, p] = await writeConfig('huge', `# ${'x'.repeat(MAX_YAML_BYTES)}\n`);
    await assert.rejects(loadConfig(undefined, { cwd: d, env: {} }), {
      message: `cannot decode YAML in ${p}: ${MAX_YAML_BYTES + 3} bytes, more than the limit of ${MAX_YAML_BYTES} (4 MiB)`,
    });
  });

  it('rejects a file with several documents', () => {
    assert.match(
      decodeError('api: {bind: a}\n---\napi: {bind: b}\n').message,
      /^cannot decode YAML in \/abs\/sonde\.yaml: line 2: /,
    );
  });

  it('treats __proto__ as an ordinary (unknown) key', () => {
    assert.equal(
      decodeError('api:\n  __proto__: {bind: x}\n').message,
      'cannot decode YAML in /abs/sonde.yaml: line 2: unknown key api.__proto__',
    );
  });
});
