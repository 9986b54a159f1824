/**
 * Prometheus text exposition format 0.0.4, byte for byte as Go's client_golang writes it
 * (spec exporter.md §5): the format mysqld_exporter serves and the pushgateway accepts.
 *
 * Two steps, as in the Go client:
 * 1. gather(samples) groups loose samples into families and validates them the way the Go
 *    registry does (valid names, one HELP/TYPE/label-name set per family, no duplicate
 *    series); it throws an ExpositionError instead of rendering something Prometheus would
 *    reject or silently mis-read.
 * 2. render(families) writes the text: families sorted by name, `# HELP` and `# TYPE`
 *    lines, samples sorted by label values, labels sorted by name, numbers in Go's
 *    shortest `%g` form (formatNumber).
 */

/** A family's TYPE. mysqld_exporter uses `untyped` for its generic status metrics. */
export type PromType = 'counter' | 'gauge' | 'untyped';

/** One series value before gathering: its family's name, HELP and TYPE travel with it. */
export interface PromSample {
  name: string;
  help: string;
  type: PromType;
  /** Label name → value; undefined or empty = no labels. */
  labels?: Readonly<Record<string, string>> | undefined;
  value: number;
}

/** One series of a gathered family: labels as [name, value] pairs sorted by name. */
export interface PromSeries {
  labels: readonly (readonly [string, string])[];
  value: number;
}

/** A validated family: what one `# HELP`/`# TYPE` block renders. */
export interface PromFamily {
  name: string;
  help: string;
  type: PromType;
  /** Sorted as rendered (by label values, in label-name order). */
  series: PromSeries[];
}

/** Content-Type of the text format, exactly as promhttp sends it. */
export const TEXT_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Why a set of samples cannot be exposed (the Go registry's gather errors). */
export class ExpositionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExpositionError';
  }
}

// ---- numbers ----------------------------------------------------------------------------

/**
 * A float64 as Go's expfmt writes it: `strconv.FormatFloat(v, 'g', -1, 64)` with expfmt's
 * special cases (`0` also for -0, `1`, `-1`, `NaN`, `+Inf`, `-Inf`).
 *
 * `%g` with the shortest precision takes the shortest digit string that round-trips (the
 * same digits JavaScript's Number#toString picks) and prints it as a plain decimal when
 * the decimal exponent x (value = d.ddd × 10^x) is in [-4, 6), otherwise in scientific
 * form with a signed exponent of at least two digits. JavaScript switches at other
 * exponents (1e21, 1e-7) and writes `e+6` where Go writes `e+06`, so the layout is redone
 * here from the digits:
 *
 *   999999 → `999999`, 1000000 → `1e+06`, 4931584 → `4.931584e+06`,
 *   0.0001 → `0.0001`, 0.00001 → `1e-05`, 2^64 → `1.8446744073709552e+19`.
 */
export function formatNumber(v: number): string {
  // Fast path for the common case: small integers print the same in Go and JS.
  if (Number.isInteger(v) && v > -1e6 && v < 1e6) return v === 0 ? '0' : String(v);
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';

  const neg = v < 0;
  const text = String(neg ? -v : v); // shortest round-trip digits, JS layout
  // Split the JS text into a digit string and the position of the decimal point (dp):
  // value = 0.<digits> × 10^dp.
  const e = text.indexOf('e');
  const mantissa = e < 0 ? text : text.slice(0, e);
  const dot = mantissa.indexOf('.');
  const intPart = dot < 0 ? mantissa : mantissa.slice(0, dot);
  let digits = dot < 0 ? mantissa : intPart + mantissa.slice(dot + 1);
  let dp = intPart.length + (e < 0 ? 0 : Number(text.slice(e + 1)));
  let lead = 0;
  while (lead < digits.length - 1 && digits.charCodeAt(lead) === 48 /* 0 */) lead++;
  digits = digits.slice(lead);
  dp -= lead;
  let end = digits.length;
  while (end > 1 && digits.charCodeAt(end - 1) === 48) end--;
  digits = digits.slice(0, end);

  const exp = dp - 1;
  let out: string;
  if (exp < -4 || exp >= 6) {
    const absExp = exp < 0 ? -exp : exp;
    out =
      digits[0] +
      (digits.length > 1 ? `.${digits.slice(1)}` : '') +
      (exp < 0 ? 'e-' : 'e+') +
      (absExp < 10 ? `0${absExp}` : String(absExp));
  } else if (dp <= 0) {
    out = `0.${'0'.repeat(-dp)}${digits}`;
  } else if (dp >= digits.length) {
    out = digits + '0'.repeat(dp - digits.length);
  } else {
    out = `${digits.slice(0, dp)}.${digits.slice(dp)}`;
  }
  return neg ? `-${out}` : out;
}

// ---- escaping ---------------------------------------------------------------------------

const HELP_SPECIAL = /[\\\n]/;
const LABEL_SPECIAL = /[\\\n"]/;

/** HELP text escaping: `\` → `\\`, newline → `\n`. */
export function escapeHelp(s: string): string {
  if (!HELP_SPECIAL.test(s)) return s;
  return s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** Label value escaping: `\` → `\\`, `"` → `\"`, newline → `\n`. */
export function escapeLabelValue(s: string): string {
  if (!LABEL_SPECIAL.test(s)) return s;
  return s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

// ---- validation -------------------------------------------------------------------------

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
/** A lone UTF-16 surrogate: such a string is not valid UTF-8 once encoded. */
const LONE_SURROGATE = /\p{Surrogate}/u;

/** True for a valid Prometheus metric name. */
export function isValidMetricName(name: string): boolean {
  return METRIC_NAME.test(name);
}

/** True for a valid label name that is not reserved (`__` prefix). */
export function isValidLabelName(name: string): boolean {
  return LABEL_NAME.test(name) && !name.startsWith('__');
}

/**
 * Compare two strings in UTF-8 byte order, as Go sorts label values. JS `<` compares UTF-16
 * code units, which differs only when a supplementary character meets U+E000–U+FFFF.
 */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x < 0xd800 && y < 0xd800) return x - y;
    // Re-encode from the start of the code point (a pair may share its high surrogate).
    const from = i > 0 && (a.charCodeAt(i - 1) & 0xfc00) === 0xd800 ? i - 1 : i;
    return Buffer.compare(Buffer.from(a.slice(from)), Buffer.from(b.slice(from)));
  }
  return a.length - b.length;
}

function seriesText(name: string, labels: readonly (readonly [string, string])[]): string {
  if (labels.length === 0) return name;
  return `${name}{${labels.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(',')}}`;
}

interface FamilyBuild {
  family: PromFamily;
  /** sorted label names joined by ',' (every series of a family has the same set) */
  labelNames: string;
  /** label values joined by '\xff' → already seen */
  seen: Set<string>;
}

const NO_LABELS: readonly (readonly [string, string])[] = [];

/**
 * Group samples into families and check them like the Go registry's Gather: valid metric
 * and label names, valid UTF-8 label values, one HELP and TYPE per family, the same label
 * names on every series of a family, and no two series with the same labels. Families come
 * back sorted by name and their series sorted by label values.
 *
 * @throws ExpositionError naming the first offending series or family
 */
export function gather(samples: Iterable<PromSample>): PromFamily[] {
  const byName = new Map<string, FamilyBuild>();
  for (const s of samples) {
    let pairs: readonly (readonly [string, string])[] = NO_LABELS;
    if (s.labels !== undefined) {
      const keys = Object.keys(s.labels);
      if (keys.length > 0) {
        if (keys.length > 1) keys.sort();
        pairs = keys.map((k) => [k, (s.labels as Record<string, string>)[k] ?? ''] as const);
      }
    }
    let fb = byName.get(s.name);
    if (fb === undefined) {
      if (!isValidMetricName(s.name))
        throw new ExpositionError(`invalid metric name ${JSON.stringify(s.name)}`);
      for (const [k] of pairs) {
        if (!isValidLabelName(k))
          throw new ExpositionError(`metric ${s.name} has invalid label name ${JSON.stringify(k)}`);
      }
      fb = {
        family: { name: s.name, help: s.help, type: s.type, series: [] },
        labelNames: pairs.map(([k]) => k).join(','),
        seen: new Set(),
      };
      byName.set(s.name, fb);
    } else {
      const f = fb.family;
      if (f.help !== s.help) {
        throw new ExpositionError(
          `metric family ${s.name} has inconsistent HELP: ${JSON.stringify(s.help)} vs ${JSON.stringify(f.help)}`,
        );
      }
      if (f.type !== s.type)
        throw new ExpositionError(`metric family ${s.name} has inconsistent TYPE: ${s.type} vs ${f.type}`);
      const names = pairs.map(([k]) => k).join(',');
      if (names !== fb.labelNames) {
        throw new ExpositionError(
          `metric family ${s.name} has inconsistent label names: {${names}} vs {${fb.labelNames}}`,
        );
      }
    }
    let key = '';
    for (const [, v] of pairs) {
      if (LONE_SURROGATE.test(v))
        throw new ExpositionError(`metric ${s.name} has a label value that is not valid UTF-8`);
      key += `${v}\xff`;
    }
    if (fb.seen.has(key)) throw new ExpositionError(`duplicate series ${seriesText(s.name, pairs)}`);
    fb.seen.add(key);
    fb.family.series.push({ labels: pairs, value: s.value });
  }

  const families = [...byName.values()].map((fb) => fb.family);
  families.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const f of families) {
    if (f.series.length < 2 || (f.series[0]?.labels.length ?? 0) === 0) continue;
    f.series.sort((a, b) => {
      for (let i = 0; i < a.labels.length; i++) {
        const c = compareUtf8(a.labels[i]?.[1] ?? '', b.labels[i]?.[1] ?? '');
        if (c !== 0) return c;
      }
      return 0;
    });
  }
  return families;
}

// ---- rendering --------------------------------------------------------------------------

/** The text exposition of gathered families (one `\n` after every line, no blank lines). */
export function render(families: readonly PromFamily[]): string {
  const out: string[] = [];
  for (const f of families) {
    out.push(`# HELP ${f.name} ${escapeHelp(f.help)}\n# TYPE ${f.name} ${f.type}\n`);
    for (const s of f.series) out.push(`${seriesText(f.name, s.labels)} ${formatNumber(s.value)}\n`);
  }
  return out.join('');
}

/** gather() then render(): the whole text for a set of samples. Throws ExpositionError. */
export function exposition(samples: Iterable<PromSample>): string {
  return render(gather(samples));
}
