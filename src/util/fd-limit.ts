/**
 * The process's limit on open files (RLIMIT_NOFILE), and what sonde's monitors need.
 *
 * Node.js raises the soft limit to the hard limit when it starts, so the soft limit read
 * here is already the highest the process may use; only the hard limit (systemd's
 * `LimitNOFILE=`, `ulimit -Hn`, a container's `nofile` ulimit) can be too low.
 */
import { readRegularTextSync } from './read-file.js';

export interface OpenFilesLimit {
  /** The limit that applies (Infinity: unlimited). */
  soft: number;
  hard: number;
}

/** Descriptors the agent uses whatever its monitors: the API, logs, Node's own, files read. */
export const FD_BASE = 32;

function limitValue(text: string | undefined): number {
  if (text === 'unlimited') return Infinity;
  const n = Number(text);
  return Number.isFinite(n) ? n : NaN;
}

/** The `Max open files` line of a /proc/<pid>/limits text; undefined when absent. */
export function parseOpenFilesLimit(limits: string): OpenFilesLimit | undefined {
  const line = limits.split('\n').find((l) => l.startsWith('Max open files'));
  if (line === undefined) return undefined;
  const [soft, hard] = line.slice('Max open files'.length).trim().split(/\s+/);
  const out = { soft: limitValue(soft), hard: limitValue(hard) };
  return Number.isNaN(out.soft) || Number.isNaN(out.hard) ? undefined : out;
}

/** This process's limit, from /proc/self/limits; undefined where there is no /proc. */
export function openFilesLimit(): OpenFilesLimit | undefined {
  try {
    return parseOpenFilesLimit(readRegularTextSync('/proc/self/limits'));
  } catch {
    return undefined;
  }
}

/**
 * About how many descriptors `monitors` monitors need at most: {@link FD_BASE}, plus for
 * each monitor its pool's statement connections, the liveness connection, and one more (an
 * exporter listener, a sink's HTTP connection).
 */
export function descriptorsNeeded(monitors: number, poolSize: number): number {
  return FD_BASE + monitors * (poolSize + 2);
}
