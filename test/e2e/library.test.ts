/**
 * sonde as a library, against a throwaway MariaDB: the shipped embedding example runs as a
 * program (its own inventory, plan, collector, sink and hooks), and each hook and factory of
 * `createAgent()` works in process, with its failures reported like the step it replaces.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { createPool } from 'mysql2/promise';
import {
  createAgent,
  MetricType,
  type AgentEvent,
  type AgentOptions,
  type AwsConfigContext,
  type Db,
  type DbHandle,
  type Metrics,
  type SinkRegistration,
} from '../../src/index.js';
import { ROOT } from '../helpers/agent.js';
import { startSecretsManager } from '../helpers/aws/secrets-manager.js';
import { startMariaDB, type MariaDB } from '../helpers/mariadb.js';

const PASSWORD = 'Lib-pw-4c1e9';
let db: MariaDB;
let dir: string;

before(async () => {
  db = await startMariaDB({ args: ['--performance-schema=ON'] });
  await db.createUser('sonde', PASSWORD, ['PROCESS, REPLICATION CLIENT ON *.*']);
  dir = mkdtempSync(join(tmpdir(), 'sonde-lib-'));
});

after(async () => {
  await db?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Wait until `check` returns something truthy (polling every 100 ms), or fail naming `what`. */
async function until<T>(what: string, check: () => T | undefined, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('the embedding example (examples/library/embed.mjs)', { timeout: 60_000 }, () => {
  it('collects its own plan and domain into its own sink, honours its hooks, and stops on SIGTERM', async () => {
    const inventory = join(dir, 'inventory.json');
    const server = { socket: db.socket, username: 'sonde', password: PASSWORD };
    writeFileSync(
      inventory,
      JSON.stringify([
        { id: 'db1', ...server },
        { id: 'db2', ...server, paused: true },
      ]),
    );
    const proc = spawn(process.execPath, [join(ROOT, 'examples/library/embed.mjs')], {
      cwd: ROOT,
      env: { ...process.env, SONDE_INVENTORY: inventory },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    proc.stdout.on('data', (b: Buffer) => (out += b.toString()));
    proc.stderr.on('data', (b: Buffer) => (err += b.toString()));
    const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
    try {
      type Line = { monitor: string; metric: string; value: number; group: Record<string, string> };
      const lines = (): Line[] =>
        out
          .split('\n')
          .slice(0, -1) // the last piece may be a line still being written
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as Line);
      const sessions = await until('an app.sessions value for the sonde user', () =>
        lines().find((l) => l.metric === 'app.sessions.count' && l.group.user === 'sonde'),
      );
      assert.equal(sessions.monitor, 'db1');
      assert.ok(sessions.value >= 1, 'the agent itself is a session of user sonde');
      assert.equal(sessions.group.env, 'example', 'transformMetrics labelled the value');
      assert.ok(lines().some((l) => l.metric === 'status.global.threads_connected'));
      assert.deepEqual([...new Set(lines().map((l) => l.monitor))], ['db1'], 'db2 is paused: not started');
      const attrs = await db.query(
        `SELECT a.ATTR_VALUE AS v FROM performance_schema.session_connect_attrs a
           JOIN performance_schema.session_connect_attrs b USING (PROCESSLIST_ID)
          WHERE a.ATTR_NAME = 'program_name' AND b.ATTR_NAME = 'monitor' AND b.ATTR_VALUE = 'db1'`,
      );
      assert.equal(attrs[0]?.v, 'embed-example', 'modifyDb set the connection attributes');
    } finally {
      proc.kill('SIGTERM');
    }
    assert.equal(await exited, 0, err);
    assert.match(err, /stopped\n/);
    assert.doesNotMatch(err + out, new RegExp(PASSWORD));
  });
});

/** A sink that keeps what it is sent, and counts its closes. */
function keepingSink(name: string, kept: Metrics[], closed = { n: 0 }): SinkRegistration {
  return {
    name,
    description: 'keeps batches (test)',
    create: () => ({ name, send: async (m) => void kept.push(m), close: async () => void closed.n++ }),
  };
}

/** Options of an in-process agent with one monitor on the test server, the API off. */
function options(
  extra: Partial<AgentOptions> & { sinks?: Record<string, Record<string, string>> } = {},
): AgentOptions {
  const { sinks, ...rest } = extra;
  return {
    config: {
      api: { disable: true },
      plans: { files: [] },
      sinks: sinks ?? { keep: {} },
      monitors: [{ id: 'lib', socket: db.socket, username: 'sonde', password: PASSWORD }],
    },
    log: { stdout: { write: () => true }, stderr: { write: () => true } },
    ...rest,
  };
}

/** One level every second: threads_connected only. */
const PLAN = [
  {
    name: 'lib',
    levels: { l1: { freq: '1s', collect: { 'status.global': { metrics: ['threads_connected'] } } } },
  },
];

describe('createAgent() hooks and factories', { timeout: 60_000 }, () => {
  it('loadConfig: its config is checked like a file, and a bad key fails the boot naming it', async () => {
    const agent = createAgent({
      ...options(),
      hooks: { loadConfig: (defaults) => ({ ...defaults, api: { disable: true, bogus: 1 } as never }) },
    });
    const events: string[] = [];
    agent.events.subscribe((e) => events.push(`${e.name} ${e.message}`));
    await assert.rejects(agent.boot(), /<loadConfig hook>.*bogus/);
    assert.ok(
      events.some((e) => /^boot-error .*bogus/.test(e)),
      events.join('\n'),
    );
  });

  it('loadMonitors and loadPlans replace the sources; a custom sink gets the batches', async () => {
    const kept: Metrics[] = [];
    const agent = createAgent({
      ...options(),
      hooks: {
        loadMonitors: () => [{ id: 'from-hook', socket: db.socket, username: 'sonde', password: PASSWORD }],
        loadPlans: () => PLAN,
      },
      factories: { sinks: [keepingSink('keep', kept)] },
    });
    await agent.boot();
    assert.deepEqual(
      agent.monitors().map((m) => m.id),
      ['from-hook'],
      'the config monitor is not loaded',
    );
    await agent.start();
    try {
      const m = await until('a batch', () => kept[0]);
      assert.equal(m.monitorId, 'from-hook');
      assert.equal(m.plan, 'lib');
      assert.ok((m.values['status.global']?.[0]?.value ?? 0) >= 1);
    } finally {
      await agent.stop();
    }
  });

  it("stop() after boot() alone closes the loaded monitors' sinks; start() after stop() is refused", async () => {
    const closed = { n: 0 };
    const agent = createAgent({
      ...options(),
      hooks: { loadPlans: () => PLAN },
      factories: { sinks: [keepingSink('keep', [], closed)] },
    });
    await agent.boot();
    await agent.stop();
    assert.equal(closed.n, 1);
    await assert.rejects(agent.start(), /already started or stopped/);
  });

  it('a throwing loadMonitors fails the boot like an unreadable monitor file, and a reload keeps the monitors', async () => {
    await assert.rejects(
      createAgent({
        ...options(),
        hooks: { loadMonitors: () => Promise.reject(new Error('inventory down')) },
      }).boot(),
      /inventory down/,
    );
    let fail = false;
    const agent = createAgent({
      ...options(),
      hooks: {
        loadPlans: () => PLAN,
        loadMonitors: () => {
          if (fail) throw new Error('inventory down');
          return [{ id: 'kept', socket: db.socket, username: 'sonde', password: PASSWORD }];
        },
      },
      factories: { sinks: [keepingSink('keep', [])] },
    });
    const events: string[] = [];
    agent.events.subscribe((e) => events.push(`${e.name} ${e.message}`));
    await agent.boot();
    await agent.start();
    try {
      fail = true;
      await agent.reload();
      assert.ok(
        events.some((e) => /^server-reload-error .*inventory down/.test(e)),
        events.join('\n'),
      );
      assert.deepEqual(
        agent.monitors().map((m) => m.id),
        ['kept'],
      );
    } finally {
      await agent.stop();
    }
  });

  it('loadPlans: an invalid plan fails the boot with the plan error', async () => {
    const bad = [{ name: 'bad', levels: { l1: { freq: '1s', collect: { 'no.such': {} } } } }];
    await assert.rejects(
      createAgent({ ...options(), hooks: { loadPlans: () => bad } }).boot(),
      /invalid plan: bad: .*no\.such/,
    );
  });

  it('factories: a collector for a new domain runs; a taken name fails the boot', async () => {
    const kept: Metrics[] = [];
    const agent = createAgent({
      ...options(),
      hooks: {
        loadPlans: () => [{ name: 'p', levels: { l1: { freq: '1s', collect: { 'lib.answer': {} } } } }],
      },
      factories: {
        sinks: [keepingSink('keep', kept)],
        collectors: [
          {
            help: {
              domain: 'lib.answer',
              description: 'a constant from the server',
              sources: ['SELECT 42'],
              options: [],
              errors: [],
              groups: [],
              meta: [],
              metrics: [{ name: 'answer', type: MetricType.Gauge, description: '42' }],
            },
            create: ({ db: conn }) => ({
              domain: 'lib.answer',
              prepare: async () => undefined,
              collect: async (_l, signal) => {
                const [row] = await conn.query('SELECT 6 * 7 AS v', [], { signal });
                return { values: [{ name: 'answer', value: Number(row?.v), type: MetricType.Gauge }] };
              },
            }),
          },
        ],
      },
    });
    await agent.boot();
    await agent.start();
    try {
      const m = await until('a lib.answer batch', () => kept.find((k) => k.values['lib.answer']));
      assert.equal(m.values['lib.answer']?.[0]?.value, 42);
    } finally {
      await agent.stop();
    }
    const dup = createAgent({ ...options(), factories: { sinks: [keepingSink('log', [])] } });
    await assert.rejects(dup.boot(), /factories: sink log already registered/);
  });

  it('startMonitor: a vetoed monitor stays loaded and stopped; a throw is reported as monitor-error', async () => {
    const agent = createAgent({
      ...options(),
      hooks: {
        loadPlans: () => PLAN,
        loadMonitors: () =>
          ['go', 'veto', 'oops'].map((id) => ({
            id,
            socket: db.socket,
            username: 'sonde',
            password: PASSWORD,
          })),
        startMonitor: (m) => {
          if (m.id === 'oops') throw new Error('policy service down');
          return m.id === 'go';
        },
      },
      factories: { sinks: [keepingSink('keep', [])] },
    });
    const events: string[] = [];
    agent.events.subscribe((e) => events.push(`${e.name} ${e.monitorId} ${e.message}`));
    await agent.boot();
    await agent.start();
    try {
      const running = Object.fromEntries(agent.monitors().map((m) => [m.id, m.running]));
      assert.deepEqual(running, { go: true, oops: false, veto: false });
      assert.ok(events.includes('monitor-error oops startMonitor: policy service down'), events.join('\n'));
    } finally {
      await agent.stop();
    }
  });

  it('transformMetrics: changes what sinks get; a throw drops that batch only (lco-metrics-fault)', async () => {
    const kept: Metrics[] = [];
    let calls = 0;
    const agent = createAgent({
      ...options(),
      hooks: {
        loadPlans: () => PLAN,
        transformMetrics: (batch) => {
          calls++;
          if (calls === 1) throw new Error('transform failed');
          return batch.map((m) => ({ ...m, values: { 'lib.renamed': m.values['status.global'] ?? [] } }));
        },
      },
      factories: { sinks: [keepingSink('keep', kept)] },
    });
    const events: string[] = [];
    agent.events.subscribe((e) => events.push(`${e.name} ${e.message}`));
    await agent.boot();
    await agent.start();
    try {
      const m = await until('a transformed batch', () => kept[0]);
      assert.deepEqual(Object.keys(m.values), ['lib.renamed']);
      assert.equal(kept.length, calls - 1, 'the first batch was dropped, every later one delivered');
      assert.ok(
        events.some((e) =>
          /^lco-metrics-fault TransformMetrics: transform failed, dropping metrics: lib\/l1\//.test(e),
        ),
        events.join('\n'),
      );
    } finally {
      await agent.stop();
    }
  });

  it('modifyDb: its options are used; a throw fails the connection like a connect error', async () => {
    const kept: Metrics[] = [];
    const agent = createAgent({
      ...options(),
      hooks: {
        loadPlans: () => [
          {
            name: 'p',
            levels: { l1: { freq: '1s', collect: { 'status.global': { metrics: ['threads_connected'] } } } },
          },
        ],
        modifyDb: (o, { monitorId }) => ({ ...o, connectAttributes: { program_name: `lib-${monitorId}` } }),
      },
      factories: { sinks: [keepingSink('keep', kept)] },
    });
    await agent.boot();
    await agent.start();
    try {
      await until('a batch', () => kept[0]);
      const rows = await db.query(
        `SELECT COUNT(*) AS n FROM performance_schema.session_connect_attrs WHERE ATTR_NAME = 'program_name' AND ATTR_VALUE = 'lib-lib'`,
      );
      assert.ok(Number(rows[0]?.n) >= 1);
    } finally {
      await agent.stop();
    }
    const broken = createAgent({
      ...options(),
      hooks: {
        loadPlans: () => PLAN,
        modifyDb: () => {
          throw new Error('no vault token');
        },
      },
      factories: { sinks: [keepingSink('keep', [])] },
    });
    const events: string[] = [];
    broken.events.subscribe((e) => events.push(`${e.name} ${e.message}`));
    await broken.boot();
    await broken.start();
    try {
      await until('monitor-error', () => events.find((e) => /^monitor-error .*no vault token/.test(e)));
    } finally {
      await broken.stop();
    }
  });

  it('ha: a standby agent loads its monitors without collecting, and collects once active', async () => {
    const kept: Metrics[] = [];
    let active = false;
    const agent = createAgent({
      ...options(),
      hooks: { loadPlans: () => PLAN },
      factories: { sinks: [keepingSink('keep', kept)] },
      ha: { isActive: () => active },
    });
    await agent.boot();
    await agent.start();
    try {
      const st = (): Record<string, string> => agent.status.monitorStatus('lib') ?? {};
      await until('standby', () =>
        /^standby since /.test(st().ha ?? '') && st()['level-state'] === 'standby' ? true : undefined,
      );
      assert.equal(kept.length, 0, 'nothing collected while standby');
      assert.deepEqual(
        agent.monitors().map((m) => [m.id, m.running]),
        [['lib', true]],
        'loaded and started',
      );
      active = true;
      await until('a batch once active', () => kept[0]);
      assert.match(st().ha ?? '', /^active since /);
    } finally {
      await agent.stop();
    }
  });

  it('factories.translators: a datadog sink names its metrics with the registered translator', async () => {
    const bodies: string[] = [];
    const agent = createAgent({
      ...options({
        sinks: {
          datadog: { 'api-key-auth': 'k-1', 'app-key-auth': 'a-1', 'metric-translator': 'lib-names' },
        },
      }),
      hooks: { loadPlans: () => PLAN },
      factories: {
        translators: { 'lib-names': (domain, metric) => `app.${domain.replace('.', '_')}.${metric}` },
        httpClient: () => async (req) => {
          bodies.push(gunzipSync(Buffer.from(req.body)).toString()); // the datadog sink gzips
          return { status: 202, headers: {}, contentType: 'application/json', body: new Uint8Array() };
        },
      },
    });
    await agent.boot();
    await agent.start();
    try {
      const body = await until('a datadog post', () => bodies[0]);
      assert.match(body, /"metric":"app\.status_global\.threads_connected"/);
      // Translators are the agent's own: a second agent in this process registers the same name.
      const second = createAgent({
        ...options(),
        hooks: { loadPlans: () => PLAN },
        factories: { sinks: [keepingSink('keep', [])], translators: { 'lib-names': (d, m) => `${d}.${m}` } },
      });
      await second.boot();
    } finally {
      await agent.stop();
    }
  });

  it('factories.httpClient: the HTTP sinks post through the client it makes', async () => {
    const posts: { url: string; body: string; sink: string }[] = [];
    const agent = createAgent({
      ...options({ sinks: { 'prom-pushgateway': { addr: 'http://pushgateway.invalid:9091' } } }),
      hooks: { loadPlans: () => PLAN },
      factories: {
        httpClient:
          ({ sinkName }) =>
          async (req) => {
            posts.push({
              url: req.url,
              body: String(req.body instanceof Uint8Array ? Buffer.from(req.body) : req.body),
              sink: sinkName,
            });
            return { status: 200, headers: {}, contentType: 'text/plain', body: new Uint8Array() };
          },
      },
    });
    await agent.boot();
    await agent.start();
    try {
      const p = await until('a post', () => posts[0]);
      assert.equal(p.sink, 'prom-pushgateway');
      assert.match(p.url, /^http:\/\/pushgateway\.invalid:9091\/metrics\/job\//);
      assert.match(p.body, /mysql_global_status_threads_connected|threads_connected/);
      assert.equal(agent.status.monitorStatus('lib')?.['error:prom-pushgateway'], undefined);
    } finally {
      await agent.stop();
    }
  });

  it('factories with replace: true replace a built-in collector and a built-in sink; a plain duplicate still fails', async () => {
    const kept: Metrics[] = [];
    const agent = createAgent({
      ...options({ sinks: { log: {} } }),
      hooks: { loadPlans: () => PLAN },
      factories: {
        // The built-in `log` sink, replaced: batches land here instead of stdout.
        sinks: [{ ...keepingSink('log', kept), replace: true }],
        collectors: [
          {
            replace: true,
            help: {
              domain: 'status.global',
              description: 'replaced',
              sources: [],
              options: [],
              errors: [],
              groups: [],
              meta: [],
              metrics: [{ name: 'threads_connected', type: MetricType.Gauge, description: 'fixed' }],
            },
            create: () => ({
              domain: 'status.global',
              prepare: async () => undefined,
              collect: async () => ({
                values: [{ name: 'threads_connected', value: -7, type: MetricType.Gauge }],
              }),
            }),
          },
        ],
      },
    });
    await agent.boot();
    await agent.start();
    try {
      const m = await until('a batch from the replaced collector', () =>
        kept.find((k) => k.values['status.global']),
      );
      assert.deepEqual(
        m.values['status.global']?.map((v) => [v.name, v.value]),
        [['threads_connected', -7]],
      );
    } finally {
      await agent.stop();
    }
    const typo = createAgent({
      ...options(),
      factories: { sinks: [{ ...keepingSink('lgo', []), replace: true }] },
    });
    await assert.rejects(typo.boot(), /factories: sink lgo: replace is set but no sink is registered/);
    const dup = createAgent({
      ...options(),
      factories: { collectors: [{ ...fixedCollector('status.global') }] },
    });
    await assert.rejects(dup.boot(), /factories: collector for domain status\.global already registered/);
  });

  it('log.receiver replaces the event output: every event reaches it, nothing is printed', async () => {
    const got: AgentEvent[] = [];
    const printed: string[] = [];
    const sink = { write: (t: string) => void printed.push(t) };
    const agent = createAgent({
      ...options(),
      hooks: { loadPlans: () => PLAN },
      factories: { sinks: [keepingSink('keep', [])] },
      log: { stdout: sink, stderr: sink, receiver: (e) => void got.push(e) },
    });
    await agent.boot();
    await agent.start();
    try {
      await until('monitor-started', () => got.find((e) => e.name === 'monitor-started'));
    } finally {
      await agent.stop();
    }
    assert.ok(got.some((e) => e.name === 'boot-start' && e.level === 'info'));
    assert.ok(got.some((e) => e.name === 'server-stopped' || e.name === 'monitor-stopped'));
    assert.deepEqual(printed, []);
    assert.ok(!got.some((e) => e.message.includes(PASSWORD)), 'a password reached the receiver');
  });

  it('boot-config-invalid is an error event for a wrong value; an unreadable config file is boot-error only', async () => {
    const bad = createAgent({ ...options(), config: { api: { disable: true }, heartbeat: { freq: '0' } } });
    const events: AgentEvent[] = [];
    bad.events.subscribe((e) => void events.push(e));
    await assert.rejects(bad.boot(), /heartbeat\.freq/);
    const invalid = events.filter((e) => e.name === 'boot-config-invalid');
    assert.deepEqual(
      invalid.map((e) => e.level),
      ['error'],
    );
    assert.match(invalid[0]?.message ?? '', /heartbeat\.freq: 0: must be greater than zero/);
    const missing = createAgent({ ...options(), config: join(dir, 'no-such.yaml') });
    const seen: AgentEvent[] = [];
    missing.events.subscribe((e) => void seen.push(e));
    await assert.rejects(missing.boot(), /does not exist/);
    assert.equal(seen.filter((e) => e.name === 'boot-config-invalid').length, 0);
    assert.ok(seen.some((e) => e.name === 'boot-error'));
  });

  it('factories.db: each monitor queries through the connection it makes (Blip DbConn factory)', async () => {
    const asked: string[] = [];
    const pools: ReturnType<typeof createPool>[] = [];
    const kept: Metrics[] = [];
    const agent = createAgent({
      ...options(),
      config: {
        api: { disable: true },
        plans: { files: [] },
        sinks: { keep: {} },
        // No credentials here: only the factory knows how to connect.
        monitors: [{ id: 'viaf', hostname: 'db.invalid:3306' }],
      },
      hooks: { loadPlans: () => PLAN },
      factories: {
        sinks: [keepingSink('keep', kept)],
        db: (m) => {
          asked.push(`${m.id} ${m.hostname ?? ''}`);
          const pool = createPool({ socketPath: db.socket, user: 'sonde', password: PASSWORD });
          pools.push(pool);
          return { db: mysql2Db(pool, 'lib-factory'), dsn: 'sonde:...@factory(viaf)/' };
        },
      },
    });
    await agent.boot();
    await agent.start();
    try {
      const m = await until('a batch through the factory connection', () =>
        kept.find((k) => k.values['status.global']),
      );
      assert.ok((m.values['status.global']?.[0]?.value ?? 0) >= 1);
      assert.equal(agent.status.monitorStatus('viaf')?.dsn, 'sonde:...@factory(viaf)/');
      const [row] = await db.query(
        "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE USER = 'sonde'",
      );
      assert.ok(Number(row?.n) >= 1, 'the factory pool is connected');
    } finally {
      await agent.stop();
    }
    assert.deepEqual(asked, ['viaf db.invalid:3306']);
    assert.equal(closedPools.has('lib-factory'), true, 'the monitor closed the handle on stop');
    const broken = createAgent({
      ...options(),
      hooks: { loadPlans: () => PLAN },
      factories: {
        sinks: [keepingSink('keep', [])],
        db: () => {
          throw new Error('no vault lease');
        },
      },
    });
    await broken.boot();
    await broken.start();
    try {
      const st = await until('the factory error in status', () => {
        const s = broken.status.monitorStatus('lib');
        return s?.['error:monitor'] !== undefined ? s : undefined;
      });
      assert.equal(st['error:monitor'], 'error: db factory: no vault lease');
    } finally {
      await broken.stop();
    }
  });
});

describe('factories.awsConfig', { timeout: 60_000 }, () => {
  it('the SDK settings it gives are used: the secret is read with its credentials from its endpoint', async () => {
    const creds = { accessKeyId: 'AKIALIBFACTORY', secretAccessKey: 'lib/factory+key' };
    const sm = await startSecretsManager(creds, 'eu-west-3');
    sm.secrets.set('db/lib', JSON.stringify({ username: 'sonde', password: PASSWORD }));
    // Nothing else could give credentials: no variables, no files, no instance metadata.
    const saved = { ...process.env };
    for (const v of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE'])
      delete process.env[v];
    Object.assign(process.env, {
      AWS_CONFIG_FILE: join(dir, 'no-aws-config'),
      AWS_SHARED_CREDENTIALS_FILE: join(dir, 'no-aws-credentials'),
      AWS_EC2_METADATA_DISABLED: 'true',
    });
    const asked: AwsConfigContext[] = [];
    const kept: Metrics[] = [];
    const agent = createAgent({
      ...options(),
      config: {
        api: { disable: true },
        plans: { files: [] },
        sinks: { keep: {} },
        monitors: [
          {
            id: 'awsf',
            socket: db.socket,
            username: 'nobody',
            aws: { 'password-secret': 'db/lib', region: 'eu-west-3' },
          },
        ],
      },
      hooks: { loadPlans: () => PLAN },
      factories: {
        sinks: [keepingSink('keep', kept)],
        awsConfig: (ctx) => {
          asked.push(ctx);
          return { credentials: creds, endpoint: sm.base };
        },
      },
    });
    try {
      await agent.boot();
      await agent.start();
      const m = await until("a batch with the secret's login", () =>
        kept.find((k) => k.values['status.global']),
      );
      assert.ok((m.values['status.global']?.[0]?.value ?? 0) >= 1);
      assert.match(agent.status.monitorStatus('awsf')?.dsn ?? '', /^sonde:\.\.\.@unix\(/);
      assert.deepEqual(asked[0], { service: 'secrets-manager', region: 'eu-west-3', monitorId: 'awsf' });
      assert.ok(sm.reads('db/lib') >= 1);
      assert.equal(sm.requests.at(-1)?.signature?.region, 'eu-west-3');
    } finally {
      await agent.stop();
      await sm.close();
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    }
  });
});

/** Names of the mysql2Db handles whose close() ran. */
const closedPools = new Set<string>();

/** A sonde Db over a mysql2 pool, as an embedding program writes one for `factories.db`. */
function mysql2Db(pool: ReturnType<typeof createPool>, name: string): DbHandle['db'] {
  const query: Db['query'] = async (sql, params) => {
    // Every value as text, as sonde's own pool returns them.
    const [rows] = await pool.query(
      { sql, rowsAsArray: false, typeCast: (f) => f.string() },
      params as unknown[],
    );
    return rows as Record<string, string | null>[];
  };
  return {
    query,
    ping: async () => {
      const c = await pool.getConnection();
      try {
        await c.ping();
      } finally {
        c.release();
      }
    },
    serverInfo: async () => {
      const [row] = await query('SELECT @@version AS v');
      const v = row?.v ?? '';
      const [a = 0, b = 0, c = 0] = v.split(/[.-]/).map(Number);
      return { flavor: /mariadb/i.test(v) ? 'mariadb' : 'mysql', version: [a, b, c], versionString: v };
    },
    close: async () => {
      closedPools.add(name);
      await pool.end();
    },
  };
}

/** A collector registration for `domain` that reports nothing. */
function fixedCollector(domain: string) {
  return {
    help: {
      domain,
      description: domain,
      sources: [],
      options: [],
      errors: [],
      groups: [],
      meta: [],
      metrics: [],
    },
    create: () => ({ domain, prepare: async () => undefined, collect: async () => ({ values: [] }) }),
  };
}
