/**
 * Shape checks of what a plugin registers: the same types the built-in collectors, sinks and
 * translators have, checked at run time because a plugin is plain JavaScript. Each check
 * returns the first problem as text (`help.options[0].default: expected string`), or
 * undefined when the registration is sound.
 */
import { MetricType } from '../core/metrics.js';

/** A domain name: lowercase words joined by dots (`custom.queue`, `innodb.buffer-pool`). */
export const DOMAIN_NAME = /^[a-z][a-z0-9_-]*(\.[a-z0-9_-]+)*$/;
/** A sink name: one lowercase word (`jsonl`, `prom-pushgateway`). */
export const SINK_NAME = /^[a-z][a-z0-9_-]*$/;
/** A translator name: any text without blanks. */
export const TRANSLATOR_NAME = /^\S+$/;
/** Domains under this prefix carry Prometheus samples (the exporter's); not for plugins. */
export const RESERVED_DOMAIN_PREFIX = 'exporter.';

const metricTypes: number[] = Object.values(MetricType);

/** `help.options[0].default`. */
function pathText(path: readonly (string | number)[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `${out === '' ? '' : '.'}${p}`;
  return out;
}

/** What a value is, as a problem names it: `number`, `null`, `array`, `NaN`, a class name. */
function received(v: unknown): string {
  if (typeof v === 'number') return Number.isNaN(v) ? 'NaN' : Number.isFinite(v) ? 'number' : String(v);
  if (typeof v !== 'object') return typeof v;
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (Object.getPrototypeOf(v) !== Object.prototype && 'constructor' in v && v.constructor) {
    return String((v.constructor as { name?: unknown }).name);
  }
  return 'object';
}

/** `help.x is missing` for an undefined value, else `help.x: expected string, received number`. */
function wrongType(path: readonly (string | number)[], expected: string, v: unknown): string {
  const got = received(v);
  return got === 'undefined'
    ? `${pathText(path)} is missing`
    : `${pathText(path)}: expected ${expected}, received ${got}`;
}

/** A check of one value at `path`: the first problem, or undefined. */
type Check = (v: unknown, path: readonly (string | number)[]) => string | undefined;

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

const text: Check = (v, path) => (typeof v === 'string' ? undefined : wrongType(path, 'string', v));
const nonEmpty: Check = (v, path) => text(v, path) ?? (v === '' ? `${pathText(path)}: empty` : undefined);

function integer(v: unknown, path: readonly (string | number)[]): string | undefined {
  if (typeof v !== 'number' || !Number.isFinite(v)) return wrongType(path, 'number', v);
  if (!Number.isInteger(v)) return wrongType(path, 'int', v);
  if (v > Number.MAX_SAFE_INTEGER)
    return `${pathText(path)}: Too big: expected int to be <=${Number.MAX_SAFE_INTEGER}`;
  if (v < Number.MIN_SAFE_INTEGER)
    return `${pathText(path)}: Too small: expected int to be >=${Number.MIN_SAFE_INTEGER}`;
  return undefined;
}

const metricType: Check = (v, path) => {
  if (typeof v !== 'number' || !Number.isFinite(v)) return wrongType(path, 'number', v);
  return metricTypes.includes(v)
    ? undefined
    : `${pathText(path)}: not a metric type (${metricTypes.join(', ')})`;
};

/** An object's listed keys, each checked in order (other keys are ignored). */
function object(shape: Record<string, Check>): Check {
  return (v, path) => {
    if (!isObject(v)) return wrongType(path, 'object', v);
    for (const [key, check] of Object.entries(shape)) {
      const problem = check(v[key], [...path, key]);
      if (problem !== undefined) return problem;
    }
    return undefined;
  };
}

function array(item: Check): Check {
  return (v, path) => {
    if (!Array.isArray(v)) return wrongType(path, 'array', v);
    for (let i = 0; i < v.length; i++) {
      const problem = item(v[i] as unknown, [...path, i]);
      if (problem !== undefined) return problem;
    }
    return undefined;
  };
}

const optional =
  (check: Check): Check =>
  (v, path) =>
    v === undefined ? undefined : check(v, path);

/** A map of strings made by `{}` (or with no prototype). */
const stringMap: Check = (v, path) => {
  const plain =
    isObject(v) &&
    (typeof v.constructor !== 'function' ||
      (isObject(v.constructor.prototype) && Object.hasOwn(v.constructor.prototype, 'isPrototypeOf')));
  if (!plain) return wrongType(path, 'record', v);
  for (const key of Object.keys(v)) {
    if (key === '__proto__') continue;
    const problem = text(v[key], [...path, key]);
    if (problem !== undefined) return problem;
  }
  return undefined;
};

const described = { description: text };
const keyed = object({ key: nonEmpty, ...described });

/** The help of a collector, as the built-in ones have it. */
const helpCheck = object({
  domain: nonEmpty,
  description: nonEmpty,
  sources: array(text),
  options: array(object({ name: nonEmpty, ...described, default: text, values: optional(stringMap) })),
  errors: array(object({ name: nonEmpty, ...described, errnos: optional(array(integer)) })),
  groups: array(keyed),
  meta: array(keyed),
  metrics: array(object({ name: nonEmpty, type: metricType, ...described })),
});

/** Narrow an unknown registration to a collector's, or say why not. */
export function collectorProblem(reg: unknown): string | undefined {
  if (!isObject(reg)) return 'collector registration is not an object ({ help, create })';
  const help = reg.help;
  const domain = isObject(help) && typeof help.domain === 'string' ? help.domain : '';
  const what = domain === '' ? 'collector' : `collector ${domain}`;
  if (!isObject(help)) return `${what}: help is missing`;
  const problem = helpCheck(help, ['help']);
  if (problem !== undefined) return `${what}: ${problem}`;
  if (!DOMAIN_NAME.test(domain)) {
    return `${what}: help.domain: not a domain name (lowercase words joined by dots, e.g. custom.queue)`;
  }
  if (domain.startsWith(RESERVED_DOMAIN_PREFIX)) {
    return `${what}: help.domain: ${RESERVED_DOMAIN_PREFIX}* domains are reserved for the exporter's`;
  }
  if (typeof reg.create !== 'function') return `${what}: create is not a function`;
  return undefined;
}

/** Narrow an unknown registration to a sink's, or say why not. */
export function sinkProblem(reg: unknown): string | undefined {
  if (!isObject(reg)) return 'sink registration is not an object ({ name, description, create })';
  const name = typeof reg.name === 'string' ? reg.name : '';
  const what = name === '' ? 'sink' : `sink ${name}`;
  if (reg.name === undefined) return 'sink: name is missing';
  if (!SINK_NAME.test(name)) return `${what}: name: not a sink name (one lowercase word, e.g. jsonl)`;
  if (typeof reg.description !== 'string' || reg.description === '') return `${what}: description is missing`;
  if (typeof reg.create !== 'function') return `${what}: create is not a function`;
  return undefined;
}

/** Check a translator's name and function, or say why not. */
export function translatorProblem(name: unknown, fn: unknown): string | undefined {
  if (typeof name !== 'string' || !TRANSLATOR_NAME.test(name)) {
    return 'translator: name must be a non-empty string without blanks';
  }
  if (typeof fn !== 'function') return `translator ${name}: not a function`;
  return undefined;
}
