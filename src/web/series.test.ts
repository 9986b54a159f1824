import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MetricType, type Metrics, type MetricValue } from '../core/metrics.js';
import { HOUR_SLOTS, STEP_MS, SeriesBuffer, ringBytes } from './series.js';

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

function counter(name: string, value: number): MetricValue {
  return { name, value, type: MetricType.CumulativeCounter };
}
function gauge(name: string, value: number): MetricValue {
  return { name, value, type: MetricType.Gauge };
}

function metrics(at: number, values: Metrics['values']): Metrics {
  const begin = new Date(at);
  return { begin, end: begin, monitorId: 'm', plan: 'p', level: 'l', interval: 1, state: 'active', values };
}

describe('SeriesBuffer', () => {
  it('holds one hour of 10-second slots in 36.6 KiB', () => {
    assert.equal(HOUR_SLOTS, 360);
    assert.equal(STEP_MS, 10_000);
    assert.equal(ringBytes(HOUR_SLOTS), 37_440);
  });

  it('turns counters into rates per second and keeps gauges as they are', () => {
    const s = new SeriesBuffer();
    s.add(metrics(T0, { 'status.global': [counter('queries', 100), gauge('threads_connected', 4)] }));
    s.add(
      metrics(T0 + 10_000, { 'status.global': [counter('queries', 150), gauge('threads_connected', 6)] }),
    );
    const snap = s.snapshot();
    assert.deepEqual(snap.t, [T0, T0 + 10_000]);
    assert.deepEqual(snap.values.qps, [null, 5]);
    assert.deepEqual(snap.values.connections, [4, 6]);
    assert.deepEqual(s.latest(), { qps: 5, connections: 6 });
    assert.equal(s.lastAt, T0 + 10_000);
  });

  it('leaves a rate missing across a counter reset, never 0', () => {
    const s = new SeriesBuffer();
    s.add(metrics(T0, { 'status.global': [counter('slow_queries', 10)] }));
    s.add(metrics(T0 + 10_000, { 'status.global': [counter('slow_queries', 2)] }));
    assert.deepEqual(s.snapshot().values.slow_queries, [null, null]);
    s.add(metrics(T0 + 20_000, { 'status.global': [counter('slow_queries', 12)] }));
    assert.deepEqual(s.snapshot().values.slow_queries, [null, null, 1]);
  });

  it('computes the buffer pool hit ratio over the interval, and lag in seconds without -1', () => {
    const s = new SeriesBuffer();
    const bp = (req: number, reads: number): MetricValue[] => [
      counter('innodb_buffer_pool_read_requests', req),
      counter('innodb_buffer_pool_reads', reads),
    ];
    s.add(metrics(T0, { 'status.global': bp(1000, 10), 'repl.lag': [gauge('current', -1)] }));
    s.add(metrics(T0 + 10_000, { 'status.global': bp(2000, 60), 'repl.lag': [gauge('current', 2500)] }));
    const v = s.snapshot().values;
    assert.deepEqual(v.bp_hit, [null, 95]);
    assert.deepEqual(v.repl_lag, [null, 2.5]);
  });

  it("takes MariaDB's row counters when Innodb_rows_* are not there", () => {
    const s = new SeriesBuffer();
    s.add(metrics(T0, { 'status.global': [counter('rows_read', 0), counter('handler_write', 0)] }));
    s.add(
      metrics(T0 + 10_000, { 'status.global': [counter('rows_read', 300), counter('handler_write', 20)] }),
    );
    assert.deepEqual(s.latest(), { rows_read: 30, rows_inserted: 2 });
  });

  it('holds max_connections from its last read', () => {
    const s = new SeriesBuffer();
    s.add(metrics(T0, { 'var.global': [gauge('max_connections', 151)] }));
    s.add(metrics(T0 + 10_000, { 'status.global': [gauge('threads_connected', 3)] }));
    assert.deepEqual(s.snapshot().values.max_connections, [151, 151]);
  });

  it('overwrites a slot with later values and keeps the hour, leaving gaps empty', () => {
    const s = new SeriesBuffer(3);
    s.add(metrics(T0, { 'status.global': [gauge('threads_connected', 1)] }));
    s.add(metrics(T0 + 5_000, { 'status.global': [gauge('threads_connected', 2)] }));
    assert.deepEqual(s.snapshot(), {
      stepS: 10,
      t: [T0 + 5_000],
      values: { ...s.snapshot().values, connections: [2] },
    });
    s.add(metrics(T0 + 30_000, { 'status.global': [gauge('threads_connected', 4)] }));
    s.add(metrics(T0 + 40_000, { 'status.global': [gauge('threads_connected', 5)] }));
    const snap = s.snapshot();
    assert.deepEqual(snap.t, [T0 + 30_000, T0 + 40_000]);
    assert.deepEqual(snap.values.connections, [4, 5]);
    // Older than the window: dropped.
    s.add(metrics(T0, { 'status.global': [gauge('threads_connected', 9)] }));
    assert.deepEqual(s.snapshot().values.connections, [4, 5]);
  });

  it('reads names in any case, the first finite ungrouped value, else the largest grouped one', () => {
    const s = new SeriesBuffer();
    const grouped = (name: string, value: number, db: string): MetricValue => ({
      ...gauge(name, value),
      group: { db },
    });
    s.add(
      metrics(T0, {
        'status.global': [
          gauge('Threads_connected', NaN),
          grouped('threads_connected', 50, 'a'),
          gauge('THREADS_CONNECTED', 4),
          gauge('threads_connected', 9),
          grouped('innodb_buffer_pool_pages_dirty', 3, 'a'),
          grouped('innodb_buffer_pool_pages_dirty', 8, 'b'),
          grouped('innodb_buffer_pool_pages_dirty', 5, 'c'),
          counter('Queries', 100),
        ],
        'var.global': [gauge('Max_Connections', Infinity), gauge('MAX_connections', 200)],
      }),
    );
    s.add(metrics(T0 + 10_000, { 'status.global': [counter('queries', 160)] }));
    const v = s.snapshot().values;
    assert.deepEqual(v.connections, [4, null]);
    assert.deepEqual(v.bp_dirty, [8, null]);
    assert.deepEqual(v.max_connections, [200, 200]);
    assert.deepEqual(v.qps, [null, 6]);
  });

  it('reads the same names right past the number of names it remembers', () => {
    const s = new SeriesBuffer();
    const many = Array.from({ length: 25_000 }, (_, i) => gauge(`Some_Variable_${i}`, i));
    s.add(metrics(T0, { 'status.global': [...many, gauge('Threads_Connected', 3)] }));
    s.add(metrics(T0 + 10_000, { 'status.global': [gauge('threads_connected', 5), ...many] }));
    s.add(metrics(T0 + 20_000, { 'status.global': [...many, gauge('Threads_Connected', 7)] }));
    assert.deepEqual(s.snapshot().values.connections, [3, 5, 7]);
  });

  it('keeps only the latest values with no slots (history off)', () => {
    const s = new SeriesBuffer(0);
    s.add(metrics(T0, { 'status.global': [gauge('threads_connected', 7)] }));
    assert.deepEqual(s.snapshot().t, []);
    assert.deepEqual(s.latest(), { connections: 7 });
  });
});
