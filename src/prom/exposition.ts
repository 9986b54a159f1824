/**
 * Prometheus text exposition format 0.0.4, byte for byte as Go's client_golang writes it:
 * the format mysqld_exporter serves and the pushgateway accepts.
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
import type { Distribution } from '../core/metrics.js';
import { CappedMap, CappedSet } from '../util/capped.js';
import type { TextSegments } from '../util/gzip.js';

/**
 * A family's TYPE. mysqld_exporter uses `untyped` for its generic status metrics; a
 * `histogram` or `summary` family's samples carry their distribution.
 */
export type PromType = 'counter' | 'gauge' | 'untyped' | 'histogram' | 'summary';

/** One series value before gathering: its family's name, HELP and TYPE travel with it. */
export interface PromSample {
  name: string;
  help: string;
  type: PromType;
  /** Label name → value; undefined or empty = no labels. */
  labels?: Readonly<Record<string, string>> | undefined;
  value: number;
  /** The buckets or quantiles, sum and count of a histogram or summary series. */
  dist?: Distribution | undefined;
}

/** One series of a gathered family: labels as [name, value] pairs sorted by name. */
export interface PromSeries {
  labels: readonly (readonly [string, string])[];
  value: number;
  dist?: Distribution | undefined;
}

/** A validated family: what one `# HELP`/`# TYPE` block renders. */
export interface PromFamily {
  name: string;
  help: string;
  type: PromType;
  /** Sorted as rendered (by label values, in label-name order). */
  series: PromSeries[];
  /** `{a="x"}` text of each series, parallel to `series` (filled by gather; render uses it). */
  labelTexts?: readonly string[] | undefined;
}

/** Content-Type of the text format, exactly as promhttp sends it. */
export const TEXT_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Why a set of samples cannot be exposed (the Go registry's gather errors). */
export class ExpositionError extends Error {
  /** Two series with the same name and labels (dropDuplicateSeries() can mend it). */
  readonly duplicate: boolean;
  constructor(message: string, duplicate = false) {
    super(message);
    this.name = 'ExpositionError';
    this.duplicate = duplicate;
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

/** Label pairs sorted by name, validated, with their rendered `{…}` text. */
interface Pairs {
  pairs: readonly (readonly [string, string])[];
  /** label names joined by ',' */
  names: string;
  /** label values joined by '\xff' (the duplicate-detection key) */
  key: string;
  /** `{a="x",b="y"}`, '' without labels */
  text: string;
}

const NO_PAIRS: Pairs = { pairs: [], names: '', key: '', text: '' };

/**
 * Work that depends only on a labels object is done once per object: translators hand out
 * the same frozen labels object for the same series every scrape, so this cache makes
 * validation, sorting and escaping of labels free after the first scrape.
 */
const pairsCache = new WeakMap<object, Pairs>();

/** Metric names already checked (bounded; cleared when it grows past the limit). */
const VALID_NAMES_LIMIT = 100_000;
const validNames = new CappedSet<string>(VALID_NAMES_LIMIT);

/** `[\ud800-\udfff]` without the `u` flag: any surrogate, a cheap pre-check. */
const ANY_SURROGATE = /[\ud800-\udfff]/;

function pairsOf(metric: string, labels: Readonly<Record<string, string>> | undefined): Pairs {
  if (labels === undefined) return NO_PAIRS;
  const cached = pairsCache.get(labels);
  if (cached !== undefined) return cached;
  const keys = Object.keys(labels);
  if (keys.length === 0) return NO_PAIRS;
  if (keys.length > 1) keys.sort();
  const pairs = keys.map((k) => [k, labels[k] ?? ''] as const);
  for (const [k, v] of pairs) {
    if (!isValidLabelName(k))
      throw new ExpositionError(`metric ${metric} has invalid label name ${JSON.stringify(k)}`);
    if (ANY_SURROGATE.test(v) && LONE_SURROGATE.test(v))
      throw new ExpositionError(`metric ${metric} has a label value that is not valid UTF-8`);
  }
  const p: Pairs = {
    pairs,
    names: keys.join(','),
    key: pairs.map(([, v]) => v).join('\xff'),
    text: `{${pairs.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(',')}}`,
  };
  pairsCache.set(labels, p);
  return p;
}

interface FamilyBuild {
  family: PromFamily;
  /** label names of the first series (every series of a family has the same set) */
  labelNames: string;
  /** key of the first series; the set is only made for a second series */
  firstKey: string;
  seen: Set<string> | undefined;
  /** rendered `{…}` of each series, parallel to family.series */
  texts: string[];
  /** index in the input of each series, parallel to family.series */
  indexes: number[];
}

/** The one `{…}` text list shared by every family whose single series has no labels. */
const NO_LABEL_TEXTS: readonly string[] = [''];

function seriesOf(p: Pairs, s: PromSample): PromSeries {
  return s.dist === undefined
    ? { labels: p.pairs, value: s.value }
    : { labels: p.pairs, value: s.value, dist: s.dist };
}

/** gather()'s work, keeping where each series came from (for ExpositionCache). */
function group(samples: readonly PromSample[]): FamilyBuild[] {
  const byName = new Map<string, FamilyBuild>();
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i] as PromSample;
    const p = pairsOf(s.name, s.labels);
    let fb = byName.get(s.name);
    if (fb === undefined) {
      if (!validNames.has(s.name)) {
        if (!isValidMetricName(s.name))
          throw new ExpositionError(`invalid metric name ${JSON.stringify(s.name)}`);
        validNames.add(s.name);
      }
      fb = {
        family: {
          name: s.name,
          help: s.help,
          type: s.type,
          series: [seriesOf(p, s)],
          labelTexts: undefined,
        },
        labelNames: p.names,
        firstKey: p.key,
        seen: undefined,
        texts: p === NO_PAIRS ? (NO_LABEL_TEXTS as string[]) : [p.text],
        indexes: [i],
      };
      byName.set(s.name, fb);
      continue;
    }
    const f = fb.family;
    if (f.help !== s.help) {
      throw new ExpositionError(
        `metric family ${s.name} has inconsistent HELP: ${JSON.stringify(s.help)} vs ${JSON.stringify(f.help)}`,
      );
    }
    if (f.type !== s.type)
      throw new ExpositionError(`metric family ${s.name} has inconsistent TYPE: ${s.type} vs ${f.type}`);
    if (p.names !== fb.labelNames) {
      throw new ExpositionError(
        `metric family ${s.name} has inconsistent label names: {${p.names}} vs {${fb.labelNames}}`,
      );
    }
    if (fb.seen === undefined) fb.seen = new Set([fb.firstKey]);
    if (fb.seen.has(p.key)) throw new ExpositionError(`duplicate series ${s.name}${p.text}`, true);
    fb.seen.add(p.key);
    f.series.push(seriesOf(p, s));
    fb.texts.push(p.text);
    fb.indexes.push(i);
  }

  const builds = [...byName.values()];
  builds.sort((a, b) => (a.family.name < b.family.name ? -1 : a.family.name > b.family.name ? 1 : 0));
  for (const fb of builds) {
    const f = fb.family;
    if (f.series.length > 1) {
      // sort series, their texts and input indexes together
      const order = f.series.map((_, i) => i);
      order.sort((i, j) => {
        const x = f.series[i]?.labels ?? [];
        const y = f.series[j]?.labels ?? [];
        for (let k = 0; k < x.length; k++) {
          const c = compareUtf8(x[k]?.[1] ?? '', y[k]?.[1] ?? '');
          if (c !== 0) return c;
        }
        return 0;
      });
      f.series = order.map((i) => f.series[i] as PromSeries);
      fb.texts = order.map((i) => fb.texts[i] ?? '');
      fb.indexes = order.map((i) => fb.indexes[i] ?? 0);
    }
    f.labelTexts = fb.texts;
  }
  return builds;
}

/**
 * Group samples into families and check them like the Go registry's Gather: valid metric
 * and label names, valid UTF-8 label values, one HELP and TYPE per family, the same label
 * names on every series of a family, and no two series with the same labels. Families come
 * back sorted by name and their series sorted by label values.
 *
 * @throws ExpositionError naming the first offending series or family
 */
export function gather(samples: Iterable<PromSample>): PromFamily[] {
  return group(Array.isArray(samples) ? (samples as PromSample[]) : [...samples]).map((fb) => fb.family);
}

/**
 * The samples without the series that repeat an earlier one (same name, same labels): the
 * first of each is kept, in input order; `dropped` names the others as `name{labels}`.
 * Throws ExpositionError on an invalid label name, as gather() does.
 */
export function dropDuplicateSeries(samples: readonly PromSample[]): {
  kept: PromSample[];
  dropped: string[];
} {
  const seen = new Set<string>();
  const kept: PromSample[] = [];
  const dropped: string[] = [];
  for (const s of samples) {
    const p = pairsOf(s.name, s.labels);
    const key = `${s.name}\0${p.names}\0${p.key}`;
    if (seen.has(key)) dropped.push(`${s.name}${p.text}`);
    else {
      seen.add(key);
      kept.push(s);
    }
  }
  return { kept, dropped };
}

// ---- rendering --------------------------------------------------------------------------

/** `# HELP`/`# TYPE` lines by family name (bounded like validNames). */
const headerCache = new CappedMap<string, { help: string; type: PromType; text: string }>(VALID_NAMES_LIMIT);

function header(f: PromFamily): string {
  const c = headerCache.get(f.name);
  if (c !== undefined && c.help === f.help && c.type === f.type) return c.text;
  const text = `# HELP ${f.name} ${escapeHelp(f.help)}\n# TYPE ${f.name} ${f.type}\n`;
  headerCache.set(f.name, { help: f.help, type: f.type, text });
  return text;
}

function labelsText(labels: readonly (readonly [string, string])[]): string {
  if (labels.length === 0) return '';
  return `{${labels.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(',')}}`;
}

/**
 * The lines of one histogram or summary series, as Go's expfmt writes them: a histogram's
 * `_bucket` lines with `le` (the `+Inf` bucket = count) then `_sum` and `_count`; a
 * summary's lines with `quantile` then `_sum` and `_count`. The extra label comes after the
 * series' own labels; bounds and quantiles are numbers in the same `%g` form as values.
 */
export function distLines(name: string, labelText: string, dist: Distribution): string {
  const histogram = dist.kind === 'histogram';
  const extra = histogram ? 'le' : 'quantile';
  const open = labelText === '' ? '{' : `${labelText.slice(0, -1)},`;
  const series = histogram ? `${name}_bucket` : name;
  let out = '';
  for (const [bound, v] of dist.points)
    out += `${series}${open}${extra}="${formatNumber(bound)}"} ${formatNumber(v)}\n`;
  if (histogram) out += `${series}${open}le="+Inf"} ${formatNumber(dist.count)}\n`;
  return `${out}${name}_sum${labelText} ${formatNumber(dist.sum)}\n${name}_count${labelText} ${formatNumber(dist.count)}\n`;
}

/** One series' line(s): `name{labels} value`, or a histogram's or summary's lines. */
function seriesText(name: string, labelText: string, value: number, dist: Distribution | undefined): string {
  return dist === undefined
    ? `${name}${labelText} ${formatNumber(value)}\n`
    : distLines(name, labelText, dist);
}

/** The text exposition of gathered families (one `\n` after every line, no blank lines). */
export function render(families: readonly PromFamily[]): string {
  let out = '';
  for (const f of families) {
    out += header(f);
    const texts = f.labelTexts;
    const series = f.series;
    for (let i = 0; i < series.length; i++) {
      const s = series[i] as PromSeries;
      out += seriesText(f.name, texts?.[i] ?? labelsText(s.labels), s.value, s.dist);
    }
  }
  return out;
}

/** gather() then render(): the whole text for a set of samples. Throws ExpositionError. */
export function exposition(samples: Iterable<PromSample>): string {
  return render(gather(samples));
}

// ---- repeated exposition of the same series ---------------------------------------------

const EMPTY = Buffer.alloc(0);

/**
 * The bytes a segment of the kept text reaches before the next one begins (at the next
 * line). A gzip answer compresses only the segments that changed since the last one (see
 * util/gzip.ts): each segment starts without the ones before it as context, which costs
 * about 3.5 % of the compressed size at 32 KiB (8 % at 16 KiB, 1 % at 64 KiB; about 4 % with
 * the cuts at subsystems too), while larger ones hold more unchanged text around each
 * changed line.
 */
export const SEGMENT_BYTES = 32 * 1024;

/**
 * A line turns hot when it changes twice within this many updates, and cold again after
 * this many updates without a change; a hot line is sent as it is rather than compressed
 * again with the text around it (see ExpositionCache's cut). A counter of a server changes
 * at every scrape; a line that changes once is compressed again with its segment, as any
 * line, without cutting the text anew.
 */
export const HOT_UPDATES = 16;

/**
 * The most bytes of hot lines sent as they are in one answer; hot lines past it stay in
 * cold segments, compressed whenever they change. An exporter's answer sends about 3 KB of
 * them; the cap bounds what a text whose lines all change (distributions) loses to it.
 */
export const HOT_BYTES = 8 * 1024;

/**
 * A metric name's namespace and subsystem, its first three words (`mysql_global_status` of
 * `mysql_global_status_uptime`); the whole name when it has fewer.
 */
export function subsystem(name: string): string {
  let at = -1;
  for (let words = 0; words < 3; words++) {
    at = name.indexOf('_', at + 1);
    if (at < 0) return name;
  }
  return name.slice(0, at);
}

function sameLabels(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return Object.keys(a ?? b ?? {}).length === 0;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (a[k] !== b[k]) return false;
  return true;
}

/**
 * exposition() for an endpoint that renders the same series over and over (a /metrics
 * handler): when a call gets the same series as the previous one — same names, HELP, TYPE
 * and labels in the same order, only values changed, the normal case between scrapes of
 * one server — it skips grouping, validation and sorting and reuses the layout and every
 * line whose value did not change. Any other input goes through gather() and render() and
 * becomes the new layout. Output is byte-identical to exposition().
 */
export class ExpositionCache {
  /** the previous input's series identities */
  #shape: Omit<PromSample, 'value'>[] = [];
  /** output position → input index */
  #order: number[] = [];
  /** output position → `# HELP`/`# TYPE` lines to write before it ('' inside a family) */
  #heads: string[] = [];
  /** output position → `name{labels} ` */
  #prefixes: string[] = [];
  /** output position → [family name, `{labels}`] (for histogram and summary lines) */
  #names: (readonly [string, string])[] = [];
  #lastValues: (number | undefined)[] = [];
  /**
   * The whole text, UTF-8, in #buf[0, #total): output position k's text (head + line) at
   * #starts[k], #lens[k] bytes. A call writes only the lines whose value changed: in place
   * when every one kept its length (the usual case: a counter rarely gains a digit between
   * two scrapes), else into #spare with the unchanged stretches between them copied whole.
   */
  #buf: Buffer = EMPTY;
  #spare: Buffer = EMPTY;
  #starts = new Uint32Array(0);
  #lens = new Uint32Array(0);
  #total = 0;
  /**
   * #update's scratch, kept between calls: the positions whose text changed (in output
   * order), their texts and those texts' byte lengths. They and the offsets keep one kind of
   * array for the cache's whole life (typed arrays for the offsets; these emptied, never
   * replaced), so V8's optimized code for #update and #write is not thrown away when a
   * second layout or a scrape with nothing changed brings an array of another shape.
   */
  #changed: number[] = [];
  #texts: string[] = [];
  #sizes: number[] = [];
  /**
   * The segments (see TextSegments): the output position each begins at, each position's
   * segment, each segment's version and whether it is sent as it is (a run of lines that
   * changed lately, see #cut). Cut at the first #update of a layout, and again when a line
   * turns hot or cold. A version names one state of one segment: #version grows by one for
   * each segment whose bytes or bounds change, so no two segments, nor two states of one,
   * share a number.
   */
  #segFirst: number[] = [];
  #segOf = new Uint32Array(0);
  #segVersions: number[] = [];
  #segHot: boolean[] = [];
  /**
   * Per segment, the bytes of its first line's `# HELP`/`# TYPE` lines left to the segment
   * before: a hot segment starts at its value line, and the heads, which never change within
   * a layout, are compressed with the cold text before them.
   */
  #segSkip: number[] = [];
  #segBounds: number[] = [];
  #version = 0;
  /**
   * Per output position, the updates since its text last changed (counted up to
   * HOT_UPDATES, from the start of a layout), and whether it is hot (see HOT_UPDATES).
   */
  #quiet = new Uint8Array(0);
  #hot = new Uint8Array(0);
  /** See #coldCuts (empty until the layout's first cut). */
  #coldStarts = new Uint8Array(0);

  /** The text exposition of `samples`. Throws ExpositionError like exposition(). */
  render(samples: readonly PromSample[]): string {
    this.#update(samples);
    return this.#buf.toString('utf8', 0, this.#total);
  }

  /**
   * render() as UTF-8 bytes, the form an HTTP handler sends. Only the lines whose value
   * changed are formatted and encoded again; the rest are copied.
   */
  renderBuffer(samples: readonly PromSample[]): Buffer {
    this.#update(samples);
    return Buffer.from(this.#buf.subarray(0, this.#total));
  }

  /**
   * renderBuffer() without the copy: a view of the buffer this cache keeps, for a caller
   * that is done with the text before the next call (gzip, which reads it at once). The view
   * is only valid until the next call.
   */
  renderShared(samples: readonly PromSample[]): Buffer {
    this.#update(samples);
    return this.#buf.subarray(0, this.#total);
  }

  /**
   * The segments of the text the last call returned, whole lines each (none before the first
   * call). The arrays are the cache's own, good until the next call.
   */
  segments(): TextSegments {
    const bounds = this.#segBounds;
    const first = this.#segFirst;
    bounds.length = 0;
    const skip = this.#segSkip;
    for (let i = 0; i < first.length; i++)
      bounds.push((this.#starts[first[i] as number] as number) + (skip[i] as number));
    bounds.push(this.#total);
    return { bounds, versions: this.#segVersions, stored: this.#segHot };
  }

  /** Bring every output position's text up to date with `samples`. */
  #update(samples: readonly PromSample[]): void {
    if (!this.#sameShape(samples)) this.#layout(samples);
    const order = this.#order;
    const lastValues = this.#lastValues;
    const changed = this.#changed;
    const texts = this.#texts;
    changed.length = 0;
    texts.length = 0;
    for (let k = 0; k < order.length; k++) {
      const s = samples[order[k] as number] as PromSample;
      const v = s.value;
      // A distribution has many numbers: its lines are written again every time.
      // Same text as last time: the same number, or NaN again (0 and -0 both print `0`).
      const was = lastValues[k];
      if (s.dist === undefined && (v === was || (Number.isNaN(v) && was !== undefined && Number.isNaN(was))))
        continue;
      const body =
        s.dist === undefined
          ? `${this.#prefixes[k] as string}${formatNumber(v)}\n`
          : distLines(...(this.#names[k] as readonly [string, string]), s.dist);
      changed.push(k);
      texts.push(`${this.#heads[k] as string}${body}`);
      lastValues[k] = v;
    }
    this.#write();
    // The first update of a layout writes every line: no line is hot yet.
    if (this.#segFirst.length === 0 || this.#age(changed)) {
      this.#cut(changed);
      return;
    }
    const segOf = this.#segOf;
    const versions = this.#segVersions;
    let last = -1;
    for (let i = 0; i < changed.length; i++) {
      const seg = segOf[changed[i] as number] as number;
      if (seg === last) continue;
      versions[seg] = ++this.#version;
      last = seg;
    }
  }

  /**
   * Count one more update for every line, none for the `changed` ones (in output order): a
   * line that changes again within HOT_UPDATES updates turns hot, one quiet for that many
   * turns cold. Whether a line turned either way.
   */
  #age(changed: readonly number[]): boolean {
    const quiet = this.#quiet;
    const hot = this.#hot;
    let turned = false;
    let c = 0;
    for (let k = 0; k < quiet.length; k++) {
      const was = hot[k] as number;
      const q = quiet[k] as number;
      if (changed[c] === k) {
        if (q < HOT_UPDATES) hot[k] = 1;
        quiet[k] = 0;
        c++;
      } else if (q < HOT_UPDATES) {
        quiet[k] = q + 1;
        if (q + 1 === HOT_UPDATES) hot[k] = 0;
      }
      if (hot[k] !== was) turned = true;
    }
    return turned;
  }

  /**
   * Cut the text into segments of whole lines. A run of hot lines (see HOT_UPDATES: the
   * counters of a server) is a segment of its own, sent as it is, up to HOT_BYTES in all:
   * compressing a few changed lines again at each answer costs more than the bytes they
   * save, and the cold text around them then never changes. Cold runs are cut where the
   * layout's first cut put its cuts (#coldCuts), so a line turning hot or cold cuts only the
   * segment it is in. A segment with the same lines, kind and text as one before the cut
   * keeps its version; every other one gets a new one. `changed`: the positions whose text
   * this update changed, in output order.
   */
  #cut(changed: readonly number[]): void {
    const lens = this.#lens;
    const isHot = this.#hot;
    const segOf = this.#segOf;
    const oldFirst = this.#segFirst;
    const oldHot = this.#segHot;
    const oldVersions = this.#segVersions;
    const oldSkip = this.#segSkip;
    const first: number[] = [];
    const hots: boolean[] = [];
    const skips: number[] = [];
    const coldStart = this.#coldCuts();
    let budget = HOT_BYTES;
    for (let k = 0; k < lens.length; k++) {
      const len = lens[k] as number;
      const hot = isHot[k] === 1 && len <= budget;
      if (hot) budget -= len;
      const kindChanged = k > 0 && hot !== hots[hots.length - 1];
      if (k === 0 || kindChanged || (!hot && coldStart[k] === 1)) {
        first.push(k);
        hots.push(hot);
        skips.push(hot && k > 0 ? Buffer.byteLength(this.#heads[k] as string) : 0);
      }
      segOf[k] = first.length - 1;
    }
    // Versions: kept for a segment with the same lines, kind and end as one before the cut
    // (the heads of the segment after it, when that one is hot, are its last bytes), when
    // none of its lines changed; new for the others.
    const versions: number[] = [];
    let o = 0;
    let c = 0;
    for (let i = 0; i < first.length; i++) {
      const start = first[i] as number;
      const end = first[i + 1] ?? lens.length;
      while (o < oldFirst.length && (oldFirst[o] as number) < start) o++;
      let dirty = false;
      while (c < changed.length && (changed[c] as number) < end) {
        dirty = true;
        c++;
      }
      const same =
        !dirty &&
        oldFirst[o] === start &&
        (oldFirst[o + 1] ?? lens.length) === end &&
        oldHot[o] === hots[i] &&
        (oldSkip[o + 1] ?? 0) === (skips[i + 1] ?? 0);
      versions.push(same ? (oldVersions[o] as number) : ++this.#version);
    }
    this.#segFirst = first;
    this.#segHot = hots;
    this.#segSkip = skips;
    this.#segVersions = versions;
  }

  /**
   * Per output position, 1 where a cold segment begins: at the first line end at or past
   * SEGMENT_BYTES, and before a family of another subsystem once a segment holds a quarter
   * of that (the global status then shares no segment with the global variables). Worked out
   * once per layout, from the line sizes of its first update, so these cuts stay where they
   * are as lines turn hot and cold (and gain digits).
   */
  #coldCuts(): Uint8Array {
    const lens = this.#lens;
    if (this.#coldStarts.length === lens.length) return this.#coldStarts;
    const starts = new Uint8Array(lens.length);
    let group = '';
    let size = 0;
    for (let k = 0; k < starts.length; k++) {
      let newGroup = false;
      if (this.#heads[k] !== '') {
        const family = subsystem((this.#names[k] as readonly [string, string])[0]);
        newGroup = family !== group;
        group = family;
      }
      if (k === 0 || size >= SEGMENT_BYTES || (newGroup && size >= SEGMENT_BYTES / 4)) {
        starts[k] = 1;
        size = 0;
      }
      size += lens[k] as number;
    }
    this.#coldStarts = starts;
    return starts;
  }

  /** Write the texts of the #changed positions (in output order) into the kept text. */
  #write(): void {
    const changed = this.#changed;
    const texts = this.#texts;
    const sizes = this.#sizes;
    const lens = this.#lens;
    const starts = this.#starts;
    const n = changed.length;
    sizes.length = 0;
    let grown = 0;
    let moved = false;
    for (let i = 0; i < n; i++) {
      const size = Buffer.byteLength(texts[i] as string);
      const was = lens[changed[i] as number] as number;
      sizes.push(size);
      if (size !== was) {
        moved = true;
        grown += size - was;
      }
    }
    // Every changed line kept its length (the usual case): each is written over its old text.
    if (!moved) {
      const buf = this.#buf;
      for (let i = 0; i < n; i++) buf.write(texts[i] as string, starts[changed[i] as number] as number);
      return;
    }
    const total = this.#total + grown;
    if (this.#spare.length < total) this.#spare = Buffer.allocUnsafe(Math.ceil(total * 1.25));
    const from = this.#buf;
    const to = this.#spare;
    let read = 0;
    let at = 0;
    for (let i = 0; i < n; i++) {
      const k = changed[i] as number;
      at += from.copy(to, at, read, starts[k]);
      at += to.write(texts[i] as string, at);
      read = (starts[k] as number) + (lens[k] as number);
      lens[k] = sizes[i] as number;
    }
    at += from.copy(to, at, read, this.#total);
    let start = 0;
    for (let k = 0; k < lens.length; k++) {
      starts[k] = start;
      start += lens[k] as number;
    }
    this.#total = at;
    this.#spare = from;
    this.#buf = to;
  }

  #sameShape(samples: readonly PromSample[]): boolean {
    const shape = this.#shape;
    if (samples.length !== shape.length) return false;
    for (let i = 0; i < samples.length; i++) {
      const s = samples[i] as PromSample;
      const t = shape[i] as Omit<PromSample, 'value'>;
      if (s.name !== t.name || s.help !== t.help || s.type !== t.type || !sameLabels(s.labels, t.labels))
        return false;
    }
    return true;
  }

  #layout(samples: readonly PromSample[]): void {
    const builds = group(samples); // throws before anything is replaced
    const order: number[] = [];
    const heads: string[] = [];
    const prefixes: string[] = [];
    const names: (readonly [string, string])[] = [];
    for (const fb of builds) {
      const f = fb.family;
      for (let i = 0; i < fb.indexes.length; i++) {
        order.push(fb.indexes[i] as number);
        heads.push(i === 0 ? header(f) : '');
        prefixes.push(`${f.name}${fb.texts[i] ?? ''} `);
        names.push([f.name, fb.texts[i] ?? '']);
      }
    }
    this.#shape = samples.map((s) => ({ name: s.name, help: s.help, type: s.type, labels: s.labels }));
    this.#order = order;
    this.#heads = heads;
    this.#prefixes = prefixes;
    this.#names = names;
    this.#lastValues = new Array<number | undefined>(order.length).fill(undefined);
    this.#starts = new Uint32Array(order.length);
    this.#lens = new Uint32Array(order.length);
    this.#total = 0;
    this.#segFirst = [];
    this.#segOf = new Uint32Array(order.length);
    this.#segVersions = [];
    this.#segHot = [];
    this.#segSkip = [];
    this.#quiet = new Uint8Array(order.length).fill(HOT_UPDATES);
    this.#hot = new Uint8Array(order.length);
    this.#coldStarts = new Uint8Array(0);
  }
}
