import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  compareUtf8,
  escapeHelp,
  escapeLabelValue,
  ExpositionCache,
  exposition,
  ExpositionError,
  formatNumber,
  gather,
  render,
  HOT_BYTES,
  HOT_UPDATES,
  SEGMENT_BYTES,
  subsystem,
  type PromSample,
} from './exposition.js';

describe('formatNumber (Go strconv.FormatFloat(v, g, -1, 64) with expfmt special cases)', () => {
  // Expected texts are what Go prints; many are taken from real mysqld_exporter output.
  const cases: [number, string][] = [
    [0, '0'],
    [-0, '0'],
    [1, '1'],
    [-1, '-1'],
    [2, '2'],
    [151, '151'],
    [-42, '-42'],
    [999999, '999999'],
    [-999999, '-999999'],
    [1e6, '1e+06'],
    [-1e6, '-1e+06'],
    [1000001, '1.000001e+06'],
    [4931584, '4.931584e+06'],
    [1379287523, '1.379287523e+09'],
    [16777216, '1.6777216e+07'],
    [134217728, '1.34217728e+08'],
    [2 ** 64, '1.8446744073709552e+19'],
    [2 ** 63, '9.223372036854776e+18'],
    [4294967295, '4.294967295e+09'],
    [31536000, '3.1536e+07'],
    [1e21, '1e+21'],
    [1.5e21, '1.5e+21'],
    [1e100, '1e+100'],
    [1.7976931348623157e308, '1.7976931348623157e+308'],
    [123456.7, '123456.7'],
    [999999.9, '999999.9'],
    [999999.99999, '999999.99999'],
    [1234567.8, '1.2345678e+06'],
    [100000, '100000'],
    [0.5, '0.5'],
    [-0.5, '-0.5'],
    [0.1, '0.1'],
    [0.30000000000000004, '0.30000000000000004'],
    [0.001, '0.001'],
    [0.0001, '0.0001'],
    [0.00012345, '0.00012345'],
    [0.00001, '1e-05'],
    [0.000012345, '1.2345e-05'],
    [1e-7, '1e-07'],
    [1.5e-7, '1.5e-07'],
    [1e-10, '1e-10'],
    [5e-324, '5e-324'],
    [2.2250738585072014e-308, '2.2250738585072014e-308'],
    [0.005287519, '0.005287519'],
    [9.5238e-5, '9.5238e-05'],
    [3.14159, '3.14159'],
    [12.5, '12.5'],
    [1.25e6, '1.25e+06'],
    [Number.MAX_SAFE_INTEGER, '9.007199254740991e+15'],
    [2 ** 53 + 2, '9.007199254740994e+15'],
    [NaN, 'NaN'],
    [Infinity, '+Inf'],
    [-Infinity, '-Inf'],
  ];
  for (const [v, want] of cases) {
    it(`formats ${String(v)} as ${want}`, () => assert.equal(formatNumber(v), want));
  }

  it('switches to scientific form exactly at decimal exponents -5 and 6, for every power of ten', () => {
    for (let x = -320; x <= 308; x++) {
      const v = Number(`1e${x}`);
      const want = x >= -4 && x < 6 ? (x >= 0 ? `1${'0'.repeat(x)}` : `0.${'0'.repeat(-x - 1)}1`) : '';
      const got = formatNumber(v);
      if (want !== '') {
        assert.equal(got, want, `1e${x}`);
      } else {
        const abs = Math.abs(x);
        assert.equal(got, `1e${x < 0 ? '-' : '+'}${abs < 10 ? `0${abs}` : abs}`, `1e${x}`);
      }
    }
  });

  it('round-trips with the shortest digits for 100000 pseudo-random doubles', () => {
    // Deterministic xorshift over raw float64 bits: covers every exponent and subnormals.
    let s = 0x9e3779b97f4a7c15n;
    const view = new DataView(new ArrayBuffer(8));
    for (let i = 0; i < 100000; i++) {
      s ^= (s << 13n) & 0xffffffffffffffffn;
      s ^= s >> 7n;
      s ^= (s << 17n) & 0xffffffffffffffffn;
      view.setBigUint64(0, s);
      const v = view.getFloat64(0);
      if (!Number.isFinite(v)) continue;
      const text = formatNumber(v);
      assert.equal(Number(text), v === 0 ? 0 : v, text);
      // Same significant digits as JS's shortest form; only the layout differs.
      const digits = (t: string) =>
        t.replace(/^-/, '').replace(/e.*$/, '').replace('.', '').replace(/^0+/, '');
      const js = String(Math.abs(v));
      const jsDigits = js.includes('e')
        ? digits(js)
        : js.replace('.', '').replace(/^0+/, '').replace(/0+$/, '') || '0';
      assert.equal(
        digits(text).replace(/0+$/, '') || '0',
        jsDigits.replace(/0+$/, '') || '0',
        `${v} → ${text}`,
      );
      // Layout rule: plain decimal iff the decimal exponent (as JS's toExponential sees it) is in [-4, 6).
      const exp = v === 0 ? 0 : Number(v.toExponential().split('e')[1]);
      assert.equal(!text.includes('e'), exp >= -4 && exp < 6, `${v} → ${text}`);
      // Go's exponent always has a sign and at least two digits.
      if (text.includes('e')) assert.match(text, /^-?\d(\.\d+)?e[+-]\d{2,3}$/);
    }
  });

  it('prints every integer up to 2^53 in Go form: plain below 1e6, scientific from 1e6', () => {
    for (const v of [7, 65535, 99999, 123456, 654321, 2 ** 20, 2 ** 31, 2 ** 32 + 1, 10 ** 15, 2 ** 53]) {
      const text = formatNumber(v);
      if (v < 1e6) assert.equal(text, String(v));
      else assert.match(text, /^\d(\.\d+)?e\+\d\d$/);
      assert.equal(Number(text), v);
    }
    assert.equal(formatNumber(2 ** 32 + 1), '4.294967297e+09');
    assert.equal(formatNumber(1e15), '1e+15');
  });
});

describe('escaping', () => {
  it('escapes HELP backslashes and newlines but not quotes', () => {
    assert.equal(escapeHelp('a\\b\nc"d'), 'a\\\\b\\nc"d');
    assert.equal(escapeHelp('plain text.'), 'plain text.');
  });
  it('escapes label value backslashes, quotes and newlines', () => {
    assert.equal(escapeLabelValue('a\\b\nc"d'), 'a\\\\b\\nc\\"d');
    assert.equal(escapeLabelValue('10.11.19-MariaDB'), '10.11.19-MariaDB');
  });
});

describe('compareUtf8', () => {
  it('orders like Go byte comparison, also past the BMP', () => {
    assert.ok(compareUtf8('a', 'b') < 0);
    assert.ok(compareUtf8('ab', 'a') > 0);
    assert.equal(compareUtf8('x', 'x'), 0);
    // U+FF5E (EF BD 9E) sorts before U+1F600 (F0 9F 98 80) in UTF-8, after it in UTF-16.
    assert.ok(compareUtf8('\uff5e', '😀') < 0);
    assert.ok('\uff5e' > '😀');
    // two emoji sharing their high surrogate
    assert.ok(compareUtf8('😀', '😁') < 0);
  });
});

describe('gather and render', () => {
  const s = (p: Partial<PromSample> & { name: string; value: number }): PromSample => ({
    help: 'h.',
    type: 'gauge',
    ...p,
  });

  it('sorts families by name, series by label values and labels by name', () => {
    const text = exposition([
      s({ name: 'b_metric', value: 2 }),
      s({ name: 'a_total', type: 'counter', help: 'A.', value: 3, labels: { x: 'z', a: '2' } }),
      s({ name: 'a_total', type: 'counter', help: 'A.', value: 1e6, labels: { x: 'y', a: '2' } }),
      s({ name: 'a_total', type: 'counter', help: 'A.', value: 0.25, labels: { x: 'q', a: '10' } }),
    ]);
    assert.equal(
      text,
      [
        '# HELP a_total A.',
        '# TYPE a_total counter',
        'a_total{a="10",x="q"} 0.25',
        'a_total{a="2",x="y"} 1e+06',
        'a_total{a="2",x="z"} 3',
        '# HELP b_metric h.',
        '# TYPE b_metric gauge',
        'b_metric 2',
        '',
      ].join('\n'),
    );
  });

  it('renders untyped families, escaped HELP and label values', () => {
    const text = exposition([
      s({ name: 'm', type: 'untyped', help: 'line1\nline2 \\', value: -1.5, labels: { v: 'say "hi"\n\\' } }),
    ]);
    assert.equal(text, '# HELP m line1\\nline2 \\\\\n# TYPE m untyped\nm{v="say \\"hi\\"\\n\\\\"} -1.5\n');
  });

  it('renders an empty set as an empty body', () => {
    assert.equal(exposition([]), '');
    assert.deepEqual(gather([]), []);
  });

  it('treats empty labels like no labels', () => {
    const fams = gather([s({ name: 'm', value: 1, labels: {} })]);
    assert.deepEqual(fams[0]?.series, [{ labels: [], value: 1 }]);
    assert.equal(render(fams), '# HELP m h.\n# TYPE m gauge\nm 1\n');
  });

  it('rejects a duplicate series', () => {
    assert.throws(
      () =>
        gather([
          s({ name: 'm', value: 1, labels: { a: 'x' } }),
          s({ name: 'm', value: 2, labels: { a: 'x' } }),
        ]),
      (err: unknown) => err instanceof ExpositionError && err.message === 'duplicate series m{a="x"}',
    );
    assert.throws(
      () => gather([s({ name: 'm', value: 1 }), s({ name: 'm', value: 2 })]),
      /duplicate series m$/,
    );
  });

  it('rejects inconsistent HELP, TYPE and label names within a family', () => {
    assert.throws(
      () =>
        gather([
          s({ name: 'm', value: 1, help: 'a' }),
          s({ name: 'm', value: 1, help: 'b', labels: { x: '1' } }),
        ]),
      /metric family m has inconsistent HELP: "b" vs "a"/,
    );
    assert.throws(
      () =>
        gather([s({ name: 'm', value: 1 }), s({ name: 'm', value: 1, type: 'counter', labels: { x: '1' } })]),
      /metric family m has inconsistent TYPE: counter vs gauge/,
    );
    assert.throws(
      () =>
        gather([
          s({ name: 'm', value: 1, labels: { x: '1' } }),
          s({ name: 'm', value: 1, labels: { y: '1' } }),
        ]),
      /metric family m has inconsistent label names: \{y\} vs \{x\}/,
    );
  });

  it('rejects invalid metric names, label names and label values', () => {
    assert.throws(() => gather([s({ name: '1abc', value: 1 })]), /invalid metric name "1abc"/);
    assert.throws(() => gather([s({ name: 'a-b', value: 1 })]), /invalid metric name/);
    assert.throws(
      () => gather([s({ name: 'm', value: 1, labels: { 'a-b': 'x' } })]),
      /invalid label name "a-b"/,
    );
    assert.throws(
      () => gather([s({ name: 'm', value: 1, labels: { __x: 'x' } })]),
      /invalid label name "__x"/,
    );
    assert.throws(() => gather([s({ name: 'm', value: 1, labels: { a: 'x\ud800' } })]), /not valid UTF-8/);
    assert.doesNotThrow(() => gather([s({ name: 'ns:m_1', value: 1, labels: { a: '😀' } })]));
  });
});

describe('ExpositionCache', () => {
  const base = (): PromSample[] => [
    { name: 'z_last', help: 'Z.', type: 'gauge', value: 1 },
    { name: 'a_total', help: 'A.', type: 'counter', value: 5, labels: { op: 'b' } },
    { name: 'a_total', help: 'A.', type: 'counter', value: 7, labels: { op: 'a' } },
    { name: 'm', help: 'M.', type: 'untyped', value: 0.5 },
  ];

  it('renders byte for byte what exposition() renders, as values and series change', () => {
    const cache = new ExpositionCache();
    const steps: PromSample[][] = [];
    let cur = base();
    steps.push(cur);
    // same series, new values (fast path), some values unchanged
    cur = cur.map((s, i) => ({
      ...s,
      labels: s.labels === undefined ? undefined : { ...s.labels },
      value: i === 1 ? 6 : s.value,
    }));
    steps.push(cur);
    steps.push(cur.map((s) => ({ ...s, value: s.value * 1e6 })));
    steps.push(cur.map((s) => ({ ...s, value: NaN })));
    // a series more, then one less, then a label value changed, then HELP changed
    steps.push([...cur, { name: 'a_total', help: 'A.', type: 'counter', value: 1, labels: { op: 'c' } }]);
    steps.push(cur.slice(1));
    steps.push(
      cur.map((s) => (s.labels === undefined ? s : { ...s, labels: { op: `${s.labels.op ?? ''}x` } })),
    );
    steps.push(cur.map((s) => ({ ...s, help: `${s.help} v2` })));
    steps.push(cur);
    for (const [i, step] of steps.entries()) assert.equal(cache.render(step), exposition(step), `step ${i}`);
    // the shared buffer gives the same bytes, growing when the text does
    const shared = new ExpositionCache();
    for (const [i, step] of [...steps, steps[4] ?? [], steps[0] ?? []].entries())
      assert.equal(shared.renderShared(step).toString(), exposition(step), `shared, step ${i}`);
  });

  it('keeps its text right when lines change in place, change length, or hold multi-byte text', () => {
    const series = (values: readonly number[]): PromSample[] =>
      values.map((value, i) => ({
        name: `m${i % 3}`,
        help: i % 3 === 0 ? 'Größe in €.' : 'Plain.',
        type: 'gauge' as const,
        value,
        labels: { k: `v${i}`, s: i % 2 === 0 ? 'ü' : 'u' },
      }));
    const shared = new ExpositionCache();
    const plain = new ExpositionCache();
    let values = Array.from({ length: 12 }, (_v, i) => i * 10);
    let seed = 7;
    const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648);
    for (let step = 0; step < 200; step++) {
      // Some values keep their length (11 → 17), some gain or lose digits, some stay.
      values = values.map((v) => {
        const r = next() % 6;
        if (Number.isNaN(v)) return r < 2 ? v : next() % 1000;
        return r === 0
          ? v
          : r === 1
            ? v * 10 + 1
            : r === 2
              ? Math.floor(v / 10)
              : r === 3
                ? NaN
                : (v + 3) % 100;
      });
      const samples = series(values);
      assert.equal(shared.renderShared(samples).toString(), exposition(samples), `shared, step ${step}`);
      assert.equal(plain.render(samples), exposition(samples), `render, step ${step}`);
    }
  });

  it('rejects invalid input like gather() and keeps working afterwards', () => {
    const cache = new ExpositionCache();
    assert.equal(cache.render(base()), exposition(base()));
    const dup = [...base(), { name: 'm', help: 'M.', type: 'untyped' as const, value: 2 }];
    assert.throws(() => cache.render(dup), /duplicate series m$/);
    const next = base().map((s) => ({ ...s, value: s.value + 1 }));
    assert.equal(cache.render(next), exposition(next));
  });

  it('renders nothing for no samples', () => {
    assert.equal(new ExpositionCache().render([]), '');
  });

  it('cuts its text into segments of whole lines whose version changes whenever their bytes do', () => {
    // 3,000 series over 30 families: about 4 segments of text.
    const series = (values: readonly number[], help = 'Help.'): PromSample[] =>
      values.map((value, i) => ({
        name: `family_${String(i % 30).padStart(2, '0')}`,
        help,
        type: 'gauge' as const,
        value,
        labels: { series: `s${i}` },
      }));
    const cache = new ExpositionCache();
    assert.deepEqual(cache.segments(), { bounds: [0], versions: [], stored: [] });
    let values = Array.from({ length: 3000 }, (_v, i) => i);
    let seed = 11;
    const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648);
    // Every version seen, with its bytes: a version names one segment's bytes for good.
    const seen = new Map<number, string>();
    let kept = 0;
    let stored = 0;
    for (let step = 0; step < 60; step++) {
      // Mostly a few values change (some gaining digits); now and then every line, or the layout.
      if (step % 20 === 19) values = values.map((v) => v + 1);
      else
        for (let n = next() % 4; n > 0; n--) {
          const i = next() % values.length;
          values[i] = next() % 3 === 0 ? (values[i] ?? 0) * 10 : (values[i] ?? 0) + 1;
        }
      // Two counters move at every step: they turn hot.
      values[7] = (values[7] ?? 0) + 1;
      values[2222] = (values[2222] ?? 0) + 3;
      const samples = series(values, step % 25 === 24 ? 'Other help.' : 'Help.');
      const text = cache.renderShared(samples).toString();
      assert.equal(text, exposition(samples), `step ${step}`);
      const { bounds, versions, stored: hot = [] } = cache.segments();
      assert.equal(bounds.length, versions.length + 1);
      assert.equal(hot.length, versions.length);
      assert.equal(bounds[0], 0);
      assert.equal(bounds[versions.length], Buffer.byteLength(text));
      assert.ok(versions.length >= 3, `${versions.length} segments of ${text.length} bytes`);
      assert.equal(new Set(versions).size, versions.length, `step ${step}: no two segments share a version`);
      const bytes = Buffer.from(text);
      for (let i = 0; i < versions.length; i++) {
        const t = bytes.toString('utf8', bounds[i], bounds[i + 1]);
        const v = versions[i] ?? -1;
        assert.ok(t.endsWith('\n') && t.length > 0, `step ${step}, segment ${i}: whole lines`);
        if (hot[i] === true) stored++;
        const was = seen.get(v);
        if (was !== undefined) {
          kept++;
          assert.equal(t, was, `step ${step}, segment ${i}: same version, same bytes`);
        } else seen.set(v, t);
      }
    }
    // A few lines changing leave most segments as they were; the changed ones go as they are.
    assert.ok(kept > 60, `${kept} segments kept their version`);
    assert.ok(stored > 0, `${stored} stored segments`);
  });

  it('keeps "same version, same bytes" as lines turn hot and cold in families of one series', () => {
    // 4,000 families of one series (each line with its heads), about 13 segments of text; up
    // to 40 values change at each step, half of them among the first 40 lines.
    const samples = (values: readonly number[]): PromSample[] =>
      values.map((value, i) => ({
        name: `status_${String(i).padStart(4, '0')}`,
        help: 'Generic counter metric from SHOW GLOBAL STATUS.',
        type: 'counter' as const,
        value,
      }));
    const cache = new ExpositionCache();
    const values = Array.from({ length: 4000 }, (_v, i) => i);
    let seed = 7;
    const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648);
    const seen = new Map<number, string>();
    let stored = 0;
    for (let step = 0; step < 300; step++) {
      for (let n = next() % 40; n > 0; n--) {
        // Half the changes among the first 40 lines, so those stay hot; the rest anywhere.
        const i = next() % 2 === 0 ? next() % 40 : next() % values.length;
        values[i] = (values[i] ?? 0) + 1 + (next() % 3 === 0 ? 1000 : 0);
      }
      const bytes = cache.renderShared(samples(values));
      const { bounds, versions, stored: hot = [] } = cache.segments();
      for (let i = 0; i < versions.length; i++) {
        const t = bytes.toString('utf8', bounds[i], bounds[i + 1]);
        if (hot[i] === true) stored++;
        const v = versions[i] ?? -1;
        const was = seen.get(v);
        if (was === undefined) seen.set(v, t);
        else assert.equal(t, was, `step ${step}, segment ${i}: same version, same bytes`);
      }
    }
    assert.ok(stored > 300, `${stored} stored segments`);
  });

  it('gives the segment before a new version when the line it was cut before turns hot', () => {
    // The first line of the second segment turns hot: its heads join the first segment.
    const samples = (hot: number, value: number): PromSample[] =>
      Array.from({ length: 1000 }, (_v, i) => ({
        name: `status_${String(i).padStart(4, '0')}`,
        help: 'Generic counter metric from SHOW GLOBAL STATUS.',
        type: 'counter' as const,
        value: i === hot ? value : i,
      }));
    const cache = new ExpositionCache();
    const first = cache.renderShared(samples(-1, 0)).toString();
    const before = cache.segments();
    const startsAt = (bound: number): number =>
      Number(/^# HELP status_(\d+)/.exec(Buffer.from(first).subarray(bound).toString())?.[1]);
    const k = startsAt(before.bounds[1] ?? 0);
    const firstVersion = before.versions[0];
    const firstText = Buffer.from(first).subarray(0, before.bounds[1]).toString();
    cache.renderShared(samples(k, -5)); // changed once: still cold
    assert.deepEqual(cache.segments().versions.slice(0, 1), [firstVersion]);
    const bytes = cache.renderShared(samples(k, -6)); // again: hot
    const after = cache.segments();
    assert.equal(after.stored?.[1], true, `line ${k} is a stored segment`);
    const text = bytes.toString('utf8', 0, after.bounds[1]);
    assert.ok(text.endsWith(`# TYPE status_${String(k).padStart(4, '0')} counter\n`));
    assert.notEqual(text, firstText);
    assert.notEqual(after.versions[0], firstVersion);
  });

  it('gives a segment a new version when one of its lines changes, and leaves the others', () => {
    const samples = (changed: number, value = -1): PromSample[] =>
      Array.from({ length: 2000 }, (_v, i) => ({
        name: 'one_family',
        help: 'One.',
        type: 'gauge' as const,
        value: i === changed ? value : i,
        labels: { series: `s${String(i).padStart(4, '0')}` },
      }));
    const cache = new ExpositionCache();
    cache.renderShared(samples(-1));
    const { bounds } = cache.segments();
    const first = [...cache.segments().versions];
    assert.ok(first.length >= 2, `${first.length} segments`);
    // Cut at the first line end at or past SEGMENT_BYTES (these lines are under 40 bytes).
    for (let i = 0; i + 2 < bounds.length; i++) {
      const size = (bounds[i + 1] ?? 0) - (bounds[i] ?? 0);
      assert.ok(size >= SEGMENT_BYTES && size < SEGMENT_BYTES + 40, `segment ${i}: ${size} bytes`);
    }
    cache.renderShared(samples(1999)); // the last line: the last segment only
    const second = [...cache.segments().versions];
    assert.deepEqual(second.slice(0, -1), first.slice(0, -1));
    assert.notEqual(second.at(-1), first.at(-1));
    cache.renderShared(samples(1999)); // nothing changed
    assert.deepEqual(cache.segments().versions, second);
    // It changes again: hot now, it goes as it is, a segment of its own after the rest of
    // the last segment, which is cut again; the segments before keep their versions.
    const hot = cache.renderShared(samples(1999, -2)).toString();
    const third = cache.segments();
    const versions = [...third.versions];
    assert.deepEqual(versions.slice(0, first.length - 1), first.slice(0, -1));
    assert.equal(versions.length, first.length + 1);
    assert.deepEqual(third.stored, [...first.map(() => false), true]);
    assert.equal(hot.slice(third.bounds.at(-2)), 'one_family{series="s1999"} -2\n');
  });

  it('sends the lines that changed lately as they are, their heads with the text before, until they cool', () => {
    // 300 families of one series, as the global status: the values of three change.
    const samples = (step: number, moving: readonly number[]): PromSample[] =>
      Array.from({ length: 300 }, (_v, i) => ({
        name: `status_${String(i).padStart(3, '0')}`,
        help: 'Generic counter metric from SHOW GLOBAL STATUS.',
        type: 'counter' as const,
        value: moving.includes(i) ? 1000 + step : i,
      }));
    const cache = new ExpositionCache();
    const segmentTexts = (
      text: string,
    ): { texts: string[]; stored: readonly boolean[]; versions: number[] } => {
      const { bounds, versions, stored = [] } = cache.segments();
      const bytes = Buffer.from(text);
      return {
        texts: versions.map((_v, i) => bytes.toString('utf8', bounds[i], bounds[i + 1])),
        stored,
        versions: [...versions],
      };
    };
    cache.renderShared(samples(0, [10, 11, 150]));
    assert.ok(!cache.segments().stored?.includes(true), 'no line is hot at the first render');
    cache.renderShared(samples(1, [10, 11, 150]));
    assert.ok(!cache.segments().stored?.includes(true), 'a line that changed once is not hot');
    let cold: number[] | undefined;
    for (let step = 2; step < 7; step++) {
      const { texts, stored, versions } = segmentTexts(
        cache.renderShared(samples(step, [10, 11, 150])).toString(),
      );
      const hot = texts.filter((_t, i) => stored[i] === true);
      // Lines 10 and 11 are next to each other: one run. Their heads stay in the text before.
      assert.deepEqual(hot, [
        `status_010 ${1000 + step}\n# HELP status_011 Generic counter metric from SHOW GLOBAL STATUS.\n# TYPE status_011 counter\nstatus_011 ${1000 + step}\n`,
        `status_150 ${1000 + step}\n`,
      ]);
      const before = texts[stored.indexOf(true) - 1] ?? '';
      assert.ok(
        before.endsWith(
          '# HELP status_010 Generic counter metric from SHOW GLOBAL STATUS.\n# TYPE status_010 counter\n',
        ),
      );
      // The cold segments keep their versions from one update to the next once cut.
      const now = versions.filter((_v, i) => stored[i] !== true);
      if (step > 2) assert.deepEqual(now, cold);
      cold = now;
    }
    // Quiet for HOT_UPDATES updates: the lines turn cold again, and compressed with the rest.
    for (let step = 0; step < HOT_UPDATES; step++) cache.renderShared(samples(6, [10, 11, 150]));
    assert.ok(!cache.segments().stored?.includes(true), 'quiet lines turn cold');
  });

  it('sends no more than HOT_BYTES of hot lines as they are', () => {
    // 3,000 series whose values all change: about 100 KB of hot lines.
    const samples = (step: number): PromSample[] =>
      Array.from({ length: 3000 }, (_v, i) => ({
        name: 'every_line_changes',
        help: 'All.',
        type: 'gauge' as const,
        value: step * 10_000 + i,
        labels: { series: `s${String(i).padStart(4, '0')}` },
      }));
    const cache = new ExpositionCache();
    for (let step = 0; step < 3; step++) {
      const text = cache.renderShared(samples(step)).toString();
      assert.equal(text, exposition(samples(step)));
    }
    const { bounds, stored = [] } = cache.segments();
    const storedBytes = stored.reduce(
      (sum, s, i) => sum + (s ? (bounds[i + 1] ?? 0) - (bounds[i] ?? 0) : 0),
      0,
    );
    assert.ok(storedBytes > HOT_BYTES - 100 && storedBytes <= HOT_BYTES, `${storedBytes} bytes stored`);
  });

  it('starts a segment where the subsystem changes, once the segment holds a quarter of the size', () => {
    // 12 KiB of one subsystem's lines, then another's: a cut between them. 2 KiB of a third
    // subsystem then starts no segment of its own.
    const lines = (family: string, n: number): PromSample[] =>
      Array.from({ length: n }, (_v, i) => ({
        name: family,
        help: 'H.',
        type: 'gauge' as const,
        value: i,
        labels: { series: `s${String(i).padStart(4, '0')}` },
      }));
    const cache = new ExpositionCache();
    const first = lines('a_status_x', 400);
    const small = lines('b_other_y', 60);
    const text = cache.renderShared([...first, ...small, ...lines('c_variables_z', 400)]).toString();
    const { bounds } = cache.segments();
    const at = (family: string): number => Buffer.byteLength(text.slice(0, text.indexOf(`# HELP ${family}`)));
    assert.ok(at('b_other_y') >= SEGMENT_BYTES / 4, `${at('b_other_y')} bytes before the second subsystem`);
    assert.deepEqual(bounds, [0, at('b_other_y'), Buffer.byteLength(text)]);
  });

  it('names a subsystem by the first three words of a metric name', () => {
    assert.equal(subsystem('mysql_global_status_uptime'), 'mysql_global_status');
    assert.equal(subsystem('mysql_global_variables_max_connections'), 'mysql_global_variables');
    assert.equal(subsystem('mysql_up'), 'mysql_up');
    assert.equal(subsystem('mysql_info_schema'), 'mysql_info_schema');
    assert.equal(subsystem('up'), 'up');
  });
});

describe('histograms and summaries', () => {
  const hist = (count: number) => ({
    name: 'rt_seconds',
    help: 'Response time.',
    type: 'histogram' as const,
    value: count,
    dist: {
      kind: 'histogram' as const,
      points: [
        [1e-6, 0],
        [0.001, 2],
        [1, count - 1],
      ] as const,
      sum: 0.5,
      count,
    },
  });

  it('writes buckets with le last, the +Inf bucket, then _sum and _count', () => {
    const labelled = { ...hist(5), labels: { op: 'read' } };
    assert.equal(
      exposition([labelled]),
      [
        '# HELP rt_seconds Response time.',
        '# TYPE rt_seconds histogram',
        'rt_seconds_bucket{op="read",le="1e-06"} 0',
        'rt_seconds_bucket{op="read",le="0.001"} 2',
        'rt_seconds_bucket{op="read",le="1"} 4',
        'rt_seconds_bucket{op="read",le="+Inf"} 5',
        'rt_seconds_sum{op="read"} 0.5',
        'rt_seconds_count{op="read"} 5',
        '',
      ].join('\n'),
    );
  });

  it('writes quantiles with the quantile label, then _sum and _count', () => {
    const s = {
      name: 'lat',
      help: 'Latency.',
      type: 'summary' as const,
      value: 3,
      dist: {
        kind: 'summary' as const,
        points: [[0.95, 0.25] as const, [0.99, 1.5] as const],
        sum: 2,
        count: 3,
      },
    };
    assert.equal(
      exposition([s]),
      '# HELP lat Latency.\n# TYPE lat summary\nlat{quantile="0.95"} 0.25\nlat{quantile="0.99"} 1.5\nlat_sum 2\nlat_count 3\n',
    );
  });

  it('ExpositionCache writes a distribution again when only its numbers changed', () => {
    const cache = new ExpositionCache();
    const other = { name: 'a', help: 'A.', type: 'gauge' as const, value: 1 };
    assert.equal(cache.render([other, hist(5)]), exposition([other, hist(5)]));
    assert.equal(cache.render([other, hist(9)]), exposition([other, hist(9)]));
    assert.match(cache.render([other, hist(9)]), /rt_seconds_count 9\n/);
  });
});
