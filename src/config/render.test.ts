import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_CONFIG, parseConfig } from './load.js';
import { finalizeMonitors } from './monitor.js';
import { renderConfigJson, renderConfigYaml, renderMonitorsYaml } from './render.js';

describe('renderConfigYaml', () => {
  it('prints exactly the defaults when there is no file', () => {
    assert.equal(
      renderConfigYaml(parseConfig('', { env: {} })),
      'api:\n  bind: 127.0.0.1:7522\nmysql:\n  timeout-connect: 10s\n  username: blip\n',
    );
    assert.equal(
      renderConfigYaml(DEFAULT_CONFIG),
      'api:\n  bind: 127.0.0.1:7522\nmysql:\n  timeout-connect: 10s\n  username: blip\n',
    );
  });

  it('orders sections and keys, sorts maps, omits empties and redacts secrets', () => {
    const c = parseConfig(
      [
        'tls: {skip-verify: false, ca: ""}',
        'tags: {zone: b, app: a}',
        'mysql: {username: mon, password: hunter2, hostname: db, socket: ""}',
        'heartbeat: {}',
        'ha: {}',
        'api: {disable: false}',
        'sinks:',
        '  signalfx: {auth-token: tok}',
        '  datadog: {app-key-auth: app, api-key-auth: key, host: h}',
        '  log:',
        'monitor-loader: {local: {disable-auto: true, disable-auto-root: false}, files: [a.yaml], aws: {tags: {team: db}, engines: [mysql], regions: [us-east-1]}}',
        'plans: {change: {active: {plan: p}, offline: {after: 1s}}, files: [], disable-default-plans: false}',
        'monitors:',
        '  - hostname: db2',
        '    password: hunter3',
        '    tags: {b: "2", a: "1"}',
        '    aws: {iam-auth: false}',
        '',
      ].join('\n'),
      { env: {} },
    );
    const out = renderConfigYaml(c);
    assert.equal(
      out,
      [
        'api:',
        '  bind: 127.0.0.1:7522',
        'monitor-loader:',
        '  files:',
        '    - a.yaml',
        '  aws:',
        '    regions:',
        '      - us-east-1',
        '    engines:',
        '      - mysql',
        '    tags:',
        '      team: db',
        '  local:',
        '    disable-auto: true',
        'sinks:',
        '  datadog:',
        '    api-key-auth: ...',
        '    app-key-auth: ...',
        '    host: h',
        '  log: {}',
        '  signalfx:',
        '    auth-token: ...',
        'mysql:',
        '  hostname: db',
        '  password: ...',
        '  timeout-connect: 10s',
        '  username: mon',
        'plans:',
        '  change:',
        '    offline:',
        '      after: 1s',
        '    active:',
        '      plan: p',
        'tags:',
        '  app: a',
        '  zone: b',
        'tls:',
        '  skip-verify: false',
        'monitors:',
        '  - id: ""',
        '    hostname: db2',
        '    password: ...',
        '    tags:',
        '      a: "1"',
        '      b: "2"',
        '    aws:',
        '      iam-auth: false',
        '',
      ].join('\n'),
    );
    assert.ok(!out.includes('hunter'));
  });

  it('renders JSON with the same kebab-case keys and rules', () => {
    const c = parseConfig(
      'mysql: {password: pw, password-file: /pw}\nexporter: {mode: dual, flags: {web.telemetry-path: /m, web.listen-address: ":1"}}',
      {
        env: {},
      },
    );
    const j = renderConfigJson(c);
    assert.deepEqual(j, {
      api: { bind: '127.0.0.1:7522' },
      exporter: { mode: 'dual', flags: { 'web.listen-address': ':1', 'web.telemetry-path': '/m' } },
      mysql: { password: '...', 'password-file': '/pw', 'timeout-connect': '10s', username: 'blip' },
    });
    assert.equal(
      JSON.stringify(j),
      '{"api":{"bind":"127.0.0.1:7522"},"exporter":{"mode":"dual","flags":{"web.listen-address":":1","web.telemetry-path":"/m"}},"mysql":{"password":"...","password-file":"/pw","timeout-connect":"10s","username":"blip"}}',
    );
  });
});

describe('renderMonitorsYaml', () => {
  it('prints finalized monitors as a monitors: list with passwords redacted', () => {
    const c = parseConfig('mysql: {password: s3cret}\ntags: {env: prod}\nsinks: {log: }', { env: {} });
    const ms = finalizeMonitors(
      [{ hostname: 'db1:3306' }, { id: 'two', socket: '/tmp/m.sock', password: 'other' }],
      c,
      {},
    );
    assert.equal(
      renderMonitorsYaml(ms),
      [
        'monitors:',
        '  - id: db1:3306',
        '    hostname: db1:3306',
        '    username: blip',
        '    password: ...',
        '    timeout-connect: 10s',
        '    tags:',
        '      env: prod',
        '    sinks:',
        '      log: {}',
        '  - id: two',
        '    socket: /tmp/m.sock',
        '    username: blip',
        '    password: ...',
        '    timeout-connect: 10s',
        '    tags:',
        '      env: prod',
        '    sinks:',
        '      log: {}',
        '',
      ].join('\n'),
    );
  });
});
