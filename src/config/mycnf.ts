/**
 * my.cnf reading: the `[client]` section (case-sensitive), and `[client.<name>]` sections for
 * the probe listener's `auth_module`,
 * INI `key = value`, `#`/`;` comment lines, surrounding quotes stripped, value-less keys
 * allowed (their value is "", or true for a boolean key), `!include`/`!includedir` ignored
 * (not followed).
 *
 * Like MySQL, `_` and `-` are the same in option names (`ssl_ca` = `ssl-ca`). A `#` inside a
 * value is kept (only whole comment lines are comments), so passwords may contain it.
 * `${NAME}` in a value is the environment variable NAME ("" when unset), as mysqld_exporter
 * expands it; any other `$` stays as written (a password may hold `$`).
 *
 * The keys read are mysqld_exporter's: user, password, host, port, socket, ssl-ca, ssl-cert,
 * ssl-key, ssl-mode, tls (`true`, `false`, `skip-verify`, `preferred`), ssl-skip-verfication
 * (mysqld_exporter's spelling), tls-min-version, tls-max-version (`TLSv1.0` … `TLSv1.3`),
 * tls-server-name and enable-cleartext-plugin. Any other key is listed in `unknown` (the
 * caller warns, naming file and key); a bad value of a known key is an error naming the key.
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
  /** `tls`: '' (not set), `true`, `false`, `skip-verify` or `preferred` */
  tls: string;
  /** `ssl-skip-verfication` (mysqld_exporter's spelling): TLS without verifying the server */
  sslSkipVerify: boolean;
  /** `tls-min-version` / `tls-max-version`: '' or `TLSv1.0` … `TLSv1.3` */
  tlsMinVersion: string;
  tlsMaxVersion: string;
  /** `tls-server-name`: the name the server certificate must carry ('' = the host) */
  tlsServerName: string;
  /** `enable-cleartext-plugin`: the password may be sent in clear text (over TLS only) */
  enableCleartextPlugin: boolean;
  /** keys of the section sonde does not read, in file order */
  unknown: string[];
  /** every `[client]` key (`_` written as `-`) → value */
  client: Record<string, string>;
}

/** The keys sonde reads (mysqld_exporter's, plus ssl-mode). */
export const MYCNF_KEYS: ReadonlySet<string> = new Set([
  'user',
  'password',
  'host',
  'port',
  'socket',
  'ssl-mode',
  'ssl-ca',
  'ssl-cert',
  'ssl-key',
  'tls',
  'ssl-skip-verfication',
  'tls-min-version',
  'tls-max-version',
  'tls-server-name',
  'enable-cleartext-plugin',
]);

/** `tls-min-version` / `tls-max-version` values, as the mysql client names them. */
export const TLS_VERSIONS: readonly string[] = ['TLSv1.0', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'];

/** `tls` values. */
const TLS_MODES: readonly string[] = ['true', 'false', 'skip-verify', 'preferred'];

/** `${NAME}` → the variable's value ("" when unset); every other `$` stays. */
export function expandVars(value: string, env: NodeJS.ProcessEnv = process.env): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => env[name] ?? '');
}

/** An INI boolean as mysqld_exporter's INI reader takes it; a bare key is true. */
function iniBool(key: string, v: string): boolean {
  const t = v.trim();
  if (
    t === '' ||
    ['1', 't', 'T', 'true', 'TRUE', 'True', 'y', 'yes', 'YES', 'Yes', 'on', 'ON', 'On'].includes(t)
  )
    return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False', 'n', 'no', 'NO', 'No', 'off', 'OFF', 'Off'].includes(t))
    return false;
  throw new Error(`${key}: not a boolean`);
}

function unquote(v: string): string {
  if (v.length >= 2) {
    const q = v[0];
    if ((q === '"' || q === "'") && v[v.length - 1] === q) return v.slice(1, -1);
  }
  return v;
}

/** Every section's keys (`_` written as `-`) → value (`${NAME}` expanded), in file order. */
function parseSections(
  text: string,
  env: NodeJS.ProcessEnv = process.env,
): Map<string, Record<string, string>> {
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
    const value = eq === -1 ? '' : expandVars(unquote(line.slice(eq + 1).trim()), env);
    Object.defineProperty(current, key, { value, enumerable: true, writable: true, configurable: true });
  });
  return sections;
}

/** The MyCnf of one section's keys. Throws `<key>: <problem>` on a bad value. */
function fromKeys(client: Record<string, string>): MyCnf {
  const get = (k: string): string => (Object.hasOwn(client, k) ? (client[k] ?? '') : '');
  const bool = (k: string): boolean => Object.hasOwn(client, k) && iniBool(k, get(k));
  const tls = get('tls').trim();
  if (tls !== '' && !TLS_MODES.includes(tls))
    throw new Error(`tls=${tls} is not allowed, use one of: ${TLS_MODES.join(', ')}`);
  const min = get('tls-min-version').trim();
  const max = get('tls-max-version').trim();
  for (const [k, v] of [
    ['tls-min-version', min],
    ['tls-max-version', max],
  ] as const)
    if (v !== '' && !TLS_VERSIONS.includes(v))
      throw new Error(`${k}=${v} is not allowed, use one of: ${TLS_VERSIONS.join(', ')}`);
  if (min !== '' && max !== '' && TLS_VERSIONS.indexOf(min) > TLS_VERSIONS.indexOf(max))
    throw new Error(`tls-min-version must not be higher than tls-max-version: ${min} > ${max}`);
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
    tls,
    sslSkipVerify: bool('ssl-skip-verfication'),
    tlsMinVersion: min,
    tlsMaxVersion: max,
    tlsServerName: get('tls-server-name').trim(),
    enableCleartextPlugin: bool('enable-cleartext-plugin'),
    unknown: Object.keys(client).filter((k) => !MYCNF_KEYS.has(k)),
    client,
  };
}

/** Parse my.cnf text. Throws `line N: <problem>` on a malformed line, `<key>: <problem>` on a bad value. */
export function parseMyCnf(text: string, env: NodeJS.ProcessEnv = process.env): MyCnf {
  return fromKeys(parseSections(text, env).get('client') ?? {});
}

/**
 * The `[client.<name>]` section of my.cnf text (an auth module, as mysqld_exporter's
 * `auth_module` names it), its missing keys taken from `[client]`; undefined when the file
 * has no such section. Throws `line N: <problem>` on a malformed line.
 */
export function parseMyCnfModule(
  text: string,
  name: string,
  env: NodeJS.ProcessEnv = process.env,
): MyCnf | undefined {
  const sections = parseSections(text, env);
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

/**
 * The section `name` of my.cnf text as mysqld_exporter's `auth_module` names it: `client`
 * is `[client]` (present or not); `client.<x>` is `[client.<x>]` over the keys of
 * `[client]` (a child section); any other name is that section alone. Undefined when the
 * file has no such section (other than `client`).
 */
export function parseMyCnfSection(
  text: string,
  name: string,
  env: NodeJS.ProcessEnv = process.env,
): MyCnf | undefined {
  const sections = parseSections(text, env);
  if (name === 'client') return fromKeys(sections.get('client') ?? {});
  const own = sections.get(name);
  if (own === undefined) return undefined;
  return fromKeys(name.startsWith('client.') ? { ...sections.get('client'), ...own } : own);
}

/** parseMyCnfSection() of a file. Errors as readMyCnf. */
export async function readMyCnfSection(path: string, name: string): Promise<MyCnf | undefined> {
  return readAndParse(path, (text) => parseMyCnfSection(text, name));
}

/** A my.cnf file read and given to `parse`. Errors as readMyCnf. */
async function readAndParse<T>(path: string, parse: (text: string) => T): Promise<T> {
  let text: string;
  try {
    text = await readRegularText(path);
  } catch (err) {
    throw new Error(osErrorText(err, path), { cause: err });
  }
  try {
    return parse(text);
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
  return readAndParse(path, (text) => parseMyCnfModule(text, name));
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
