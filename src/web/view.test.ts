/**
 * Why an empty chart is empty, as the page's JSON says it (`empty`): a series the plan does
 * not collect names what to add, a replica lag of -1 says not a replica, a failing monitor
 * says so, and a rate waits for its second collection.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MetricType, type Metrics } from '../core/metrics.js';
import type { Plan } from '../core/plan.js';
import { SeriesBuffer } from './series.js';
import { uiSource, type UiMonitorLike } from './view.js';

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

const PLAN: Plan = {
  name: 'p.yaml',
  source: 'test',
  levels: {
    fast: {
      name: 'fast',
      freq: '5s',
      freqMs: 5000,
      collect: {
        'status.global': { metrics: ['queries', 'threads_connected'], options: {}, errors: {} },
        'repl.lag': { metrics: [], options: {}, errors: {} },
      },
    },
  },
};

function batch(at: number, lagMs: number): Metrics {
  const begin = new Date(at);
  return {
    begin,
    end: begin,
    monitorId: 'm',
    plan: 'p.yaml',
    level: 'fast',
    interval: 1,
    state: 'active',
    values: {
      'status.global': [
        { name: 'queries', value: 100, type: MetricType.CumulativeCounter },
        { name: 'threads_connected', value: 3, type: MetricType.Gauge },
      ],
      'repl.lag': [{ name: 'current', value: lagMs, type: MetricType.Gauge }],
    },
  };
}

function source(m: UiMonitorLike, status: Record<string, string>) {
  return uiSource({
    version: '0',
    monitors: () => [m],
    statusOf: () => status,
    uptimeS: () => 1,
    readOnly: false,
    now: () => T0 + 60_000,
  });
}

const RUNNING = { monitor: 'running since 2026-01-01T12:00:00+00:00' };

describe('why a chart is empty', () => {
  it('names what to add to the plan, says not a replica, and waits for a rate', () => {
    const series = new SeriesBuffer();
    series.add(batch(T0, -1));
    const m: UiMonitorLike = { id: 'm', dsn: '', running: true, config: {}, series, activePlan: PLAN };
    const empty = source(m, RUNNING).monitor('m')?.empty ?? {};
    assert.equal(empty.connections, undefined, 'a series with points has no reason');
    assert.equal(
      empty.max_connections,
      'not in the plan: add var.global.max_connections to a level of plan p.yaml',
    );
    assert.equal(
      empty.slow_queries,
      'not in the plan: add status.global.slow_queries to a level of plan p.yaml',
    );
    assert.equal(empty.repl_lag, 'not a replica: repl.lag has no heartbeat from a source to measure');
    assert.equal(empty.qps, 'no data yet: a rate needs two collections');
  });

  it('says the monitor is failing, and why', () => {
    const m: UiMonitorLike = {
      id: 'm',
      dsn: '',
      running: true,
      config: {},
      series: new SeriesBuffer(),
      activePlan: PLAN,
    };
    const status = { ...RUNNING, 'error:engine-prepare': 'while connecting to MySQL: connect ECONNREFUSED' };
    const view = source(m, status).monitor('m');
    assert.equal(view?.row.state, 'failing');
    assert.equal(
      view?.empty.qps,
      'no data: the monitor is failing: cannot prepare its plan: while connecting to MySQL: connect ECONNREFUSED',
    );
  });
});
