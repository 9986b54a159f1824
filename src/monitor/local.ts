/**
 * Local auto-detect (Linux): when no source produced a
 * monitor, look for a MySQL server on this machine. Users: mysql.username, then root
 * (unless disabled); for each, try every candidate socket, then TCP 127.0.0.1:3306, with a
 * 200 ms ping. The first success is the monitor `localhost`.
 */
import { readFile, stat } from 'node:fs/promises';
import type { Config, FinalMonitorConfig, MonitorConfig } from '../core/config.js';
import type { ConnectionSpec, Db } from '../core/db.js';

const DEFAULT_SOCKETS = [
  '/var/run/mysqld/mysqld.sock',
  '/run/mysqld/mysqld.sock',
  '/tmp/mysql.sock',
  '/var/lib/mysql/mysql.sock',
];
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

export async function candidateSockets(): Promise<string[]> {
  let found: string[] = [];
  try {
    found = socketsFromProcNetUnix(await readFile('/proc/net/unix', 'utf8'));
  } catch {
    // not Linux: defaults only
  }
  const all = [...found, ...DEFAULT_SOCKETS.filter((s) => !found.includes(s))];
  const out: string[] = [];
  for (const s of all) if (await isSocket(s)) out.push(s);
  return out;
}

export interface AutoDetectDeps {
  finalize(m: MonitorConfig): FinalMonitorConfig;
  buildConnection(cfg: FinalMonitorConfig): Promise<ConnectionSpec>;
  createDb(spec: ConnectionSpec): Db & { close(): Promise<void> };
}

export async function autoDetectLocal(
  config: Config,
  deps: AutoDetectDeps,
): Promise<MonitorConfig | undefined> {
  const users = [config.mysql?.username ?? 'blip'];
  if (config['monitor-loader']?.local?.['disable-auto-root'] !== true && !users.includes('root'))
    users.push('root');
  const sockets = await candidateSockets();
  for (const username of users) {
    const tries: MonitorConfig[] = [
      ...sockets.map((socket) => ({ id: 'localhost', username, socket })),
      { id: 'localhost', username, hostname: '127.0.0.1:3306' },
    ];
    for (const t of tries) {
      let db: (Db & { close(): Promise<void> }) | undefined;
      try {
        db = deps.createDb(await deps.buildConnection(deps.finalize(t)));
        await db.ping({ timeoutMs: PING_MS });
        return t;
      } catch {
        // next candidate
      } finally {
        await db?.close().catch(() => undefined);
      }
    }
  }
  return undefined;
}
