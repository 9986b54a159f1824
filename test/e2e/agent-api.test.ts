/**
 * The built agent driven over HTTP as a user would, against a real throwaway MariaDB:
 * every endpoint and status code, stop/start/reload/stop-loss, metrics flowing at 1 s with
 * the server's values, and the password absent from every answer and log line.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { startAgent, type Agent, type MonitorsStatus, agentConfigHead } from '../helpers/agent.js';

const PASSWORD = 'Pw-9f83kd-SECRET';
const TS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)$/;

let db: MariaDB;
let agent: Agent;
const answers: string[] = [];

async function call(method: string, path: string): Promise<{ status: number; type: string; body: string }> {
  const r = await agent.http(method, path);
  answers.push(r.body);
  return r;
}
async function monitorsStatus(): Promise<MonitorsStatus> {
  const r = await call('GET', '/status/monitors');
  return JSON.parse(r.body) as MonitorsStatus;
}
function monitorFile(ids: string[]): string {
  if (ids.length === 0) return 'monitors: []\n';
  return `monitors:\n${ids.map((id) => `  - id: ${id}\n    socket: ${db.socket}\n`).join('')}`;
}

const PLAN = `fast:
  freq: 1s
  collect:
    status.global:
      metrics: [threads_connected, com_select, uptime]
    var.global:
      metrics: [max_connections]
    innodb:
      metrics: [lock_timeouts]
`;

describe('agent over HTTP', () => {
  before(async () => {
    db = await startMariaDB();
    await db.createUser('sonde', PASSWORD, ['PROCESS, REPLICATION CLIENT ON *.*']);
    await db.query('SET GLOBAL max_connections = 321');
    agent = await startAgent(
      `${agentConfigHead(PASSWORD)}monitor-loader:
  files: [more.yaml]
  stop-loss: "1"
monitors:
  - id: m1
    socket: ${db.socket}
  - id: m2
    hostname: 127.0.0.1:${db.port}
`,
      { files: { 'plan.yaml': PLAN, 'more.yaml': monitorFile(['m3', 'm4']) } },
    );
  });

  after(async () => {
    await agent?.stop('SIGTERM');
    await db?.stop();
  });

  it('lists monitors with redacted DSNs', async () => {
    const mons = await agent.until('all DSNs built', async () => {
      const m = JSON.parse((await call('GET', '/monitors')).body) as Record<string, string>;
      return Object.values(m).every((d) => d !== '') ? m : undefined;
    });
    assert.deepEqual(Object.keys(mons), ['m1', 'm2', 'm3', 'm4']);
    assert.equal(mons.m1, `sonde:...@unix(${db.socket})/?interpolateParams=true&parseTime=true`);
    assert.equal(mons.m2, `sonde:...@tcp(127.0.0.1:${db.port})/?interpolateParams=true&parseTime=true`);
  });

  it('collects every second and logs the server values', async () => {
    await agent.until('max_connections = 321 in the log sink', async () =>
      agent.stdout().includes('var.global.max_connections = 321'),
    );
    await db.query('SET GLOBAL max_connections = 345');
    await agent.until('the new value in the next collections', async () =>
      agent.stdout().includes('var.global.max_connections = 345'),
    );
    // Uptime reported by the agent tracks the server's own within the collection interval.
    const [row] = await db.query("SHOW GLOBAL STATUS LIKE 'Uptime'");
    const serverUptime = Number(row?.Value);
    const seen = [...agent.stdout().matchAll(/status\.global\.uptime = (\d+)/g)].map((m) => Number(m[1]));
    const last = seen.at(-1) ?? -1;
    assert.ok(Math.abs(serverUptime - last) <= 3, `uptime ${last} vs server ${serverUptime}`);
    // One block per collection, each opening with the log sink's header lines.
    assert.match(
      agent.stdout(),
      /# monitor: {2}m1\n# plan: {5}plan\.yaml\n# level: {4}fast\n# ts: {7}\S+\n# duration: \d+ ms\n/,
    );
  });

  it('reports the status keys of a monitor that collects and sends', async () => {
    const st = await agent.until('m1 collected and sent', async () => {
      const s = await monitorsStatus();
      return s.m1?.['level-collect']?.startsWith('last collected') ? s : undefined;
    });
    const m1 = st.m1 ?? {};
    assert.equal(m1.dsn, `sonde:...@unix(${db.socket})/?interpolateParams=true&parseTime=true`);
    assert.equal(m1['engine-plan'], 'plan.yaml');
    assert.equal(m1['level-plan'], 'plan.yaml');
    assert.equal(m1['level-state'], 'active');
    assert.match(m1.monitor ?? '', /^running since /);
    assert.match((m1.monitor ?? '').replace('running since ', ''), TS);
    assert.match(
      m1['level-collect'] ?? '',
      /^last collected and sent metrics for plan\.yaml\/fast at \S+ in \S+$/,
    );
    assert.match(m1['level-collector'] ?? '', /^idle; started collecting plan\.yaml\/fast at \S+$/);
    for (const v of Object.values(st)) for (const x of Object.values(v)) assert.equal(typeof x, 'string');
  });

  it('reports server status', async () => {
    // The loader paces monitor starts; wait until it has started all four.
    const s = await agent.until('every monitor started', async () => {
      const r = await call('GET', '/status');
      assert.equal(r.status, 200);
      const st = JSON.parse(r.body) as Record<string, string>;
      return st['monitor-loader']?.startsWith('4 monitors started') === true ? st : undefined;
    });
    assert.equal(s.monitors, '4');
    assert.match(s['monitor-loader'] ?? '', /^4 monitors started at /);
    assert.match(s.server ?? '', /^running since /);
    assert.match(s.started ?? '', TS);
    assert.match(s.uptime ?? '', /^\d+$/);
    assert.match(s.version ?? '', /^\d+\.\d+\.\d+$/);
  });

  it('serves version, config and registered components', async () => {
    const v = await call('GET', '/version');
    assert.equal(v.status, 200);
    assert.match(v.type, /^text\/plain/);
    assert.match(v.body, /^v\d+\.\d+\.\d+$/);

    const y = await call('GET', '/config');
    assert.equal(y.status, 200);
    assert.match(y.body, /^api:\n {2}bind: 127\.0\.0\.1:\d+\n/);
    assert.match(y.body, /password: \.\.\./);
    const j = await call('GET', '/config?json');
    const cfg = JSON.parse(j.body) as {
      mysql: { username: string; password: string };
      monitors: { id: string }[];
    };
    assert.equal(cfg.mysql.username, 'sonde');
    assert.equal(cfg.mysql.password, '...');
    assert.deepEqual(
      cfg.monitors.map((m) => m.id),
      ['m1', 'm2'],
    );

    const reg = JSON.parse((await call('GET', '/registered')).body) as {
      collectors: string[];
      sinks: string[];
    };
    for (const d of ['status.global', 'var.global', 'innodb']) assert.ok(reg.collectors.includes(d), d);
    assert.ok(reg.sinks.includes('log'));
  });

  it('answers bad requests with 4xx and a line of text', async () => {
    for (const [method, path, code, text] of [
      ['POST', '/monitors/stop', 400, 'missing id=monitorId in query'],
      ['POST', '/monitors/start?id=', 400, 'missing id=monitorId in query'],
      ['POST', '/monitors/stop?id=nope', 404, 'monitor nope not loaded'],
      ['POST', '/monitors/start?id=nope', 404, 'monitor nope not loaded'],
      ['POST', '/monitors/start?id=m1', 409, 'Error starting monitor m1: already running'],
      ['GET', '/no/such/path', 404, '404 page not found'],
    ] as const) {
      const r = await call(method, path);
      assert.equal(r.status, code, `${method} ${path}`);
      assert.equal(r.body, `${text}\n`);
      assert.match(r.type, /^text\/plain/);
    }
    const wrong = await call('DELETE', '/monitors');
    assert.equal(wrong.status, 405);
  });

  it('stops and starts a monitor; a stopped monitor stays loaded', async () => {
    const stop = await call('POST', '/monitors/stop?id=m2');
    assert.equal(stop.status, 200);
    assert.equal(stop.body, '');
    let st = await monitorsStatus();
    assert.match(st.m2?.monitor ?? '', /^stopped at /);
    assert.ok('m2' in JSON.parse((await call('GET', '/monitors')).body));
    const start = await call('POST', '/monitors/start?id=m2');
    assert.equal(start.status, 200);
    assert.equal(start.body, '');
    st = await agent.until('m2 running again', async () => {
      const s = await monitorsStatus();
      return s.m2?.monitor?.startsWith('running since') ? s : undefined;
    });
    assert.ok(st.m2);
  });

  it('reloads: new monitors start, removed ones unload, unchanged ones are untouched, stop-loss blocks', async () => {
    const before1 = (await monitorsStatus()).m1?.monitor;
    // m2 stopped through the API stays stopped across a reload
    assert.equal((await call('POST', '/monitors/stop?id=m2')).status, 200);

    // Losing two monitors (m3, m4) with stop-loss "1" is refused and changes nothing.
    writeFileSync(join(agent.dir, 'more.yaml'), monitorFile([]));
    const blocked = await call('POST', '/monitors/reload');
    assert.equal(blocked.status, 412);
    assert.match(blocked.body, /^Stop-loss prevented reloading/);
    assert.deepEqual(Object.keys(JSON.parse((await call('GET', '/monitors')).body) as object), [
      'm1',
      'm2',
      'm3',
      'm4',
    ]);

    // A broken monitor file fails the reload with 409; nothing changes.
    writeFileSync(join(agent.dir, 'more.yaml'), 'monitors:\n  - id: [oops\n');
    const bad = await call('POST', '/monitors/reload');
    assert.equal(bad.status, 409);
    assert.match(bad.body, /^Error reloading monitors: /);
    assert.equal(bad.body.split('\n').length, 2);

    // Swap m4 for m5: m4 unloaded, m5 loaded and started, m1 untouched.
    writeFileSync(join(agent.dir, 'more.yaml'), monitorFile(['m3', 'm5']));
    const ok = await call('POST', '/monitors/reload');
    assert.equal(ok.status, 200);
    assert.equal(ok.body, '');
    const mons = JSON.parse((await call('GET', '/monitors')).body) as Record<string, string>;
    assert.deepEqual(Object.keys(mons), ['m1', 'm2', 'm3', 'm5']);
    const st = await agent.until('m5 running', async () => {
      const s = await monitorsStatus();
      return s.m5?.monitor?.startsWith('running since') ? s : undefined;
    });
    assert.equal(st.m4, undefined, 'unloaded monitor has no status');
    assert.equal(st.m1?.monitor, before1, 'unchanged monitor not restarted');
    assert.match(st.m2?.monitor ?? '', /^stopped at /, 'API-stopped monitor stays stopped');
    const server = JSON.parse((await call('GET', '/status')).body) as Record<string, string>;
    assert.equal(server.monitors, '4');
  });

  it('toggles debug with SIGUSR1 and POST /debug, and refuses GET /debug', async () => {
    agent.proc.kill('SIGUSR1');
    await agent.until('SIGUSR1 acknowledged', async () =>
      agent.stderr().includes('SIGUSR1 has set sonde.Debugging to true\n'),
    );
    const refused = await call('GET', '/debug');
    assert.equal(refused.status, 405);
    assert.equal(refused.body, 'method not allowed\n');
    const off = await call('POST', '/debug');
    assert.equal(off.status, 200);
    assert.deepEqual(JSON.parse(off.body), { debugging: false });
    const on = await call('POST', '/debug');
    assert.deepEqual(JSON.parse(on.body), { debugging: true });
    await call('POST', '/debug');
  });

  it('never shows the password', async () => {
    answers.push((await call('GET', '/config')).body, (await call('GET', '/config?json')).body);
    for (const a of answers)
      assert.ok(!a.includes(PASSWORD), `password in an API answer: ${a.slice(0, 200)}`);
    assert.ok(!agent.stdout().includes(PASSWORD), 'password in stdout');
    assert.ok(!agent.stderr().includes(PASSWORD), 'password in stderr');
  });

  it('exits 0 on SIGTERM after stopping every monitor and closing its connections', async () => {
    const [before] = await db.query(
      "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE USER = 'sonde'",
    );
    assert.ok(Number(before?.n) > 0, 'the agent holds connections while running');
    assert.equal(await agent.stop('SIGTERM'), 0);
    // The server notices closed connections asynchronously: allow it a moment.
    const left = await agent.until(
      'connections closed',
      async () => {
        const [row] = await db.query(
          "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE USER = 'sonde'",
        );
        return Number(row?.n) === 0 ? 'none' : undefined;
      },
      3000,
    );
    assert.equal(left, 'none');
  });
});
