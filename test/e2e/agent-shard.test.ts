/**
 * Sharding with no coordinator, with real processes: three agents over the same 30
 * monitors, each started with its own `--shard i/3`, split the monitors between them with
 * none left out and none collected twice, exactly as Prometheus' own `hashmod` relabeling
 * splits the same ids (checked against a real Prometheus, which also finds each monitor on
 * the agent that collects it, with the scrape configuration of docs/deploy.md); an agent
 * stopped and started again with the same shard gets the same monitors back.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { freePort, startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { agentConfigHead, runSonde, startAgent, writeConfig, type Agent } from '../helpers/agent.js';
import { httpGet, startPrometheusJobs, waitFor, type PrometheusPeer } from './exporter-peers.js';

const PASSWORD = 'Pw-shard-7c1e-SECRET';
const N = 3;
const IDS = Array.from({ length: 30 }, (_, k) => `db-${String(k + 1).padStart(2, '0')}`);

/** One cheap domain at a long interval: the agents stay light on a small machine. */
const PLAN = `slow:
  freq: 60s
  collect:
    status.global:
      metrics: [uptime]
`;

/** hashmod by hand: the last 16 hex digits of the MD5 digest, as one number, modulo n. */
function predicted(id: string, n: number): number {
  const hex = createHash('md5').update(id, 'utf8').digest('hex');
  return Number(BigInt(`0x${hex.slice(16)}`) % BigInt(n));
}

let db: MariaDB;
let config: string;
let files: Record<string, string>;
const agents: Agent[] = [];
/** The probe listener's port of agent i (kept when it restarts). */
const probePorts: number[] = [];

function startShard(i: number, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Agent> {
  const probe = `probe:\n  bind: 127.0.0.1:${probePorts[i]}\n`;
  return startAgent(config + probe, { args, env, files, ready: true });
}

/** The ids of `GET /monitors`, and the ids of `GET /status/monitors` (which must agree). */
async function idsOf(agent: Agent): Promise<string[]> {
  const listed = Object.keys(await agent.json<Record<string, string>>('/monitors'));
  assert.deepEqual(Object.keys(await agent.monitorsStatus()).sort(), [...listed].sort());
  return listed.sort();
}

interface Target {
  labels: Record<string, string>;
  scrapePool: string;
  scrapeUrl: string;
}

/**
 * Prometheus' targets once it has sorted them all: the N hashmod jobs (30 targets each, kept
 * or dropped) and the `mysql` job (30 targets found on the agents).
 */
async function sortedTargets(prom: PrometheusPeer): Promise<Target[]> {
  return waitFor('Prometheus to sort every target', async () => {
    const r = await httpGet(`http://${prom.address}/api/v1/targets`);
    type Dropped = { discoveredLabels: Record<string, string> };
    const d = (JSON.parse(r.body) as { data: { activeTargets: Target[]; droppedTargets: Dropped[] } }).data;
    const hashmod = [
      ...d.activeTargets.map((t) => t.scrapePool),
      ...d.droppedTargets.map((t) => t.discoveredLabels.job ?? ''),
    ].filter((job) => job.startsWith('shard-'));
    const mysql = d.activeTargets.filter((t) => t.scrapePool === 'mysql');
    return hashmod.length === N * IDS.length && mysql.length === IDS.length ? d.activeTargets : undefined;
  });
}

/** The ids Prometheus keeps in each of the N jobs that keep shard i by `hashmod`. */
function prometheusSplit(targets: Target[]): string[][] {
  return Array.from({ length: N }, (_, i) =>
    targets
      .filter((t) => t.scrapePool === `shard-${i}`)
      .map((t) => t.labels.monitor ?? '')
      .sort(),
  );
}

/**
 * The scrape job of docs/deploy.md: the monitors from each agent's `/targets`, each scraped
 * through `/probe` on the agent it came from (`__meta_url`).
 */
function mysqlJob(): string {
  return [
    '  - job_name: mysql',
    '    scrape_interval: 1h',
    '    metrics_path: /probe',
    '    http_sd_configs:',
    ...probePorts.map((p) => `      - url: http://127.0.0.1:${p}/targets`),
    '    relabel_configs:',
    '      - source_labels: [__address__]',
    '        target_label: __param_target',
    '      - source_labels: [__param_target]',
    '        target_label: instance',
    '      - source_labels: [__meta_url]',
    '        regex: https?://([^/]+)/targets',
    '        target_label: __address__',
  ].join('\n');
}

/** A job of N × 30 targets (never reached) that keeps the ids of shard i by hashmod. */
function prometheusJob(i: number): string {
  return [
    `  - job_name: shard-${i}`,
    '    scrape_interval: 1h',
    '    static_configs:',
    ...IDS.flatMap((id) => [`      - targets: ['127.0.0.1:9']`, `        labels: {monitor: ${id}}`]),
    '    relabel_configs:',
    '      - {source_labels: [monitor], modulus: 3, target_label: __tmp_shard, action: hashmod}',
    `      - {source_labels: [__tmp_shard], regex: '${i}', action: keep}`,
  ].join('\n');
}

describe('agents sharded with --shard i/n', () => {
  before(async () => {
    db = await startMariaDB();
    await db.createUser('sonde', PASSWORD);
    config = `${agentConfigHead(PASSWORD)}sinks:
  noop: {}
monitor-loader:
  files: [monitors.yaml]
  local:
    disable-auto: true
`;
    files = {
      'plan.yaml': PLAN,
      'monitors.yaml': `monitors:\n${IDS.map((id) => `  - id: ${id}\n    socket: ${db.socket}\n`).join('')}`,
    };
    for (let i = 0; i < N; i++) probePorts.push(await freePort());
    // Each agent is kept as it gets ready, so that after() stops those that did when another fails.
    const ready = Array.from({ length: N }, (_, i) =>
      startShard(i, ['--shard', `${i}/${N}`]).then((a) => (agents[i] = a)),
    );
    await Promise.all(ready);
  });

  after(async () => {
    await Promise.all(agents.filter((a) => a !== undefined).map((a) => a.stop('SIGTERM')));
    await db?.stop();
  });

  it('collects every monitor on exactly one agent, each agent its hashmod share', async () => {
    const sets = await Promise.all(agents.map(idsOf));
    assert.deepEqual(sets.flat().sort(), IDS);
    for (const [i, set] of sets.entries()) {
      assert.deepEqual(
        set,
        IDS.filter((id) => predicted(id, N) === i),
        `agent ${i}/${N}`,
      );
      assert.ok(set.length > 0, `agent ${i}/${N} has monitors`);
      const status = await agents[i]!.json<Record<string, string>>('/status');
      assert.equal(status.shard, `${i}/${N}`);
      assert.equal(status.monitors, String(set.length));
    }
  });

  it('splits the ids as a real Prometheus hashmod relabeling does, and Prometheus finds each on its agent', async () => {
    const prom = await startPrometheusJobs([
      ...Array.from({ length: N }, (_, i) => prometheusJob(i)),
      mysqlJob(),
    ]);
    try {
      const targets = await sortedTargets(prom);
      const sets = await Promise.all(agents.map(idsOf));
      assert.deepEqual(sets, prometheusSplit(targets));
      const scraped = targets.filter((t) => t.scrapePool === 'mysql');
      for (const [i, set] of sets.entries()) {
        for (const id of set) {
          const t = scraped.find((x) => x.labels.instance === id);
          assert.equal(t?.scrapeUrl, `http://127.0.0.1:${probePorts[i]}/probe?target=${id}`, id);
        }
      }
    } finally {
      await prom.stop();
    }
  });

  it('gets the same monitors back when an agent is stopped and started again with its shard', async () => {
    const before = await idsOf(agents[1]!);
    assert.equal(await agents[1]!.stop('SIGTERM'), 0);
    // The same shard, given the StatefulSet way: SONDE_SHARD=ordinal/3 on a pod named <name>-1.
    agents[1] = await startShard(1, [], {
      SONDE_SHARD: `ordinal/${N}`,
      HOSTNAME: 'sonde-1',
      SONDE_SHARD_ORDINAL: '',
    });
    assert.deepEqual(await idsOf(agents[1]), before);
    assert.equal((await agents[1].json<Record<string, string>>('/status')).shard, `1/${N}`);
  });

  it('refuses a bad shard at boot with one line naming the flag or the variable', async (t) => {
    const [dir, path] = writeConfig('monitors: []\n');
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const flag = await runSonde(['--config', path, '--run=false', '--shard', '3/3']);
    assert.equal(flag.code, 1);
    assert.match(
      flag.stderr,
      /^\S+ \S+ server\.Boot failed: invalid --shard "3\/3": the shard index must be below n \(shards are 0 to 2\)\n$/,
    );
    const env = await runSonde(['--config', path, '--run=false'], {
      env: { SONDE_SHARD: 'ordinal/3', HOSTNAME: 'sonde', SONDE_SHARD_ORDINAL: '' },
    });
    assert.equal(env.code, 1);
    assert.match(
      env.stderr,
      /server\.Boot failed: invalid SONDE_SHARD "ordinal\/3": host name "sonde" does not end in -<ordinal>/,
    );
    assert.equal(env.stderr.split('\n').length, 2);
  });
});
