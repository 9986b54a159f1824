import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_PLAN_NAMES, DEFAULT_PLAN_SOURCE, defaultPlan, defaultPlans } from './defaults.js';
import { validatePlans } from './parse.js';
import { testHelp } from './help-fixture.js';

void describe('default plans', () => {
  void it('lists default-mysql, default-exporter and default-none in that order, source sonde', () => {
    assert.deepEqual(DEFAULT_PLAN_NAMES, ['default-mysql', 'default-exporter', 'default-none']);
    const plans = defaultPlans();
    assert.deepEqual(
      plans.map((p) => [p.name, p.source]),
      DEFAULT_PLAN_NAMES.map((n) => [n, DEFAULT_PLAN_SOURCE]),
    );
    assert.equal(DEFAULT_PLAN_SOURCE, 'sonde');
  });

  void it('defines default-mysql level by level, metric by metric', () => {
    const p = defaultPlan('default-mysql')!;
    assert.deepEqual(
      Object.values(p.levels).map((l) => [l.name, l.freq, l.freqMs, Object.keys(l.collect)]),
      [
        ['performance', '5s', 5000, ['status.global', 'innodb', 'repl', 'repl.lag']],
        ['additional', '20s', 20_000, ['status.global']],
        ['data-size', '5m', 300_000, ['size.database', 'size.table', 'size.binlog']],
        ['sysvars', '15m', 900_000, ['var.global']],
      ],
    );
    const perf = p.levels.performance!.collect;
    assert.equal(perf['status.global']!.metrics.length, 26);
    assert.equal(perf['status.global']!.metrics[0], 'queries');
    assert.equal(perf['status.global']!.metrics[25], 'innodb_os_log_written');
    assert.equal(perf.innodb!.metrics.length, 14);
    assert.ok(perf.innodb!.metrics.includes('buffer_LRU_batch_flush_total_pages'));
    assert.equal(perf.innodb!.metrics[13], 'lock_deadlocks');
    assert.deepEqual(perf.repl, {
      metrics: ['running'],
      options: {},
      errors: { 'access-denied': 'ignore,drop,retry' },
    });
    assert.deepEqual(perf['repl.lag'], { metrics: [], options: {}, errors: {} });
    const add = p.levels.additional!.collect['status.global']!.metrics;
    assert.equal(add.length, 27);
    assert.equal(add[0], 'created_tmp_disk_tables');
    assert.equal(add[26], 'com_show_warnings');
    assert.deepEqual(p.levels['data-size']!.collect['size.binlog'], {
      metrics: [],
      options: {},
      errors: { 'access-denied': 'ignore,drop,retry' },
    });
    assert.deepEqual(p.levels.sysvars!.collect['var.global']!.metrics, [
      'max_connections',
      'max_prepared_stmt_count',
      'innodb_log_file_size',
    ]);
  });

  void it('defines default-exporter with one 10s level and the all options', () => {
    assert.deepEqual(defaultPlan('default-exporter')!.levels, {
      prom: {
        name: 'prom',
        freq: '10s',
        freqMs: 10_000,
        collect: {
          'status.global': { metrics: [], options: { all: 'yes' }, errors: {} },
          'var.global': { metrics: [], options: { all: 'yes' }, errors: {} },
          innodb: { metrics: [], options: { all: 'enabled' }, errors: {} },
        },
      },
    });
  });

  void it('defines default-none with zero levels', () => {
    assert.deepEqual(defaultPlan('default-none'), { name: 'default-none', source: 'sonde', levels: {} });
    assert.equal(defaultPlan('default-other'), undefined);
  });

  void it('hands out fresh copies each time', () => {
    const a = defaultPlans();
    a[0]!.levels.performance!.collect['status.global']!.metrics.push('mutated');
    const b = defaultPlans();
    assert.equal(b[0]!.levels.performance!.collect['status.global']!.metrics.length, 26);
  });

  void it('passes plan validation against the declared help', () => {
    validatePlans(defaultPlans(), testHelp);
  });
});
