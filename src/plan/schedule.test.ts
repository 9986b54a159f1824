import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { DomainPlan, Plan } from '../core/plan.js';
import { parseDuration } from '../util/duration.js';
import { defaultPlan } from './defaults.js';
import {
  collectorMaxRuntimeMs,
  domainFreqMs,
  engineMaxRuntimeMs,
  freqWarnings,
  levelForTick,
  levelPhases,
  schedulePlan,
  sortLevels,
  tickPeriodS,
} from './schedule.js';

function dp(
  metrics: string[] = [],
  options: Record<string, string> = {},
  errors: Record<string, string> = {},
): DomainPlan {
  return { metrics, options, errors };
}

/** A plan from `[levelName, freq, collect]` triples. */
function mk(levels: [string, string, Record<string, DomainPlan>][]): Plan {
  const out: Plan = { name: 'p', source: 'test', levels: {} };
  for (const [name, freq, collect] of levels)
    out.levels[name] = { name, freq, freqMs: parseDuration(freq), collect };
  return out;
}

/** Level name chosen at each tick 0..n-1 ('' = nothing). */
function timeline(plan: Plan, n: number): string[] {
  const sorted = sortLevels(plan);
  return Array.from({ length: n }, (_v, s) => levelForTick(sorted, s)?.level ?? '');
}

void describe('sortLevels (leveling-up, the mod rule)', () => {
  void it('merges levels L1 5s, L2 10s, L3 20s upward', () => {
    const plan = mk([
      ['L3', '20s', { D1: dp(['M3']) }],
      ['L1', '5s', { D1: dp(['M1']) }],
      ['L2', '10s', { D1: dp(['M2']) }],
    ]);
    const sorted = sortLevels(plan);
    assert.deepEqual(
      sorted.map((l) => l.name),
      ['L1', 'L2', 'L3'],
    );
    assert.deepEqual(sorted[0]?.collect.D1?.metrics, ['M1']);
    assert.deepEqual(sorted[1]?.collect.D1?.metrics, ['M2', 'M1']);
    assert.deepEqual(sorted[2]?.collect.D1?.metrics, ['M3', 'M2', 'M1']);
    // the plan itself is untouched
    assert.deepEqual(plan.levels.L3?.collect.D1?.metrics, ['M3']);
  });

  void it('adds options and errors only for keys the higher level lacks, and tolerates missing maps', () => {
    const plan = mk([
      ['fast', '5s', { D: dp(['a'], { x: 'low', y: 'low' }, { 'access-denied': 'ignore' }), E: dp(['e']) }],
      ['slow', '10s', { D: dp(['b'], { x: 'high' }) }],
    ]);
    // a domain object without option/error maps, as Blip's crash case
    (plan.levels.slow!.collect.D as Partial<DomainPlan>).errors = undefined;
    const slow = sortLevels(plan)[1]!;
    assert.deepEqual(slow.collect, {
      D: { metrics: ['b', 'a'], options: { x: 'high', y: 'low' }, errors: { 'access-denied': 'ignore' } },
      E: { metrics: ['e'], options: {}, errors: {} },
    });
    assert.deepEqual(slow.own, { D: { metrics: ['b'], options: { x: 'high' }, errors: {} } });
  });

  void it('does not merge a lower level whose freq does not divide', () => {
    const sorted = sortLevels(
      mk([
        ['a', '5s', { A: dp() }],
        ['b', '20s', { B: dp() }],
        ['c', '30s', { C: dp() }],
      ]),
    );
    assert.deepEqual(Object.keys(sorted[1]!.collect), ['B', 'A']);
    assert.deepEqual(Object.keys(sorted[2]!.collect), ['C', 'A']);
  });

  void it('levels up default-mysql', () => {
    const sorted = sortLevels(defaultPlan('default-mysql')!);
    assert.deepEqual(
      sorted.map((l) => [l.name, l.freqMs]),
      [
        ['performance', 5000],
        ['additional', 20_000],
        ['data-size', 300_000],
        ['sysvars', 900_000],
      ],
    );
    const [perf, add, size, sys] = sorted;
    assert.deepEqual(Object.keys(perf!.collect), ['status.global', 'innodb', 'repl', 'repl.lag']);
    assert.deepEqual(Object.keys(add!.collect), ['status.global', 'innodb', 'repl', 'repl.lag']);
    assert.deepEqual(Object.keys(size!.collect), [
      'size.database',
      'size.table',
      'size.binlog',
      'status.global',
      'innodb',
      'repl',
      'repl.lag',
    ]);
    assert.deepEqual(Object.keys(sys!.collect), [
      'var.global',
      'size.database',
      'size.table',
      'size.binlog',
      'status.global',
      'innodb',
      'repl',
      'repl.lag',
    ]);
    const perfSg = perf!.own['status.global']!.metrics;
    const addSg = add!.own['status.global']!.metrics;
    assert.equal(perfSg.length, 26);
    assert.equal(addSg.length, 27);
    // higher level's own list first, then the lower level's
    assert.deepEqual(add!.collect['status.global']!.metrics, [...addSg, ...perfSg]);
    assert.deepEqual(size!.collect['status.global']!.metrics, [...addSg, ...perfSg]);
    assert.deepEqual(sys!.collect['status.global']!.metrics, [...addSg, ...perfSg]);
    assert.equal(sys!.collect['status.global']!.metrics[0], 'created_tmp_disk_tables');
    assert.equal(sys!.collect['status.global']!.metrics[27], 'queries');
    assert.deepEqual(sys!.collect.repl, {
      metrics: ['running'],
      options: {},
      errors: { 'access-denied': 'ignore,drop,retry' },
    });
    assert.deepEqual(sys!.collect['var.global']!.metrics, [
      'max_connections',
      'max_prepared_stmt_count',
      'innodb_log_file_size',
    ]);
  });
});

void describe('levelForTick', () => {
  void it('runs the default-mysql schedule', () => {
    const t = timeline(defaultPlan('default-mysql')!, 901);
    assert.equal(t[0], 'sysvars');
    assert.deepEqual([t[1], t[2], t[3], t[4]], ['', '', '', '']);
    assert.deepEqual([t[5], t[10], t[15]], ['performance', 'performance', 'performance']);
    assert.equal(t[20], 'additional');
    assert.deepEqual([t[25], t[30], t[35]], ['performance', 'performance', 'performance']);
    assert.equal(t[40], 'additional');
    assert.equal(t[300], 'data-size');
    assert.equal(t[600], 'data-size');
    assert.equal(t[900], 'sysvars');
    const fired = t.map((name, s) => [s, name] as const).filter(([, name]) => name !== '');
    assert.equal(fired.length, 181); // every 5 s from 0 to 900
    assert.ok(fired.every(([s]) => s % 5 === 0));
  });

  void it('hands over the merged domains of the chosen level under its own name', () => {
    const sorted = sortLevels(defaultPlan('default-mysql')!);
    const sel = levelForTick(sorted, 300)!;
    assert.equal(sel.level, 'data-size');
    assert.equal(sel.key, 'data-size');
    assert.deepEqual(sel.due, ['data-size', 'additional', 'performance']);
    assert.deepEqual(sel.collect, sorted[2]!.collect);
  });

  void it('collects the union of all due levels for uneven freqs 5s/20s/30s', () => {
    const plan = mk([
      ['l5', '5s', { A: dp(['a']) }],
      ['l20', '20s', { B: dp(['b']), S: dp(['s20']) }],
      ['l30', '30s', { C: dp(['c']), S: dp(['s30']) }],
    ]);
    const sorted = sortLevels(plan);
    const at = (s: number) => levelForTick(sorted, s);
    assert.deepEqual(at(20), { level: 'l20', key: 'l20', collect: sorted[1]!.collect, due: ['l20', 'l5'] });
    assert.deepEqual(at(30), { level: 'l30', key: 'l30', collect: sorted[2]!.collect, due: ['l30', 'l5'] });
    for (const s of [0, 60, 120]) {
      const sel = at(s)!;
      assert.equal(sel.level, 'l30');
      assert.equal(sel.key, 'l30+l20');
      assert.deepEqual(sel.due, ['l30', 'l20', 'l5']);
      assert.deepEqual(sel.collect, {
        C: dp(['c']),
        S: dp(['s30', 's20']),
        B: dp(['b']),
        A: dp(['a']),
      });
    }
    assert.equal(at(25)?.level, 'l5');
    assert.equal(at(7), undefined);
  });

  void it('collects the 5s domains with the 7s level at 35 s (5s/7s)', () => {
    const sorted = sortLevels(
      mk([
        ['five', '5s', { F: dp(['f']) }],
        ['seven', '7s', { S: dp(['s']) }],
      ]),
    );
    assert.deepEqual(levelForTick(sorted, 7), {
      level: 'seven',
      key: 'seven',
      collect: { S: dp(['s']) },
      due: ['seven'],
    });
    assert.equal(levelForTick(sorted, 10)?.level, 'five');
    for (const s of [0, 35, 70]) {
      assert.deepEqual(levelForTick(sorted, s), {
        level: 'seven',
        key: 'seven+five',
        collect: { S: dp(['s']), F: dp(['f']) },
        due: ['seven', 'five'],
      });
    }
  });

  void it("keeps Blip's arithmetic for sub-second and fractional freqs", () => {
    assert.equal(tickPeriodS(500), 1);
    assert.equal(tickPeriodS(1500), 3);
    assert.equal(tickPeriodS(2500), 5);
    assert.equal(tickPeriodS(5000), 5);
    assert.equal(tickPeriodS(0), Infinity);
    const fired = (freq: string): number[] =>
      timeline(mk([['l', freq, { D: dp() }]]), 11)
        .map((name, s) => (name === '' ? -1 : s))
        .filter((s) => s >= 0);
    assert.deepEqual(fired('500ms'), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    assert.deepEqual(fired('1500ms'), [0, 3, 6, 9]);
    assert.deepEqual(fired('2.5s'), [0, 5, 10]);
  });

  void it('returns nothing for a plan with zero levels', () => {
    assert.equal(levelForTick(sortLevels(mk([])), 0), undefined);
  });
});

void describe('schedulePlan', () => {
  void it('is the leveled-up plan when freqs divide each other', () => {
    const plan = defaultPlan('default-mysql')!;
    const sorted = sortLevels(plan);
    const sp = schedulePlan(plan, sorted);
    assert.equal(sp.name, 'default-mysql');
    assert.deepEqual(Object.keys(sp.levels), ['performance', 'additional', 'data-size', 'sysvars']);
    assert.deepEqual(sp.levels.sysvars?.collect, sorted[3]!.collect);
    assert.equal(sp.levels.sysvars?.freq, '15m');
  });

  void it('adds one union level per due set that leveling-up does not cover', () => {
    const plan = mk([
      ['l5', '5s', { A: dp(['a']) }],
      ['l20', '20s', { B: dp(['b']) }],
      ['l30', '30s', { C: dp(['c']) }],
    ]);
    const sp = schedulePlan(plan);
    assert.deepEqual(Object.keys(sp.levels), ['l5', 'l20', 'l30', 'l30+l20']);
    assert.deepEqual(sp.levels['l30+l20'], {
      name: 'l30+l20',
      freq: '30s',
      freqMs: 30_000,
      collect: { C: dp(['c']), B: dp(['b']), A: dp(['a']) },
    });
    // every tick's key exists in the schedule plan
    const sorted = sortLevels(plan);
    for (let s = 0; s < 120; s++) {
      const sel = levelForTick(sorted, s);
      if (sel) assert.deepEqual(sp.levels[sel.key]?.collect, sel.collect, `s=${s}`);
    }
  });

  void it('finds every due set of three mutually uneven levels', () => {
    const plan = mk([
      ['a', '2s', { A: dp() }],
      ['b', '3s', { B: dp() }],
      ['c', '5s', { C: dp() }],
    ]);
    const sp = schedulePlan(plan);
    assert.deepEqual(Object.keys(sp.levels).sort(), ['a', 'b', 'b+a', 'c', 'c+a', 'c+b', 'c+b+a']);
    const sorted = sortLevels(plan);
    for (let s = 0; s < 60; s++) {
      const sel = levelForTick(sorted, s);
      if (sel) assert.ok(sp.levels[sel.key], `missing ${sel.key} at s=${s}`);
    }
  });
});

/** A seed whose phases are all non-zero but the fastest level's (found by trying ids in order). */
function seedWithPhases(sorted: ReturnType<typeof sortLevels>): { seed: string; phases: number[] } {
  for (let i = 0; ; i++) {
    const phases = levelPhases(sorted, `m-${i}`);
    if (phases.slice(1).every((p) => p > 0)) return { seed: `m-${i}`, phases };
  }
}

void describe('spreading (levelPhases)', () => {
  const sorted = sortLevels(defaultPlan('default-mysql')!);

  void it('gives the fastest level phase 0 and slower ones phases of one shift', () => {
    for (let i = 0; i < 200; i++) {
      const phases = levelPhases(sorted, `scale-${i}`);
      assert.equal(phases[0], 0);
      sorted.forEach((l, k) => {
        const p = phases[k]!;
        assert.ok(Number.isInteger(p) && p >= 0 && p < l.periodS, `${l.name}: ${p}`);
        // one φ for the monitor, a multiple of the fastest period: the same modulo every period
        assert.equal(p % sorted[0]!.periodS, 0);
        for (let j = 0; j < k; j++)
          if (l.periodS % sorted[j]!.periodS === 0) assert.equal(p % sorted[j]!.periodS, phases[j]);
      });
    }
  });

  void it('is the same for the same id and spreads 1,000 ids over every slot of a 60 s level', () => {
    const plan = mk([
      ['fast', '5s', { A: dp() }],
      ['queries', '60s', { Q: dp() }],
    ]);
    const two = sortLevels(plan);
    assert.deepEqual(levelPhases(two, 'db-1'), levelPhases(two, 'db-1'));
    const slots = new Array<number>(12).fill(0);
    for (let i = 0; i < 1000; i++) slots[levelPhases(two, `scale-${i}`)[1]! / 5]! += 1;
    // 1,000 monitors in 12 slots of 5 s: about 83 each instead of 1,000 in one second
    assert.ok(
      slots.every((n) => n >= 50 && n <= 120),
      slots.join(' '),
    );
  });

  void it('collects everything at s = 0, the fastest level on its own ticks, the rest shifted', () => {
    const { phases } = seedWithPhases(sorted);
    const at = (s: number) => levelForTick(sorted, s, phases);
    assert.equal(at(0)?.level, 'sysvars');
    assert.deepEqual(at(0)?.due, ['sysvars', 'data-size', 'additional', 'performance']);
    const fired: number[] = [];
    for (let s = 0; s <= 1800; s++) if (at(s) !== undefined) fired.push(s);
    // The fastest level (5 s) is due every 5 s as without spreading, and nothing else is due between.
    assert.deepEqual(
      fired,
      Array.from({ length: 361 }, (_v, i) => i * 5),
    );
    // After s = 0, each level is due at its phase (a whole period when 0) and then every period.
    sorted.forEach((l, k) => {
      const ticks = fired.filter((s) => s > 0 && at(s)!.due.includes(l.name));
      assert.equal(ticks[0], phases[k] === 0 ? l.periodS : phases[k], l.name);
      for (let i = 1; i < ticks.length; i++) assert.equal(ticks[i]! - ticks[i - 1]!, l.periodS, l.name);
    });
  });

  void it('is the unshifted schedule moved by the phase, so leveling-up still holds', () => {
    const { phases } = seedWithPhases(sorted);
    const phi = phases[3]!; // sysvars: 900 s, the lcm of every period
    for (let s = 1; s <= 1800; s++) {
      const shifted = (((s - phi) % 900) + 900) % 900;
      assert.deepEqual(levelForTick(sorted, s, phases), levelForTick(sorted, shifted), `s=${s}`);
    }
  });

  void it('keeps every union level of uneven freqs in the schedule plan', () => {
    for (const plan of [
      mk([
        ['l5', '5s', { A: dp(['a']) }],
        ['l20', '20s', { B: dp(['b']) }],
        ['l30', '30s', { C: dp(['c']) }],
      ]),
      mk([
        ['a', '2s', { A: dp() }],
        ['b', '3s', { B: dp() }],
        ['c', '5s', { C: dp() }],
      ]),
    ]) {
      const uneven = sortLevels(plan);
      const sp = schedulePlan(plan, uneven);
      for (let i = 0; i < 50; i++) {
        const phases = levelPhases(uneven, `m-${i}`);
        for (let s = 0; s < 200; s++) {
          const sel = levelForTick(uneven, s, phases);
          if (sel) assert.deepEqual(sp.levels[sel.key]?.collect, sel.collect, `m-${i} s=${s}`);
        }
      }
    }
  });

  void it('leaves a plan of one level, and phases of 0, as without spreading', () => {
    assert.deepEqual(levelPhases(sortLevels(mk([['l', '60s', { D: dp() }]])), 'any-id'), [0]);
    for (let s = 0; s <= 900; s++)
      assert.deepEqual(levelForTick(sorted, s, [0, 0, 0, 0]), levelForTick(sorted, s), `s=${s}`);
  });
});

void describe('time limits', () => {
  const one = (freq: string) => sortLevels(mk([['l', freq, { D: dp() }]]));

  void it('derives the engine max runtime from the smallest freq', () => {
    assert.equal(engineMaxRuntimeMs(one('1s')), 900);
    assert.equal(engineMaxRuntimeMs(one('5s')), 4500);
    assert.equal(engineMaxRuntimeMs(one('20s')), 19_000);
    assert.equal(engineMaxRuntimeMs(sortLevels(defaultPlan('default-mysql')!)), 4500);
    assert.equal(engineMaxRuntimeMs([]), 0);
  });

  void it('derives the collector max runtime from the domain freq', () => {
    assert.equal(collectorMaxRuntimeMs(one('5s'), 'D'), 4000);
    assert.equal(collectorMaxRuntimeMs(one('10s'), 'D'), 8000);
    assert.equal(collectorMaxRuntimeMs(one('20s'), 'D'), 18_000);
    assert.equal(collectorMaxRuntimeMs(one('5m'), 'D'), 298_000); // 4m58s
    assert.equal(collectorMaxRuntimeMs(one('5s'), 'other'), undefined);
  });

  void it('gives each default-mysql domain its smallest level freq', () => {
    const sorted = sortLevels(defaultPlan('default-mysql')!);
    for (const d of ['status.global', 'innodb', 'repl', 'repl.lag'])
      assert.equal(domainFreqMs(sorted, d), 5000);
    for (const d of ['size.database', 'size.table', 'size.binlog'])
      assert.equal(domainFreqMs(sorted, d), 300_000);
    assert.equal(domainFreqMs(sorted, 'var.global'), 900_000);
    assert.equal(collectorMaxRuntimeMs(sorted, 'var.global'), 898_000);
    assert.equal(domainFreqMs(sorted, 'trx'), undefined);
  });
});

void describe('freqWarnings', () => {
  void it('warns about freqs that are not whole seconds', () => {
    const sorted = sortLevels(
      mk([
        ['half', '500ms', {}],
        ['whole', '2s', {}],
        ['odd', '1500ms', {}],
      ]),
    );
    assert.deepEqual(freqWarnings(sorted), [
      'level half: freq 500ms is not a whole number of seconds; it is collected every 1s',
      'level odd: freq 1500ms is not a whole number of seconds; it is collected every 3s',
    ]);
  });
});
