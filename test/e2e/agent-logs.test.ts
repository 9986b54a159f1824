/**
 * The agent's logs as an operator reads them: `--log.format=json --log.level=debug` prints
 * one JSON object per line on stderr, with debug lines for the connection, the plan change,
 * each level collection and each sink send, and never the password; `--log.level=error`
 * prints no info or debug line until SIGUSR1 switches debugging on; mysqld_exporter's command
 * line takes the same two flags.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { startAgent, type Agent, agentConfigHead } from '../helpers/agent.js';
import { startSondeCli } from '../helpers/exporter-cli.js';

const PASSWORD = 'Logs-42-pass';

const PLAN = ['kpi:', '  freq: 1s', '  collect:', '    status.global:', '      metrics: [uptime]', ''].join(
  '\n',
);

interface Line {
  time: string;
  level: string;
  event: string;
  monitor?: string;
  message: string;
  caller?: string;
}

let db: MariaDB;

function config(): string {
  return `${agentConfigHead(PASSWORD)}monitors:
  - id: m1
    hostname: 127.0.0.1:${db.port}
sinks:
  noop:
`;
}

/** Start the agent and wait until a collection went through the sinks. */
async function collecting(args: string[]): Promise<Agent> {
  const agent = await startAgent(config(), { args, files: { 'plan.yaml': PLAN } });
  await agent.until('collected and sent', async () => {
    const s = await agent.monitorsStatus();
    return s.m1?.['level-collect']?.startsWith('last collected') ? s : undefined;
  });
  return agent;
}

/** Every non-empty line of `text` parsed as JSON; a line that is not JSON fails the test. */
function jsonLines(text: string): Line[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      try {
        return JSON.parse(l) as Line;
      } catch {
        assert.fail(`not a JSON line: ${l}`);
      }
    });
}

describe('agent logs', { timeout: 90_000 }, () => {
  before(async () => {
    db = await startMariaDB();
    await db.createUser('sonde', PASSWORD, ['PROCESS ON *.*', 'SELECT ON *.*']);
  });

  after(async () => {
    await db?.stop();
  });

  it('--log.format=json --log.level=debug: JSON lines on stderr, with the normal path in debug lines', async () => {
    const agent = await collecting(['--log.format=json', '--log.level=debug']);
    await agent.until('a sink send line', async () => agent.stderr().includes('sink noop: sent '));
    assert.equal(await agent.stop('SIGTERM'), 0);
    assert.equal(agent.stdout(), '', 'nothing on stdout: every line goes to stderr');
    assert.ok(!agent.stderr().includes(PASSWORD), 'the password never appears');
    const lines = jsonLines(agent.stderr());
    for (const l of lines) {
      assert.match(l.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d$/, JSON.stringify(l));
      assert.ok(Number.isFinite(Date.parse(l.time)), l.time);
      assert.ok(['debug', 'info', 'notice', 'warn', 'error'].includes(l.level), JSON.stringify(l));
      assert.equal(typeof l.event, 'string');
      assert.equal(typeof l.message, 'string');
    }
    const debug = lines.filter((l) => l.level === 'debug');
    const find = (re: RegExp): Line | undefined =>
      debug.find((l) => l.monitor === 'm1' && re.test(l.message));
    const connected = find(/^connected to sonde:\.\.\.@tcp\(127\.0\.0\.1:\d+\)\/\S* in \d/);
    assert.ok(connected, 'connect line');
    // The installed command runs with source maps: the line in sonde's TypeScript source.
    assert.match(connected.caller ?? '', /^monitor\.ts:\d+$/);
    assert.ok(
      find(
        /^plan change state:none plan:none -> state:active plan:\(first plan\): monitor started, plan changing off$/,
      ),
    );
    assert.ok(find(/^plan plan\.yaml active \(levels kpi\) after \d/), 'plan active line');
    assert.ok(find(/^plan\.yaml\/kpi\/1: collecting 1 domains: status\.global$/), 'collection start');
    assert.ok(
      find(/^plan\.yaml\/kpi\/1: done: 1 started, 1 domains 1 values collected, \S+ runtime, 0 error$/),
    );
    assert.ok(find(/^sink noop: sent plan\.yaml\/kpi\/1: 1 values in \S+$/), 'sink send line');
    assert.ok(lines.some((l) => l.level === 'info' && l.event === 'monitor-started' && l.monitor === 'm1'));
    assert.ok(lines.some((l) => l.level === 'info' && l.event === 'boot-start' && l.monitor === undefined));
    const stopped = lines.find((l) => l.event === 'server-stopped');
    assert.deepEqual([stopped?.level, stopped?.message], ['notice', 'caught SIGTERM, stopping']);
  });

  it('--log.level=error: no info or debug line; SIGUSR1 switches debugging on and off', async () => {
    const agent = await collecting(['--log.format=json', '--log.level=error']);
    assert.deepEqual(jsonLines(agent.stderr()), [], 'nothing printed while everything works');
    agent.proc.kill('SIGUSR1');
    await agent.until('debug lines', async () => agent.stderr().includes('"level":"debug"'));
    agent.proc.kill('SIGUSR1');
    await agent.until('debugging off', async () => agent.stderr().includes('sonde.Debugging to false'));
    assert.equal(await agent.stop('SIGTERM'), 0);
    assert.equal(agent.stdout(), '');
    const lines = jsonLines(agent.stderr());
    assert.ok(!lines.some((l) => l.level === 'info'), 'no info line');
    assert.deepEqual(
      lines.filter((l) => l.level === 'notice').map((l) => `${l.event}: ${l.message}`),
      [
        'server-debug: SIGUSR1 has set sonde.Debugging to true',
        'server-debug: SIGUSR1 has set sonde.Debugging to false',
        'server-stopped: caught SIGTERM, stopping',
      ],
    );
    const on = lines.findIndex((l) => l.message.endsWith('Debugging to true'));
    const off = lines.findIndex((l) => l.message.endsWith('Debugging to false'));
    const debugAt = lines.flatMap((l, i) => (l.level === 'debug' ? [i] : []));
    assert.ok(
      debugAt.length > 0 && debugAt.every((i) => i > on && i < off),
      'debug lines only while debugging',
    );
  });

  it("mysqld_exporter's command line: --log.format=json --log.level=debug, a scrape in debug lines", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sonde-logs-'));
    const cnf = join(dir, 'my.cnf');
    writeFileSync(cnf, `[client]\nuser=sonde\npassword=${PASSWORD}\nhost=127.0.0.1\nport=${db.port}\n`);
    const address = `127.0.0.1:${await freePort()}`;
    const cli = await startSondeCli(
      ['--config.my-cnf', cnf, `--web.listen-address=${address}`, '--log.format=json', '--log.level=debug'],
      address,
    );
    try {
      assert.equal((await cli.get('/metrics')).status, 200);
    } finally {
      assert.equal(await cli.stop(), 0);
      rmSync(dir, { recursive: true, force: true });
    }
    assert.equal(cli.stdout(), '');
    assert.ok(!cli.stderr().includes(PASSWORD), 'the password never appears');
    const lines = jsonLines(cli.stderr());
    assert.ok(
      lines.some(
        (l) => l.level === 'info' && l.event === 'monitor-started' && l.monitor === 'mysqld_exporter',
      ),
    );
    assert.ok(
      lines.some(
        (l) => l.level === 'debug' && /^connected to sonde:\.\.\.@tcp\(127\.0\.0\.1:\d+\)/.test(l.message),
      ),
      'connect line',
    );
    assert.ok(
      lines.some((l) => l.level === 'debug' && /^mysqld-exporter\/\S+\/\d+: done: /.test(l.message)),
      'scrape collection line',
    );
  });
});
