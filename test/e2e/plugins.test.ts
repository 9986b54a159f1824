/**
 * Plugins in the real agent: the sample plugin (examples/plugins/custom-table) listed under
 * `plugins:` adds the `custom.queue` domain and the `jsonl` sink; a plan collects the
 * application's table from a throwaway MariaDB and the sink writes its rows' values to a
 * file. A plugin that takes a built-in's name fails the boot with one line naming it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { ROOT, runSonde, startAgent, writeConfig, type Agent } from '../helpers/agent.js';

const EXAMPLE = join(ROOT, 'examples/plugins/custom-table/index.js');
const PASSWORD = 'Pw-plugins-e2e-71';

const PLAN = `fast:
  freq: 1s
  collect:
    custom.queue:
      metrics: [depth]
`;

interface Line {
  monitor: string;
  plan: string;
  level: string;
  domain: string;
  metric: string;
  value: number;
  type: string;
  group?: Record<string, string>;
}

/** The jsonl file's lines, parsed ([] while it does not exist). */
function readLines(file: string): Line[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Line);
}

describe('plugins: the sample plugin in the agent', () => {
  let db: MariaDB;
  let agent: Agent;

  before(async () => {
    db = await startMariaDB();
    await db.query('CREATE DATABASE app');
    await db.query('CREATE TABLE app.queue_depth (name VARCHAR(32) PRIMARY KEY, depth BIGINT NULL)');
    await db.query("INSERT INTO app.queue_depth VALUES ('mail', 7), ('sms', 0), ('push', NULL)");
    await db.createUser('sonde', PASSWORD, ['SELECT ON app.*']);
    agent = await startAgent(
      `api:
  bind: {{API}}
plugins: [${EXAMPLE}]
mysql:
  username: sonde
  password: ${PASSWORD}
plans:
  files: [plan.yaml]
monitors:
  - id: q1
    socket: ${db.socket}
    sinks:
      jsonl:
        file: out.jsonl
`,
      { files: { 'plan.yaml': PLAN } },
    );
  });

  after(async () => {
    await agent?.stop('SIGTERM');
    await db?.stop();
  });

  it('GET /registered lists the plugin collector and sink beside the built-ins', async () => {
    const r = await agent.json<{ collectors: string[]; sinks: string[] }>('/registered');
    assert.ok(r.collectors.includes('custom.queue'), r.collectors.join(','));
    assert.ok(r.collectors.includes('status.global'));
    assert.ok(r.sinks.includes('jsonl'), r.sinks.join(','));
    assert.ok(r.sinks.includes('log'));
  });

  it("writes the table's rows to the jsonl file, a NULL depth left out, and follows changes", async () => {
    const file = join(agent.dir, 'out.jsonl');
    const depths = (lines: Line[]) =>
      new Map(lines.filter((l) => l.domain === 'custom.queue').map((l) => [l.group?.queue, l.value]));
    const first = await agent.until('mail and sms in out.jsonl', async () => {
      const d = depths(readLines(file));
      return d.has('mail') && d.has('sms') ? readLines(file) : undefined;
    });
    const line = first.find((l) => l.group?.queue === 'mail');
    const { monitor, plan, level, domain, metric, value, type, group } = line ?? ({} as Partial<Line>);
    assert.deepEqual(
      { monitor, plan, level, domain, metric, value, type, group },
      {
        monitor: 'q1',
        plan: 'plan.yaml',
        level: 'fast',
        domain: 'custom.queue',
        metric: 'depth',
        value: 7,
        type: 'gauge',
        group: { queue: 'mail' },
      },
    );
    assert.equal(depths(first).get('sms'), 0);
    assert.equal(
      first.some((l) => l.group?.queue === 'push'),
      false,
    );
    await db.query("UPDATE app.queue_depth SET depth = 12 WHERE name = 'mail'");
    await agent.until('mail = 12 in out.jsonl', async () => depths(readLines(file)).get('mail') === 12);
  });
});

describe('plugins: a bad plugin fails the boot', () => {
  it('exits 1 with one line naming the module, resolved from the config file directory', async () => {
    const [dir, path] = writeConfig(`api:
  disable: true
plugins: [./bad.js]
monitors: []
`);
    try {
      writeFileSync(
        join(dir, 'bad.js'),
        `export default {
  register(api) {
    api.collector({
      help: { domain: 'status.global', description: 'mine', sources: [], options: [], errors: [], groups: [], meta: [], metrics: [] },
      create: () => ({}),
    });
  },
};
`,
      );
      // The working directory is the repository, not the config's: ./bad.js is found next to the config.
      const r = await runSonde(['--config', path], { cwd: ROOT });
      assert.equal(r.code, 1);
      const lines = r.stderr.split('\n').filter((l) => l.includes('server.Boot failed'));
      assert.equal(lines.length, 1, r.stderr);
      assert.match(
        lines[0] ?? '',
        /server\.Boot failed: plugins: \.\/bad\.js: collector for domain status\.global already registered \(by built-in\)$/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
