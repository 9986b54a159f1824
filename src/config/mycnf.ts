/**
 * my.cnf reading: the `[client]` section (case-sensitive), and `[client.<name>]` sections for
 * the probe listener's `auth_module`,
 * INI `key = value`, `#`/`;` comment lines, surrounding quotes stripped, value-less keys
 * allowed (their value is ""), `!include`/`!includedir` ignored (not followed).
 *
 * Like MySQL, `_` and `-` are the same in option names (`ssl_ca` = `ssl-ca`). A `#` inside a
 * value is kept (only whole comment lines are comments), so passwords may contain it.
 * Errors never quote a line's content: a key line may hold a password.
 */
import { readRegularText, readRegularTextSync } from '../util/read-file.js';
import { osErrorText } from './errors.js';

/** The `[client]` values that matter; absent keys are "". */
export interface MyCnf {
  user: string;
  password: string;
  host: string;
  port: string;
  socket: string;
  /** `ssl-mode` upper-cased; `PREFERRED` when absent */
  sslMode: string;
  sslCa: string;
  sslCert: string;
  sslKey: string;
  /** every `[client]` key (`_` written as `-`) → value */
  client: Record<string, string>;
}

function unquote(v: string): string {
  if (v.length >= 2) {
    const q = v[0];
    if ((q === '"' || q === "'") && v[v.length - 1] === q) return v.slice(1, -1);
  }
  return v;
}

/** Every section's keys (`_` written as `-`) → value, in file order. */
function parseSections(text: string): Map<string, Record<string, string>> {
  const sections = new Map<string, Record<string, string>>();
  let current: Record<string, string> | undefined;
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';') || line.startsWith('!')) return;
    if (line.startsWith('[')) {
      const m = /^\[([^\]]*)\]\s*([#;].*)?$/.exec(line);
      if (!m) throw new Error(`line ${i + 1}: invalid section header`);
      const name = (m[1] ?? '').trim();
      current = sections.get(name) ?? {};
      sections.set(name, current);
      return;
    }
    const eq = line.indexOf('=');
    const key = (eq === -1 ? line : line.slice(0, eq)).trim().replace(/_/g, '-');
    if (key === '') throw new Error(`line ${i + 1}: missing option name`);
    if (current === undefined) return;
    const value = eq === -1 ? '' : unquote(line.slice(eq + 1).trim());
    Object.defineProperty(current, key, { value, enumerable: true, writable: true, configurable: true });
  });
  return sections;
}

/** The MyCnf of one section's keys. */
function fromKeys(client: Record<string, string>): MyCnf {
  const get = (k: string): string => (Object.hasOwn(client, k) ? (client[k] ?? '') : '');
  return {
    user: get('user'),
    password: get('password'),
    host: get('host'),
    port: get('port'),
    socket: get('socket'),
    sslMode: (get('ssl-mode') || 'PREFERRED').toUpperCase(),
    sslCa: get('ssl-ca'),
    sslCert: get('ssl-cert'),
    sslKey: get('ssl-key'),
    client,
  };
}

/** Parse my.cnf text. Throws `line N: <problem>` on a malformed line. */
export function parseMyCnf(text: string): MyCnf {
  return fromKeys(parseSections(text).get('client') ?? {});
}

/**
 * The `[client.<name>]` section of my.cnf text (an auth module, as mysqld_exporter's
 * `auth_module` names it), its missing keys taken from `[client]`; undefined when the file
 * has no such section. Throws `line N: <problem>` on a malformed line.
 */
export function parseMyCnfModule(text: string, name: string): MyCnf | undefined {
  const sections = parseSections(text);
  const own = sections.get(`client.${name}`);
  if (own === undefined) return undefined;
  return fromKeys({ ...sections.get('client'), ...own });
}

function wrapParse(path: string, text: string): MyCnf {
  try {
    return parseMyCnf(text);
  } catch (err) {
    throw new Error(`${path}: ${(err as Error).message}`, { cause: err });
  }
}

/** Read and parse a my.cnf file. Errors: `open <path>: <os error>` or `<path>: line N: ...`. */
export async function readMyCnf(path: string): Promise<MyCnf> {
  let text: string;
  try {
    text = await readRegularText(path);
  } catch (err) {
    throw new Error(osErrorText(err, path), { cause: err });
  }
  return wrapParse(path, text);
}

/**
 * The `[client.<name>]` section of a my.cnf file over its `[client]` keys; undefined when the
 * file has no such section. Errors as readMyCnf.
 */
export async function readMyCnfModule(path: string, name: string): Promise<MyCnf | undefined> {
  let text: string;
  try {
    text = await readRegularText(path);
  } catch (err) {
    throw new Error(osErrorText(err, path), { cause: err });
  }
  try {
    return parseMyCnfModule(text, name);
  } catch (err) {
    throw new Error(`${path}: ${(err as Error).message}`, { cause: err });
  }
}

/** Synchronous readMyCnf, for monitor-id derivation during (synchronous) finalization. */
export function readMyCnfSync(path: string): MyCnf {
  let text: string;
  try {
    text = readRegularTextSync(path);
  } catch (err) {
    throw new Error(osErrorText(err, path), { cause: err });
  }
  return wrapParse(path, text);
}

/**
 * The hostname my.cnf gives: `host`, plus `:port` when a port is set (even with no host:
 * `:3307`). An IPv6 host gets brackets when a port is added. "" when neither.
 */
export function myCnfHostname(c: MyCnf): string {
  if (c.port === '') return c.host;
  const host = c.host.includes(':') && !c.host.startsWith('[') ? `[${c.host}]` : c.host;
  return `${host}:${c.port}`;
}
