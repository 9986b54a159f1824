/**
 * Shape checks of what a plugin registers: the same types the built-in collectors, sinks and
 * translators have, checked at run time because a plugin is plain JavaScript. Each check
 * returns the first problem as text (`help.options[0].default: expected string`), or
 * undefined when the registration is sound.
 */
import * as z from 'zod';
import { MetricType } from '../core/metrics.js';

/** A domain name: lowercase words joined by dots (`custom.queue`, `innodb.buffer-pool`). */
export const DOMAIN_NAME = /^[a-z][a-z0-9_-]*(\.[a-z0-9_-]+)*$/;
/** A sink name: one lowercase word (`jsonl`, `prom-pushgateway`). */
export const SINK_NAME = /^[a-z][a-z0-9_-]*$/;
/** A translator name: any text without blanks. */
export const TRANSLATOR_NAME = /^\S+$/;
/** Domains under this prefix carry Prometheus samples (the exporter's); not for plugins. */
export const RESERVED_DOMAIN_PREFIX = 'exporter.';

const nonEmpty = z.string().min(1, 'empty');
const described = { description: z.string() };
const keyed = z.object({ key: nonEmpty, ...described });
const metricTypes = Object.values(MetricType);

const helpSchema = z.object({
  domain: nonEmpty,
  description: nonEmpty,
  sources: z.array(z.string()),
  options: z.array(
    z.object({
      name: nonEmpty,
      ...described,
      default: z.string(),
      values: z.record(z.string(), z.string()).optional(),
    }),
  ),
  errors: z.array(z.object({ name: nonEmpty, ...described, errnos: z.array(z.number().int()).optional() })),
  groups: z.array(keyed),
  meta: z.array(keyed),
  metrics: z.array(
    z.object({
      name: nonEmpty,
      type: z.number().refine((t) => (metricTypes as number[]).includes(t), {
        message: `not a metric type (${metricTypes.join(', ')})`,
      }),
      ...described,
    }),
  ),
});

/** `help.options[0].default`. */
function pathText(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `${out === '' ? '' : '.'}${String(p)}`;
  return out;
}

/** The first zod problem as one line. */
function firstIssue(err: z.ZodError, prefix: string): string {
  const issue = err.issues[0];
  if (issue === undefined) return `${prefix}: invalid`;
  const at = pathText([prefix, ...issue.path]);
  if (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) return `${at} is missing`;
  const msg = issue.message.replace(/^Invalid input: /, '');
  return `${at}: ${msg}`;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** Narrow an unknown registration to a collector's, or say why not. */
export function collectorProblem(reg: unknown): string | undefined {
  if (!isObject(reg)) return 'collector registration is not an object ({ help, create })';
  const help = reg.help;
  const domain = isObject(help) && typeof help.domain === 'string' ? help.domain : '';
  const what = domain === '' ? 'collector' : `collector ${domain}`;
  if (!isObject(help)) return `${what}: help is missing`;
  const parsed = helpSchema.safeParse(help);
  if (!parsed.success) return `${what}: ${firstIssue(parsed.error, 'help')}`;
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
