/**
 * sonde started with mysqld_exporter's own command line, as a systemd unit switched from
 * `ExecStart=/usr/bin/prometheus-mysqld-exporter $ARGS` to `ExecStart=/usr/bin/sonde $ARGS`
 * starts it: the same ARGS given to Debian's real prometheus-mysqld-exporter (0.14) and to
 * the real sonde binary, against one throwaway MariaDB. Both endpoints must serve the same
 * family names, except the Go runtime families, the success family 0.14 lacks, and the
 * families of scrapers sonde does not serve yet (learnt from the real exporter's own
 * `collect[]` answer, and announced by sonde at start). Bad command lines fail both the same
 * way: exit code 1 and the same error.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSonde } from '../helpers/agent.js';
import { startSondeCli, type CliExporter } from '../helpers/exporter-cli.js';
import { freePort, startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { MYSQLD_EXPORTER, httpGet, parseExposition, requireBinary } from './exporter-peers.js';

const PASSWORD = 'cli-Secret-42';

/** A typical unit's ARGS, both `--flag value` and `--flag=value` forms, without the listen address. */
function typicalArgs(cnf: string): string[] {
  return [
    '--config.my-cnf',
    cnf,
    '--collect.info_schema.innodb_metrics',
    '--collect.info_schema.processlist',
    '--collect.auto_increment.columns',
    '--no-collect.info_schema.query_response_time',
    '--exporter.lock_wait_timeout=3',
    '--timeout-offset',
    '0.5',
    '--web.telemetry-path=/metrics',
    '--log.level=warn',
  ];
}

/**
 * Families of the runtime, not MySQL: Go's (`go_*`, `promhttp_*`) have no Node counterpart
 * under those names; sonde serves Node's (`nodejs_*`) and three process families prom-client
 * adds. The other `process_*` families and `mysqld_exporter_build_info` must match.
 */
const RUNTIME =
  /^(go_|promhttp_|nodejs_|process_cpu_user_seconds_total$|process_cpu_system_seconds_total$|process_heap_bytes$)/;

/** Run the real mysqld_exporter to completion (a command line it refuses). */
function runReal(args: string[]): { code: number | null; stderr: string } {
  requireBinary(MYSQLD_EXPORTER, 'prometheus-mysqld-exporter');
  const r = spawnSync(MYSQLD_EXPORTER, args, { encoding: 'utf8', timeout: 10_000, env: {} });
  return { code: r.status, stderr: r.stderr };
}

/** The real exporter serving `args` on `address`, stopped by PID. */
async function startReal(args: string[], address: string) {
  const { spawn } = await import('node:child_process');
  const proc = spawn(MYSQLD_EXPORTER, args, { stdio: ['ignore', 'pipe', 'pipe'], env: {} });
  let err = '';
  proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`mysqld_exporter exited: ${err}`);
    const ok = await httpGet(`http://${address}/`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`mysqld_exporter did not listen: ${err}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    async stop() {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

async function families(address: string, query = ''): Promise<Set<string>> {
  const r = await httpGet(`http://${address}/metrics${query}`);
  assert.equal(r.status, 200);
  return new Set([...parseExposition(r.body).keys()].filter((n) => !RUNTIME.test(n)));
}

describe('sonde with mysqld_exporter command line', { timeout: 180_000 }, () => {
  let server: MariaDB;
  let dir: string;
  let cnf: string;
  let home: string;

  before(async () => {
    server = await startMariaDB();
    await server.createUser('exporter', PASSWORD, [
      'PROCESS ON *.*',
      'REPLICATION CLIENT ON *.*',
      'SELECT ON *.*',
    ]);
    await server.query('CREATE DATABASE shop');
    await server.query('CREATE TABLE shop.orders (id int AUTO_INCREMENT PRIMARY KEY) ENGINE=InnoDB');
    await server.query('INSERT INTO shop.orders VALUES (), (), ()');
    dir = mkdtempSync(join(tmpdir(), 'sonde-cli-'));
    home = join(dir, 'home');
    cnf = join(dir, 'exporter.cnf');
    writeFileSync(
      cnf,
      ['[client]', 'user=exporter', `password=${PASSWORD}`, 'host=127.0.0.1', `port=${server.port}`, ''].join(
        '\n',
      ),
    );
  });
  after(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the same ARGS serve the same families as the real mysqld_exporter', async () => {
    const realAddr = `127.0.0.1:${await freePort()}`;
    const sondeAddr = `127.0.0.1:${await freePort()}`;
    const real = await startReal([...typicalArgs(cnf), `--web.listen-address=${realAddr}`], realAddr);
    let sonde: CliExporter | undefined;
    try {
      sonde = await startSondeCli([...typicalArgs(cnf), '--web.listen-address', sondeAddr], sondeAddr);
      await families(sondeAddr); // a first scrape each, so both report their errors the same way
      await families(realAddr);
      const [r, s] = await Promise.all([families(realAddr), families(sondeAddr)]);
      const onlyReal = [...r].filter((n) => !s.has(n));
      // 0.14 lacks the success family and the reload gauges (both from 0.15).
      const newer = /^(mysql_exporter_collector_success|mysqld_exporter_config_last_reload_.*)$/;
      const onlySonde = [...s].filter((n) => !r.has(n) && !newer.test(n));
      assert.deepEqual(onlyReal, [], 'families only mysqld_exporter serves');
      assert.deepEqual(onlySonde, [], 'families only sonde serves');
      assert.ok(s.has('mysql_up') && s.has('mysql_global_status_commands_total'));
      for (const n of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'process_open_fds'])
        assert.ok(s.has(n), n);
      // The build-info gauge: the same HELP, TYPE and label names, value 1.
      const scrape = async (a: string) => parseExposition((await httpGet(`http://${a}/metrics`)).body);
      const [rb, sb] = [await scrape(realAddr), await scrape(sondeAddr)];
      const info = (f: typeof rb) => f.get('mysqld_exporter_build_info');
      assert.equal(info(sb)?.help, info(rb)?.help);
      assert.equal(info(sb)?.type, 'gauge');
      const labelNames = (f: typeof rb) =>
        [...(info(f)?.series.keys() ?? [])].map((k) =>
          [...k.matchAll(/(\w+)="/g)].map((m) => m[1]).join(','),
        );
      assert.deepEqual(labelNames(sb), labelNames(rb));
      assert.match(
        (await sonde.get('/metrics')).body,
        /^mysqld_exporter_build_info\{.*version="\d+\.\d+\.\d+.*\} 1$/m,
      );
      assert.ok(r.size > 100, `the real exporter served ${r.size} families`);
      assert.match((await sonde.get('/metrics')).body, /^mysql_up 1$/m);
    } finally {
      await sonde?.stop();
      await real.stop();
    }
  });

  it('--mysqld.address, --mysqld.username and MYSQLD_EXPORTER_PASSWORD without a my.cnf', async () => {
    const addr = `127.0.0.1:${await freePort()}`;
    const sonde = await startSondeCli(
      [
        `--mysqld.address=127.0.0.1:${server.port}`,
        '--mysqld.username',
        'exporter',
        `--web.listen-address=${addr}`,
      ],
      addr,
      { env: { HOME: home, MYSQLD_EXPORTER_PASSWORD: PASSWORD } },
    );
    try {
      const body = (await sonde.get('/metrics')).body;
      assert.match(body, /^mysql_up 1$/m);
      assert.ok(!sonde.stderr().includes(PASSWORD) && !sonde.stdout().includes(PASSWORD));
    } finally {
      assert.equal(await sonde.stop(), 0);
    }
  });

  it("DATA_SOURCE_NAME (mysqld_exporter 0.14's connection string) replaces my.cnf and the flags", async () => {
    const addr = `127.0.0.1:${await freePort()}`;
    const sonde = await startSondeCli(
      ['--mysqld.address=127.0.0.1:1', '--mysqld.username=nobody', `--web.listen-address=${addr}`],
      addr,
      { env: { HOME: home, DATA_SOURCE_NAME: `exporter:${PASSWORD}@tcp(127.0.0.1:${server.port})/` } },
    );
    try {
      assert.match((await sonde.get('/metrics')).body, /^mysql_up 1$/m);
      assert.ok(!sonde.stderr().includes(PASSWORD) && !sonde.stdout().includes(PASSWORD));
    } finally {
      assert.equal(await sonde.stop(), 0);
    }
    const bad = await runSonde([`--web.listen-address=${addr}`], {
      env: {
        HOME: home,
        DATA_SOURCE_NAME: `exporter:${PASSWORD}@tcp(127.0.0.1:${server.port})/?parseTime=true`,
      },
    });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /DATA_SOURCE_NAME: parameter parseTime: not supported \(only tls\)/);
    assert.ok(!bad.stderr.includes(PASSWORD));
  });

  it('my.cnf wins over the flags, as in mysqld_exporter', async () => {
    const addr = `127.0.0.1:${await freePort()}`;
    // a wrong address and user on the command line: my.cnf's host, port and user are used
    const sonde = await startSondeCli(
      [
        '--config.my-cnf',
        cnf,
        '--mysqld.address=127.0.0.1:1',
        '--mysqld.username=nobody',
        `--web.listen-address=${addr}`,
      ],
      addr,
      { env: { HOME: home, MYSQLD_EXPORTER_PASSWORD: 'wrong' } },
    );
    try {
      assert.match((await sonde.get('/metrics?collect[]=global_status')).body, /^mysql_up 1$/m);
    } finally {
      await sonde.stop();
    }
  });

  it('refuses a bad command line like mysqld_exporter: exit code 1 and the same error', async () => {
    const bad: string[][] = [
      ['--collect.bogus'],
      ['--web.telemetry-path'],
      ['--web.telemetry-path=/a', '--web.telemetry-path=/b'],
      ['stray'],
      ['--no-web.telemetry-path'],
      ['--timeout-offset=abc'],
      ['--exporter.lock_wait_timeout=abc'],
      ['--log.level=bogus'],
      ['--collect.slave_status', '--web.listen-address=127.0.0.1:1', '-x'],
    ];
    for (const args of bad) {
      const full = ['--config.my-cnf', cnf, ...args];
      const real = runReal(full);
      const sonde = await runSonde(full, { env: { HOME: home } });
      const why = (text: string) => /: error: (.*)$/m.exec(text)?.[1];
      assert.equal(real.code, 1, `real ${args.join(' ')}`);
      assert.equal(sonde.code, 1, `sonde ${args.join(' ')}`);
      assert.ok(why(real.stderr) !== undefined, real.stderr);
      assert.equal(why(sonde.stderr), why(real.stderr), args.join(' '));
    }
  });

  it('a my.cnf that cannot be read, or no user at all, fails the start', async () => {
    const missing = await runSonde(['--config.my-cnf', join(dir, 'nope.cnf')], { env: { HOME: home } });
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /--config\.my-cnf: open .*nope\.cnf: no such file or directory/);
    const noUser = await runSonde(['--web.listen-address=127.0.0.1:0'], { env: { HOME: home } });
    assert.equal(noUser.code, 1);
    assert.match(
      noUser.stderr,
      /no MySQL user: set user in the \[client\] section of --config\.my-cnf, or --mysqld\.username/,
    );
  });

  it('--version and --help answer and exit 0', async () => {
    const v = await runSonde(['--version', '--web.listen-address=:9104']);
    assert.equal(v.code, 0);
    assert.match(v.stdout, /^sonde, version \S+ \(mysqld_exporter command line\)$/m);
    const h = await runSonde(['--web.telemetry-path=/metrics', '--help']);
    assert.equal(h.code, 0);
    for (const flag of [
      '--config.my-cnf',
      '--mysqld.address',
      '--collect.slave_status',
      '--exporter.query_timeout',
      '--log.level',
    ])
      assert.ok(h.stdout.includes(flag), flag);
    // --log.level alone is read by sonde's own command line (both have it).
    const own = await runSonde(['--log.level=info', '--help']);
    assert.equal(own.code, 0);
    assert.match(own.stdout, /^Usage: sonde \[options\]/);
    assert.ok(own.stdout.includes('--log.format <format>'));
    assert.ok(!own.stdout.includes('--config.my-cnf'));
  });
});
