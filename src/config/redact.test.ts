import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from './load.js';
import { finalizeMonitors } from './monitor.js';
import { isSecretKey, redactOption, redactText } from './redact.js';
import { renderConfigJson, renderConfigYaml, renderMonitorsYaml } from './render.js';

/** The three renderings of a config: GET /config, GET /config?json (also --print-config), --print-monitors. */
function renderings(yaml: string, env: NodeJS.ProcessEnv = {}): string[] {
  const c = parseConfig(yaml, { env });
  return [
    renderConfigYaml(c),
    JSON.stringify(renderConfigJson(c)),
    renderMonitorsYaml(finalizeMonitors(c.monitors ?? [], c, env)),
  ];
}

function assertHidden(yaml: string, secrets: string[], shown: string[], env: NodeJS.ProcessEnv = {}): void {
  const all = renderings(yaml, env);
  for (const out of all) {
    for (const s of secrets) assert.ok(!out.includes(s), `secret ${s} printed in:\n${out}`);
  }
  // What stays readable is checked in the YAML of GET /config.
  for (const s of shown) assert.ok(all[0]?.includes(s), `${s} missing from:\n${all[0]}`);
}

/** A config with the sink's options both as a default and in a monitor. */
function withSink(sink: string, options: string): string {
  return [
    'sinks:',
    `  ${sink}: {${options}}`,
    'monitors:',
    '  - id: db1',
    '    sinks:',
    `      ${sink}: {${options}}`,
    '',
  ].join('\n');
}

describe('secrets in printed config, per sink', () => {
  it('hides the datadog API and application keys, also when they come from the environment', () => {
    assertHidden(
      withSink('datadog', 'api-key-auth: "${DD_API}", app-key-auth: appsecret-2, api-key-auth-file: /run/dd'),
      ['ddapisecret-1', 'appsecret-2'],
      ['api-key-auth: ...', 'app-key-auth: ...', '/run/dd'],
      { DD_API: 'ddapisecret-1' },
    );
  });

  it('hides the signalfx auth token', () => {
    assertHidden(
      withSink('signalfx', 'auth-token: sfxtoken-3, auth-token-file: /run/sfx'),
      ['sfxtoken-3'],
      ['/run/sfx'],
    );
  });

  it('hides the password in the chronosphere url and an api token', () => {
    assertHidden(
      withSink(
        'chronosphere',
        'url: "http://writer:chronopw-4@collector:3030/openmetrics/write", api-token: ct-5',
      ),
      ['chronopw-4', 'ct-5'],
      ['http://writer:...@collector:3030/openmetrics/write'],
    );
  });

  it('hides the password in the pushgateway addr, with or without a scheme', () => {
    assertHidden(
      withSink('prom-pushgateway', 'addr: "https://job:pushpw-6@gw:9091"'),
      ['pushpw-6'],
      ['https://job:...@gw:9091'],
    );
    assertHidden(
      withSink('prom-pushgateway', 'addr: "job:pushpw-7@gw:9091"'),
      ['pushpw-7'],
      ['job:...@gw:9091'],
    );
  });

  it('hides otlp header values, in the header list and one by one', () => {
    assertHidden(
      withSink(
        'otlp',
        'headers: "Authorization=Bearer otlptoken-8, x-api-key=otlpkey-9", header.x-tenant: tenantsecret-10, endpoint: "http://otel:4318"',
      ),
      ['otlptoken-8', 'otlpkey-9', 'tenantsecret-10'],
      ['Authorization=...', 'x-api-key=...', 'http://otel:4318'],
    );
  });

  it('hides secret-looking options given to the log sink too', () => {
    assertHidden(
      withSink('log', 'password: logpw-11, note: "Authorization: Bearer logtok-12"'),
      ['logpw-11', 'logtok-12'],
      ['Authorization: ...'],
    );
  });

  it('hides a password copied into a tag, and the userinfo of the http proxy', () => {
    assertHidden(
      [
        'http: {proxy: "http://proxyuser:proxypw-13@proxy:3128"}',
        'mysql: {password: mysqlpw-14}',
        'tags: {dsn: "mysql://mon:mysqlpw-14@db1/"}',
        'monitors:',
        '  - id: db1',
        '    password: monpw-15',
        '    meta: {token: metatoken-16}',
        '    tags: {copy: "%{monitor.password}"}',
        '',
      ].join('\n'),
      ['proxypw-13', 'mysqlpw-14', 'monpw-15', 'metatoken-16'],
      ['http://proxyuser:...@proxy:3128'],
    );
  });
});

describe('redaction rules', () => {
  it('treats keys that name a credential as secret, but not the files that hold one', () => {
    for (const k of [
      'api-key-auth',
      'auth-token',
      'api-token',
      'client_secret',
      'Password',
      'pwd',
      'credentials',
    ])
      assert.ok(isSecretKey(k), k);
    for (const k of ['auth-token-file', 'endpoint', 'metric-prefix', 'buffer-size'])
      assert.ok(!isSecretKey(k), k);
  });

  it('keeps the user of a URL and hides its password; a user alone may be a token', () => {
    assert.equal(redactText('http://u:p@h:1/x'), 'http://u:...@h:1/x');
    assert.equal(redactText('https://tok@h/x'), 'https://...@h/x');
    assert.equal(redactText('http://h/x?db=1&api_key=k&x=2'), 'http://h/x?db=1&api_key=...&x=2');
    assert.equal(redactText('plain text'), 'plain text');
  });

  it('keeps names and hides values in header lists, header lines and name=value lists', () => {
    assert.equal(redactOption('headers', 'a=1, b = 2'), 'a=..., b =...');
    assert.equal(redactOption('x', 'Authorization: Basic abc'), 'Authorization: ...');
    assert.equal(redactOption('x', 'k=v,k2=v2'), 'k=...,k2=...');
    assert.equal(redactOption('header.X-Anything', 'v'), '...');
    assert.equal(redactOption('metric-prefix', 'mysql.'), 'mysql.');
    assert.equal(redactOption('send-timeout', '5s'), '5s');
  });
});
