import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NO_EVENTS } from '../core/events.js';
import { MetricType } from '../core/metrics.js';
import type { Metrics, MetricValue } from '../core/metrics.js';
import type { Sink } from '../core/sink.js';
import { DeltaState, deltaKey, withDelta } from './delta.js';
import { withRetry } from './retry.js';

const C = MetricType.CumulativeCounter;

function m(values: Record<string, MetricValue[]>, interval = 7): Metrics {
  return {
    begin: new Date(1000),
    end: new Date(2000),
    monitorId: 'db1',
    plan: 'p',
    level: 'kpi',
    interval,
    state: 'active',
    values,
  };
}

describe('delta decorator', () => {
  it('drops the first sample, then sends differences, and the raw value after a reset', () => {
    const s = new DeltaState();
    const seq = [100, 130, 130, 5, 9];
    const out = seq.map((v) => s.convert(m({ 'status.global': [{ name: 'queries', value: v, type: C }] })));
    assert.deepEqual(
      out.map((o) => o.values['status.global']),
      [
        [],
        [{ name: 'queries', value: 30, type: MetricType.DeltaCounter }],
        [{ name: 'queries', value: 0, type: MetricType.DeltaCounter }],
        [{ name: 'queries', value: 5, type: MetricType.DeltaCounter }],
        [{ name: 'queries', value: 4, type: MetricType.DeltaCounter }],
      ],
    );
  });

  it('forwards the same object when no domain has a cumulative counter', () => {
    const s = new DeltaState();
    const input = m({ 'var.global': [{ name: 'max_connections', value: 151, type: MetricType.Gauge }] });
    assert.equal(s.convert(input), input);
    assert.equal(s.size, 0);
  });

  it('copies the header fields including interval and reuses lists of counter-free domains', () => {
    const s = new DeltaState();
    const gauges = [{ name: 'threads_running', value: 3, type: MetricType.Gauge }];
    const input = m(
      {
        'status.global': [
          { name: 'queries', value: 10, type: C },
          { name: 'threads_connected', value: 4, type: MetricType.Gauge },
        ],
        innodb: gauges,
      },
      42,
    );
    const out = s.convert(input);
    assert.notEqual(out, input);
    assert.equal(out.interval, 42);
    assert.deepEqual(
      [out.begin, out.end, out.monitorId, out.plan, out.level, out.state],
      [input.begin, input.end, 'db1', 'p', 'kpi', 'active'],
    );
    assert.equal(out.values.innodb, gauges);
    // The gauge stays, in place; the first counter sample is dropped.
    assert.deepEqual(out.values['status.global'], [
      { name: 'threads_connected', value: 4, type: MetricType.Gauge },
    ]);
    // The input is not modified.
    assert.equal(input.values['status.global']?.length, 2);
  });

  it('keeps series apart across domains and group combinations', () => {
    const s = new DeltaState();
    const batch = (a: number, b: number, c: number, d: number): Metrics =>
      m({
        'size.table': [
          { name: 'rows', value: a, type: C, group: { db: 'ab', tbl: 'c' } },
          { name: 'rows', value: b, type: C, group: { db: 'a', tbl: 'bc' } },
        ],
        'other.domain': [
          { name: 'rows', value: c, type: C, group: { db: 'ab', tbl: 'c' } },
          { name: 'rows', value: d, type: C, group: { tbl: 'c', db: 'ab', x: '' } },
        ],
      });
    s.convert(batch(10, 1000, 50, 7));
    assert.equal(s.size, 4);
    const out = s.convert(batch(11, 1002, 53, 11));
    assert.deepEqual(
      out.values['size.table']?.map((v) => v.value),
      [1, 2],
    );
    assert.deepEqual(
      out.values['other.domain']?.map((v) => v.value),
      [3, 4],
    );
  });

  it('builds keys from domain, name and sorted group pairs separated by NUL', () => {
    assert.equal(
      deltaKey('size.table', { name: 'rows', value: 0, type: C, group: { tbl: 't', db: 'd' } }),
      'size.table\0rows\0db\0d\0tbl\0t',
    );
    const a = deltaKey('d', { name: 'n', value: 0, type: C, group: { 'a=b': 'c' } });
    const b = deltaKey('d', { name: 'n', value: 0, type: C, group: { a: 'b=c' } });
    assert.notEqual(a, b);
    assert.notEqual(
      deltaKey('a.b', { name: 'c', value: 0, type: C }),
      deltaKey('a', { name: 'b.c', value: 0, type: C }),
    );
  });

  it('converts in collection order in front of retry and keeps its name', async () => {
    const got: Metrics[] = [];
    const inner: Sink = { name: 'datadog', send: async (x) => void got.push(x) };
    const retry = withRetry(inner, { monitorId: 'db1', events: NO_EVENTS });
    const d = withDelta(retry);
    assert.equal(d.name, 'datadog');
    for (const v of [1, 4, 9]) {
      await d.send(m({ g: [{ name: 'c', value: v, type: C }] }));
      await retry.idle();
    }
    assert.deepEqual(
      got.map((x) => x.values.g?.map((v) => v.value)),
      [[], [3], [5]],
    );
  });

  it('refuses to be stacked on itself or put behind retry', () => {
    const inner: Sink = { name: 'x', send: async () => undefined };
    const d = withDelta(inner);
    assert.throws(() => withDelta(d), { message: 'delta sink cannot wrap another delta sink' });
    assert.throws(() => withRetry(d, { monitorId: 'db1', events: NO_EVENTS }), {
      message: 'retry sink cannot wrap a delta sink',
    });
  });
});
