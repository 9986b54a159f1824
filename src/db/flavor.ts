/**
 * Server flavor and version detection. Choices by flavor and version are made in one place,
 * the source table (collectors/kit/sources.ts).
 *
 * Blip only compares version numbers, so MariaDB 10.11 looks "newer than MySQL 8" and gets
 * MySQL-8 queries. sonde decides the flavor from the text instead: `@@version` containing
 * "MariaDB" (any case) is MariaDB, everything else (MySQL, Percona Server) is MySQL.
 */
import type { ServerInfo } from '../core/db.js';

/** The leading `major.minor.patch`, before any `-` or `+` suffix. */
const TRIPLE = /^(\d+)\.(\d+)\.(\d+)$/;

/**
 * Parse `SELECT @@version` text, e.g. `10.11.19-MariaDB-0+deb12u1-log`, `8.0.36`,
 * `8.0.35-27` (Percona). The version is [0,0,0] when the text before the first `-`/`+` is
 * not exactly three numbers. MariaDB's replication-compatibility prefix (`5.5.5-10.11.6-MariaDB`)
 * is skipped so the real MariaDB version is kept.
 */
export function parseServerVersion(versionString: string): ServerInfo {
  const flavor = /mariadb/i.test(versionString) ? 'mariadb' : 'mysql';
  let text = versionString.trim();
  if (flavor === 'mariadb' && /^5\.5\.5-\d+\.\d+\.\d+/.test(text)) text = text.slice('5.5.5-'.length);
  const head = text.split(/[-+]/, 1)[0] ?? '';
  const m = TRIPLE.exec(head);
  const version: [number, number, number] =
    m === null ? [0, 0, 0] : [Number(m[1]), Number(m[2]), Number(m[3])];
  return { flavor, version, versionString };
}

/** True when `info.version` ≥ major.minor.patch (flavor is not considered). */
export function versionAtLeast(info: ServerInfo, major: number, minor = 0, patch = 0): boolean {
  const [a, b, c] = info.version;
  if (a !== major) return a > major;
  if (b !== minor) return b > minor;
  return c >= patch;
}

/** `mysql 8.0.36` / `mariadb 10.11.19`, for messages such as "not supported on …". */
export function describeServer(info: ServerInfo): string {
  return `${info.flavor} ${info.version.join('.')}`;
}
