/**
 * The `log` sink: prints every collection to stdout as a block of text.
 * No options (any are ignored), never fails, not wrapped by retry.
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
import type { Sink, SinkRegistration } from '../core/sink.js';
import type { StatusWriter } from '../core/status.js';
import { monitorKeyOf } from '../core/status-keys.js';
import { formatRfc3339Nano, formatTimestampMs } from '../util/time.js';

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
  return ` (${label}: ${keys.map((k) => `${k}=${m[k] ?? ''}`).join(',')})`;
}

/** The full text block for one `Metrics`, ending with the empty line. */
export function formatLogBlock(m: Metrics): string {
  const lines = [
    `# monitor:  ${m.monitorId}`,
    `# plan:     ${m.plan}`,
    `# level:    ${m.level}`,
    `# ts:       ${formatRfc3339Nano(m.begin)}`,
    `# duration: ${Math.trunc(m.end.getTime() - m.begin.getTime())} ms`,
  ];
  // Domains in ascending name order (Blip: map order); values in the collector's order.
  for (const domain of Object.keys(m.values).sort()) {
    for (const v of m.values[domain] ?? []) {
      lines.push(
        `${domain}.${v.name} = ${intText(v.value)}${pairs('group', v.group)}${pairs('meta', v.meta)}`,
      );
    }
  }
  lines.push('');
  return lines.join('\n') + '\n';
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
 * network sinks do.
 */
export function createLogSink(out: TextOutput = process.stdout, status?: StatusWriter): Sink {
  return {
    name: 'log',
    send: async (metrics) => {
      out.write(formatLogBlock(metrics));
      status?.set(
        monitorKeyOf.sink('log'),
        `last sent ${valueCount(metrics)} metrics at ${formatTimestampMs(new Date())}`,
      );
    },
  };
}

/** Registration of `log`; `out` replaces stdout (tests). */
export function logSinkRegistration(out?: TextOutput): SinkRegistration {
  return {
    name: 'log',
    description: 'Prints metrics to stdout (the default sink when none is configured)',
    create: (ctx) => createLogSink(out, ctx.status),
  };
}
