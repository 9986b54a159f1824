import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { startFakeRds, type FakeRds } from '../../test/helpers/aws/rds.js';
import { awsTestEnv, TEST_CREDENTIALS } from '../../test/helpers/aws/env.js';
import {
  discoverRdsMonitors,
  instancesToMonitors,
  listDbInstances,
  type RdsInstance,
} from './rds-discovery.js';

const noAuto = (): Promise<string> => Promise.reject(new Error('no instance metadata here'));

void describe('RDS discovery', () => {
  let rds: FakeRds;
  let restore: () => void;
  before(async () => {
    rds = await startFakeRds({
      credentials: TEST_CREDENTIALS,
      pageSize: 2,
      instances: {
        'us-east-1': [
          { id: 'db1', address: 'db1.abc.us-east-1.rds.amazonaws.com', port: 3306, tags: { env: 'prod' } },
          { id: 'creating', engine: 'mysql', status: 'creating' },
          {
            id: 'aurora-1',
            address: 'aurora-1.abc.us-east-1.rds.amazonaws.com',
            port: 3307,
            engine: 'aurora-mysql',
            cluster: 'c1',
          },
          {
            id: 'pg',
            address: 'pg.abc.us-east-1.rds.amazonaws.com',
            port: 5432,
            engine: 'postgres',
            tags: { env: 'prod' },
          },
          {
            id: 'maria',
            address: 'maria.abc.us-east-1.rds.amazonaws.com',
            port: 3306,
            engine: 'mariadb',
            tags: { env: 'dev' },
          },
        ],
        'eu-west-1': [{ id: 'eu1', address: 'eu1.abc.eu-west-1.rds.amazonaws.com', port: 3306 }],
      },
    });
    restore = awsTestEnv({ AWS_ENDPOINT_URL_RDS: rds.base });
  });
  after(async () => {
    restore();
    await rds.close();
  });

  void it('reads every page (Marker) of a region through a SigV4-checked endpoint', async () => {
    const before = rds.calls().length;
    const list = await listDbInstances('us-east-1');
    assert.deepEqual(
      list.map((i) => i.id),
      ['db1', 'creating', 'aurora-1', 'pg', 'maria'],
    );
    const calls = rds.calls().slice(before);
    assert.equal(calls.length, 3, 'pages of 2: three calls');
    assert.equal(calls[0]?.marker, undefined);
    assert.ok(
      calls[1]?.marker !== undefined && calls[2]?.marker !== undefined && calls[1].marker !== calls[2].marker,
    );
    assert.ok(calls.every((c) => c.maxRecords === '100' && c.region === 'us-east-1'));
    assert.ok(
      rds.server.requests.every((r) => r.rejected === undefined),
      'every signature verified',
    );
    assert.deepEqual(list[2], {
      id: 'aurora-1',
      address: 'aurora-1.abc.us-east-1.rds.amazonaws.com',
      port: 3307,
      engine: 'aurora-mysql',
      tags: {},
    });
    assert.deepEqual(list[0]?.tags, { env: 'prod' });
  });

  void it('makes one monitor per instance with an endpoint, Aurora members included', async () => {
    const ms = await discoverRdsMonitors({ regions: ['us-east-1', 'eu-west-1'] }, { autoRegion: noAuto });
    assert.deepEqual(ms, [
      { id: 'db1', hostname: 'db1.abc.us-east-1.rds.amazonaws.com:3306', aws: { region: 'us-east-1' } },
      {
        id: 'aurora-1',
        hostname: 'aurora-1.abc.us-east-1.rds.amazonaws.com:3307',
        aws: { region: 'us-east-1' },
      },
      { id: 'pg', hostname: 'pg.abc.us-east-1.rds.amazonaws.com:5432', aws: { region: 'us-east-1' } },
      { id: 'maria', hostname: 'maria.abc.us-east-1.rds.amazonaws.com:3306', aws: { region: 'us-east-1' } },
      { id: 'eu1', hostname: 'eu1.abc.eu-west-1.rds.amazonaws.com:3306', aws: { region: 'eu-west-1' } },
    ]);
  });

  void it('filters by engine (case ignored) and by tags (every tag, exact value)', async () => {
    const engines = await discoverRdsMonitors(
      { regions: ['us-east-1'], engines: ['MySQL', 'aurora-mysql'] },
      { autoRegion: noAuto },
    );
    assert.deepEqual(
      engines.map((m) => m.id),
      ['db1', 'aurora-1'],
    );
    const tagged = await discoverRdsMonitors(
      { regions: ['us-east-1'], tags: { env: 'prod' }, engines: ['mysql', 'mariadb'] },
      { autoRegion: noAuto },
    );
    assert.deepEqual(
      tagged.map((m) => m.id),
      ['db1'],
    );
  });

  void it('resolves auto and lists a region once when auto names a listed one', async () => {
    const seen: string[] = [];
    const ms = await discoverRdsMonitors(
      { regions: ['auto', 'eu-west-1'] },
      {
        autoRegion: async () => 'eu-west-1',
        onRegion: (r, n, m) => seen.push(`${r} ${n} ${m}`),
      },
    );
    assert.deepEqual(
      ms.map((m) => m.id),
      ['eu1'],
    );
    assert.deepEqual(seen, ['eu-west-1 1 1']);
  });

  void it('fails the load on an API error, with a one-line error naming the region and the call', async () => {
    rds.failRegion('eu-west-1', {
      code: 'AccessDenied',
      message: 'User: x is not authorized to perform: rds:DescribeDBInstances',
    });
    try {
      await assert.rejects(
        discoverRdsMonitors({ regions: ['us-east-1', 'eu-west-1'] }, { autoRegion: noAuto }),
        (err: Error) => {
          assert.equal(
            err.message,
            'monitor-loader.aws.regions: eu-west-1: DescribeDBInstances: AccessDenied: User: x is not authorized to perform: rds:DescribeDBInstances',
          );
          return true;
        },
      );
    } finally {
      rds.failRegion('eu-west-1', undefined);
    }
  });

  void it('skips a failing region (and a failing auto) when the list contains auto', async () => {
    rds.failRegion('eu-west-1', { code: 'AccessDenied', message: 'denied' });
    const skipped: string[] = [];
    try {
      const ms = await discoverRdsMonitors(
        { regions: ['auto', 'eu-west-1', 'us-east-1'], engines: ['mysql'] },
        { autoRegion: noAuto, onSkip: (_r, msg) => skipped.push(msg) },
      );
      assert.deepEqual(
        ms.map((m) => m.id),
        ['db1'],
      );
      assert.deepEqual(skipped, [
        'monitor-loader.aws.regions: auto: no instance metadata here',
        'monitor-loader.aws.regions: eu-west-1: DescribeDBInstances: AccessDenied: denied',
      ]);
    } finally {
      rds.failRegion('eu-west-1', undefined);
    }
  });

  void it('is refused when the signature does not match the secret (the fake recomputes it)', async () => {
    rds.server.setCredentials({ ...TEST_CREDENTIALS, secretAccessKey: 'another-secret' });
    try {
      await assert.rejects(
        listDbInstances('us-east-1'),
        /^Error: DescribeDBInstances: SignatureDoesNotMatch: /,
      );
    } finally {
      rds.server.setCredentials(TEST_CREDENTIALS);
    }
    assert.ok(rds.server.requests.some((r) => r.rejected?.code === 'SignatureDoesNotMatch'));
  });
});

void describe('instancesToMonitors', () => {
  const inst = (over: Partial<RdsInstance>): RdsInstance => ({
    id: 'a',
    address: 'a.example',
    port: 3306,
    engine: 'mysql',
    tags: {},
    ...over,
  });
  void it('skips instances without endpoint or identifier; writes the address alone without a port', () => {
    const ms = instancesToMonitors(
      [inst({ address: '' }), inst({ id: '' }), inst({ id: 'b', port: undefined })],
      'us-east-2',
    );
    assert.deepEqual(ms, [{ id: 'b', hostname: 'a.example', aws: { region: 'us-east-2' } }]);
  });
  void it('needs every filter tag, with its exact value', () => {
    const list = [
      inst({ id: 'x', tags: { a: '1', b: '2' } }),
      inst({ id: 'y', tags: { a: '1' } }),
      inst({ id: 'z', tags: { a: '' } }),
    ];
    assert.deepEqual(
      instancesToMonitors(list, 'r', { tags: { a: '1', b: '2' } }).map((m) => m.id),
      ['x'],
    );
    assert.deepEqual(
      instancesToMonitors(list, 'r', { tags: { a: '' } }).map((m) => m.id),
      ['z'],
    );
  });
});
