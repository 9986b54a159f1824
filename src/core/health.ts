/**
 * A monitor's health at a glance, from its status keys alone (core/status-keys.ts): what
 * `GET /status/monitors` shows as its `health` key, what `GET /status` counts, and the state
 * the web page shows. A monitor that cannot connect or prepare its plan, that is retrying its
 * start, or whose last collection failed entirely is `failing`, whatever its run loop says.
 */
import { MonitorKey } from './status-keys.js';

export type MonitorHealthState = 'running' | 'starting' | 'failing' | 'stopped';

export interface MonitorHealth {
  state: MonitorHealthState;
  /** Why it is failing ('' otherwise). */
  why: string;
}

/** The health of a monitor from its status keys; `running` false: the monitor is stopped. */
export function monitorHealth(status: Readonly<Record<string, string>>, running = true): MonitorHealth {
  const text = status[MonitorKey.monitor] ?? '';
  if (!running || text.startsWith('stopped')) return { state: 'stopped', why: '' };
  const why = failure(status, text);
  if (why !== undefined) return { state: 'failing', why };
  return { state: text.startsWith('running') ? 'running' : 'starting', why: '' };
}

/** Why the monitor fails, or undefined. */
function failure(status: Readonly<Record<string, string>>, text: string): string | undefined {
  const loop = status[MonitorKey.monitorError];
  if (loop !== undefined) return loop.replace(/^error: /, '');
  if (text.includes('sleep and retry') || text.startsWith('error ')) return text;
  const prepare = status[MonitorKey.enginePrepareError];
  if (prepare !== undefined) return `cannot prepare its plan: ${prepare}`;
  const change = status[MonitorKey.levelChangePlan] ?? '';
  if (/: error (loading|preparing) new plan /.test(change)) return change.replace(/^.*?: error /, 'error ');
  const collect = status[MonitorKey.collectError] ?? '';
  if (/(^|: )failed: /.test(collect)) return `last collection failed: ${collect}`;
  return undefined;
}

/** `GET /status` summary: `<n> ok, <n> failing (<ids>), <n> starting, <n> stopped`. */
export function healthSummary(monitors: Readonly<Record<string, Readonly<Record<string, string>>>>): string {
  const counts: Record<MonitorHealthState, number> = { running: 0, starting: 0, failing: 0, stopped: 0 };
  const failing: string[] = [];
  for (const [id, status] of Object.entries(monitors)) {
    const h = monitorHealth(status);
    counts[h.state]++;
    if (h.state === 'failing') failing.push(id);
  }
  const ids =
    failing.length === 0 ? '' : ` (${failing.slice(0, 5).join(', ')}${failing.length > 5 ? ', …' : ''})`;
  return `${counts.running} ok, ${counts.failing} failing${ids}, ${counts.starting} starting, ${counts.stopped} stopped`;
}

/** The `health` key: `ok`, `failing: <why>`, `starting` or `stopped`. */
export function healthText(status: Readonly<Record<string, string>>): string {
  const h = monitorHealth(status);
  return h.state === 'running' ? 'ok' : h.state === 'failing' ? `failing: ${h.why}` : h.state;
}
