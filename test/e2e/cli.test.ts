/**
 * The CLI as a user runs it: flags, exit codes, print options, and bad config files that
 * each fail the boot with one clear line naming the file and the key.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSonde, writeConfig, ROOT } from '../helpers/agent.js';

const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const NO_AUTO = 'monitor-loader:\n  local:\n    disable-auto: true\n';
/** No auto-detection and the API on a free port: a boot that binds never needs 7522 free. */
const QUIET = `${NO_AUTO}api:\n  bind: 127.0.0.1:0\n`;

/** Boot failures print exactly one stderr line: `<date time> server.Boot failed: <error>`. */
function oneLine(stderr: string): string {
  const lines = stderr.split('\n').filter((l) => l !== '');
  assert.equal(lines.length, 1, `expected one stderr line, got:\n${stderr}`);
  const line = lines[0] ?? '';
  assert.match(line, /^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d server\.Boot failed: /);
  return line.replace(/^.* server\.Boot failed: /, '');
}

describe('sonde CLI', () => {
  it('prints the version as v<major>.<minor>.<patch>', async () => {
    const r = await runSonde(['--version']);
    assert.equal(r.code, 0);
    assert.equal(r.stdout, `v${VERSION}\n`);
  });

  it('prints the same version line from the entry (-v) and from the full command line', async () => {
    const short = await runSonde(['-v']);
    assert.equal(short.code, 0);
    assert.equal(short.stdout, `v${VERSION}\n`);
    const full = await runSonde(['--config', '/nonexistent.yaml', '--version']);
    assert.equal(full.code, 0);
    assert.equal(full.stdout, `v${VERSION}\n`);
  });

  it('fails --version on a bad SONDE_DEBUG as any other start', async () => {
    const r = await runSonde(['--version'], { env: { SONDE_DEBUG: 'maybe' } });
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.equal(
      oneLine(r.stderr),
      'Error parsing command line: invalid boolean value "maybe" for SONDE_DEBUG',
    );
  });

  it('prints help with every option', async () => {
    const r = await runSonde(['--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^Usage: sonde \[options\]/);
    for (const o of [
      '--config',
      '--debug',
      '--help',
      '--log',
      '--log.level <level>',
      '--log.format <format>',
      '--print-config',
      '--print-domains',
      '--print-monitors',
      '--print-plans',
      '--run',
      '--version',
    ]) {
      assert.ok(r.stdout.includes(o), o);
    }
  });

  it('refuses a bad --log.level, --log.format or SONDE_LOG_* value, naming it', async () => {
    const flag = await runSonde(['--log.level=loud']);
    assert.equal(flag.code, 1);
    assert.equal(
      oneLine(flag.stderr),
      'Error parsing command line: invalid value "loud" for --log.level; valid values: debug, info, warn, error',
    );
    const format = await runSonde(['--log.format', 'xml']);
    assert.equal(
      oneLine(format.stderr),
      'Error parsing command line: invalid value "xml" for --log.format; valid values: text, json, logfmt',
    );
    const env = await runSonde([], { env: { SONDE_LOG_LEVEL: 'verbose' } });
    assert.equal(env.code, 1);
    assert.match(oneLine(env.stderr), /invalid value "verbose" for SONDE_LOG_LEVEL; /);
    const stats = await runSonde([], { env: { SONDE_EVENT_LOOP_STATS: 'sometimes' } });
    assert.equal(stats.code, 1);
    assert.equal(
      oneLine(stats.stderr),
      'Error parsing command line: invalid value "sometimes" for SONDE_EVENT_LOOP_STATS; valid values: on, off',
    );
  });

  it('prints the boot failure as one JSON line with --log.format=json', async () => {
    const r = await runSonde(['--config', '/nonexistent.yaml'], { env: { SONDE_LOG_FORMAT: 'json' } });
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    assert.equal(lines.length, 1, r.stderr);
    const line = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
    assert.deepEqual(
      [line.level, line.event, line.message],
      ['error', 'boot-error', 'server.Boot failed: config file /nonexistent.yaml does not exist'],
    );
  });

  it('a wrong config value (the error event boot-config-invalid) still prints one line, text or JSON', async () => {
    const [dir, path] = writeConfig(`${NO_AUTO}api:\n  bind: 127.0.0.1:0\nheartbeat:\n  freq: "0"\n`);
    const text = await runSonde(['--config', path, '--run=false'], { cwd: dir });
    assert.equal(text.code, 1);
    assert.match(oneLine(text.stderr), /heartbeat\.freq: 0: must be greater than zero$/);
    const json = await runSonde(['--config', path, '--run=false', '--log.format=json'], { cwd: dir });
    assert.equal(json.code, 1);
    const lines = json.stderr.split('\n').filter((l) => l !== '');
    assert.equal(lines.length, 1, json.stderr);
    const line = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
    assert.deepEqual([line.level, line.event], ['error', 'boot-error']);
    assert.match(
      String(line.message),
      /^server\.Boot failed: .*heartbeat\.freq: 0: must be greater than zero$/,
    );
  });

  it('rejects an unknown option', async () => {
    const r = await runSonde(['--bogus']);
    assert.equal(r.code, 1);
    assert.equal(oneLine(r.stderr), 'Error parsing command line: unknown argument --bogus');
    const typo = await runSonde(['--confg', 'x.yaml']);
    assert.equal(
      oneLine(typo.stderr),
      'Error parsing command line: unknown argument --confg (did you mean --config?)',
    );
  });

  it('refuses a positional argument, telling where a config file goes', async () => {
    for (const args of [['sonde.yaml'], ['check', '/etc/sonde/sonde.yaml']]) {
      const r = await runSonde(args);
      assert.equal(r.code, 1, r.stdout);
      const file = args.at(-1) ?? '';
      assert.equal(
        oneLine(r.stderr),
        `Error parsing command line: unexpected argument ${file}; to use it as the config file: --config ${file}`,
      );
    }
    const word = await runSonde(['--run=false', 'now']);
    assert.equal(word.code, 1);
    assert.equal(
      oneLine(word.stderr),
      'Error parsing command line: unexpected argument now; sonde takes options only (sonde --help)',
    );
    const late = await runSonde(['--config', '/x.yaml', 'check']);
    assert.equal(
      oneLine(late.stderr),
      'Error parsing command line: unexpected argument check; check comes first (sonde check [options]), or use --check',
    );
  });

  it('warns about plan keys and metric names it ignores, at boot and at --check', async () => {
    const [dir, path] = writeConfig(
      `${QUIET}plans:\n  files: [plan.yaml]\nmonitors:\n  - id: a\n    socket: /nonexistent.sock\n`,
    );
    writeFileSync(
      join(dir, 'plan.yaml'),
      'kpi:\n  freq: 5s\n  colect:\n    status.global:\nlag:\n  freq: 1s\n  collect:\n    repl.lag:\n      metrics: [curent]\n',
    );
    const expected = [
      `plan.yaml: line 3: unknown key kpi.colect (did you mean collect?), ignored`,
      `plan.yaml: line 9: at lag/repl.lag: unknown metric curent for domain repl.lag (did you mean current?); it has: current, backlog, worker_usage`,
    ];
    const boot = await runSonde(['--config', path, '--run=false'], { cwd: dir });
    assert.equal(boot.code, 0, boot.stderr);
    const check = await runSonde(['--config', path, '--check'], { cwd: dir });
    assert.match(check.stdout, /^FAIL a: /m);
    for (const r of [boot, check])
      for (const w of expected) assert.ok(r.stdout.includes(w), `${w}\n${r.stdout}`);
  });

  it('prints every built-in domain for --print-domains, even when the config cannot be read', async () => {
    const r = await runSonde(['--print-domains', '--config', '/nonexistent.yaml']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^innodb\n\t/m);
    assert.match(r.stdout, /^status\.global\n\t.+\n\tOptions:\n\t\tall: /m);
    assert.match(r.stdout, /^var\.global$/m);
    assert.equal(
      r.stderr,
      '--print-domains: config file /nonexistent.yaml does not exist; built-in domains only\n',
    );
    // No config given and none in the working directory: the built-in domains, nothing on stderr.
    const plain = await runSonde(['--print-domains'], { cwd: mkdtempSync(join(tmpdir(), 'sonde-test-')) });
    assert.equal(plain.stderr, '');
    assert.equal(plain.code, 0);
    assert.equal(plain.stdout, r.stdout);
  });

  it('--print-domains with --config also lists the domains its plugins add', async () => {
    const example = join(ROOT, 'examples/plugins/custom-table/index.js');
    const [dir, path] = writeConfig(`plugins: [${example}]\n`);
    const r = await runSonde(['--config', path, '--print-domains'], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.match(r.stdout, /^custom\.queue\n\t.+\n/m);
    assert.match(r.stdout, /^status\.global$/m);
    const builtins = await runSonde(['--print-domains', '--config', '/nonexistent.yaml']);
    assert.deepEqual(
      r.stdout.split('\n').filter((l) => /^[a-z]/.test(l) && !builtins.stdout.split('\n').includes(l)),
      ['custom.queue'],
    );
    const [badDir, bad] = writeConfig('plugins: [./missing.js]\n');
    const f = await runSonde(['--config', bad, '--print-domains'], { cwd: badDir });
    assert.equal(f.code, 1);
    assert.match(oneLine(f.stderr), /^plugins: \.\/missing\.js: /);
  });

  it('boots and exits 0 with --run=false, printing the config, plans and monitors', async () => {
    const [dir, path] = writeConfig(
      `${QUIET}mysql:\n  password: hunter2-secret\nmonitors:\n  - hostname: db1\n  - id: two\n    socket: /tmp/x.sock\n`,
    );
    const r = await runSonde(
      ['--config', path, '--run=false', '--print-config', '--print-monitors', '--print-plans'],
      { cwd: dir },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^api:\n {2}bind: 127\.0\.0\.1:0\n/);
    assert.match(r.stdout, /# default-mysql\n/);
    assert.match(r.stdout, /monitors:\n/);
    assert.match(r.stdout, /id: db1\n/);
    assert.ok(!r.stdout.includes('hunter2-secret'), 'password printed');
  });

  it('prints the default api.bind 127.0.0.1:7522 without binding it (--check binds nothing)', async () => {
    const [dir, path] = writeConfig(NO_AUTO);
    const r = await runSonde(['--config', path, '--check', '--print-config'], { cwd: dir });
    assert.match(r.stdout, /^api:\n {2}bind: 127\.0\.0\.1:7522\n/);
    assert.match(r.stdout, /FAIL no monitors configured\n/);
  });

  it('reads the config file from SONDE_CONFIG and BLIP_CONFIG, and BLIP_RUN=false', async () => {
    const [dir, path] = writeConfig(`${NO_AUTO}api:\n  bind: 127.0.0.1:0\n`);
    const r = await runSonde(['--print-config'], { cwd: dir, env: { BLIP_CONFIG: path, BLIP_RUN: 'false' } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /bind: 127\.0\.0\.1:0/);
    const s = await runSonde(['--print-config', '--run=false'], { cwd: dir, env: { SONDE_CONFIG: path } });
    assert.equal(s.code, 0, s.stderr);
    assert.match(s.stdout, /bind: 127\.0\.0\.1:0/);
  });

  it('fails with one line for a missing config file', async () => {
    const r = await runSonde(['--config', '/no/such/sonde.yaml']);
    assert.equal(r.code, 1);
    assert.equal(oneLine(r.stderr), 'config file /no/such/sonde.yaml does not exist');
  });

  const bad: [string, string, RegExp][] = [
    ['unknown key', 'mysql:\n  hostnme: db1\n', /sonde\.yaml.*line 2.*mysql\.hostnme/],
    [
      'unknown monitor key',
      'monitors:\n  - id: a\n    pasword: x\n',
      /sonde\.yaml.*line 3.*monitors\[0\]\.pasword/,
    ],
    ['duplicate key', 'api:\n  bind: :1\n  bind: :2\n', /sonde\.yaml.*line 3.*bind/],
    ['bad stop-loss', "monitor-loader:\n  stop-loss: '5x'\n", /'5x' does not match/],
    [
      'bad exporter mode',
      'exporter:\n  mode: duel\n',
      /sonde\.yaml: line 2: invalid config\.exporter\.mode: duel \(did you mean dual\?\); valid values: dual, legacy/,
    ],
    [
      'zero heartbeat',
      'heartbeat:\n  freq: "0"\n',
      /invalid config\.heartbeat\.freq: 0: must be greater than zero/,
    ],
    ['missing TLS file', 'tls:\n  ca: /no/ca.pem\n', /config\.tls\.ca: \/no\/ca\.pem: file does not exist/],
    [
      'unknown sink',
      `${QUIET}monitors:\n  - id: a\n    sinks:\n      nosuch: {}\n`,
      /sink nosuch not registered/,
    ],
    [
      'misspelt sink',
      `${QUIET}monitors:\n  - id: a\n    sinks:\n      datadg: {}\n`,
      /sink datadg not registered \(did you mean datadog\?\)/,
    ],
    [
      'duplicate monitor ids',
      `${QUIET}monitors:\n  - hostname: db1\n  - id: db1\n`,
      /duplicate monitor id: db1/,
    ],
    [
      'missing monitor file',
      'api:\n  bind: 127.0.0.1:0\nmonitor-loader:\n  files: [nope.yaml]\n',
      /^monitor-loader\.files: open nope\.yaml: no such file or directory$/,
    ],
    [
      'missing plan file',
      `${QUIET}plans:\n  files: [plan.yaml]\n`,
      /^plan file plan\.yaml \(.*\/plan\.yaml\) does not exist: correct or remove it in plans\.files$/,
    ],
    [
      'a database type sonde does not monitor',
      `${NO_AUTO}api:\n  bind: 127.0.0.1:0\nmonitors:\n  - id: pg\n    database-type: postgres\n`,
      /^monitor pg: invalid database-type: postgres; valid values: mysql/,
    ],
  ];
  for (const [what, yaml, expected] of bad) {
    it(`fails with one line for ${what}`, async () => {
      const [dir, path] = writeConfig(yaml);
      const r = await runSonde(['--config', path, '--run=false'], { cwd: dir });
      assert.equal(r.code, 1, r.stdout);
      assert.match(oneLine(r.stderr), expected);
    });
  }

  it('fails with the line of an unknown domain in a plan file, and the domain meant', async () => {
    const [dir, path] = writeConfig(`${QUIET}plans:\n  files: [plan.yaml]\n`);
    writeFileSync(join(dir, 'plan.yaml'), 'kpi:\n  freq: 5s\n  collect:\n    satus.global:\n');
    const r = await runSonde(['--config', path, '--run=false'], { cwd: dir });
    assert.equal(r.code, 1);
    assert.match(
      oneLine(r.stderr),
      /invalid plan: .*plan\.yaml: line 4: at kpi\/satus\.global: invalid domain: satus\.global: no such domain \(did you mean status\.global\?\)/,
    );
  });

  it('fails when api.bind is already in use', async () => {
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    const port = (srv.address() as { port: number }).port;
    const [dir, path] = writeConfig(`${NO_AUTO}api:\n  bind: 127.0.0.1:${port}\n`);
    const r = await runSonde(['--config', path, '--run=false'], { cwd: dir });
    srv.close();
    assert.equal(r.code, 1);
    assert.match(oneLine(r.stderr), /^api\.bind: .*EADDRINUSE/);
  });
});
