/**
 * Plan files and the exporter: a config with `plans.files` and the exporter on keeps the
 * built-in `default-exporter` for the exporter (normal collection runs the file's plan);
 * `exporter.flags.collect.*` in the config file choose the collectors as on mysqld_exporter's
 * command line (its default set, shaped by the flags); an `exporter.plan` that no file
 * defines is an error naming `exporter.plan`, in the status and in `--check`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { runSonde, startAgent, type Agent } from '../helpers/agent.js';
import { UPSTREAM_SCRAPERS } from '../../src/core/upstream.js';

const PASSWORD = 'plan-Files-31';
const GOOD = 'kpi:\n  freq: 1s\n  collect:\n    status.global:\n      metrics: [threads_connected]\n';

let db: MariaDB;
let agent: Agent;
const port: Record<string, number> = {};

/** The `collect.*` labels of mysqld_exporter's per-collector duration family (not `connection`). */
function collectors(body: string): string[] {
  const out = new Set<string>();
  for (const m of body.matchAll(/^mysql_exporter_collector_duration_seconds\{collector="([^"]+)"\}/gm))
    if (m[1]?.startsWith('collect.')) out.add(m[1]);
  return [...out].sort();
}

async function scrape(id: string): Promise<string | undefined> {
  const res = await fetch(`http://127.0.0.1:${port[id]}/metrics`).catch(() => undefined);
  const body = await res?.text();
  return body !== undefined && /^mysql_up 1$/m.test(body) ? body : undefined;
}

function config(): string {
  const monitor = (id: string, extra = ''): string =>
    `  - id: ${id}\n    socket: ${db.socket}\n    exporter:\n      flags:\n        web.listen-address: 127.0.0.1:${port[id]}\n${extra}`;
  return `api:
  bind: {{API}}
mysql:
  username: sonde
  password: ${PASSWORD}
plans:
  files: [good.yaml]
exporter:
  mode: dual
monitors:
${monitor('plain')}${monitor('flagged', '        collect.info_schema.processlist: "true"\n        collect.global_variables: "false"\n')}${monitor('missing', '      plan: nosuch.yaml\n')}`;
}

describe('plan files and the exporter', () => {
  before(async () => {
    db = await startMariaDB();
    await db.createUser('sonde', PASSWORD, ['PROCESS, REPLICATION CLIENT ON *.*']);
    for (const id of ['plain', 'flagged', 'missing']) port[id] = await freePort();
    agent = await startAgent(config(), { files: { 'good.yaml': GOOD } });
  });
  after(async () => {
    await agent?.stop();
    await db?.stop();
  });

  it('keeps default-exporter for the exporter while the monitor runs the plan file', async () => {
    const body = await agent.until('the plain exporter', () => scrape('plain'), 30_000);
    assert.deepEqual(collectors(body), [
      'collect.global_status',
      'collect.global_variables',
      'collect.info_schema.innodb_metrics',
    ]);
    const st = (await agent.monitorsStatus()).plain ?? {};
    assert.match(st.monitor ?? '', /^running since /);
    assert.match(st['level-plan'] ?? '', /good\.yaml/);
  });

  it('choose the collectors with exporter.flags.collect.* as the command line does', async () => {
    const body = await agent.until('the flagged exporter', () => scrape('flagged'), 30_000);
    const expected = UPSTREAM_SCRAPERS.filter((s) => s.enabled && s.name !== 'global_variables')
      .map((s) => `collect.${s.name}`)
      .concat('collect.info_schema.processlist')
      .sort();
    assert.deepEqual(collectors(body), expected);
  });

  it('names exporter.plan when the plan it names is missing', async () => {
    const st = await agent.until('the missing plan reported', async () => {
      const s = (await agent.monitorsStatus()).missing ?? {};
      return s.exporter?.includes('exporter.plan') ? s : undefined;
    });
    assert.match(
      st.exporter ?? '',
      /exporter\.plan nosuch\.yaml: .*set exporter\.plan to a plan the monitor loads/,
    );
    const dir = agent.dir;
    writeFileSync(join(dir, 'check.yaml'), config().replace('{{API}}', '127.0.0.1:0'));
    const check = await runSonde(['--check', '--config', 'check.yaml'], { cwd: dir });
    assert.equal(check.code, 1);
    assert.match(check.stdout, /^OK {3}plain: plans good\.yaml, default-exporter \(exporter\)$/m);
    assert.match(check.stdout, /^FAIL missing: .*exporter\.plan nosuch\.yaml/m);
  });
});
