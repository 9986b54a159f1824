/**
 * The JSON log format's writer: pino, level filtering left to EventLog, fields named as
 * documented (log/event-log.ts). Imported only when the JSON format is chosen
 * (`loadJsonFormat`): a run with the text format does without pino and the Node modules it
 * loads (worker threads, assert).
 */
import { pino, type Logger } from 'pino';
import { guardedStderr } from '../util/std-streams.js';
import { formatTimestampMs } from '../util/time.js';
import type { TextOutput } from './text-output.js';

/** The writer to `out` (default the guarded stderr); `noticeRank` is pino's rank for `notice` lines. */
export function jsonLogger(
  out: TextOutput | undefined,
  now: () => Date,
  noticeRank: number,
): Logger<'notice'> {
  // process.stderr is written synchronously for files, pipes and terminals on Linux; the
  // guard drops lines once the reader is gone instead of failing on each.
  const dest = out ?? guardedStderr();
  return pino<'notice'>(
    {
      level: 'debug',
      customLevels: { notice: noticeRank },
      base: undefined,
      messageKey: 'message',
      timestamp: () => `,"time":"${formatTimestampMs(now())}"`,
      formatters: { level: (label) => ({ level: label }) },
    },
    dest,
  );
}
