/**
 * Local auto-detect (Linux): when no source produced a monitor, look for a MySQL server on
 * this machine and monitor it as `localhost`.
 *
 * Candidates, in order: `monitor-loader.local.candidates` when set (socket paths and
 * host:port, nothing else is looked at); otherwise every MySQL unix socket listed in
 * /proc/net/unix, the usual socket paths, then TCP 127.0.0.1:3306. Users: mysql.username,
 * then root (unless disabled). For the first user with which any candidate answers a 200 ms
 * ping, every candidate is pinged, and the first that answered is chosen. What was chosen and
 * why (and which other servers answered) is kept for the loader to report: detectionOf().
 */
import { stat } from 'node:fs/promises';
import type { Config, FinalMonitorConfig, MonitorConfig } from '../core/config.js';
import type { ConnectionSpec, Db } from '../core/db.js';
import { readRegularText } from '../util/read-file.js';

const DEFAULT_SOCKETS = [
  '/var/run/mysqld/mysqld.sock',
  '/run/mysqld/mysqld.sock',
  '/tmp/mysql.sock',
  '/var/lib/mysql/mysql.sock',
];
const DEFAULT_TCP = '127.0.0.1:3306';
const PING_MS = 200;

/** Unix socket paths from /proc/net/unix whose path mentions mysql (not mysqlx). */
export function socketsFromProcNetUnix(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n').slice(1)) {
    const path = line.trim().split(/\s+/)[7];
    if (path?.startsWith('/') && path.includes('mysql') && !path.includes('mysqlx') && !out.includes(path))
      out.push(path);
  }
  return out;
}

async function isSocket(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isSocket();
  } catch {
    return false;
  }
}

/** Existing MySQL sockets: those in /proc/net/unix, then the usual paths. */
export async function candidateSockets(): Promise<string[]> {
  let found: string[] = [];
  try {
    found = socketsFromProcNetUnix(await readRegularText('/proc/net/unix'));
  } catch {
    // not Linux: defaults only
  }
  const all = [...found, ...DEFAULT_SOCKETS.filter((s) => !found.includes(s))];
  const out: string[] = [];
  for (const s of all) if (await isSocket(s)) out.push(s);
  return out;
}

/** One place to look: a unix socket path or a host:port. */
export interface Candidate {
  /** `socket /path` or `tcp host:port`, as reports name it. */
  name: string;
  /** The monitor fields that reach it. */
  where: { socket: string } | { hostname: string };
}

/** A configured candidate: an absolute path is a socket, anything else host:port. */
export function candidateOf(text: string): Candidate {
  const t = text.trim();
  return t.startsWith('/')
    ? { name: `socket ${t}`, where: { socket: t } }
    : { name: `tcp ${t}`, where: { hostname: t } };
}

/** The candidates in order, and where they come from (for the report). */
export async function candidates(config: Config): Promise<{ list: Candidate[]; from: string }> {
  const configured = config['monitor-loader']?.local?.candidates;
  if (configured !== undefined && configured.length > 0) {
    return { list: configured.map(candidateOf), from: 'monitor-loader.local.candidates' };
  }
  const sockets = await candidateSockets();
  return {
    list: [...sockets.map(candidateOf), candidateOf(DEFAULT_TCP)],
    from: `sockets in /proc/net/unix and the usual paths, then ${DEFAULT_TCP}`,
  };
}

export interface AutoDetectDeps {
  finalize(m: MonitorConfig): FinalMonitorConfig;
  buildConnection(cfg: FinalMonitorConfig): Promise<ConnectionSpec>;
  createDb(spec: ConnectionSpec): Db & { close(): Promise<void> };
}

/** What auto-detect chose and why, by the monitor it returned. */
const detections = new WeakMap<MonitorConfig, string>();

/**
 * Why auto-detect chose this monitor: `<candidate> as <user>: <reason>`, naming the other
 * candidates that also answered. Undefined for a monitor auto-detect did not return.
 */
export function detectionOf(m: MonitorConfig): string | undefined {
  return detections.get(m);
}

async function answers(m: MonitorConfig, deps: AutoDetectDeps): Promise<boolean> {
  let db: (Db & { close(): Promise<void> }) | undefined;
  try {
    db = deps.createDb(await deps.buildConnection(deps.finalize(m)));
    await db.ping({ timeoutMs: PING_MS });
    return true;
  } catch {
    return false;
  } finally {
    await db?.close().catch(() => undefined);
  }
}

/** The users to try, in order. */
function usersOf(config: Config): string[] {
  const users = [config.mysql?.username ?? 'blip'];
  if (config['monitor-loader']?.local?.['disable-auto-root'] !== true && !users.includes('root'))
    users.push('root');
  return users;
}

export async function autoDetectLocal(
  config: Config,
  deps: AutoDetectDeps,
): Promise<MonitorConfig | undefined> {
  const { list, from } = await candidates(config);
  const users = usersOf(config);
  for (const [u, username] of users.entries()) {
    const answered: { c: Candidate; m: MonitorConfig }[] = [];
    for (const c of list) {
      const m: MonitorConfig = { id: 'localhost', username, ...c.where };
      if (await answers(m, deps)) answered.push({ c, m });
    }
    const [first, ...others] = answered;
    if (first === undefined) continue;
    const userWhy = u === 0 ? '' : ` (${users.slice(0, u).join(', ')}: no candidate accepted it)`;
    const othersWhy =
      others.length === 0
        ? 'the only candidate that answered'
        : `the first of ${answered.length} candidates that answered, in the order of ${from}; not chosen: ${others.map((o) => o.c.name).join(', ')}`;
    const order = others.length === 0 ? ` (candidates from ${from})` : '';
    detections.set(first.m, `${first.c.name} as ${username}${userWhy}: ${othersWhy}${order}`);
    return first.m;
  }
  return undefined;
}
