import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { MetricType } from '../../core/metrics.js';
import type { Plan } from '../../core/plan.js';
import { openCloudWatch } from '../../aws/cloudwatch.js';
import { startFakeCloudWatch, type FakeCloudWatch } from '../../../test/helpers/aws/cloudwatch.js';
import { awsTestEnv, TEST_CREDENTIALS } from '../../../test/helpers/aws/env.js';
import { FakeDb } from '../kit/test-helpers.js';
import { AwsRdsCollector, newValues, rdsLevel, targetRegion, windowStart } from './index.js';

const MIN = 60_000;
/** 2026-01-01T00:10:20Z */
const NOW = Date.UTC(2026, 0, 1, 0, 10, 20);
const T = (minute: number): number => Date.UTC(2026, 0, 1, 0, minute);

function plan(levels: Record<string, { metrics: string[]; options?: Record<string, string> }>): Plan {
  const out: Plan = { name: 'p', source: 'test', levels: {} };
  for (const [name, l] of Object.entries(levels)) {
    out.levels[name] = {
      name,
      freq: '60s',
      freqMs: 60_000,
      collect: { 'aws.rds': { metrics: l.metrics, options: l.options ?? {}, errors: {} } },
    };
  }
  return out;
}

void describe('aws.rds plan checks', () => {
  const dp = (metrics: string[], options: Record<string, string> = {}) => ({ metrics, options, errors: {} });
  void it('needs at least one metric', () => {
    assert.throws(() => rdsLevel('p', 'slow', dp([]), 'db1'), {
      message:
        'at p/slow/aws.rds: no metrics specified; expected at least 1 metric (BinLogDiskUsage, CPUUtilization, etc.)',
    });
  });
  void it('refuses a name CloudWatch cannot take as a query id, and case twins', () => {
    assert.throws(
      () => rdsLevel('p', 'l', dp(['1Bad']), 'db1'),
      /^Error: at p\/l\/aws.rds: invalid metric: 1Bad /,
    );
    assert.throws(() => rdsLevel('p', 'l', dp(['Read-IOPS']), 'db1'), /invalid metric: Read-IOPS/);
    assert.throws(
      () => rdsLevel('p', 'l', dp(['CPUUtilization', 'cpuutilization']), 'db1'),
      /^Error: at p\/l\/aws.rds: metric cpuutilization listed twice \(also as CPUUtilization\)$/,
    );
  });
  void it('keeps the names, ids lowercase, db-id defaulting to the monitor id', () => {
    assert.deepEqual(rdsLevel('p', 'l', dp(['CPUUtilization', 'ReplicaLag']), 'db1'), {
      dbId: 'db1',
      metrics: [
        { id: 'cpuutilization', metricName: 'CPUUtilization' },
        { id: 'replicalag', metricName: 'ReplicaLag' },
      ],
    });
    assert.equal(rdsLevel('p', 'l', dp(['CPUUtilization'], { 'db-id': 'other' }), 'db1').dbId, 'other');
  });
});

void describe('aws.rds window, values and region', () => {
  void it('starts the window 2 minutes back, rounded to the nearest minute', () => {
    assert.equal(windowStart(NOW), T(8));
    assert.equal(windowStart(Date.UTC(2026, 0, 1, 0, 10, 30)), T(9));
    assert.equal(windowStart(Date.UTC(2026, 0, 1, 0, 10, 29, 999)), T(8));
  });

  void it('reports each datapoint once per level, with ts meta; delta counters typed as such', () => {
    const req = rdsLevel(
      'p',
      'l',
      { metrics: ['CPUUtilization', 'AbortedClients'], options: {}, errors: {} },
      'db1',
    );
    const last = new Map<string, number>();
    const first = newValues(
      [
        {
          id: 'cpuutilization',
          label: 'CPUUtilization',
          points: [
            { ts: T(8), value: 1.5 },
            { ts: T(9), value: 2 },
          ],
        },
        { id: 'abortedclients', label: 'AbortedClients', points: [{ ts: T(9), value: 3 }] },
      ],
      req,
      last,
    );
    assert.deepEqual(first, [
      { name: 'CPUUtilization', value: 1.5, type: MetricType.Gauge, meta: { ts: String(T(8)) } },
      { name: 'CPUUtilization', value: 2, type: MetricType.Gauge, meta: { ts: String(T(9)) } },
      { name: 'AbortedClients', value: 3, type: MetricType.DeltaCounter, meta: { ts: String(T(9)) } },
    ]);
    const second = newValues(
      [
        {
          id: 'cpuutilization',
          label: 'CPUUtilization',
          points: [
            { ts: T(9), value: 2 },
            { ts: T(10), value: 4 },
          ],
        },
      ],
      req,
      last,
    );
    assert.deepEqual(second, [
      { name: 'CPUUtilization', value: 4, type: MetricType.Gauge, meta: { ts: String(T(10)) } },
    ]);
  });

  void it('picks the region: set, auto, unset (auto unless disabled), from an RDS hostname', async () => {
    const auto = async (): Promise<string> => 'ap-south-1';
    const h = 'db1.abc123.eu-central-1.rds.amazonaws.com:3306';
    assert.equal(
      await targetRegion({ region: 'us-west-2', disableAutoRegion: false, hostname: h }, auto),
      'us-west-2',
    );
    assert.equal(
      await targetRegion({ region: 'auto', disableAutoRegion: true, hostname: h }, auto),
      'ap-south-1',
    );
    assert.equal(
      await targetRegion({ region: '', disableAutoRegion: false, hostname: h }, auto),
      'ap-south-1',
    );
    assert.equal(
      await targetRegion({ region: '', disableAutoRegion: true, hostname: h }, auto),
      'eu-central-1',
    );
    assert.equal(
      await targetRegion({ region: '', disableAutoRegion: true, hostname: 'db.local:3306' }, auto),
      undefined,
    );
  });
});

void describe('aws.rds against a local CloudWatch (SigV4 checked)', () => {
  let cw: FakeCloudWatch;
  let restore: () => void;
  before(async () => {
    cw = await startFakeCloudWatch({ credentials: TEST_CREDENTIALS, region: 'us-east-1', pageSize: 2 });
    restore = awsTestEnv({ AWS_ENDPOINT_URL_CLOUDWATCH: cw.base });
    cw.setPoints('db1', 'CPUUtilization', [
      { ts: T(7), value: 9 },
      { ts: T(8), value: 10.5 },
      { ts: T(9), value: 11 },
    ]);
    cw.setPoints('db1', 'FreeableMemory', [{ ts: T(9), value: 1e9 }]);
    cw.setPoints('other-db', 'CPUUtilization', [{ ts: T(9), value: 99 }]);
  });
  after(async () => {
    restore();
    await cw.close();
  });

  function collector(
    now: () => number,
    aws = { region: 'us-east-1', disableAutoRegion: false, hostname: '' },
  ): AwsRdsCollector {
    return new AwsRdsCollector(
      { monitorId: 'db1', db: new FakeDb('10.11.6-MariaDB', () => []), aws },
      { open: openCloudWatch, autoRegion: () => Promise.reject(new Error('no metadata')), now },
    );
  }

  void it('asks for Average over 60 s per metric, reads every page, reports new datapoints with ts', async () => {
    let now = NOW;
    const c = collector(() => now);
    await c.prepare(
      plan({ min: { metrics: ['CPUUtilization', 'FreeableMemory'] } }),
      AbortSignal.timeout(5000),
    );
    const before = cw.calls().length;
    const r1 = await c.collect('min', AbortSignal.timeout(10_000));
    assert.equal(r1.error, undefined);
    assert.deepEqual(r1.values, [
      { name: 'CPUUtilization', value: 10.5, type: MetricType.Gauge, meta: { ts: String(T(8)) } },
      { name: 'CPUUtilization', value: 11, type: MetricType.Gauge, meta: { ts: String(T(9)) } },
      { name: 'FreeableMemory', value: 1e9, type: MetricType.Gauge, meta: { ts: String(T(9)) } },
    ]);
    const calls = cw.calls().slice(before);
    assert.equal(calls.length, 2, 'three datapoints in pages of two');
    assert.equal(calls[1]?.nextToken, 'tok-2');
    const first = calls[0];
    assert.deepEqual(
      [first?.start, first?.end, first?.scanBy],
      [T(8) / 1000, NOW / 1000, 'TimestampAscending'],
    );
    assert.deepEqual(first?.queries[0], {
      id: 'cpuutilization',
      namespace: 'AWS/RDS',
      metricName: 'CPUUtilization',
      dimensions: [{ Name: 'DBInstanceIdentifier', Value: 'db1' }],
      period: 60,
      stat: 'Average',
    });
    assert.ok(cw.server.requests.every((r) => r.rejected === undefined));

    // A minute later: only the new datapoint.
    cw.setPoints('db1', 'CPUUtilization', [
      { ts: T(8), value: 10.5 },
      { ts: T(9), value: 11 },
      { ts: T(10), value: 12 },
    ]);
    now = NOW + MIN;
    const r2 = await c.collect('min', AbortSignal.timeout(10_000));
    assert.deepEqual(r2.values, [
      { name: 'CPUUtilization', value: 12, type: MetricType.Gauge, meta: { ts: String(T(10)) } },
    ]);
    await c.close();
  });

  void it('uses db-id, and collects nothing for a level without the domain', async () => {
    const c = collector(() => NOW);
    const p = plan({ min: { metrics: ['CPUUtilization'], options: { 'db-id': 'other-db' } } });
    await c.prepare(p, AbortSignal.timeout(5000));
    const r = await c.collect('min', AbortSignal.timeout(10_000));
    assert.deepEqual(
      r.values.map((v) => v.value),
      [99],
    );
    assert.deepEqual(await c.collect('hour', AbortSignal.timeout(10_000)), { values: [] });
    await c.close();
  });

  void it('returns an API error as a one-line collection error naming the call and region', async () => {
    const c = collector(() => NOW);
    await c.prepare(plan({ min: { metrics: ['CPUUtilization'] } }), AbortSignal.timeout(5000));
    cw.fail({
      code: 'AccessDeniedException',
      message: 'not authorized to perform: cloudwatch:GetMetricData',
    });
    try {
      const r = await c.collect('min', AbortSignal.timeout(10_000));
      assert.deepEqual(r.values, []);
      assert.equal(
        r.error?.message,
        'GetMetricData: AccessDeniedException: not authorized to perform: cloudwatch:GetMetricData (region us-east-1, DBInstanceIdentifier db1)',
      );
    } finally {
      cw.fail(undefined);
      await c.close();
    }
  });

  void it('is refused by CloudWatch when signed for another region', async () => {
    const c = collector(() => NOW, { region: 'eu-west-1', disableAutoRegion: false, hostname: '' });
    await c.prepare(plan({ min: { metrics: ['CPUUtilization'] } }), AbortSignal.timeout(5000));
    const r = await c.collect('min', AbortSignal.timeout(10_000));
    assert.match(
      r.error?.message ?? '',
      /^GetMetricData: InvalidSignatureException: Credential should be scoped to a valid region/,
    );
    await c.close();
  });

  void it('fails prepare with the plan error before asking anything', async () => {
    const c = collector(() => NOW);
    const before = cw.calls().length;
    await assert.rejects(
      c.prepare(plan({ min: { metrics: [] } }), AbortSignal.timeout(5000)),
      /at p\/min\/aws.rds: no metrics specified/,
    );
    assert.equal(cw.calls().length, before);
  });
});
