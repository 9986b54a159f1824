import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MetricType } from '../core/metrics.js';
import type { Plan } from '../core/plan.js';
import { PLAN_LIMITS, PlanError, parsePlan, validatePlan, validatePlans } from './parse.js';
import { testHelp } from './help-fixture.js';

const EXAMPLE = `
kpi:
  freq: 5s
  timeout: 3s   # unknown keys are ignored
  collect:
    status.global:
      metrics: [queries, threads_running]
    repl:
      metrics: [running]
      errors:
        access-denied: "report-once,drop,stop"
size:
  freq: 5m
  collect:
    size.database:
`;

function planErrorText(fn: () => void): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof PlanError, `not a PlanError: ${String(err)}`);
    return err.message;
  }
  assert.fail('no error thrown');
}

function plan(yaml: string, name = 'p.yaml'): Plan {
  return parsePlan(name, name, yaml);
}

void describe('parsePlan', () => {
  void it('parses a two-level plan with level names from the keys', () => {
    const p = plan(EXAMPLE);
    assert.equal(p.name, 'p.yaml');
    assert.equal(p.source, 'p.yaml');
    assert.deepEqual(Object.keys(p.levels), ['kpi', 'size']);
    assert.deepEqual(p.levels.kpi, {
      name: 'kpi',
      freq: '5s',
      freqMs: 5000,
      collect: {
        'status.global': { metrics: ['queries', 'threads_running'], options: {}, errors: {} },
        repl: { metrics: ['running'], options: {}, errors: { 'access-denied': 'report-once,drop,stop' } },
      },
    });
    assert.deepEqual(p.levels.size, {
      name: 'size',
      freq: '5m',
      freqMs: 300_000,
      collect: { 'size.database': { metrics: [], options: {}, errors: {} } },
    });
  });

  void it('treats an empty file (or only comments) as a plan with zero levels', () => {
    assert.deepEqual(plan('').levels, {});
    assert.deepEqual(plan('# nothing here\n').levels, {});
  });

  void it('keeps scalar option values as written', () => {
    const p = plan(`l:
  freq: 1s
  collect:
    d:
      options: {a: yes, b: 0.10, c: 50, d: "x,y", e: 'it''s', f: true}
`);
    assert.deepEqual(p.levels.l?.collect.d?.options, {
      a: 'yes',
      b: '0.10',
      c: '50',
      d: 'x,y',
      e: "it's",
      f: 'true',
    });
  });

  void it('turns a null level body into a level without freq', () => {
    const p = plan('kpi:\n');
    assert.deepEqual(p.levels.kpi, { name: 'kpi', freq: '', freqMs: NaN, collect: {} });
    assert.equal(
      planErrorText(() => validatePlan(p)),
      'at kpi: freq not set (Go time duration string required)',
    );
  });

  void it('fails on text that is not YAML, with a one-line message', () => {
    const msg = planErrorText(() => plan('a: [1,\n'));
    assert.match(msg, /^Flow sequence in block collection must be sufficiently indented/);
    assert.ok(!msg.includes('\n'));
  });

  void it('fails on duplicate keys and on documents that are not a mapping', () => {
    assert.equal(
      planErrorText(() => plan('a:\n  freq: 1s\na:\n  freq: 2s\n')),
      'plan: duplicate key a',
    );
    assert.equal(
      planErrorText(() => plan('a:\n  freq: 1s\n  freq: 2s\n')),
      'at a: duplicate key freq',
    );
    assert.equal(
      planErrorText(() => plan('- a\n- b\n')),
      'plan: expected a mapping',
    );
    assert.equal(
      planErrorText(() => plan('l:\n  freq: 1s\n  collect:\n    d:\n      metrics: queries\n')),
      'at l/d: metrics: expected a list',
    );
  });
});

void describe('validatePlan', () => {
  void it('accepts the example', () => {
    validatePlan(plan(EXAMPLE));
  });

  void it('reports a missing freq', () => {
    assert.equal(
      planErrorText(() => validatePlan(plan('a:\n  collect:\n    repl:\n'))),
      'at a: freq not set (Go time duration string required)',
    );
  });

  void it('reports an unparsable freq with the Go parse error', () => {
    assert.equal(
      planErrorText(() => validatePlan(plan('a:\n  freq: 5x\n'))),
      'at a: invalid freq: 5x: time: invalid duration "5x"',
    );
    assert.equal(
      planErrorText(() => validatePlan(plan('a:\n  freq: 5\n'))),
      'at a: invalid freq: 5: time: missing unit in duration "5"',
    );
  });

  void it('rejects a zero or negative freq', () => {
    assert.equal(
      planErrorText(() => validatePlan(plan('a:\n  freq: 0s\n'))),
      'at a: invalid freq: 0s: must be greater than zero',
    );
    assert.equal(
      planErrorText(() => validatePlan(plan('a:\n  freq: -5s\n'))),
      'at a: invalid freq: -5s: must be greater than zero',
    );
  });

  void it('reports two levels with the same duration, naming the first one seen', () => {
    assert.equal(
      planErrorText(() => validatePlan(plan('one:\n  freq: 60s\ntwo:\n  freq: 1m\n'))),
      'at two: duplicate freq: 1m (1m0s): first seen at one',
    );
  });

  void it('reports an invalid metric name', () => {
    assert.equal(
      planErrorText(() =>
        validatePlan(
          plan('a:\n  freq: 5s\n  collect:\n    status.global:\n      metrics: [ok_1, "bad.name"]\n'),
        ),
      ),
      'at a/status.global: invalid metric: bad.name (does not match /^[a-zA-Z0-9_-]*$/)',
    );
  });

  void it('checks levels in ascending freq order, whatever the written order', () => {
    const p = plan(`slow:
  freq: 1m
  collect:
    d:
      metrics: ["slow!"]
fast:
  freq: 1s
  collect:
    d:
      metrics: ["fast!"]
`);
    assert.equal(
      planErrorText(() => validatePlan(p)),
      'at fast/d: invalid metric: fast! (does not match /^[a-zA-Z0-9_-]*$/)',
    );
  });

  void it('reports levels without a usable freq before the others', () => {
    const p = plan('fast:\n  freq: 1s\n  collect:\n    d:\n      metrics: ["x!"]\nbroken:\n  freq: soon\n');
    assert.equal(
      planErrorText(() => validatePlan(p)),
      'at broken: invalid freq: soon: time: invalid duration "soon"',
    );
  });
});

void describe('validatePlans', () => {
  void it('accepts valid plans with known domains, options and values', () => {
    validatePlans(
      [
        plan(EXAMPLE),
        plan(
          'l:\n  freq: 10s\n  collect:\n    status.global:\n      options: {all: "yes"}\n    repl.lag:\n      options: {table: any.thing}\n',
        ),
      ],
      testHelp,
    );
  });

  void it('collects every problem of every plan into one aggregate error', () => {
    const bad = plan(
      `l:
  freq: 10s
  collect:
    nope.domain:
      options: {x: "1"}
    status.global:
      options: {all: maybe, colour: red}
    size.binlog:
      options: {a: "1", b: "2"}
`,
      'bad.yaml',
    );
    const broken = plan('x:\n  freq: 0s\n', 'broken.yaml');
    let caught: unknown;
    try {
      validatePlans([bad, plan(EXAMPLE, 'good.yaml'), broken], testHelp);
    } catch (err) {
      caught = err;
    }
    assert.ok(caught instanceof PlanError);
    const lines = [
      "invalid plan: bad.yaml: line 4: at l/nope.domain: invalid domain: nope.domain: no such domain (run 'sonde --print-domains' to list collectors and options)",
      "invalid plan: bad.yaml: line 7: at l/status.global: invalid value for option all: maybe (run 'sonde --print-domains' to list collectors and options)",
      "invalid plan: bad.yaml: line 7: at l/status.global: unknown option: colour (run 'sonde --print-domains' to list collectors and options)",
      'invalid plan: bad.yaml: line 8: at l/size.binlog: collector has no options but 2 given',
      'invalid plan: broken.yaml: at x: invalid freq: 0s: must be greater than zero',
    ];
    assert.deepEqual(caught.errors, lines);
    assert.equal(caught.message, ['5 plan validation errors:', ...lines].join('\n'));
    assert.equal(caught.code, 'PLAN_INVALID');
  });

  void it('does not check metric names against collectors, nor error policies', () => {
    validatePlans(
      [
        plan(
          'l:\n  freq: 1s\n  collect:\n    repl:\n      metrics: [no_such_metric]\n      errors: {who: what}\n',
        ),
      ],
      testHelp,
    );
  });
});

/** A plan of `n` levels at 1s, 2s, … n s, each collecting status.global. */
function levels(n: number, metricsPerLevel = 1): string {
  const parts: string[] = [];
  for (let i = 1; i <= n; i++) {
    const metrics = Array.from({ length: metricsPerLevel }, (_v, k) => `m${k}`).join(', ');
    parts.push(`l${i}:\n  freq: ${i}s\n  collect:\n    status.global:\n      metrics: [${metrics}]\n`);
  }
  return parts.join('');
}

void describe('plan size limits', () => {
  void it('parses and validates a plan at the level limit', () => {
    const p = plan(levels(PLAN_LIMITS.levels));
    assert.equal(Object.keys(p.levels).length, PLAN_LIMITS.levels);
  });

  void it('refuses a plan with more levels than the limit, before reading them', () => {
    assert.equal(
      planErrorText(() => plan(levels(PLAN_LIMITS.levels + 1))),
      `plan: ${PLAN_LIMITS.levels + 1} levels, more than the limit of ${PLAN_LIMITS.levels}`,
    );
  });

  void it('refuses a domain with more metric names than the limit, naming level and domain', () => {
    const names = Array.from({ length: PLAN_LIMITS.metrics + 1 }, (_v, i) => `m${i}`).join(',');
    assert.equal(
      planErrorText(() =>
        plan(`kpi:\n  freq: 5s\n  collect:\n    status.global:\n      metrics: [${names}]\n`),
      ),
      `at kpi/status.global: metrics: ${PLAN_LIMITS.metrics + 1} metrics, more than the limit of ${PLAN_LIMITS.metrics}`,
    );
  });

  void it('refuses plan text over the byte limit without parsing it', () => {
    const text = `# ${'x'.repeat(PLAN_LIMITS.bytes)}\n`;
    assert.equal(
      planErrorText(() => plan(text)),
      `${PLAN_LIMITS.bytes + 3} bytes, more than the limit of ${PLAN_LIMITS.bytes} (1 MiB)`,
    );
  });

  void it('refuses freqs that would need more union levels than allowed', () => {
    // Levels 1s..200s: many sets of levels are due together without dividing each other.
    assert.match(
      planErrorText(() => validatePlan(plan(levels(200)))),
      /^levels whose freqs do not divide each other are due together in more than 100 combinations; use freqs that divide each other$/,
    );
  });

  void it('accepts many levels whose freqs divide each other', () => {
    const parts: string[] = [];
    for (let i = 0; i < 40; i++) parts.push(`l${i}:\n  freq: ${2 ** i}s\n  collect:\n    repl: {}\n`);
    validatePlans([plan(parts.join(''))], testHelp);
  });

  void it('refuses an option naming an unset variable, naming plan, level, domain and key', () => {
    let caught: unknown;
    try {
      validatePlans(
        [plan('l:\n  freq: 1s\n  collect:\n    repl.lag:\n      options: {table: "${HB_DB}.hb"}\n')],
        testHelp,
        {},
      );
    } catch (err) {
      caught = err;
    }
    assert.ok(caught instanceof PlanError);
    assert.deepEqual(caught.errors, [
      'invalid plan: p.yaml: at l/repl.lag: key options.table: environment variable HB_DB is not set (use ${HB_DB:-default} for a default)',
    ]);
  });
});

void describe('plan warnings and suggestions', () => {
  const metricsHelp = (domain: string) => {
    const h = testHelp(domain);
    if (domain !== 'repl.lag' || h === undefined) return h;
    return {
      ...h,
      metrics: ['current', 'backlog'].map((name) => ({ name, type: MetricType.Gauge, description: '' })),
    };
  };

  void it('warns about every key it ignores, naming the file, line and key, and the key meant', () => {
    const warnings: string[] = [];
    parsePlan(
      'plan.yaml',
      '/etc/sonde/plan.yaml',
      'kpi:\n  freq: 5s\n  colect:\n    status.global:\n  timeout: 3s\nfast:\n  freq: 1s\n  collect:\n    repl.lag:\n      metric: [current]\n',
      { warn: (m) => warnings.push(m) },
    );
    assert.deepEqual(warnings, [
      '/etc/sonde/plan.yaml: line 3: unknown key kpi.colect (did you mean collect?), ignored',
      '/etc/sonde/plan.yaml: line 5: unknown key kpi.timeout, ignored',
      '/etc/sonde/plan.yaml: line 10: unknown key fast.collect.repl.lag.metric (did you mean metrics?), ignored',
    ]);
  });

  void it('warns about metric names a domain that lists its metrics does not have', () => {
    const warnings: string[] = [];
    parsePlan(
      'p.yaml',
      'p.yaml',
      'l:\n  freq: 1s\n  collect:\n    repl.lag:\n      metrics:\n        - current\n        - curent\n    status.global:\n      metrics: [anything_goes]\n',
      { warn: (m) => warnings.push(m), help: metricsHelp },
    );
    assert.deepEqual(warnings, [
      'p.yaml: line 7: at l/repl.lag: unknown metric curent for domain repl.lag (did you mean current?); it has: current, backlog',
    ]);
  });

  void it('suggests the domain or option meant', () => {
    let caught: unknown;
    try {
      validatePlans(
        [
          plan(
            'l:\n  freq: 1s\n  collect:\n    satus.global:\n    var.global:\n      options: {sorce: pfs}\n',
          ),
        ],
        testHelp,
        {},
        ['status.global', 'var.global'],
      );
    } catch (err) {
      caught = err;
    }
    assert.ok(caught instanceof PlanError);
    assert.deepEqual(caught.errors, [
      "invalid plan: p.yaml: line 4: at l/satus.global: invalid domain: satus.global: no such domain (did you mean status.global?) (run 'sonde --print-domains' to list collectors and options)",
      "invalid plan: p.yaml: line 6: at l/var.global: unknown option: sorce (did you mean source?) (run 'sonde --print-domains' to list collectors and options)",
    ]);
  });
});
