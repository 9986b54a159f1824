/**
 * Finds, in Markdown, every name the code must know and reports those it does not: config
 * keys, HTTP endpoints, status keys and metric domains. What the code knows comes in as a
 * `Known` (built from the code itself by docs-vs-code.test.ts); this file only reads text.
 *
 * What counts as a reference (code blocks are left out, except the YAML checks below):
 *
 * - a back-quoted dotted name whose first part is a config section, a domain's first part
 *   or a mysqld_exporter flag's first part (`api.read-only`, `repl.lag.current`,
 *   `collect.info_schema.tables`): it must be a config key (from the top level or inside a
 *   section), a domain, a domain and one of its metrics, or a mysqld_exporter flag. `*` and
 *   `<name>` stand for any part; `exporter.flags.<flag>` must name a flag, `sinks.<sink>` a
 *   sink. `config.<key>` is a config key (as error messages write it), and
 *   `<prefix>.<domain>.<metric>` a metric name behind a sink's prefix;
 * - a back-quoted `METHOD /path` (query left out): a route of that method on one of sonde's
 *   listeners; a back-quoted bare `/path` whose first part is one of the routes' first parts:
 *   a route of any method;
 * - a back-quoted `error:…` or `domain:…`, and a name written as "status key `x`" or
 *   "`x` status (key)": a key of the status catalogue, or a catalogue pattern (`error:<domain>`,
 *   `error:<sink>-send`, …) filled with a known domain or sink;
 * - a row of a `| Key |` table under a heading that names config sections in back-quotes
 *   (config.md's key reference): the key inside one of those sections; a row of a `| Sink |`
 *   table: a registered sink;
 * - a ```yaml block that is a plan (levels with `collect`): its domains; one whose top-level
 *   keys are all config sections: every key path, through the schema.
 *
 * A name that is none of these is left alone: the rules aim at few false reports, and the
 * test's exception list (for names that are right but outside these catalogues) stays short.
 */
import { parse as parseYaml } from 'yaml';

/** What a config key holds: a section (object of fixed keys), a map, a list or a value. */
export type KeyKind = 'section' | 'map' | 'list' | 'value';

export interface Route {
  method: string;
  path: string;
  /** Every path under `path` (`/ui/`). */
  prefix?: boolean;
}

/** What the code knows, as the test builds it from the code. */
export interface Known {
  /** What a key path from the config's top level names, or undefined when it is no key. */
  configKey(path: readonly string[]): KeyKind | undefined;
  /** What a key path inside some section of the config names, or undefined. */
  configKeyAnywhere(path: readonly string[]): KeyKind | undefined;
  configSections: ReadonlySet<string>;
  /** Domain → the metric names its help lists (empty: any metric, e.g. `status.global`). */
  domains: ReadonlyMap<string, readonly string[]>;
  /** Domain → its option names. */
  domainOptions: ReadonlyMap<string, readonly string[]>;
  /** mysqld_exporter's flags, without `--`. */
  exporterFlags: ReadonlySet<string>;
  sinks: ReadonlySet<string>;
  routes: readonly Route[];
  /** The status catalogue: literal keys and patterns with `<domain>` / `<sink>`. */
  statusKeys: ReadonlySet<string>;
  /** Other dotted names the code emits: the otlp sink's OpenTelemetry metric and resource names. */
  emittedNames: ReadonlySet<string>;
}

export type Kind = 'config key' | 'endpoint' | 'status key' | 'domain';

export interface Finding {
  file: string;
  line: number;
  kind: Kind;
  text: string;
  why: string;
}

/** Told of every reference checked. */
export type Counter = (kind: Kind) => void;

/** One back-quoted span with where it stands. */
interface Span {
  text: string;
  line: number;
  offset: number;
}

/** The text with every fenced code block blanked (its lines kept, so line numbers hold). */
function prose(text: string): string {
  let inFence = false;
  return text
    .split('\n')
    .map((l) => {
      if (/^\s*```/.test(l)) {
        inFence = !inFence;
        return '';
      }
      return inFence ? '' : l;
    })
    .join('\n');
}

function lineAt(text: string, offset: number): number {
  let n = 1;
  for (let i = 0; i < offset; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

function spans(text: string): Span[] {
  return [...text.matchAll(/`([^`\n]+)`/g)].map((m) => ({
    text: m[1] ?? '',
    line: lineAt(text, m.index),
    offset: m.index,
  }));
}

const WILDCARD = /^(\*|<[^<>]+>|…)$/;

/** A name with `*` / `<x>` parts as a regular expression: each such part is one or more parts. */
function nameRegex(name: string): RegExp {
  const parts = name
    .split('.')
    .map((p) => (WILDCARD.test(p) ? '.+' : p.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')));
  return new RegExp(`^${parts.join('\\.')}$`);
}

function matchesAny(name: string, names: Iterable<string>): boolean {
  const re = nameRegex(name);
  for (const n of names) if (n === name || re.test(n)) return true;
  return false;
}

/** A dotted name a reader may take for a config key, a domain or a flag. */
const DOTTED = /^[a-z][a-z0-9_-]*(\.([a-z0-9_-]+|\*|<[a-z_-]+>))+$/;
/** A file name (`monitors.yaml`, `rds-discovery.ts`): not a reference. */
const FILE_NAME = /\.(ya?ml|json|md|ts|js|mjs|pem|txt|cnf|sock|sql|conf|service)$/;

/** First parts that make a dotted name a reference: config sections, domains, flags. */
function checkedHeads(k: Known): Set<string> {
  const heads = new Set(k.configSections);
  for (const d of k.domains.keys()) heads.add(d.split('.')[0] ?? d);
  for (const f of k.exporterFlags) if (f.includes('.')) heads.add(f.split('.')[0] ?? f);
  return heads;
}

/** Whether `name` is a domain, a domain pattern or a domain and one of its metrics. */
function isDomainName(name: string, k: Known): boolean {
  if (matchesAny(name, k.domains.keys())) return true;
  const cut = name.lastIndexOf('.');
  const domain = name.slice(0, cut);
  const metric = name.slice(cut + 1);
  const metrics = k.domains.get(domain);
  if (metrics === undefined || !/^[a-z0-9_]+$/.test(metric)) return false;
  return metrics.length === 0 || metrics.includes(metric) || metrics.some((m) => /[A-Z]/.test(m));
}

/** Why a dotted name is not known, or undefined when it is. */
function dottedProblem(name: string, k: Known): { kind: Kind; why: string } | undefined {
  const path = name.split('.');
  const flags = name.match(/(?:^|\.)exporter\.flags\.(.+)$/);
  if (flags?.[1] !== undefined) {
    if (matchesAny(flags[1], k.exporterFlags)) return undefined;
    return { kind: 'config key', why: `exporter.flags: ${flags[1]} is no mysqld_exporter flag` };
  }
  const sinkAt = path.indexOf('sinks');
  const sink = path[sinkAt + 1];
  if (sinkAt >= 0 && sink !== undefined && !WILDCARD.test(sink) && !k.sinks.has(sink))
    return { kind: 'config key', why: `no sink named ${sink}` };
  if (k.configKey(path) || k.configKeyAnywhere(path)) return undefined;
  // `config.api.bind`: a key named the way error messages name it.
  if (path[0] === 'config' && path.length > 1 && k.configKey(path.slice(1))) return undefined;
  if (isDomainName(name, k) || matchesAny(name, k.exporterFlags) || k.emittedNames.has(name))
    return undefined;
  // `mysql.status.global.queries`: a metric name behind a sink's prefix.
  if (path.length > 2 && isDomainName(path.slice(1).join('.'), k)) return undefined;
  const head = path[0] ?? '';
  const isDomainHead = [...k.domains.keys()].some((d) => d.startsWith(`${head}.`) || d === head);
  return {
    kind: isDomainHead && !k.configSections.has(head) ? 'domain' : 'config key',
    why: 'no config key, domain, domain metric or mysqld_exporter flag of that name',
  };
}

function routeMatches(r: Route, path: string): boolean {
  if (r.prefix === true) return path.startsWith(r.path) || nameRegex(path).test(r.path);
  if (r.path === path) return true;
  // `/monitors/*`, `/ui/<file>`, `/api/ui/…`: a wildcard part stands for any part.
  const want = path.split('/');
  const have = r.path.split('/');
  return want.length === have.length && want.every((p, i) => WILDCARD.test(p) || p === have[i]);
}

/** Why an endpoint is not a route, or undefined. `method` undefined: any method. */
function endpointProblem(method: string | undefined, path: string, k: Known): string | undefined {
  const m = method === 'HEAD' ? 'GET' : method;
  const routes = k.routes.filter((r) => routeMatches(r, path));
  if (routes.length === 0) return 'no listener of sonde has this path';
  if (m !== undefined && !routes.some((r) => r.method === m))
    return `the path takes ${[...new Set(routes.map((r) => r.method))].join(', ')}, not ${m}`;
  return undefined;
}

/** The path of a span that names one, without its query and a trailing `:`, or undefined. */
function endpointOf(span: string, k: Known): { method?: string; path: string } | undefined {
  const m = span.match(/^(GET|POST|HEAD|PUT|DELETE|PATCH) (\/\S*)/);
  const clean = (p: string): string => p.replace(/[?#].*$/, '').replace(/:$/, '');
  if (m?.[1] !== undefined && m[2] !== undefined) return { method: m[1], path: clean(m[2]) };
  if (!/^\/[^\s]*$/.test(span)) return undefined;
  const head = (p: string): string => p.split('/')[1] ?? '';
  const heads = new Set(k.routes.map((r) => head(r.path)).filter((h) => h !== ''));
  const path = clean(span);
  return heads.has(head(path)) ? { path } : undefined;
}

/** Why a status key is not in the catalogue, or undefined. */
function statusKeyProblem(key: string, k: Known): string | undefined {
  if (k.statusKeys.has(key) || key === 'error:' || key === 'error:*') return undefined;
  const filled = (name: string): boolean =>
    matchesAny(name, k.domains.keys()) || k.sinks.has(name) || WILDCARD.test(name);
  const err = key.match(/^error:(.+?)(-send)?$/);
  if (
    err?.[1] !== undefined &&
    (err[2] === undefined ? filled(err[1]) : k.sinks.has(err[1]) || WILDCARD.test(err[1]))
  )
    return undefined;
  const dom = key.match(/^domain:(.+)$/);
  if (dom?.[1] !== undefined && (matchesAny(dom[1], k.domains.keys()) || WILDCARD.test(dom[1])))
    return undefined;
  if (k.sinks.has(key)) return undefined;
  return 'not in the status-key catalogue (src/core/status-keys.ts)';
}

/** Status keys named as such in prose: "status key `x`", "`x` status key", "`x` status". */
function statusKeySpans(text: string): Span[] {
  const out: Span[] = [];
  for (const re of [/status keys?\s+`([^`\n]+)`/g, /`([^`\n]+)`\s+status\b/g]) {
    for (const m of text.matchAll(re))
      out.push({ text: m[1] ?? '', line: lineAt(text, m.index), offset: m.index });
  }
  return out;
}

/** The findings of the inline references of one file (see the file comment). */
function inlineFindings(file: string, text: string, k: Known, count: Counter): Finding[] {
  const out: Finding[] = [];
  const heads = checkedHeads(k);
  const add = (s: Span, kind: Kind, why: string): void => {
    out.push({ file, line: s.line, kind, text: s.text, why });
  };
  for (const s of spans(text)) {
    if (DOTTED.test(s.text) && !FILE_NAME.test(s.text) && heads.has(s.text.split('.')[0] ?? '')) {
      count(k.configSections.has(s.text.split('.')[0] ?? '') ? 'config key' : 'domain');
      const p = dottedProblem(s.text, k);
      if (p !== undefined) add(s, p.kind, p.why);
    }
    const ep = endpointOf(s.text, k);
    if (ep !== undefined) {
      count('endpoint');
      const why = endpointProblem(ep.method, ep.path, k);
      if (why !== undefined) add(s, 'endpoint', why);
    }
    if (/^(error|domain):\S*$/.test(s.text)) {
      count('status key');
      const why = statusKeyProblem(s.text, k);
      if (why !== undefined) add(s, 'status key', why);
    }
  }
  for (const s of statusKeySpans(text)) {
    if (/^(error|domain):/.test(s.text)) continue; // checked above
    count('status key');
    const why = statusKeyProblem(s.text, k);
    if (why !== undefined) add(s, 'status key', why);
  }
  return out;
}

function cells(line: string): string[] {
  return line
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((c) => c.trim());
}

/** The back-quoted names of a table cell (`a`, `b.c` → a, b.c). */
const namesIn = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');

/** The findings of `| Key |` tables under config-section headings and of `| Sink |` tables. */
function tableFindings(file: string, text: string, k: Known, count: Counter): Finding[] {
  const out: Finding[] = [];
  let sections: string[] = [];
  let header: string | undefined;
  text.split('\n').forEach((line, i) => {
    if (/^#{2,4} /.test(line)) sections = namesIn(line).filter((n) => k.configSections.has(n));
    if (!line.trim().startsWith('|')) return void (header = undefined);
    if (header === undefined) return void (header = cells(line)[0] ?? '');
    if (/^\|[-|\s:]+\|?$/.test(line.trim())) return;
    for (const name of namesIn(cells(line)[0] ?? '')) {
      const at = { file, line: i + 1, text: name };
      if (header === 'Sink' || (header === 'Key' && sections.length > 0)) count('config key');
      if (header === 'Sink' && !k.sinks.has(name))
        out.push({ ...at, kind: 'config key', why: 'no sink of that name' });
      if (header !== 'Key' || sections.length === 0) continue;
      const path = name.split('.');
      const inSection = sections.some((s) => k.configKey([s, ...path]));
      if (!inSection && !k.configKey(path))
        out.push({ ...at, kind: 'config key', why: `no key ${name} in ${sections.join(', ')}` });
    }
  });
  return out;
}

/** The findings of one plan (level → `freq`, `collect` → domain → `metrics`/`options`/`errors`). */
function planFindings(
  plan: Record<string, unknown>,
  at: Omit<Finding, 'kind' | 'text' | 'why'>,
  k: Known,
  count: Counter,
): Finding[] {
  const out: Finding[] = [];
  for (const level of Object.values(plan)) {
    const collect = (level as { collect?: unknown } | null)?.collect;
    if (collect === null || typeof collect !== 'object') continue;
    for (const [domain, spec] of Object.entries(collect)) {
      const options = k.domainOptions.get(domain);
      count('domain');
      if (options === undefined) {
        out.push({ ...at, kind: 'domain', text: domain, why: 'no registered domain of that name' });
        continue;
      }
      const given = (spec as { options?: unknown } | null)?.options;
      for (const o of given !== null && typeof given === 'object' ? Object.keys(given) : []) {
        if (!options.includes(o))
          out.push({ ...at, kind: 'domain', text: `${domain} option ${o}`, why: 'no such option' });
      }
    }
  }
  return out;
}

const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** Why a key of a map inside a config document is wrong: an unknown sink or mysqld_exporter flag. */
function mapKeyProblem(path: readonly string[], key: string, k: Known): string | undefined {
  const owner = path.at(-1);
  if (owner === 'sinks' && !k.sinks.has(key)) return `no sink named ${key}`;
  if (owner === 'flags' && path.at(-2) === 'exporter' && !k.exporterFlags.has(key))
    return `exporter.flags: ${key} is no mysqld_exporter flag`;
  return undefined;
}

/** Every key path of a config document that the schema does not have. */
function configDocFindings(
  doc: Record<string, unknown>,
  at: Omit<Finding, 'kind' | 'text' | 'why'>,
  k: Known,
  count: Counter,
): Finding[] {
  const out: Finding[] = [];
  const visit = (value: unknown, path: string[], parent: KeyKind): void => {
    if (Array.isArray(value)) return value.forEach((v) => visit(v, path, 'section'));
    if (!isMap(value)) return;
    for (const [key, v] of Object.entries(value)) {
      const p = [...path, key];
      count('config key');
      if (parent === 'map') {
        const why = mapKeyProblem(path, key, k);
        if (why !== undefined) out.push({ ...at, kind: 'config key', text: p.join('.'), why });
        continue; // a map's values are its owner's (sink options, tags, flag values)
      }
      const kind = k.configKey(p);
      if (kind === undefined)
        out.push({ ...at, kind: 'config key', text: p.join('.'), why: 'no such config key' });
      else visit(v, p, kind === 'list' ? 'section' : kind);
    }
  };
  visit(doc, [], 'section');
  return out;
}

/** The findings of the ```yaml blocks of one file: plans and config files. */
function yamlFindings(file: string, text: string, k: Known, count: Counter): Finding[] {
  const out: Finding[] = [];
  for (const m of text.matchAll(/^```ya?ml\n([\s\S]*?)^```/gm)) {
    let doc: unknown;
    try {
      doc = parseYaml(m[1] ?? '');
    } catch {
      continue; // a fragment (`…`, an indented excerpt) is not checked
    }
    if (!isMap(doc)) continue;
    const at = { file, line: lineAt(text, m.index) };
    const values = Object.values(doc);
    if (values.some((v) => isMap(v) && 'collect' in v)) out.push(...planFindings(doc, at, k, count));
    else if (Object.keys(doc).every((key) => k.configSections.has(key)))
      out.push(...configDocFindings(doc, at, k, count));
  }
  return out;
}

/**
 * Every reference of one Markdown file that the code does not know. `count` is called once
 * per reference checked, known or not (so a caller can tell that the check saw something).
 */
export function findUnknown(file: string, markdown: string, k: Known, count: Counter = () => {}): Finding[] {
  const text = prose(markdown);
  return [
    ...inlineFindings(file, text, k, count),
    ...tableFindings(file, text, k, count),
    ...yamlFindings(file, markdown, k, count),
  ];
}
