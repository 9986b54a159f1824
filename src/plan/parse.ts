/**
 * Plan parsing and validation.
 *
 * Parsing is lenient, like Blip's non-strict YAML decoding: unknown keys are ignored (with
 * a warning naming the file, line and key, and the key meant when it is a typo), an empty
 * document is a plan with zero levels, and a domain written without a body
 * (`size.database:`) is an empty domain. Everything that can be wrong with the *values* is
 * left to validation, which names the line of each problem when the plan came from text.
 */
import { LineCounter, isMap, isScalar, isSeq, parseDocument } from 'yaml';
import type { CollectorHelp } from '../core/collector.js';
import { SondeError } from '../core/errors.js';
import type { DomainPlan, Level, Plan } from '../core/plan.js';
import { formatDuration, parseDuration } from '../util/duration.js';
import { UnsetVariableError, interpolateEnv } from '../util/interpolate.js';
import { didYouMean } from '../util/suggest.js';
import { MAX_UNION_LEVELS, unionLevelCount } from './schedule.js';

/**
 * Any plan problem: a YAML document that is not a plan, a failed validation (one or many
 * lines), a plan table that cannot be read, or a failed lookup. Code `PLAN_INVALID`.
 */
export class PlanError extends SondeError {
  /** The individual problems; one entry unless this is an aggregate validation error. */
  readonly errors: string[];
  constructor(message: string, options?: { cause?: unknown; errors?: string[] }) {
    super('PLAN_INVALID', message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'PlanError';
    this.errors = options?.errors ?? [message];
  }
}

/**
 * The sizes a plan may have. Real plans are a few kilobytes with a handful of levels; the
 * limits keep a hostile or generated plan from holding the process for minutes or
 * gigabytes. Every limit is checked before the work it bounds.
 */
export const PLAN_LIMITS = {
  /** a plan file or plan table row, in bytes (1 MiB) */
  bytes: 1024 * 1024,
  /** levels per plan */
  levels: 1000,
  /** domains per level */
  domains: 1000,
  /** metric names per domain of a level */
  metrics: 10_000,
} as const;

/** The message for a plan text over PLAN_LIMITS.bytes. */
export function tooBig(bytes: number): string {
  return `${bytes} bytes, more than the limit of ${PLAN_LIMITS.bytes} (1 MiB)`;
}

/** What parsePlan reports besides the plan: warnings for keys and metrics it ignores. */
export interface PlanParseOptions {
  /** Called once per warning: `<source>: line <n>: …`. */
  warn?: (message: string) => void;
  /** The collectors' help, to check metric names against a domain's declared metrics. */
  help?: (domain: string) => CollectorHelp | undefined;
}

/** Line numbers of a parsed plan's parts (`level`, `level/domain`, `level/domain/options.key`). */
const LINES = new WeakMap<Plan, Map<string, number>>();

/** `line <n>: ` for a part of a plan parsed from text, else ''. */
function lineOf(plan: Plan, part: string): string {
  const n = LINES.get(plan)?.get(part);
  return n === undefined ? '' : `line ${n}: `;
}

/** The keys a level and a domain body may have. */
const LEVEL_KEYS = ['freq', 'collect'];
const DOMAIN_KEYS = ['metrics', 'options', 'errors'];

/** Where a parse is: its line counter, the parts' lines, and the warnings' sink. */
interface ParseContext {
  source: string;
  lines: LineCounter;
  parts: Map<string, number>;
  opts: PlanParseOptions;
}

/** The 1-based line of a YAML node, or undefined. */
function nodeLine(ctx: ParseContext, node: unknown): number | undefined {
  const range = (node as { range?: [number, number, number] } | null)?.range;
  return range === undefined ? undefined : ctx.lines.linePos(range[0]).line;
}

/** Warn about each key of a mapping that is not one of `known`. */
function warnUnknownKeys(ctx: ParseContext, node: unknown, path: string, known: readonly string[]): void {
  if (!isMap(node) || ctx.opts.warn === undefined) return;
  for (const pair of node.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '';
    if (known.includes(key)) continue;
    const line = nodeLine(ctx, pair.key);
    ctx.opts.warn(
      `${ctx.source}: ${line === undefined ? '' : `line ${line}: `}unknown key ${path}.${key}${didYouMean(key, known)}, ignored`,
    );
  }
}

/** Metric names the domain's help matches: its declared names, `pN` standing for p50, p999… */
function knownMetric(names: readonly string[], metric: string): boolean {
  const m = metric.toLowerCase();
  return names.some((n) => n === m || (n === 'pn' && /^p\d+$/.test(m)));
}

/** Warn about metric names a domain that declares its metrics does not have. */
function warnUnknownMetrics(
  ctx: ParseContext,
  node: unknown,
  at: string,
  domain: string,
  dp: DomainPlan,
): void {
  const help = ctx.opts.help?.(domain);
  if (ctx.opts.warn === undefined || help === undefined || help.metrics.length === 0) return;
  const names = help.metrics.map((m) => m.name.toLowerCase());
  const items = isMap(node) ? node.get('metrics', true) : undefined;
  dp.metrics.forEach((metric, i) => {
    if (metric === '' || knownMetric(names, metric)) return;
    const line = nodeLine(ctx, isSeq(items) ? items.items[i] : undefined);
    ctx.opts.warn?.(
      `${ctx.source}: ${line === undefined ? '' : `line ${line}: `}${at}: unknown metric ${metric} for domain ${domain}${didYouMean(metric, names)}; it has: ${names.join(', ')}`,
    );
  });
}

/** Plans may only list metric names made of these characters. */
export const METRIC_NAME = /^[a-zA-Z0-9_-]*$/;

/** The text of a scalar as written (so `0.10` stays `0.10` and `yes` stays `yes`). */
function scalarText(node: unknown, what: string): string | undefined {
  if (node === null || node === undefined) return undefined;
  if (!isScalar(node))
    throw new PlanError(`${what}: expected a value, got a ${isSeq(node) ? 'list' : 'mapping'}`);
  if (node.value === null || node.value === undefined) return undefined;
  if (typeof node.source === 'string') return node.source;
  const v: unknown = node.value;
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'
    ? String(v)
    : JSON.stringify(v);
}

function keyText(node: unknown, where: string): string {
  return scalarText(node, `${where}: key`) ?? '';
}

/** Iterate a YAML mapping as [key, value] pairs; null / empty → no pairs; a key twice fails. */
function mapPairs(node: unknown, what: string): [string, unknown][] {
  if (node === null || node === undefined) return [];
  if (isScalar(node) && (node.value === null || node.value === '')) return [];
  if (!isMap(node)) throw new PlanError(`${what}: expected a mapping`);
  const seen = new Set<string>();
  return node.items.map((pair) => {
    const key = keyText(pair.key, what);
    // Checked here with a set: the YAML library's own check compares every key with every
    // earlier one, which is quadratic in the number of levels.
    if (seen.has(key)) throw new PlanError(`${what}: duplicate key ${key}`);
    seen.add(key);
    return [key, pair.value];
  });
}

function stringMap(node: unknown, what: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of mapPairs(node, what)) out[k] = scalarText(v, `${what}.${k}`) ?? '';
  return out;
}

function stringList(node: unknown, what: string, limit: number, noun: string): string[] {
  if (node === null || node === undefined) return [];
  if (isScalar(node) && node.value === null) return [];
  if (!isSeq(node)) throw new PlanError(`${what}: expected a list`);
  if (node.items.length > limit) {
    throw new PlanError(`${what}: ${node.items.length} ${noun}, more than the limit of ${limit}`);
  }
  return node.items.map((item, i) => scalarText(item, `${what}[${i}]`) ?? '');
}

/** The keys of a level or domain body (unknown keys are simply never asked for). */
function fields(node: unknown, what: string): Map<string, unknown> {
  return new Map<string, unknown>(isMap(node) ? mapPairs(node, what) : []);
}

function parseDomain(node: unknown, where: string): DomainPlan {
  if (node !== null && node !== undefined && !isMap(node) && !(isScalar(node) && node.value === null)) {
    throw new PlanError(`${where}: expected a mapping`);
  }
  const f = fields(node, where);
  return {
    metrics: stringList(f.get('metrics'), `${where}: metrics`, PLAN_LIMITS.metrics, 'metrics'),
    options: stringMap(f.get('options'), `${where}: options`),
    errors: stringMap(f.get('errors'), `${where}: errors`),
  };
}

/** Note the lines of a domain and its options, and warn about what it ignores. */
function inspectDomain(
  ctx: ParseContext,
  level: string,
  domain: string,
  node: unknown,
  dp: DomainPlan,
): void {
  warnUnknownKeys(ctx, node, `${level}.collect.${domain}`, DOMAIN_KEYS);
  warnUnknownMetrics(ctx, node, `at ${level}/${domain}`, domain, dp);
  const options = isMap(node) ? node.get('options', true) : undefined;
  if (!isMap(options)) return;
  for (const pair of options.items) {
    const line = nodeLine(ctx, pair.key);
    if (line !== undefined && isScalar(pair.key))
      ctx.parts.set(`${level}/${domain}/options.${String(pair.key.value)}`, line);
  }
}

/** Parse a freq text into ms; NaN when it is missing or does not parse (validation says why). */
function freqMs(freq: string): number {
  if (freq === '') return NaN;
  try {
    return parseDuration(freq);
  } catch {
    return NaN;
  }
}

function parseLevel(name: string, node: unknown, ctx?: ParseContext): Level {
  // A level with a null body crashes Blip; here it is a level without freq, which
  // validation reports as `at <level>: freq not set (...)` (sonde's choice).
  if (node !== null && node !== undefined && !isMap(node) && !(isScalar(node) && node.value === null)) {
    throw new PlanError(`at ${name}: expected a mapping with freq and collect`);
  }
  const f = fields(node, `at ${name}`);
  const freq = scalarText(f.get('freq'), `at ${name}: freq`) ?? '';
  const collect: Record<string, DomainPlan> = {};
  const domains = mapPairs(f.get('collect'), `at ${name}: collect`);
  if (domains.length > PLAN_LIMITS.domains) {
    throw new PlanError(
      `at ${name}: collect: ${domains.length} domains, more than the limit of ${PLAN_LIMITS.domains}`,
    );
  }
  for (const [domain, body] of domains) {
    collect[domain] = parseDomain(body, `at ${name}/${domain}`);
  }
  if (ctx !== undefined) {
    warnUnknownKeys(ctx, node, name, LEVEL_KEYS);
    const c = isMap(node) ? node.get('collect', true) : undefined;
    for (const pair of isMap(c) ? c.items : []) {
      const domain = isScalar(pair.key) ? String(pair.key.value) : '';
      const line = nodeLine(ctx, pair.key);
      if (line !== undefined) ctx.parts.set(`${name}/${domain}`, line);
      const dp = collect[domain];
      if (dp !== undefined) inspectDomain(ctx, name, domain, pair.value, dp);
    }
  }
  return { name, freq, freqMs: freqMs(freq), collect };
}

/** First line of a YAML library message, without the trailing source excerpt. */
function yamlMessage(message: string): string {
  const first = message.split('\n')[0] ?? message;
  return first.replace(/:\s*$/, '');
}

/**
 * Parse plan YAML (a plan file or a plan table row) into a Plan named `name`. Level names
 * come from the mapping keys. Throws PlanError when the text is not YAML or not shaped like
 * a plan; does not validate values (see validatePlan). Keys it ignores, and metric names a
 * domain does not declare (with `opts.help`), go to `opts.warn`; validation messages about
 * the plan name their line.
 */
export function parsePlan(name: string, source: string, yamlText: string, opts: PlanParseOptions = {}): Plan {
  const bytes = Buffer.byteLength(yamlText, 'utf8');
  if (bytes > PLAN_LIMITS.bytes) throw new PlanError(tooBig(bytes));
  const lines = new LineCounter();
  const doc = parseDocument(yamlText, { prettyErrors: false, uniqueKeys: false, lineCounter: lines });
  const first = doc.errors[0];
  if (first) throw new PlanError(yamlMessage(first.message));
  const levels: Record<string, Level> = {};
  const pairs = mapPairs(doc.contents, 'plan');
  if (pairs.length > PLAN_LIMITS.levels) {
    throw new PlanError(`plan: ${pairs.length} levels, more than the limit of ${PLAN_LIMITS.levels}`);
  }
  const ctx: ParseContext = { source, lines, parts: new Map(), opts };
  for (const [levelName, body] of pairs) {
    levels[levelName] = parseLevel(levelName, body, ctx);
  }
  const plan: Plan = { name, source, levels };
  LINES.set(plan, ctx.parts);
  return plan;
}

/** Levels in ascending freq order; levels without a usable freq first, in written order. */
function levelsByFreq(plan: Plan): Level[] {
  const key = (l: Level): number => (Number.isFinite(l.freqMs) ? l.freqMs : -Infinity);
  return Object.values(plan.levels).sort((a, b) => key(a) - key(b));
}

/**
 * The per-plan checks, first failure thrown as a PlanError with Blip's text
 * (without the `invalid plan: <plan>: ` prefix). Levels are checked in ascending freq order
 * so the reported error does not depend on map order; `0s` (or a negative freq) is rejected.
 */
export function validatePlan(plan: Plan): void {
  const seen = new Map<number, string>(); // freq in ns → first level with it
  for (const level of levelsByFreq(plan)) {
    const at = `at ${level.name}`;
    if (level.freq === '') throw new PlanError(`${at}: freq not set (Go time duration string required)`);
    let ms: number;
    try {
      ms = parseDuration(level.freq);
    } catch (err) {
      throw new PlanError(`${at}: invalid freq: ${level.freq}: ${(err as Error).message}`);
    }
    if (!(ms > 0)) throw new PlanError(`${at}: invalid freq: ${level.freq}: must be greater than zero`);
    const ns = Math.round(ms * 1e6);
    const other = seen.get(ns);
    if (other !== undefined) {
      throw new PlanError(
        `${at}: duplicate freq: ${level.freq} (${formatDuration(ms)}): first seen at ${other}`,
      );
    }
    seen.set(ns, level.name);
    for (const [domain, dp] of Object.entries(level.collect)) {
      for (const metric of dp.metrics) {
        if (!METRIC_NAME.test(metric)) {
          throw new PlanError(
            `${at}/${domain}: invalid metric: ${metric} (does not match /^[a-zA-Z0-9_-]*$/)`,
          );
        }
      }
    }
  }
  if (unionLevelCount(Object.values(plan.levels).map((l) => l.freqMs)) === undefined) {
    throw new PlanError(
      `levels whose freqs do not divide each other are due together in more than ${MAX_UNION_LEVELS} combinations; use freqs that divide each other`,
    );
  }
}

/** Each `${ENV}` in a domain option value must name a set variable (or give a default). */
function checkEnv(plan: Plan, env: NodeJS.ProcessEnv, out: string[]): void {
  for (const level of levelsByFreq(plan)) {
    for (const [domain, dp] of Object.entries(level.collect)) {
      for (const [key, value] of Object.entries(dp.options)) {
        try {
          interpolateEnv(value, env);
        } catch (err) {
          if (!(err instanceof UnsetVariableError)) throw err;
          out.push(
            `invalid plan: ${plan.name}: at ${level.name}/${domain}: key options.${key}: ${err.message}`,
          );
        }
      }
    }
  }
}

const PRINT_DOMAINS = "(run 'sonde --print-domains' to list collectors and options)";

/** The loader checks of one plan against the collectors' help; problems appended to `out`. */
function checkDomains(
  plan: Plan,
  getHelp: (domain: string) => CollectorHelp | undefined,
  out: string[],
  domains: readonly string[],
): void {
  for (const level of levelsByFreq(plan)) {
    for (const [domain, dp] of Object.entries(level.collect)) {
      const at = `${level.name}/${domain}`;
      const prefix = `invalid plan: ${plan.name}: ${lineOf(plan, at)}at ${at}: `;
      const help = getHelp(domain);
      if (!help) {
        out.push(
          `${prefix}invalid domain: ${domain}: no such domain${didYouMean(domain, domains)} ${PRINT_DOMAINS}`,
        );
        continue;
      }
      const given = Object.keys(dp.options);
      if (given.length === 0) continue;
      if (help.options.length === 0) {
        // Blip prints the number of declared options (always 0); the given count helps more.
        out.push(`${prefix}collector has no options but ${given.length} given`);
        continue;
      }
      for (const [key, value] of Object.entries(dp.options)) {
        const opt = help.options.find((o) => o.name === key);
        const where = `invalid plan: ${plan.name}: ${lineOf(plan, `${at}/options.${key}`) || lineOf(plan, at)}at ${at}: `;
        if (!opt) {
          const names = help.options.map((o) => o.name);
          out.push(`${where}unknown option: ${key}${didYouMean(key, names)} ${PRINT_DOMAINS}`);
          continue;
        }
        const allowed = opt.values ? Object.keys(opt.values) : [];
        if (allowed.length > 0 && !allowed.includes(value)) {
          out.push(
            `${where}invalid value for option ${key}: ${value}${didYouMean(value, allowed)} ${PRINT_DOMAINS}`,
          );
        }
      }
    }
  }
}

/** `<n> plan validation errors:` then one error per line. */
export function aggregateMessage(errors: string[]): string {
  return [`${errors.length} plan validation errors:`, ...errors].join('\n');
}

/**
 * The loader checks over newly read plans: each plan's own checks
 * (validatePlan), then every domain against its collector's help (known domain, known
 * options, allowed values), then every `${ENV}` in option values against `env`. All problems are collected and thrown as one PlanError whose
 * message is `<n> plan validation errors:` followed by one line per problem.
 */
export function validatePlans(
  plans: Plan[],
  getHelp: (domain: string) => CollectorHelp | undefined,
  env: NodeJS.ProcessEnv = process.env,
  domains: readonly string[] = [],
): void {
  const errors: string[] = [];
  for (const plan of plans) {
    try {
      validatePlan(plan);
    } catch (err) {
      errors.push(`invalid plan: ${plan.name}: ${(err as Error).message}`);
      continue;
    }
    checkDomains(plan, getHelp, errors, domains);
    checkEnv(plan, env, errors);
  }
  if (errors.length > 0) throw new PlanError(aggregateMessage(errors), { errors });
}
