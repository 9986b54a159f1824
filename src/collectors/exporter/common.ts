/**
 * What the `exporter.*` domains share. Each of them serves one mysqld_exporter scraper:
 * its values are Prometheus samples already — the value's name is the family name
 * (`mysql_slave_status_seconds_behind_master`), its group the label set, its type the
 * family TYPE (CumulativeCounter → counter, Gauge → gauge, Unknown → untyped), and its meta
 * one shared frozen object holding the HELP text (PROM_HELP_META). The exporter serves them
 * unchanged; a sink gets them like any other domain's values.
 *
 * Options are the scraper's sub-flags by their upstream names (`min_time` for
 * `collect.info_schema.processlist.min_time`), with upstream's defaults.
 */
import {
  CollectError,
  type CollectResult,
  type Collector,
  type CollectorContext,
  type CollectorHelp,
} from '../../core/collector.js';
import type { Db, Row } from '../../core/db.js';
import { MetricType, type Distribution, type MetricValue } from '../../core/metrics.js';
import type { Plan } from '../../core/plan.js';
import { PROM_HELP_META, scraperByDomain, type UpstreamScraper } from '../../core/upstream.js';
import { parseDateText } from '../../db/values.js';
import { parseGoBool } from '../../util/text.js';
import { levelPlans, queryError } from '../kit/common.js';
import { prepareSource } from '../kit/sources.js';

/** One Prometheus family: name, TYPE (as a Blip type) and the shared HELP meta. */
export interface Family {
  readonly name: string;
  readonly type: MetricType;
  readonly meta: Readonly<Record<string, string>>;
}

/** A family; `type` is `counter`, `gauge` or `untyped`. */
export function family(name: string, help: string, type: 'counter' | 'gauge' | 'untyped'): Family {
  const t =
    type === 'counter'
      ? MetricType.CumulativeCounter
      : type === 'gauge'
        ? MetricType.Gauge
        : MetricType.Unknown;
  return Object.freeze({ name, type: t, meta: Object.freeze({ [PROM_HELP_META]: help }) });
}

/**
 * One histogram or summary of a family (made with type `untyped`; the distribution's kind
 * decides the TYPE the exporter writes).
 */
export function distSample(f: Family, dist: Distribution, labels?: Record<string, string>): MetricValue {
  const v = sample(f, dist.count, labels);
  v.dist = dist;
  return v;
}

/** One sample of a family. */
export function sample(f: Family, value: number, labels?: Record<string, string>): MetricValue {
  return labels === undefined
    ? { name: f.name, value, type: f.type, meta: f.meta }
    : { name: f.name, value, type: f.type, group: labels, meta: f.meta };
}

/**
 * Rows of one family per column (`families`: column → family) → samples, labelled by
 * `labelsOf(row)`, each value read by `scan(row, column)`. A row's labels and every one of its
 * columns are read before any of its samples is added, so a row that does not scan (the
 * scanner throws) stops the reading with none of its samples, as upstream's scrapers stop.
 */
export function columnSamples(
  rows: readonly Row[],
  families: Readonly<Record<string, Family>>,
  labelsOf: (row: Row) => Record<string, string>,
  scan: (row: Row, column: string) => number,
  out: MetricValue[],
): void {
  const columns = Object.keys(families);
  const values: number[] = [];
  for (const row of rows) {
    const labels = labelsOf(row);
    values.length = 0;
    for (const column of columns) values.push(scan(row, column));
    for (let i = 0; i < columns.length; i++)
      out.push(sample(families[columns[i] as string] as Family, values[i] as number, labels));
  }
}

/**
 * A column value read the way mysqld_exporter reads one (its `parseStatus`): `yes`/`on`/
 * `primary` → 1 and `no`/`off`/`disabled`/`connecting`/`non-primary`/`disconnected` → 0 in
 * any case, `Jan _2 15:04:05 2006 MST` and `2006-01-02 15:04:05` dates → Unix seconds (UTC),
 * otherwise a number (Go's ParseFloat syntax); undefined for anything else. A binary log name
 * (`mysql-bin.000012`) is no number: upstream's log-name branch parses the whole text too.
 */
export function parseStatus(text: string | null | undefined): number | undefined {
  if (text === null || text === undefined) return undefined;
  switch (text.toLowerCase()) {
    case 'yes':
    case 'on':
    case 'primary':
      return 1;
    case 'no':
    case 'off':
    case 'disabled':
    case 'connecting':
    case 'non-primary':
    case 'disconnected':
      return 0;
  }
  const date = parseDateText(text);
  if (date !== undefined) return date;
  return parseGoFloat(text);
}

/** What Go's strconv.ParseFloat accepts in decimal (plus the inf/nan words). */
const GO_FLOAT = /^[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)$/i;

/** A number as Go's strconv.ParseFloat reads it (decimal syntax); undefined when it does not. */
export function parseGoFloat(text: string): number | undefined {
  if (!GO_FLOAT.test(text)) return undefined;
  const lower = text.toLowerCase();
  if (lower.endsWith('nan')) return NaN;
  if (lower.includes('inf')) return lower.startsWith('-') ? -Infinity : Infinity;
  const n = Number(lower);
  return Number.isNaN(n) ? undefined : n;
}

/**
 * The base of every `exporter.*` collector: prepare() reads the domain's options (the
 * scraper's sub-flags, upstream defaults filled in, unknown names refused) and asks the
 * source table whether the server can serve the domain; collect() runs scrape() and returns
 * what it produced, with a failure as collection data (its errno kept for the policies).
 * Values a scrape emitted before failing are kept, as mysqld_exporter keeps the samples a
 * scraper sent before its error.
 */
export abstract class UpstreamCollector implements Collector {
  abstract readonly domain: string;
  protected readonly db: Db;
  protected readonly ctx: CollectorContext;
  /** The scraper's options: sub-flag option name → value (defaults filled in). */
  protected options: Readonly<Record<string, string>> = {};
  /** The source key the table gave for this server. */
  protected source = '';
  #levels = new Set<string>();
  #unsupported: CollectError | undefined;

  constructor(ctx: CollectorContext) {
    this.db = ctx.db;
    this.ctx = ctx;
  }

  /** Fill `out` with this scrape's samples; throw on failure (what is in `out` is kept). */
  protected abstract scrape(out: MetricValue[], signal: AbortSignal): Promise<void>;

  /** The scraper this domain serves. */
  protected get scraper(): UpstreamScraper {
    const s = scraperByDomain(this.domain);
    if (s === undefined) throw new Error(`${this.domain}: no mysqld_exporter scraper`);
    return s;
  }

  async prepare(plan: Plan, signal: AbortSignal): Promise<void> {
    const levels = levelPlans(plan, this.domain);
    this.#levels = new Set(levels.keys());
    this.#unsupported = undefined;
    const first = [...levels.values()][0];
    this.options = upstreamOptions(this.scraper, first?.options ?? {});
    if (levels.size === 0) return;
    const prepared = await prepareSource(this.db, this.domain, signal);
    this.#unsupported = prepared.unsupported;
    this.source = prepared.sources[0] ?? '';
  }

  async collect(level: string, signal: AbortSignal): Promise<CollectResult> {
    if (!this.#levels.has(level)) return { values: [] };
    if (this.#unsupported !== undefined) return { values: [], error: this.#unsupported };
    const values: MetricValue[] = [];
    try {
      await this.scrape(values, signal);
    } catch (err) {
      return { values, error: queryError(err) };
    }
    return { values };
  }
}

/**
 * A scraper's options from a domain plan: every sub-flag's option with its default, then the
 * plan's values; an option the scraper does not have, or an int/bool that is not one, is a
 * plan error naming it.
 */
export function upstreamOptions(
  scraper: UpstreamScraper,
  given: Readonly<Record<string, string>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of scraper.subflags) out[f.option] = f.default;
  for (const [name, value] of Object.entries(given)) {
    const f = scraper.subflags.find((s) => s.option === name);
    if (f === undefined) {
      const known = scraper.subflags.map((s) => s.option);
      throw new CollectError(
        `unknown option ${name}${known.length > 0 ? `; valid options: ${known.join(', ')}` : '; the domain has no options'}`,
      );
    }
    if (f.kind === 'int' && !/^-?\d+$/.test(value.trim()))
      throw new CollectError(`invalid option ${name}: ${value}: not an integer`);
    if (f.kind === 'bool' && parseGoBool(value.trim()) === undefined)
      throw new CollectError(`invalid option ${name}: ${value}: not true or false`);
    out[name] = value.trim();
  }
  return out;
}

/** A bool option as kingpin reads it (Go's ParseBool; anything else is false). */
export function boolOption(value: string | undefined): boolean {
  return parseGoBool((value ?? '').trim()) ?? false;
}

/** An int option (validated in prepare). */
export function intOption(value: string | undefined): number {
  return Number.parseInt(value ?? '0', 10);
}

/** The help of an `exporter.*` domain: the scraper's description, its sub-flags as options, its families. */
export function upstreamHelp(
  domain: string,
  args: { sources: string[]; families: readonly Family[]; labels?: readonly string[] },
): CollectorHelp {
  const s = scraperByDomain(domain);
  if (s === undefined) throw new Error(`${domain}: no mysqld_exporter scraper`);
  return {
    domain,
    description: `mysqld_exporter's ${s.name} scraper: ${s.help}`,
    sources: args.sources,
    options: s.subflags.map((f) => ({
      name: f.option,
      description: `--${f.flag}: ${f.help}`,
      default: f.default,
    })),
    errors: [],
    groups: (args.labels ?? []).map((key) => ({ key, description: 'Prometheus label' })),
    meta: [{ key: PROM_HELP_META, description: 'the family HELP text' }],
    metrics: args.families.map((f) => ({
      name: f.name,
      type: f.type,
      description: f.meta[PROM_HELP_META] ?? '',
    })),
  };
}
