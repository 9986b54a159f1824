/**
 * The OpenTelemetry mapping table: consistent in itself, and docs/otel.md lists exactly its
 * rows (source, metric, unit, type, attributes, value conversion).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { OTEL_DERIVED, OTEL_METRICS, OTEL_RULES, otelAttributes, otelRule, otelValue } from './otel-names.js';

const DOC = readFileSync(new URL('../../../docs/otel.md', import.meta.url), 'utf8');

/** The rows of the table under `## Mapping`, as arrays of cells. */
function docRows(): string[][] {
  const section = DOC.split('\n## Mapping\n')[1]?.split('\n## ')[0] ?? '';
  return section
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .map((l) =>
      l
        .slice(1, -1)
        .split(' | ')
        .map((c) => c.trim()),
    );
}

const type = (metric: string): string =>
  OTEL_METRICS[metric]?.monotonic ? 'sum, monotonic' : 'sum, not monotonic';
const unit = (metric: string): string => `\`${OTEL_METRICS[metric]?.unit ?? '?'}\``;

describe('otel mapping', () => {
  it('every rule names a known metric, and no sonde value has two rules', () => {
    const sources = new Set<string>();
    for (const r of [...OTEL_RULES, ...OTEL_DERIVED]) {
      assert.ok(OTEL_METRICS[r.metric], `${r.metric} is not in OTEL_METRICS`);
    }
    for (const r of OTEL_RULES) {
      assert.ok(!sources.has(r.source), `${r.source} twice`);
      sources.add(r.source);
    }
    const used = new Set([...OTEL_RULES, ...OTEL_DERIVED].map((r) => r.metric));
    assert.deepEqual(
      Object.keys(OTEL_METRICS).filter((m) => !used.has(m)),
      [],
    );
  });

  it('docs/otel.md lists exactly the rules of the code', () => {
    const expected = OTEL_RULES.map((r) => {
      const attrs = Object.entries(r.attributes).map(([k, v]) => `\`${k}=${v}\``);
      for (const [from, to] of Object.entries(r.renameGroups ?? {}))
        attrs.push(`\`${to}\` (group \`${from}\`)`);
      const value =
        r.divisor === undefined ? 'as is' : `${r.source.startsWith('repl.') ? 'ms' : 'ps'} ÷ ${r.divisor}`;
      return [
        `\`${r.source}\``,
        `\`${r.metric}\``,
        unit(r.metric),
        type(r.metric),
        attrs.join(', ') || '–',
        value,
      ];
    });
    for (const d of OTEL_DERIVED) {
      const attrs = Object.entries(d.attributes).map(([k, v]) => `\`${k}=${v}\``);
      expected.push([
        `\`${d.domain}.${d.minuend}\` − \`${d.domain}.${d.subtrahend}\``,
        `\`${d.metric}\``,
        unit(d.metric),
        type(d.metric),
        attrs.join(', '),
        'difference',
      ]);
    }
    assert.deepEqual(docRows(), expected);
  });

  it('converts units, keeps negative sentinels and renames table groups', () => {
    const lag = otelRule('repl.lag', 'current');
    assert.ok(lag);
    assert.equal(otelValue(lag, 1500), 1.5);
    assert.equal(otelValue(lag, 7), 0.007);
    assert.equal(otelValue(lag, -1), -1);
    const timer = otelRule('wait.io.table', 'sum_timer_update');
    assert.ok(timer);
    assert.equal(otelValue(timer, 123_000), 123);
    assert.deepEqual(otelAttributes(timer, { db: 'app', tbl: 't' }), {
      schema: 'app',
      table: 't',
      operation: 'update',
    });
    assert.equal(otelRule('status.global', 'max_used_connections'), undefined);
    assert.deepEqual(otelRule('status.global', 'aborted_connects')?.attributes, { error: 'aborted' });
  });
});
