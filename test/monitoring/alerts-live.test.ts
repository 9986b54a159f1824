/**
 * The shipped alert rules against real data: a real Prometheus loads monitoring/'s rules,
 * scrapes sonde's exporter on a MariaDB replica, and MySQLReplicationNotRunning fires when
 * the replica's SQL thread is stopped and clears when it runs again. The `for:` durations
 * are shortened to 1s in a copy of the rules (promtool's unit tests cover the real ones).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { type PooledDb } from '../../src/db/pool.js';
import { upstreamPlan } from '../../src/plan/exporter-plan.js';
import { startReplicationPair, type ReplicationPair } from '../helpers/replication.js';
import { startPrometheusJobs, waitFor, type PrometheusPeer } from '../e2e/exporter-peers.js';
import { ruleFiles } from './files.js';
import { startSondeExporter, type SondeExporter } from '../helpers/sonde-exporter.js';
import { rootDb } from '../helpers/mariadb.js';

let pair: ReplicationPair;
let db: PooledDb;
let sonde: SondeExporter;
let prometheus: PrometheusPeer;
let dir: string;

/** The state of one alert for the replica ('' when it is not active). */
async function alertState(name: string): Promise<string> {
  const r = await prometheus.query(`ALERTS{alertname="${name}"}`);
  return r.find((x) => x.value[1] === '1')?.metric.alertstate ?? '';
}

describe('the shipped alerts on a real replica', { timeout: 120_000 }, () => {
  before(async () => {
    pair = await startReplicationPair();
    await pair.waitRunning();
    const socket = pair.replica.socket;
    db = rootDb(socket);
    sonde = await startSondeExporter(db, upstreamPlan(), { monitorId: 'replica' });
    dir = mkdtempSync(join(tmpdir(), 'sonde-rules-'));
    const rules = ruleFiles().map((f) => {
      const copy = join(dir, basename(f));
      writeFileSync(copy, readFileSync(f, 'utf8').replace(/^(\s+)for: \S+$/gm, '$1for: 1s'));
      return copy;
    });
    prometheus = await startPrometheusJobs(
      [['  - job_name: mysql', '    static_configs:', `      - targets: ['${sonde.address}']`].join('\n')],
      rules,
    );
  });

  after(async () => {
    await prometheus?.stop();
    await sonde?.close();
    await db?.close();
    await pair?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('MySQLReplicationNotRunning fires on a stopped SQL thread and clears when it runs again', async () => {
    await waitFor('Prometheus scraping the replica', async () =>
      (await prometheus.query('mysql_slave_status_slave_sql_running == 1')).length > 0 ? true : undefined,
    );
    assert.equal(await alertState('MySQLReplicationNotRunning'), '');
    await pair.stopSqlThread();
    await waitFor(
      'the alert firing',
      async () => ((await alertState('MySQLReplicationNotRunning')) === 'firing' ? true : undefined),
      30_000,
    );
    await pair.startSqlThread();
    await waitFor(
      'the alert clearing',
      async () => ((await alertState('MySQLReplicationNotRunning')) === '' ? true : undefined),
      30_000,
    );
    assert.equal(await alertState('MySQLDown'), '', 'MySQL stayed up all along');
  });
});
