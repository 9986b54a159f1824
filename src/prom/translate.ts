/**
 * Blip metric values → Prometheus samples: mysqld_exporter's names for status.global,
 * var.global and innodb, the `exporter.*` domains as they are, and sonde's own names for
 * every other built-in domain (sonde-names.ts, the same in all three flavours).
 *
 * Three explicit flavours, because their consumers want different names:
 *
 * - translateForExporter(): what the real mysqld_exporter (0.14) serves for the same
 *   server, so dashboards and alerts written for it keep working. Where Blip's translation
 *   differs from mysqld_exporter (generic status TYPE `untyped` and its HELP, variables
 *   HELP, innodb names in the server's case, `_total` and counter only for INNODB_METRICS
 *   counter types, innodb HELP = the COMMENT column) this follows mysqld_exporter. Used by
 *   sonde's /metrics endpoint (exporter/).
 * - translateBlip(): Blip's own translation, exactly (what Blip's exporter
 *   and prom-pushgateway sink emit).
 * - chronosphereName(): the chronosphere sink's flat names, e.g.
 *   `mysql_status_threads_running`.
 *
 * innodb values carry meta `subsystem` (from the collector). For mysqld_exporter naming,
 * they may also carry `name` (NAME as the server spells it), `type` (TYPE column) and
 * `comment` (COMMENT column), see INNODB_META; the innodb collector adds them when it reads for the exporter. Without them
 * the lowercase name, the Blip type and a generic HELP are used.
 */
import { INNODB_META, MetricType, type MetricValue } from '../core/metrics.js';
import { EXPORTER_DOMAIN_PREFIX, PROM_HELP_META } from '../core/upstream.js';
import type { PromSample, PromType } from './exposition.js';
import VARIABLES_HELP_JSON from './variables-help.json' with { type: 'json' };
import { SONDE_PROM_DOMAINS, sondeSample, type SondeSample } from './sonde-names.js';
import { CappedMap } from '../util/capped.js';

const SONDE_DOMAINS: ReadonlySet<string> = new Set(SONDE_PROM_DOMAINS);

/** True when `domain` has a Prometheus translation. */
export function hasPromTranslator(domain: string): boolean {
  return (
    domain === 'status.global' ||
    domain === 'var.global' ||
    domain === 'innodb' ||
    SONDE_DOMAINS.has(domain) ||
    domain.startsWith(EXPORTER_DOMAIN_PREFIX)
  );
}

/**
 * The values of an `exporter.*` domain are Prometheus samples already: name = family,
 * group = labels, meta `help` = HELP, type counter/gauge/untyped (CumulativeCounter, Gauge,
 * Unknown), or histogram/summary for a value carrying a distribution. Other types give
 * nothing.
 */
export function upstreamSamples(values: readonly MetricValue[], out: PromSample[] = []): PromSample[] {
  for (const v of values) {
    const type: PromType | undefined =
      v.dist !== undefined
        ? v.dist.kind
        : v.type === MetricType.CumulativeCounter
          ? 'counter'
          : v.type === MetricType.Gauge
            ? 'gauge'
            : v.type === MetricType.Unknown
              ? 'untyped'
              : undefined;
    if (type === undefined) continue;
    const help = v.meta?.[PROM_HELP_META] ?? '';
    out.push({ name: v.name, help, type, value: v.value, labels: v.group, dist: v.dist });
  }
  return out;
}

/** Blip's `sanitize`: every character outside `[a-zA-Z0-9_]` → `_`, then lowercase. */
export function sanitize(s: string): string {
  return s.replace(/[^a-zA-Z0-9_]/g, '_').toLowerCase();
}

/** Like sanitize() but keeping case (mysqld_exporter keeps INNODB_METRICS names as they are). */
function validName(s: string): string {
  return s.replace(/[^a-zA-Z0-9_]/g, '_');
}

const STATUS_RE =
  /^(com|handler|connection_errors|innodb_buffer_pool_pages|innodb_rows|performance_schema)_(.*)$/s;
const BUFFER_PAGE_RE = /^buffer_page_(read|written)_(.*)$/s;
const BUFFER_POOL_PAGES_RE = /^buffer_(pool_pages)_(.*)$/s;

// HELP texts, as mysqld_exporter and Blip write them.
const H = {
  commands: 'Total number of executed MySQL commands.',
  handlers: 'Total number of executed MySQL handlers.',
  connectionErrors: 'Total number of MySQL connection errors.',
  bufferPoolPages: 'Innodb buffer pool pages by state.',
  bufferPoolDirty: 'Innodb buffer pool dirty pages.',
  pageChanges: 'Innodb buffer pool page state changes.',
  rowOps: 'Total number of MySQL InnoDB row operations.',
  pfsLost:
    'Total number of MySQL instrumentations that could not be loaded or created due to memory constraints.',
  statusGeneric: 'Generic metric from SHOW GLOBAL STATUS.',
  statusGenericCounter: 'Generic counter metric from SHOW GLOBAL STATUS.',
  statusGenericGauge: 'Generic gauge metric from SHOW GLOBAL STATUS.',
  variablesExporter: 'Generic gauge metric from SHOW GLOBAL VARIABLES.',
  variablesBlipGauge: 'Generic gauge metric.',
  variablesBlipCounter: 'Generic counter metric.',
  innodbPageRead: 'Total number of buffer pages read total.',
  innodbPageWritten: 'Total number of buffer pages written total.',
  innodbPoolDirty: 'Total number of dirty pages in the buffer pool.',
  innodbPoolPages: 'Total number of buffer pool pages by state.',
  innodbGeneric: 'Generic metric from information_schema.innodb_metrics.',
} as const;

const STATUS = 'mysql_global_status_';
const VARIABLES = 'mysql_global_variables_';
const INNODB = 'mysql_info_schema_innodb_metrics_';

/** Blip's type → TYPE; undefined for types no translator emits (delta counter, bool, …). */
function blipType(v: MetricValue): 'counter' | 'gauge' | undefined {
  if (v.type === MetricType.CumulativeCounter) return 'counter';
  if (v.type === MetricType.Gauge) return 'gauge';
  return undefined;
}

function sample(
  name: string,
  help: string,
  type: PromType,
  value: number,
  labels?: Record<string, string>,
): PromSample {
  return labels === undefined ? { name, help, type, value } : { name, help, type, value, labels };
}

/**
 * The status.global families both translations share: `com_*`, `handler_*`,
 * `connection_errors_*`, `innodb_buffer_pool_pages_*`, `innodb_rows_*` and
 * `performance_schema_*` become one labelled family each instead of a generic metric.
 * Returns undefined for a generic name, null for a dropped one.
 */
function statusSpecial(name: string, value: number): PromSample | null | undefined {
  const m = STATUS_RE.exec(name);
  if (m === null) return undefined;
  const x = m[2] ?? '';
  switch (m[1]) {
    case 'com':
      return sample(`${STATUS}commands_total`, H.commands, 'counter', value, { command: x });
    case 'handler':
      return sample(`${STATUS}handlers_total`, H.handlers, 'counter', value, { handler: x });
    case 'connection_errors':
      return sample(`${STATUS}connection_errors_total`, H.connectionErrors, 'counter', value, { error: x });
    case 'innodb_buffer_pool_pages':
      switch (x) {
        case 'data':
        case 'free':
        case 'misc':
        case 'old':
          return sample(`${STATUS}buffer_pool_pages`, H.bufferPoolPages, 'gauge', value, { state: x });
        case 'dirty':
          return sample(`${STATUS}buffer_pool_dirty_pages`, H.bufferPoolDirty, 'gauge', value);
        case 'total':
          return null; // the sum of the states
        default:
          return sample(`${STATUS}buffer_pool_page_changes_total`, H.pageChanges, 'counter', value, {
            operation: x,
          });
      }
    case 'innodb_rows':
      return sample(`${STATUS}innodb_row_ops_total`, H.rowOps, 'counter', value, { operation: x });
    default: // performance_schema
      return sample(`${STATUS}performance_schema_lost_total`, H.pfsLost, 'counter', value, {
        instrumentation: x,
      });
  }
}

// ---- mysqld_exporter-compatible ---------------------------------------------------------

// Each function below translates one value; null = nothing to emit (skipped or dropped).
// The result never depends on the value except for the innodb sign rule, so translate()
// caches it per input key: after the first scrape a value costs one Map lookup, and the
// same labels object comes back every time (exposition.ts caches its label work by it).

function statusForExporter(v: MetricValue): PromSample | null {
  if (blipType(v) === undefined) return null;
  const name = v.name.toLowerCase();
  const special = statusSpecial(name, v.value);
  if (special === null) return null;
  return special ?? sample(STATUS + sanitize(name), H.statusGeneric, 'untyped', v.value);
}

/** mysqld_exporter's own HELP texts of some variables (the RocksDB ones); others are generic. */
const VARIABLES_HELP: Readonly<Record<string, string>> = VARIABLES_HELP_JSON;

function variablesForExporter(v: MetricValue): PromSample | null {
  if (blipType(v) === undefined) return null;
  const name = sanitize(v.name);
  const help = Object.hasOwn(VARIABLES_HELP, name) ? VARIABLES_HELP[name] : undefined;
  return sample(VARIABLES + name, help ?? H.variablesExporter, 'gauge', v.value);
}

/** The innodb special families both translations share; undefined = generic. */
function innodbSpecial(
  subsystem: string,
  name: string,
  value: number,
  pageIoType: PromType,
): PromSample | null | undefined {
  if (subsystem === 'buffer_page_io') {
    const m = BUFFER_PAGE_RE.exec(name);
    if (m === null) return null;
    return m[1] === 'read'
      ? sample(`${INNODB}buffer_page_read_total`, H.innodbPageRead, pageIoType, value, { type: m[2] ?? '' })
      : sample(`${INNODB}buffer_page_written_total`, H.innodbPageWritten, pageIoType, value, {
          type: m[2] ?? '',
        });
  }
  if (subsystem === 'buffer') {
    const m = BUFFER_POOL_PAGES_RE.exec(name);
    if (m !== null) {
      const x = m[2] ?? '';
      if (x === 'dirty') return sample(`${INNODB}buffer_pool_dirty_pages`, H.innodbPoolDirty, 'gauge', value);
      if (x === 'total') return null; // the sum of the states
      return sample(`${INNODB}buffer_pool_pages`, H.innodbPoolPages, 'gauge', value, { state: x });
    }
  }
  return undefined;
}

/**
 * mysqld_exporter's info_schema.innodb_metrics naming: NAME and SUBSYSTEM as the server
 * spells them; `_total` and counter only for TYPE `counter`/`status_counter` (and a value
 * ≥ 0), otherwise gauge without suffix; HELP = COMMENT.
 */
function innodbForExporter(v: MetricValue): PromSample | null {
  const bt = blipType(v);
  const subsystem = v.meta?.[INNODB_META.subsystem];
  if (bt === undefined || subsystem === undefined) return null;
  const name = v.meta?.[INNODB_META.name] ?? v.name;
  const special = innodbSpecial(subsystem, name, v.value, 'counter');
  if (special !== undefined) return special;
  const type = v.meta?.[INNODB_META.type];
  const counter =
    type !== undefined ? (type === 'counter' || type === 'status_counter') && v.value >= 0 : bt === 'counter';
  const help = v.meta?.[INNODB_META.comment] ?? H.innodbGeneric;
  const base = INNODB + validName(`${subsystem}_${name}`);
  return counter ? sample(`${base}_total`, help, 'counter', v.value) : sample(base, help, 'gauge', v.value);
}

// ---- Blip -------------------------------------------------------------------------------

function statusBlip(v: MetricValue): PromSample | null {
  const bt = blipType(v);
  if (bt === undefined) return null;
  const special = statusSpecial(v.name, v.value);
  if (special === null) return null;
  return (
    special ??
    sample(
      STATUS + sanitize(v.name),
      bt === 'counter' ? H.statusGenericCounter : H.statusGenericGauge,
      bt,
      v.value,
    )
  );
}

function variablesBlip(v: MetricValue): PromSample | null {
  const bt = blipType(v);
  if (bt === undefined) return null;
  return sample(
    VARIABLES + sanitize(v.name),
    bt === 'gauge' ? H.variablesBlipGauge : H.variablesBlipCounter,
    bt,
    v.value,
  );
}

function innodbBlip(v: MetricValue): PromSample | null {
  const bt = blipType(v);
  const subsystem = v.meta?.[INNODB_META.subsystem];
  if (bt === undefined || subsystem === undefined) return null;
  const special = innodbSpecial(subsystem, v.name, v.value, bt);
  if (special !== undefined) return special;
  // Blip always appends _total, even for gauges, and reuses the status HELP text (sic).
  return sample(
    `${INNODB}${subsystem}_${v.name}_total`,
    bt === 'counter' ? H.statusGenericCounter : H.statusGenericGauge,
    bt,
    v.value,
  );
}

// ---- drivers ----------------------------------------------------------------------------

/**
 * A translation without its value (null = emit nothing). Labels are frozen and shared;
 * `div` converts the value to the family's unit (sonde's domains; negative values pass).
 */
type Template = (Omit<PromSample, 'value'> & { div?: number | undefined }) | null;

/** One value's translation; `div`, when set, is applied by the driver. */
type OneValue = (v: MetricValue) => SondeSample | null;

/** Bound on each cache; a full cache is cleared (metric names are a small, stable set). */
const CACHE_LIMIT = 50_000;

/**
 * The cache key within a domain and type: the name and the group (sonde's domains take
 * labels from it), plus for innodb the meta it reads and the value's sign.
 */
function cacheKey(domain: string, v: MetricValue): string {
  if (domain !== 'innodb') {
    const g = v.group;
    if (g === undefined) return v.name;
    let key = v.name;
    for (const k in g) key += `\0${k}\x01${g[k]}`;
    return key;
  }
  const m = v.meta;
  return `${v.name}\0${m?.[INNODB_META.subsystem] ?? '\x01'}\0${m?.[INNODB_META.name] ?? '\x01'}\0${
    m?.[INNODB_META.type] ?? '\x01'
  }\0${m?.[INNODB_META.comment] ?? '\x01'}\0${v.value < 0 ? '-' : '+'}`;
}

function template(s: SondeSample | null): Template {
  if (s === null) return null;
  const labels = s.labels === undefined ? undefined : Object.freeze({ ...s.labels });
  return { name: s.name, help: s.help, type: s.type, labels, div: s.div };
}

/** Translates one domain's values, appending to `out` when given; returns the samples (`out`). */
export type Translator = (domain: string, values: readonly MetricValue[], out?: PromSample[]) => PromSample[];

/** The template of a value: from the domain's cache, made once per key. */
function templateOf(
  byType: Map<number, Map<string, Template>>,
  domain: string,
  v: MetricValue,
  fn: OneValue,
): Template {
  let cache = byType.get(v.type);
  if (cache === undefined) {
    cache = new CappedMap(CACHE_LIMIT);
    byType.set(v.type, cache);
  }
  const key = cacheKey(domain, v);
  let t = cache.get(key);
  if (t === undefined) {
    t = template(fn(v));
    cache.set(key, t);
  }
  return t;
}

/** What a translator remembers of the value at one position: its name, type, template and last sample. */
interface Seen {
  name: string;
  type: number;
  t: Template;
  sample: PromSample | undefined;
}

function makeTranslator(one: Readonly<Record<string, OneValue>>): Translator {
  /** domain → metric type → key → template */
  const caches = new Map<string, Map<number, Map<string, Template>>>();
  /**
   * domain → the last call's values by position: a domain's values come in the same order
   * every time, so a value with the same name and type as the one at its position last time
   * (and no group; innodb's templates depend on more) takes its template without a lookup,
   * and the same (frozen) sample when its value did not change either.
   */
  const lastByDomain = new Map<string, Seen[]>();
  return (domain, values, out = []) => {
    if (domain.startsWith(EXPORTER_DOMAIN_PREFIX)) return upstreamSamples(values, out);
    const fn =
      one[domain] ?? (SONDE_DOMAINS.has(domain) ? (v: MetricValue) => sondeSample(domain, v) : undefined);
    if (fn === undefined) return out;
    let byType = caches.get(domain);
    if (byType === undefined) {
      byType = new Map();
      caches.set(domain, byType);
    }
    const byName = domain !== 'innodb';
    let last = lastByDomain.get(domain);
    if (last === undefined) {
      last = [];
      lastByDomain.set(domain, last);
    }
    for (let i = 0; i < values.length; i++) {
      const v = values[i] as MetricValue;
      let seen = last[i];
      const same =
        byName && v.group === undefined && seen !== undefined && seen.name === v.name && seen.type === v.type;
      if (seen === undefined) {
        seen = { name: v.name, type: v.type, t: templateOf(byType, domain, v, fn), sample: undefined };
        last[i] = seen;
      } else if (!same) {
        seen.name = v.name;
        seen.type = v.type;
        seen.t = templateOf(byType, domain, v, fn);
        seen.sample = undefined;
      }
      const t = seen.t;
      if (t === null) continue;
      const value = t.div === undefined || v.value < 0 ? v.value : v.value / t.div;
      let sample = seen.sample;
      if (sample === undefined || sample.value !== value) {
        sample = Object.freeze({ name: t.name, help: t.help, type: t.type, labels: t.labels, value });
        seen.sample = sample;
      }
      out.push(sample);
    }
    if (last.length > values.length) last.length = values.length;
    return out;
  };
}

/**
 * Translate one domain's values the way mysqld_exporter 0.14 names them (see the module
 * comment); sonde's own domains by sonde-names.ts. Domains without a translation give
 * nothing, nor do delta counters, events, and bools of status.global, var.global and innodb.
 */
export const translateForExporter: Translator = makeTranslator({
  'status.global': statusForExporter,
  'var.global': variablesForExporter,
  innodb: innodbForExporter,
});

/**
 * Translate one domain's values exactly as Blip does: generic status
 * metrics counter/gauge by Blip type, `Generic gauge metric.` for variables, innodb names
 * lowercase with `_total` always. sonde's own domains (which Blip does not translate) get
 * sonde-names.ts's names, as for the exporter. Delta counters and events give nothing.
 */
export const translateBlip: Translator = makeTranslator({
  'status.global': statusBlip,
  'var.global': variablesBlip,
  innodb: innodbBlip,
});

// ---- chronosphere -----------------------------------------------------------------------

const CHRONOSPHERE_SHORT: Readonly<Record<string, string>> = {
  'status.global': 'status',
  'var.global': 'var',
  innodb: 'innodb',
};

/**
 * The chronosphere sink's metric name for status.global, var.global and innodb:
 * `mysql_<short>_<metric>` with short = `status`, `var` or `innodb`, sanitized and
 * lowercased, e.g. `mysql_var_max_connections`. Undefined for any other domain (sonde's
 * own domains go through {@link translateSonde}).
 */
export function chronosphereName(domain: string, metric: string): string | undefined {
  const short = CHRONOSPHERE_SHORT[domain];
  return short === undefined ? undefined : sanitize(`mysql_${short}_${metric}`);
}

/** True for the domains named by sonde-names.ts (not status.global, var.global, innodb, exporter.*). */
export function isSondePromDomain(domain: string): boolean {
  return SONDE_DOMAINS.has(domain);
}

/**
 * sonde's own domains only, with sonde-names.ts's names, labels and units (cached like the
 * other translators); any other domain gives nothing. The chronosphere sink uses it.
 */
export const translateSonde: (domain: string, values: readonly MetricValue[]) => PromSample[] = (() => {
  const translate = makeTranslator({});
  return (domain: string, values: readonly MetricValue[]) =>
    SONDE_DOMAINS.has(domain) ? translate(domain, values) : [];
})();

// ---- mysqld_exporter's text-valued families ---------------------------------------------

/**
 * The text (non-numeric) global variables and status values mysqld_exporter turns into
 * info families, lowercase names. status.global and var.global keep them when they read for the exporter.
 */
export const TEXT_VARIABLES: readonly string[] = [
  'innodb_version',
  'version',
  'version_comment',
  'transaction_isolation',
  'tx_isolation',
  'wsrep_cluster_name',
  'wsrep_provider_options',
];
export const TEXT_STATUS: readonly string[] = [
  'wsrep_local_state_uuid',
  'wsrep_cluster_state_uuid',
  'wsrep_provider_version',
  'wsrep_evs_repl_latency',
];

/** `wsrep_evs_repl_latency` (`min/avg/max/stdev/sample size`) as mysqld_exporter's families. */
const EVS_LATENCY: ReadonlyArray<[string, string]> = [
  ['min_seconds', 'PXC/Galera group communication latency. Min value.'],
  ['avg_seconds', 'PXC/Galera group communication latency. Avg value.'],
  ['max_seconds', 'PXC/Galera group communication latency. Max value.'],
  ['stdev', 'PXC/Galera group communication latency. Standard Deviation.'],
  ['sample_size', 'PXC/Galera group communication latency. Sample Size.'],
];

/**
 * `mysql_galera_evs_repl_latency_*` from `wsrep_evs_repl_latency` (five numbers separated
 * by `/`): nothing unless there are exactly five and each is a number.
 */
function evsLatencySamples(text: string): PromSample[] {
  const parts = text.split('/');
  if (text === '' || parts.length !== EVS_LATENCY.length) return [];
  const values = parts.map((p) => (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(p) ? Number(p) : NaN));
  if (values.some((n) => Number.isNaN(n))) return [];
  return EVS_LATENCY.map(([name, help], i) =>
    sample(`mysql_galera_evs_repl_latency_${name}`, help, 'gauge', values[i] ?? 0),
  );
}

/** `gcache.size = 128M;` in wsrep_provider_options → bytes (0 when absent), as mysqld_exporter. */
export function gcacheSizeBytes(options: string): number {
  const m = /gcache\.size = (\d+)([MG]?);/.exec(options);
  if (m === null) return 0;
  const n = Number(m[1]);
  return m[2] === 'G' ? n * 1024 * 1024 * 1024 : m[2] === 'M' ? n * 1024 * 1024 : n;
}

/**
 * What mysqld_exporter's global_variables collector derives from text variables:
 * `mysql_version_info` (always), `mysql_transaction_isolation`, `mysql_galera_variables_info`
 * and `mysql_galera_gcache_size_bytes` (when their variable is set).
 */
export function variablesInfoSamples(text: Readonly<Record<string, string>>): PromSample[] {
  const out: PromSample[] = [
    sample('mysql_version_info', 'MySQL version and distribution.', 'gauge', 1, {
      innodb_version: text.innodb_version ?? '',
      version: text.version ?? '',
      version_comment: text.version_comment ?? '',
    }),
  ];
  const isolation = text.transaction_isolation || text.tx_isolation || '';
  if (isolation !== '')
    out.push(
      sample('mysql_transaction_isolation', 'MySQL transaction isolation.', 'gauge', 1, { level: isolation }),
    );
  const cluster = text.wsrep_cluster_name ?? '';
  if (cluster !== '') {
    out.push(
      sample('mysql_galera_variables_info', 'PXC/Galera variables information.', 'gauge', 1, {
        wsrep_cluster_name: cluster,
      }),
    );
  }
  const options = text.wsrep_provider_options ?? '';
  if (options !== '')
    out.push(
      sample('mysql_galera_gcache_size_bytes', 'PXC/Galera gcache size.', 'gauge', gcacheSizeBytes(options)),
    );
  return out;
}

/**
 * mysqld_exporter's global_status text families on a Galera node: `mysql_galera_status_info`
 * and `mysql_galera_evs_repl_latency_*`.
 */
export function statusInfoSamples(text: Readonly<Record<string, string>>): PromSample[] {
  const uuid = text.wsrep_local_state_uuid ?? '';
  const out = evsLatencySamples(text.wsrep_evs_repl_latency ?? '');
  if (uuid === '') return out;
  return [
    sample('mysql_galera_status_info', 'PXC/Galera status information.', 'gauge', 1, {
      wsrep_local_state_uuid: uuid,
      wsrep_cluster_state_uuid: text.wsrep_cluster_state_uuid ?? '',
      wsrep_provider_version: text.wsrep_provider_version ?? '',
    }),
    ...out,
  ];
}
