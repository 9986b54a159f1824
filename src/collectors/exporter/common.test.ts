import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CollectError } from '../../core/collector.js';
import { MetricType, type MetricValue } from '../../core/metrics.js';
import { PROM_HELP_META, scraperByName } from '../../core/upstream.js';
import { columnSamples, family, parseGoFloat, parseStatus, sample, upstreamOptions } from './common.js';

describe('exporter.* collector helpers', () => {
  it("parses column values as mysqld_exporter's parseStatus does", () => {
    const cases: [string | null, number | undefined][] = [
      ['Yes', 1],
      ['ON', 1],
      ['Primary', 1],
      ['No', 0],
      ['Connecting', 0],
      ['DISABLED', 0],
      ['non-Primary', 0],
      ['Disconnected', 0],
      ['42', 42],
      ['-1.5', -1.5],
      ['1e+06', 1e6],
      ['2024-01-02 03:04:05', Date.UTC(2024, 0, 2, 3, 4, 5) / 1000],
      ['Jan  2 03:04:05 2024 GMT', Date.UTC(2024, 0, 2, 3, 4, 5) / 1000],
      ['mysql-bin.000012', undefined],
      ['', undefined],
      [null, undefined],
      ['Waiting for master', undefined],
      ['0x10', undefined],
    ];
    for (const [text, want] of cases) assert.equal(parseStatus(text), want, String(text));
    assert.ok(Number.isNaN(parseGoFloat('NaN')));
    assert.equal(parseGoFloat('-Inf'), -Infinity);
  });

  it('shares one frozen HELP meta per family', () => {
    const f = family('mysql_x_total', 'X.', 'counter');
    const a = sample(f, 1, { a: '1' });
    const b = sample(f, 2);
    assert.equal(a.meta, b.meta);
    assert.equal(a.meta?.[PROM_HELP_META], 'X.');
    assert.equal(a.type, MetricType.CumulativeCounter);
    assert.ok(Object.isFrozen(f.meta));
    assert.equal(family('g', 'G.', 'untyped').type, MetricType.Unknown);
  });

  it('fills sub-flag defaults and refuses unknown options and bad values, naming them', () => {
    const processlist = scraperByName('info_schema.processlist');
    assert.ok(processlist !== undefined);
    assert.deepEqual(upstreamOptions(processlist, { min_time: '3' }), {
      min_time: '3',
      processes_by_user: 'true',
      processes_by_host: 'true',
    });
    assert.throws(
      () => upstreamOptions(processlist, { min_tme: '3' }),
      (e: unknown) =>
        e instanceof CollectError &&
        e.message === 'unknown option min_tme; valid options: min_time, processes_by_user, processes_by_host',
    );
    assert.throws(
      () => upstreamOptions(processlist, { min_time: 'soon' }),
      /invalid option min_time: soon: not an integer/,
    );
    assert.throws(() => upstreamOptions(processlist, { processes_by_user: 'yes' }), /not true or false/);
    const slave = scraperByName('slave_status');
    assert.ok(slave !== undefined);
    assert.throws(() => upstreamOptions(slave, { x: '1' }), /unknown option x; the domain has no options/);
  });

  it('makes one sample per column and row, and none of a row whose last column does not scan', () => {
    const families = { a: family('t_a', 'A.', 'counter'), b: family('t_b', 'B.', 'gauge') };
    const scan = (row: Record<string, string | null>, column: string): number => {
      const n = Number(row[column]);
      if (Number.isNaN(n)) throw new CollectError(`bad ${column}`);
      return n;
    };
    const out: MetricValue[] = [];
    const rows = [
      { k: 'x', a: '1', b: '2' },
      { k: 'y', a: '3', b: 'many' },
      { k: 'z', a: '5', b: '6' },
    ];
    assert.throws(() => columnSamples(rows, families, (r) => ({ k: r.k ?? '' }), scan, out), /bad b/);
    assert.deepEqual(
      out.map((v) => [v.name, v.value, v.group]),
      [
        ['t_a', 1, { k: 'x' }],
        ['t_b', 2, { k: 'x' }],
      ],
    );
  });
});
