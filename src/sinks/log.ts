/**
 * The `log` sink: prints every collection to stdout as a block of text, and every record
 * (see core/records.ts) as one line of its own (see {@link formatRecordLine}).
 * No options (any are ignored), not wrapped by retry. It fails once, when stdout has closed
 * (its reader went away): that send reports the failure, the sink's status (`log`) says so
 * from then on, and later blocks are dropped without another error.
 *
 * ```
 * # monitor:  db1
 * # plan:     default-mysql
 * # level:    performance
 * # ts:       2024-05-01T12:00:05.123Z
 * # duration: 12 ms
 * status.global.queries = 1234
 * size.table.bytes = 16384 (group: db=app,tbl=users)
 *
 * ```
 */
import type { Metrics } from '../core/metrics.js';
import type { AttributeValue, LogRecord, Records } from '../core/records.js';
import type { Sink, SinkRegistration } from '../core/sink.js';
import type { StatusWriter } from '../core/status.js';
import { monitorKeyOf } from '../core/status-keys.js';
import { guardedStdout, outputClosed } from '../util/std-streams.js';
import { oneLine } from '../util/text.js';
import { formatRfc3339Nano, formatTimestamp, formatTimestampMs } from '../util/time.js';

/** Where the block goes: process.stdout by default, a collector in tests. */
export interface TextOutput {
  write(text: string): unknown;
}

/**
 * A value as Go's `int64(v)` would print it: truncated toward zero. Go leaves NaN and ±Inf
 * undefined (a huge negative number on amd64); they are named instead.
 */
function intText(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  // BigInt prints every digit where String() would switch to exponent form (1e+21).
  return BigInt(Math.trunc(v)).toString();
}

/** ` (<label>: k=v,k=v)` with keys sorted, or nothing when empty. */
function pairs(label: string, m: Record<string, string> | undefined): string {
  if (!m) return '';
  const keys = Object.keys(m).sort();
  if (keys.length === 0) return '';
  return ` (${label}: ${keys.map((k) => `${oneLine(k)}=${oneLine(m[k] ?? '')}`).join(',')})`;
}

/**
 * The full text block for one `Metrics`, ending with the empty line. Names and labels come
 * from the database and the config: their control characters are escaped (`oneLine`), so
 * each header and each metric is one line.
 */
export function formatLogBlock(m: Metrics): string {
  const lines = [
    `# monitor:  ${oneLine(m.monitorId)}`,
    `# plan:     ${oneLine(m.plan)}`,
    `# level:    ${oneLine(m.level)}`,
    `# ts:       ${formatRfc3339Nano(m.begin)}`,
    `# duration: ${Math.trunc(m.end.getTime() - m.begin.getTime())} ms`,
  ];
  // Domains in ascending name order (Blip: map order); values in the collector's order.
  for (const domain of Object.keys(m.values).sort()) {
    for (const v of m.values[domain] ?? []) {
      lines.push(
        `${oneLine(`${domain}.${v.name}`)} = ${intText(v.value)}${pairs('group', v.group)}${pairs('meta', v.meta)}`,
      );
    }
  }
  lines.push('');
  return lines.join('\n') + '\n';
}

/**
 * Text made safe for one line: a backslash, a double quote and every control character
 * (newlines and tabs included) are escaped, so one record is always exactly one line.
 */
export function escapeLine(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is escaped
  return text.replace(/[\\"\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => {
    switch (c) {
      case '\\':
        return '\\\\';
      case '"':
        return '\\"';
      case '\n':
        return '\\n';
      case '\r':
        return '\\r';
      case '\t':
        return '\\t';
      default:
        return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
    }
  });
}

/** An attribute value: numbers and booleans bare, strings quoted and escaped. */
function attrText(v: AttributeValue): string {
  return typeof v === 'string' ? `"${escapeLine(v)}"` : String(v);
}

/**
 * One record as one line:
 * `# record <time> <monitor> <domain> <event> <severity> key=value … [body="…"]`, attribute
 * keys sorted, string values quoted with every control character escaped.
 */
export function formatRecordLine(monitorId: string, domain: string, r: LogRecord): string {
  const parts = [
    '# record',
    new Date(r.time).toISOString(),
    escapeLine(monitorId),
    escapeLine(domain),
    escapeLine(r.event),
    r.severity,
  ];
  for (const k of Object.keys(r.attributes).sort()) {
    const v = r.attributes[k];
    if (v !== undefined) parts.push(`${escapeLine(k)}=${attrText(v)}`);
  }
  if (r.body !== undefined) parts.push(`body=${attrText(r.body)}`);
  return parts.join(' ');
}

/** Every record of a batch, one line each, domains in name order. */
export function formatRecordLines(batch: Records): string {
  const lines: string[] = [];
  for (const domain of Object.keys(batch.records).sort())
    for (const r of batch.records[domain] ?? []) lines.push(formatRecordLine(batch.monitorId, domain, r));
  return lines.length === 0 ? '' : lines.join('\n') + '\n';
}

/** The number of values in one collection. */
export function valueCount(m: Metrics): number {
  let n = 0;
  for (const values of Object.values(m.values)) n += values?.length ?? 0;
  return n;
}

/**
 * A log sink writing to `out`; each block is one write so monitors never interleave. With
 * `status`, each send sets the sink's status key (`last sent <n> metrics at <ts>`), as the
 * network sinks do. Once `out` (the guarded stdout) is closed, the first send fails and
 * the status key says so; later sends drop their block quietly.
 */
export function createLogSink(out: TextOutput = guardedStdout(), status?: StatusWriter): Sink {
  let reported = false;
  return {
    name: 'log',
    send: async (metrics) => {
      const closed = outputClosed(out);
      if (closed === undefined) {
        out.write(formatLogBlock(metrics));
        status?.set(
          monitorKeyOf.sink('log'),
          `last sent ${valueCount(metrics)} metrics at ${formatTimestampMs(new Date())}`,
        );
        return;
      }
      if (reported) return;
      reported = true;
      const text = `stdout is closed (${closed}): metrics are dropped`;
      status?.set(monitorKeyOf.sink('log'), `${text} since ${formatTimestamp(metrics.begin)}`);
      throw new Error(text);
    },
    sendRecords: async (records) => {
      const text = formatRecordLines(records);
      if (text !== '') out.write(text);
    },
  };
}

/** Registration of `log`; `out` replaces stdout (tests). */
export function logSinkRegistration(out?: TextOutput): SinkRegistration {
  return {
    name: 'log',
    description: 'Prints metrics to stdout (the default sink when none is configured)',
    records: true,
    create: (ctx) => createLogSink(out, ctx.status),
  };
}
