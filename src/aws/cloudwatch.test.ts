import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { mergePage, metricDataQueries, type MetricSeries } from './cloudwatch.js';

void describe('CloudWatch GetMetricData pages', () => {
  void it('continues a series across pages by query id, keeping only finite datapoints', () => {
    const acc = new Map<string, MetricSeries>();
    mergePage(acc, [
      {
        Id: 'cpu',
        Label: 'CPU',
        Timestamps: [new Date(60_000), new Date(120_000)],
        Values: [1, Number.NaN],
        StatusCode: 'PartialData',
      },
    ]);
    mergePage(acc, [
      { Id: 'cpu', Label: 'CPU', Timestamps: [new Date(180_000)], Values: [3], StatusCode: 'Complete' },
    ]);
    assert.deepEqual(
      [...acc.values()],
      [
        {
          id: 'cpu',
          label: 'CPU',
          points: [
            { ts: 60_000, value: 1 },
            { ts: 180_000, value: 3 },
          ],
        },
      ],
    );
  });

  void it('fails on a result CloudWatch marks InternalError or Forbidden, with its messages', () => {
    assert.throws(
      () =>
        mergePage(new Map(), [
          {
            Id: 'cpu',
            StatusCode: 'Forbidden',
            Messages: [{ Code: 'AccessDenied', Value: 'no access to AWS/RDS' }],
          },
        ]),
      { message: 'GetMetricData: cpu: Forbidden: AccessDenied no access to AWS/RDS' },
    );
  });

  void it('asks for each metric of one instance: AWS/RDS, Average, 60 s', () => {
    assert.deepEqual(metricDataQueries('db1', [{ id: 'freeablememory', metricName: 'FreeableMemory' }]), [
      {
        Id: 'freeablememory',
        MetricStat: {
          Metric: {
            Namespace: 'AWS/RDS',
            MetricName: 'FreeableMemory',
            Dimensions: [{ Name: 'DBInstanceIdentifier', Value: 'db1' }],
          },
          Period: 60,
          Stat: 'Average',
        },
      },
    ]);
  });
});
