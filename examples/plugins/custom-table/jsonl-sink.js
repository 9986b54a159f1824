// @ts-check
/**
 * `jsonl`: appends one JSON line per value to the file named by its `file` option, e.g.
 *
 *     {"ts":"2025-01-01T12:00:05.000Z","monitor":"db1","plan":"queues","level":"fast",
 *      "domain":"custom.queue","metric":"depth","value":7,"type":"gauge","group":{"queue":"mail"}}
 *
 * (one line in the file). Each collection is one write, so lines of two monitors never mix.
 */
/** @import { PluginApi, SinkRegistration, Sink, Metrics } from 'sonde' */
import { appendFile } from 'node:fs/promises';
import { resolve } from 'node:path';

const OPTIONS = ['file'];

/**
 * Metric type code → name (`gauge`, `cumulative-counter`…).
 * @param {PluginApi} api
 * @returns {Map<number, string>}
 */
function typeNames(api) {
  const kebab = (/** @type {string} */ s) =>
    s.replace(/[A-Z]/g, (c, i) => `${i > 0 ? '-' : ''}${c.toLowerCase()}`);
  return new Map(Object.entries(api.MetricType).map(([name, code]) => [code, kebab(name)]));
}

/**
 * One JSON line per value of a collection.
 * @param {Metrics} m
 * @param {Map<number, string>} types
 */
function lines(m, types) {
  let out = '';
  for (const [domain, values] of Object.entries(m.values)) {
    for (const v of values) {
      const line = {
        ts: m.begin.toISOString(),
        monitor: m.monitorId,
        plan: m.plan,
        level: m.level,
        domain,
        metric: v.name,
        value: v.value,
        type: types.get(v.type) ?? String(v.type),
        ...(v.group ? { group: v.group } : {}),
        ...(v.meta ? { meta: v.meta } : {}),
      };
      out += `${JSON.stringify(line)}\n`;
    }
  }
  return out;
}

/**
 * The registration, exactly the shape of a built-in sink's. `create` throws on bad options:
 * the monitor then fails to load with this message.
 * @param {PluginApi} api
 * @returns {SinkRegistration}
 */
export function jsonlSink(api) {
  const types = typeNames(api);
  return {
    name: 'jsonl',
    description: 'Appends one JSON line per metric value to a file (option file)',
    create(ctx) {
      const unknown = Object.keys(ctx.options).filter((k) => !OPTIONS.includes(k));
      if (unknown.length > 0)
        throw new Error(`jsonl sink: unknown option ${unknown.join(', ')} (it has: file)`);
      const file = ctx.options.file ?? '';
      if (file === '') throw new Error('jsonl sink: option file is required');
      const path = resolve(file);
      /** @type {Sink} */
      const sink = {
        name: 'jsonl',
        async send(metrics) {
          const text = lines(metrics, types);
          if (text !== '') await appendFile(path, text);
        },
      };
      return sink;
    },
  };
}
