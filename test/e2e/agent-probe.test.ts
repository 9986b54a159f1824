/**
 * The probe listener in the running agent, with the real peers: two throwaway MariaDB
 * servers as two monitors; a real Prometheus discovers them through `http_sd_configs` on
 * `/targets`, scrapes each through `/probe` with the usual relabeling, and returns every
 * target's `mysql_up` from its query API. Also: the agent's own `/metrics`, an auth module
 * from my.cnf, and refusals that connect nowhere.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { freePort, startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { runSonde, startAgent, writeConfig, type Agent } from '../helpers/agent.js';
import { httpGet, startPrometheusJobs, waitFor, type PrometheusPeer } from './exporter-peers.js';

const PASSWORD = 'probe-Secret-41';
const LIMITED_PASSWORD = 'limited-Secret-42';

let alpha: MariaDB;
let beta: MariaDB;
let agent: Agent;
let probePort: number;
let prometheus: PrometheusPeer | undefined;

function sample(body: string, series: string): number | undefined {
  const line = body.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function probe(query: string): Promise<{ status: number; body: string }> {
  const r = await httpGet(`http://127.0.0.1:${probePort}${query}`);
  return { status: r.status, body: r.body };
}

describe('probe listener in the agent', () => {
  before(async () => {
    [alpha, beta] = await Promise.all([startMariaDB(), startMariaDB()]);
    for (const db of [alpha, beta])
      await db.createUser('sonde', PASSWORD, ['PROCESS, REPLICATION CLIENT ON *.*']);
    // No PROCESS: information_schema.INNODB_METRICS is refused to this user.
    await alpha.createUser('limited', LIMITED_PASSWORD, ['REPLICATION CLIENT ON *.*']);
    probePort = await freePort();
    agent = await startAgent(
      `api:
  bind: {{API}}
probe:
  bind: 127.0.0.1:${probePort}
mysql:
  username: sonde
  password: ${PASSWORD}
plans:
  files: [kpi.yaml]
sinks:
  noop:
monitors:
  - id: alpha
    hostname: 127.0.0.1:${alpha.port}
    mycnf: my.cnf
    tags:
      env: e2e
      team-name: core
  - id: beta
    hostname: 127.0.0.1:${beta.port}
    tags:
      env: e2e
`,
      {
        files: {
          'kpi.yaml':
            'kpi:\n  freq: 1s\n  collect:\n    status.global:\n      metrics: [threads_connected]\n',
          'my.cnf': [
            '[client.limited]',
            'user = limited',
            `password = ${LIMITED_PASSWORD}`,
            '[client.wrong]',
            'user = sonde',
            'password = not-the-password',
            '',
          ].join('\n'),
        },
      },
    );
    await agent.until('probe listener up', async () => (await probe('/targets')).status === 200);
  });

  after(async () => {
    await prometheus?.stop();
    await agent?.stop();
    await Promise.all([alpha?.stop(), beta?.stop()]);
  });

  it('lists both monitors as http_sd targets with their tags and address', async () => {
    const r = await probe('/targets');
    assert.deepEqual(JSON.parse(r.body), [
      {
        targets: ['alpha'],
        labels: { env: 'e2e', team_name: 'core', mysql_address: `127.0.0.1:${alpha.port}` },
      },
      { targets: ['beta'], labels: { env: 'e2e', mysql_address: `127.0.0.1:${beta.port}` } },
    ]);
  });

  it('is discovered and scraped by a real Prometheus: mysql_up of every target from its query API', async () => {
    prometheus = await startPrometheusJobs([
      '  - job_name: mysql',
      '    metrics_path: /probe',
      '    http_sd_configs:',
      `      - url: http://127.0.0.1:${probePort}/targets`,
      '        refresh_interval: 1s',
      '    relabel_configs:',
      '      - source_labels: [__address__]',
      '        target_label: __param_target',
      '      - source_labels: [__param_target]',
      '        target_label: instance',
      '      - target_label: __address__',
      `        replacement: 127.0.0.1:${probePort}`,
    ]);
    const prom = prometheus;
    const up = await waitFor(
      'mysql_up of both targets in Prometheus',
      async () => {
        const r = await prom.query('mysql_up');
        return r.length === 2 ? r : undefined;
      },
      60_000,
    );
    const byInstance = new Map(up.map((s) => [s.metric.instance, s]));
    for (const [id, db] of [
      ['alpha', alpha],
      ['beta', beta],
    ] as const) {
      const s = byInstance.get(id);
      assert.equal(s?.value[1], '1', `${id} is up`);
      assert.equal(s?.metric.job, 'mysql');
      assert.equal(s?.metric.env, 'e2e');
      assert.equal(s?.metric.mysql_address, `127.0.0.1:${db.port}`);
    }
    const [conn] = await prom.query('mysql_global_variables_max_connections{instance="beta"}');
    const [row] = await beta.query('SELECT @@max_connections AS m');
    assert.equal(Number(conn?.value[1]), Number(row?.m), 'the probe of beta read beta');
  });

  it('answers a probe by host:port as by id, with collect[] and the self-metrics', async () => {
    const r = await probe(`/probe?target=127.0.0.1:${beta.port}&collect[]=global_status`);
    assert.equal(r.status, 200);
    assert.equal(sample(r.body, 'mysql_up'), 1);
    assert.ok(sample(r.body, 'mysql_global_status_uptime') !== undefined);
    assert.equal(sample(r.body, 'mysql_global_variables_max_connections'), undefined, 'filtered out');
    assert.equal(sample(r.body, 'mysql_exporter_collector_success{collector="collect.global_status"}'), 1);
  });

  it('uses the [client.<name>] credentials of the monitor’s my.cnf with auth_module', async () => {
    const own = await probe('/probe?target=alpha');
    const innodb = 'mysql_exporter_collector_success{collector="collect.info_schema.innodb_metrics"}';
    assert.equal(sample(own.body, innodb), 1, 'the monitor’s user has PROCESS');
    const limited = await probe('/probe?target=alpha&auth_module=limited');
    assert.equal(limited.status, 200);
    assert.equal(sample(limited.body, 'mysql_up'), 1);
    assert.equal(sample(limited.body, innodb), 0, 'the module’s user has no PROCESS');
    // Upstream's spelling of the same module, and a module with a wrong password.
    assert.equal(sample((await probe('/probe?target=alpha&auth_module=client.limited')).body, 'mysql_up'), 1);
    const wrong = await probe('/probe?target=alpha&auth_module=wrong');
    assert.equal(wrong.status, 200);
    assert.equal(sample(wrong.body, 'mysql_up'), 0);
    // The probe's own pool is closed once answered: no connection of the module's user stays.
    const left = await waitFor('the module’s connections closed', async () => {
      const rows = await alpha.query(
        "SELECT COUNT(*) AS n FROM information_schema.processlist WHERE user = 'limited'",
      );
      return Number(rows[0]?.n) === 0 ? true : undefined;
    });
    assert.equal(left, true);
    for (const text of [agent.stdout(), agent.stderr(), wrong.body, limited.body])
      assert.ok(!text.includes(LIMITED_PASSWORD) && !text.includes(PASSWORD), 'no password printed');
  });

  it('refuses unknown targets and auth modules with a 4xx', async () => {
    const cases: [string, number, string][] = [
      ['/probe', 400, 'target is required'],
      ['/probe?target=127.0.0.1:1', 404, 'unknown target "127.0.0.1:1": no monitor has this id or address'],
      ['/probe?target=gamma', 400, 'invalid target "gamma": want a monitor id or host:port'],
      ['/probe?target=alpha&auth_module=nope', 400, 'auth_module nope: no [client.nope] section in my.cnf'],
      ['/probe?target=beta&auth_module=limited', 400, 'auth_module limited: monitor beta has no mycnf'],
    ];
    for (const [path, status, reason] of cases) {
      const r = await probe(path);
      assert.equal(r.status, status, path);
      assert.equal(r.body, `${reason}\n`, path);
    }
  });

  it('serves the agent’s own metrics: process, Node.js and per-monitor collection counts', async () => {
    const body = await waitFor('collections counted for both monitors and readers', async () => {
      const r = await probe('/metrics');
      const counted = ['alpha', 'beta'].every(
        (m) =>
          (sample(r.body, `sonde_collections_total{monitor="${m}",reader="level"}`) ?? 0) > 0 &&
          (sample(r.body, `sonde_collections_total{monitor="${m}",reader="scrape"}`) ?? 0) > 0,
      );
      return counted ? r.body : undefined;
    });
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'process_virtual_memory_bytes',
      'process_open_fds',
      'process_max_fds',
      'process_start_time_seconds',
      'nodejs_heap_size_used_bytes',
    ])
      assert.ok((sample(body, name) ?? 0) > 0, `${name} > 0`);
    // alpha's probes with the limited user failed innodb_metrics, and were counted.
    assert.ok((sample(body, 'sonde_collection_errors_total{monitor="alpha",reader="scrape"}') ?? 0) > 0);
    assert.ok(sample(body, 'sonde_collection_errors_total{monitor="beta",reader="scrape"}') !== undefined);
  });
});

describe('probe config at boot', () => {
  const NO_AUTO = 'monitor-loader:\n  local:\n    disable-auto: true\n';

  /** Boot with this config: exit 1 and the one stderr line's error. */
  async function bootError(yaml: string): Promise<string> {
    const [, path] = writeConfig(NO_AUTO + yaml);
    const r = await runSonde(['--config', path, '--run=false']);
    assert.equal(r.code, 1, r.stderr);
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    assert.equal(lines.length, 1, r.stderr);
    return (lines[0] ?? '').replace(/^.* server\.Boot failed: /, '');
  }

  it('fails the boot with one line naming the key', async () => {
    const port = await freePort();
    assert.match(
      await bootError('probe:\n  bind: nowhere\n'),
      /^\/.*\/sonde\.yaml: line 5: invalid config\.probe\.bind: "nowhere": want host:port or :port$/,
    );
    assert.equal(
      await bootError(`api:\n  bind: 127.0.0.1:${port}\nprobe:\n  bind: 127.0.0.1:${port}\n`),
      `probe.bind: 127.0.0.1:${port} is also api.bind; the two listeners need distinct addresses`,
    );
    assert.equal(
      await bootError(
        `api:\n  disable: true\nprobe:\n  bind: 127.0.0.1:${port}\n  web-config-file: web.yml\n`,
      ),
      'probe.web-config-file: web.yml: cannot read: ENOENT',
    );
    assert.match(await bootError('probe:\n  bind: ":9104"\n  path: /probe\n'), /unknown key probe\.path/);
  });

  it('boots without a probe listener when probe.bind is not set', async () => {
    const [, path] = writeConfig(`${NO_AUTO}api:\n  disable: true\nprobe:\n  bind: ""\n`);
    const r = await runSonde(['--config', path, '--run=false']);
    assert.equal(r.code, 0, r.stderr);
  });
});
