import { describe, it } from 'node:test';
import { sinkContext } from './receivers.fixture.js';
import assert from 'node:assert/strict';
import { MetricType } from '../core/metrics.js';
import type { Metrics } from '../core/metrics.js';
import { createLogSink, formatLogBlock, logSinkRegistration } from './log.js';
import { createNoopSink } from './noop.js';

// Each test file runs in its own process: fix the zone so `ts:` is deterministic.
process.env.TZ = 'UTC';

class Collect {
  readonly writes: string[] = [];
  write(text: string): boolean {
    this.writes.push(text);
    return true;
  }
}

const metrics: Metrics = {
  begin: new Date(Date.UTC(2024, 4, 1, 12, 0, 5, 120)),
  end: new Date(Date.UTC(2024, 4, 1, 12, 0, 5, 133)),
  monitorId: 'db1',
  plan: 'default-mysql',
  level: 'performance',
  interval: 3,
  state: 'active',
  values: {
    'status.global': [
      { name: 'queries', value: 1234, type: MetricType.CumulativeCounter },
      { name: 'threads_running', value: 2.9, type: MetricType.Gauge },
      { name: 'neg', value: -7.9, type: MetricType.Gauge },
    ],
    'repl.lag': [
      {
        name: 'current',
        value: 0.75,
        type: MetricType.Gauge,
        group: {},
        meta: { source: 'node2', ts: '1714564805120' },
      },
    ],
    'size.table': [
      { name: 'bytes', value: 16384, type: MetricType.Gauge, group: { tbl: 'users', db: 'app' } },
      {
        name: 'bytes',
        value: 1e21,
        type: MetricType.Gauge,
        group: { tbl: 'big', db: 'app' },
        meta: { z: '1', a: '2' },
      },
    ],
    'query.response-time': [
      { name: 'p999', value: NaN, type: MetricType.Gauge },
      { name: 'max', value: Infinity, type: MetricType.Gauge },
      { name: 'min', value: -Infinity, type: MetricType.Gauge },
    ],
  },
};

const EXPECTED =
  '# monitor:  db1\n' +
  '# plan:     default-mysql\n' +
  '# level:    performance\n' +
  '# ts:       2024-05-01T12:00:05.12Z\n' +
  '# duration: 13 ms\n' +
  'query.response-time.p999 = NaN\n' +
  'query.response-time.max = +Inf\n' +
  'query.response-time.min = -Inf\n' +
  'repl.lag.current = 0 (meta: source=node2,ts=1714564805120)\n' +
  'size.table.bytes = 16384 (group: db=app,tbl=users)\n' +
  'size.table.bytes = 1000000000000000000000 (group: db=app,tbl=big) (meta: a=2,z=1)\n' +
  'status.global.queries = 1234\n' +
  'status.global.threads_running = 2\n' +
  'status.global.neg = -7\n' +
  '\n';

describe('log sink', () => {
  it('writes the exact block: aligned header, sorted domains, truncated values, sorted pairs', async () => {
    const out = new Collect();
    const sink = createLogSink(out);
    assert.equal(sink.name, 'log');
    await sink.send(metrics);
    assert.deepEqual(out.writes, [EXPECTED]);
  });

  it('writes one block per send, each in a single write', async () => {
    const out = new Collect();
    const sink = logSinkRegistration(out).create(sinkContext('log', { ignored: 'yes' }));
    await sink.send(metrics);
    await sink.send({ ...metrics, values: {} });
    assert.equal(out.writes.length, 2);
    assert.equal(out.writes[1], EXPECTED.split('\n').slice(0, 5).join('\n') + '\n\n');
  });

  it('prints whole-second begin without a fraction and truncates the duration', () => {
    const text = formatLogBlock({
      ...metrics,
      begin: new Date(Date.UTC(2024, 0, 2, 3, 4, 5)),
      end: new Date(Date.UTC(2024, 0, 2, 3, 4, 6, 999)),
      values: {},
    });
    assert.ok(text.endsWith('# ts:       2024-01-02T03:04:05Z\n# duration: 1999 ms\n\n'), text);
  });

  it('prints begin with the local zone offset', () => {
    process.env.TZ = 'Asia/Kolkata';
    try {
      const text = formatLogBlock(metrics);
      assert.ok(text.includes('\n# ts:       2024-05-01T17:30:05.12+05:30\n'), text);
    } finally {
      process.env.TZ = 'UTC';
    }
  });
});

describe('noop sink', () => {
  it('accepts everything and succeeds', async () => {
    const sink = createNoopSink();
    assert.equal(sink.name, 'noop');
    await sink.send(metrics);
  });
});

describe('the last send of log and noop', () => {
  it('is in their status key, like every sink', async () => {
    for (const [name, verb] of [
      ['log', 'sent'],
      ['noop', 'dropped'],
    ] as const) {
      const keys = new Map<string, string>();
      const status = { set: (k: string, v: string) => void keys.set(k, v), delete: () => undefined };
      const sink = name === 'log' ? createLogSink(new Collect(), status) : createNoopSink(status);
      assert.equal(keys.get(name), undefined);
      await sink.send(metrics);
      const n = Object.values(metrics.values).reduce((a, v) => a + (v?.length ?? 0), 0);
      assert.match(keys.get(name) ?? '', new RegExp(`^last ${verb} ${n} metrics at \\d{4}-\\d\\d-\\d\\dT`));
    }
  });
});
