/**
 * RDS discovery and the aws.rds domain end to end: the built agent finds its monitors in a
 * local RDS (DescribeDBInstances, Query protocol, answered one instance a page) whose two
 * instances are real throwaway MariaDB servers, collects their MySQL metrics and their
 * CloudWatch metrics from a local CloudWatch (GetMetricData), and follows the instance list
 * on reload with the stop-loss rule. Both fakes recompute every request's SigV4 signature
 * from the test credentials and refuse a mismatch.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { startAgent, type Agent } from '../helpers/agent.js';
import { startFakeRds, type FakeRds, type FakeRdsInstance } from '../helpers/aws/rds.js';
import { startFakeCloudWatch, type FakeCloudWatch } from '../helpers/aws/cloudwatch.js';
import { awsEnvVars, TEST_CREDENTIALS } from '../helpers/aws/env.js';
import { startSecretsManager, type FakeSecretsManager } from '../helpers/aws/secrets-manager.js';

const PASSWORD = 'Pw-rds-41d2-SECRET';
/** The password after the rotation. */
const ROTATED = 'Pw-rds-77c9-ROTATED';
const SECRET = 'sonde/rds';
const REGION = 'us-east-1';

/**
 * One level at 60 s: the first tick collects it at once, then the agent stays quiet; and
 * uptime every 2 s, so that a rotated password is met soon.
 */
const PLAN = `fast:
  freq: 2s
  collect:
    status.global:
      metrics: [uptime]
slow:
  freq: 60s
  collect:
    status.global:
      metrics: [uptime]
    var.global:
      metrics: [max_connections]
    aws.rds:
      metrics: [CPUUtilization, AbortedClients]
`;

let a: MariaDB;
let b: MariaDB;
let rds: FakeRds;
let cw: FakeCloudWatch;
let sm: FakeSecretsManager;
let agent: Agent;
/** A whole minute a little before now: inside every collection's two-minute window. */
let minute: number;

const instance = (id: string, db: MariaDB, extra: Partial<FakeRdsInstance> = {}): FakeRdsInstance => ({
  id,
  address: db.host,
  port: db.port,
  engine: 'mariadb',
  ...extra,
});

/** The log sink's blocks for one monitor (header lines and values). */
function blocksOf(out: string, id: string): string[] {
  return out.split('\n\n').filter((b) => b.includes(`# monitor:  ${id}\n`));
}

async function monitorIds(): Promise<string[]> {
  return Object.keys(await agent.json<Record<string, string>>('/monitors'));
}

/** Waits until monitor `id` has sent a block with both domains; returns it. */
async function collected(id: string): Promise<string> {
  return agent.until(
    `metrics of ${id}`,
    async () =>
      blocksOf(agent.stdout(), id).find(
        (blk) => blk.includes('status.global.uptime = ') && blk.includes('aws.rds.'),
      ),
    30_000,
  );
}

describe('RDS discovery and aws.rds, end to end', () => {
  before(async () => {
    [a, b] = await Promise.all([startMariaDB(), startMariaDB()]);
    await Promise.all([a.createUser('sonde', PASSWORD), b.createUser('sonde', PASSWORD)]);
    // Told apart by their settings: each monitor must reach its own server.
    await Promise.all([
      a.query('SET GLOBAL max_connections = 111'),
      b.query('SET GLOBAL max_connections = 222'),
    ]);
    rds = await startFakeRds({
      credentials: TEST_CREDENTIALS,
      pageSize: 1,
      instances: {
        [REGION]: [
          instance('db-a', a),
          { id: 'db-new', engine: 'mariadb', status: 'creating' },
          instance('db-b', b, { engine: 'aurora-mysql', cluster: 'cl-1' }),
          { id: 'pg', address: '127.0.0.1', port: 1, engine: 'postgres' },
        ],
      },
    });
    cw = await startFakeCloudWatch({ credentials: TEST_CREDENTIALS, region: REGION });
    // Every discovered instance's password comes from one Secrets Manager secret.
    sm = await startSecretsManager(TEST_CREDENTIALS, REGION);
    sm.secrets.set(SECRET, JSON.stringify({ password: PASSWORD }));
    minute = Math.floor(Date.now() / 60_000) * 60_000 - 60_000;
    cw.setPoints('db-a', 'CPUUtilization', [{ ts: minute, value: 11 }]);
    cw.setPoints('db-b', 'CPUUtilization', [{ ts: minute, value: 22 }]);
    cw.setPoints('db-b', 'AbortedClients', [{ ts: minute, value: 3 }]);
    cw.setPoints('db-c', 'CPUUtilization', [{ ts: minute, value: 33 }]);
    agent = await startAgent(
      `api:
  bind: {{API}}
mysql:
  username: sonde
aws:
  password-secret: ${SECRET}
  # The local servers are not RDS: no automatic tls=rds.
  disable-auto-tls: true
plans:
  files: [plan.yaml]
monitor-loader:
  stop-loss: "1"
  aws:
    regions: [${REGION}]
    engines: [mariadb, aurora-mysql]
  local:
    disable-auto: true
`,
      {
        files: { 'plan.yaml': PLAN },
        env: awsEnvVars({
          AWS_ENDPOINT_URL_RDS: rds.base,
          AWS_ENDPOINT_URL_CLOUDWATCH: cw.base,
          AWS_ENDPOINT_URL_SECRETS_MANAGER: sm.base,
        }),
      },
    );
  });

  after(async () => {
    await agent?.stop('SIGTERM');
    await Promise.all([rds?.close(), cw?.close(), sm?.close(), a?.stop(), b?.stop()]);
  });

  it('discovers the instances with an endpoint that pass the filters, reading every page', async () => {
    assert.deepEqual(await monitorIds(), ['db-a', 'db-b']);
    const calls = rds.calls();
    assert.ok(calls.length >= 4, `four instances, one a page: ${calls.length} calls`);
    assert.equal(calls[0]?.marker, undefined);
    assert.ok(calls.slice(1, 4).every((c) => c.marker !== undefined && c.region === REGION));
    assert.ok(rds.server.requests.length > 0);
    assert.ok(rds.server.requests.every((r) => r.rejected === undefined && r.status === 200));
  });

  it('collects MySQL metrics from each server and CloudWatch metrics with their time', async () => {
    const blockA = await collected('db-a');
    const blockB = await collected('db-b');
    assert.match(blockA, /^status\.global\.uptime = \d+$/m);
    assert.match(blockA, new RegExp(`^aws\\.rds\\.CPUUtilization = 11 \\(meta: ts=${minute}\\)$`, 'm'));
    assert.match(blockB, new RegExp(`^aws\\.rds\\.CPUUtilization = 22 \\(meta: ts=${minute}\\)$`, 'm'));
    assert.match(blockB, new RegExp(`^aws\\.rds\\.AbortedClients = 3 \\(meta: ts=${minute}\\)$`, 'm'));
    assert.match(blockA, /^var\.global\.max_connections = 111$/m);
    assert.match(blockB, /^var\.global\.max_connections = 222$/m);
    const queries = cw.calls().flatMap((c) => c.queries);
    assert.ok(queries.every((q) => q.namespace === 'AWS/RDS' && q.period === 60 && q.stat === 'Average'));
    assert.deepEqual(
      [...new Set(queries.flatMap((q) => q.dimensions.map((d) => `${d.Name}=${d.Value}`)))].sort(),
      ['DBInstanceIdentifier=db-a', 'DBInstanceIdentifier=db-b'],
    );
    assert.ok(cw.server.requests.every((r) => r.rejected === undefined && r.status === 200));
  });

  it('heals both monitors after the secret and the passwords are rotated, on the next access denied', async () => {
    const readsBefore = sm.reads(SECRET);
    sm.secrets.set(SECRET, JSON.stringify({ password: ROTATED }));
    for (const db of [a, b]) {
      await db.query(`ALTER USER 'sonde'@'%' IDENTIFIED BY '${ROTATED}'`);
      await db.query("KILL USER 'sonde'"); // pooled connections go: the next one must log in
    }
    const mark = agent.stdout().length;
    for (const id of ['db-a', 'db-b']) {
      await agent.until(`${id} collects with the rotated password`, async () => {
        const s = await agent.monitorsStatus();
        return (
          blocksOf(agent.stdout().slice(mark), id).length > 0 && s[id]?.['error:status.global'] === undefined
        );
      });
    }
    assert.ok(sm.reads(SECRET) > readsBefore, 'the secret was read again');
    assert.ok(
      sm.requests.every((r) => r.rejected === undefined),
      'every call signed right',
    );
  });

  it('follows the instance list on reload: adds and removes monitors', async () => {
    rds.setInstances(REGION, [instance('db-a', a), instance('db-c', a)]);
    const r = await agent.http('POST', '/monitors/reload');
    assert.equal(r.status, 200, r.body);
    assert.deepEqual(await monitorIds(), ['db-a', 'db-c']);
    const blockC = await collected('db-c');
    assert.match(blockC, new RegExp(`^aws\\.rds\\.CPUUtilization = 33 \\(meta: ts=${minute}\\)$`, 'm'));
    const status = await agent.monitorsStatus();
    assert.equal(status['db-b'], undefined);
  });

  it('refuses a reload that would lose more monitors than the stop-loss allows, then allows one within it', async () => {
    rds.setInstances(REGION, []);
    const refused = await agent.http('POST', '/monitors/reload');
    assert.equal(refused.status, 412, refused.body);
    assert.deepEqual(await monitorIds(), ['db-a', 'db-c']);
    assert.match(agent.stderr(), /monitors-stoploss.*before: 2; now: 0; lost 2 > limit 1/);

    rds.setInstances(REGION, [instance('db-a', a)]);
    const ok = await agent.http('POST', '/monitors/reload');
    assert.equal(ok.status, 200, ok.body);
    assert.deepEqual(await monitorIds(), ['db-a']);
  });

  it('fails a reload on an RDS error with a line naming the region and the call, changing nothing', async () => {
    rds.failRegion(REGION, {
      code: 'AccessDenied',
      message: 'not authorized to perform: rds:DescribeDBInstances',
    });
    try {
      const r = await agent.http('POST', '/monitors/reload');
      assert.equal(r.status, 409);
      assert.equal(
        r.body,
        'Error reloading monitors: monitor-loader.aws.regions: us-east-1: DescribeDBInstances: AccessDenied: not authorized to perform: rds:DescribeDBInstances\n',
      );
      assert.deepEqual(await monitorIds(), ['db-a']);
    } finally {
      rds.failRegion(REGION, undefined);
    }
  });

  it('writes neither the AWS secret key nor the MySQL password anywhere', () => {
    for (const text of [agent.stdout(), agent.stderr()]) {
      assert.ok(!text.includes(TEST_CREDENTIALS.secretAccessKey));
      assert.ok(!text.includes(PASSWORD));
      assert.ok(!text.includes(ROTATED));
    }
  });
});
