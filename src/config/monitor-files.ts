/**
 * Monitor files (`monitor-loader.files`), re-read on every load.
 *
 * A file with a top-level `monitors` key holds a list of monitors; any other file is one
 * monitor object (sonde's choice; Blip only knows the second form). Decoding is strict like the
 * main file: an unknown or duplicate key fails the load. An empty file holds no monitor.
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { MonitorConfig } from '../core/config.js';
import { decodeYaml, DecodeFailure, MAX_YAML_BYTES, tooLarge, validateDecoded } from './decode.js';
import { ConfigError, osErrorText } from './errors.js';
import { noteMonitorSource } from './monitor.js';
import { monitorListFileSchema, monitorSchema } from '../core/config-schema.js';
import { readRegularText } from '../util/read-file.js';

function hasMonitorsKey(v: unknown): boolean {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && Object.hasOwn(v, 'monitors');
}

/** Decode one monitor file's text; `file` is used in the messages. */
export function parseMonitorFile(text: string, file: string): MonitorConfig[] {
  try {
    const decoded = decodeYaml(text);
    if (hasMonitorsKey(decoded.value)) {
      const list =
        validateDecoded<{ monitors?: MonitorConfig[] }>(decoded, monitorListFileSchema, {}).monitors ?? [];
      list.forEach((m, i) => noteMonitorSource(m, { file, key: `monitors[${i}]` }));
      return list;
    }
    if (decoded.value === undefined || decoded.value === null) return [];
    const one = validateDecoded<MonitorConfig>(decoded, monitorSchema, {});
    noteMonitorSource(one, { file, key: '' });
    return [one];
  } catch (err) {
    if (err instanceof DecodeFailure) {
      throw new ConfigError(`${file}: invalid YAML: ${err.detail}`, {
        kind: 'load',
        file,
        line: err.line,
        key: err.key,
        cause: err,
      });
    }
    throw err;
  }
}

/**
 * Read the monitor files in order and return their monitors (not finalized). Relative paths
 * are resolved against `opts.cwd` (default the process working directory); messages use the
 * path as given. Throws ConfigError `open <file>: <os error>` or
 * `<file>: invalid YAML: line <n>: <problem>`.
 */
export async function readMonitorFiles(
  files: string[],
  opts: { cwd?: string } = {},
): Promise<MonitorConfig[]> {
  const out: MonitorConfig[] = [];
  for (const file of files) {
    const path = resolve(opts.cwd ?? process.cwd(), file);
    const size = (await stat(path).catch(() => undefined))?.size ?? 0;
    if (size > MAX_YAML_BYTES) {
      throw new ConfigError(`${file}: invalid YAML: ${tooLarge(size)}`, { kind: 'load', file });
    }
    let text: string;
    try {
      text = await readRegularText(path);
    } catch (err) {
      throw new ConfigError(`monitor-loader.files: ${osErrorText(err, file)}`, {
        kind: 'load',
        file,
        cause: err,
      });
    }
    out.push(...parseMonitorFile(text, file));
  }
  return out;
}
