/**
 * `--log.level` and `--log.format`, shared by sonde's command line and mysqld_exporter's:
 * the values each accepts and the error that names a bad one. The environment
 * (`SONDE_LOG_LEVEL`, `SONDE_LOG_FORMAT`) fills what the command line leaves unset.
 */
import { envSwitchError } from '../util/env-switch.js';
import {
  LOG_LEVELS,
  parseLogFormat,
  parseLogLevel,
  type LogFormat,
  type LogLevel,
} from '../log/event-log.js';

/** The flags that both command lines read: alone they do not mean mysqld_exporter's. */
export const SHARED_LOG_FLAGS: ReadonlySet<string> = new Set(['log.level', 'log.format']);

/** A level, or an error naming `what` (the flag or the variable) and the valid values. */
export function readLogLevel(text: string, what: string): LogLevel {
  const level = parseLogLevel(text);
  if (level === undefined)
    throw new Error(`invalid value "${text}" for ${what}; valid values: ${LOG_LEVELS.join(', ')}`);
  return level;
}

/** A format; `logfmt` (mysqld_exporter's default) is sonde's text format. */
export function readLogFormat(text: string, what: string): LogFormat {
  const format = parseLogFormat(text === 'logfmt' ? 'text' : text);
  if (format === undefined)
    throw new Error(`invalid value "${text}" for ${what}; valid values: text, json, logfmt`);
  return format;
}

/**
 * `SONDE_LOG_LEVEL` and `SONDE_LOG_FORMAT` (empty = unset); throws naming the variable. The
 * one switch read later (SONDE_EVENT_LOOP_STATS, by the process families) is checked here
 * too, so a bad value fails the boot of either command line.
 */
export function logEnv(env: NodeJS.ProcessEnv): { level?: LogLevel; format?: LogFormat } {
  const bad = envSwitchError(env, 'SONDE_EVENT_LOOP_STATS');
  if (bad !== undefined) throw new Error(bad);
  const level = env.SONDE_LOG_LEVEL ?? '';
  const format = env.SONDE_LOG_FORMAT ?? '';
  return {
    ...(level === '' ? {} : { level: readLogLevel(level, 'SONDE_LOG_LEVEL') }),
    ...(format === '' ? {} : { format: readLogFormat(format, 'SONDE_LOG_FORMAT') }),
  };
}
