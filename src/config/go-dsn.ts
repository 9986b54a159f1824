/**
 * The Go MySQL driver's DSN, as mysqld_exporter 0.14 reads it from `DATA_SOURCE_NAME`:
 * `[user[:password]@][net[(address)]]/[dbname][?param=value&…]`, with `net` `tcp` (address
 * `host:port`, the default when only `(address)` is given) or `unix` (a socket path).
 *
 * The password may hold `@`, `:` and `/`: the user part ends at the last `@` before the last
 * `/`, as the Go driver splits it. Of the parameters only `tls` is understood (`false`,
 * `skip-verify`); any other is refused by name rather than ignored.
 */

export interface GoDsn {
  user: string;
  password: string;
  /** Set for `unix(…)`. */
  socket?: string;
  /** `host:port` for `tcp(…)` or `(…)`; `127.0.0.1:3306` when no address is given. */
  address?: string;
  /** `tls=skip-verify`: TLS without verifying the server. */
  insecureTls: boolean;
}

/** Parse a Go MySQL DSN; throws with a message naming what is wrong (never the password). */
export function parseGoDsn(dsn: string): GoDsn {
  const slash = dsn.lastIndexOf('/');
  if (slash < 0) throw new Error('missing the "/" before the database name');
  const head = dsn.slice(0, slash);
  const at = head.lastIndexOf('@');
  const credentials = at < 0 ? '' : head.slice(0, at);
  const colon = credentials.indexOf(':');
  const user = colon < 0 ? credentials : credentials.slice(0, colon);
  const password = colon < 0 ? '' : credentials.slice(colon + 1);
  const out: GoDsn = { user, password, insecureTls: false, ...netAddress(head.slice(at + 1)) };
  const query = dsn.slice(slash + 1).split('?')[1] ?? '';
  for (const pair of query === '' ? [] : query.split('&')) {
    const [key = '', value = ''] = pair.split('=');
    if (key !== 'tls') throw new Error(`parameter ${key}: not supported (only tls)`);
    if (value === 'skip-verify') out.insecureTls = true;
    else if (value !== 'false')
      throw new Error(`tls=${value}: not supported; use tls=skip-verify, or --config.my-cnf with ssl-ca`);
  }
  return out;
}

/** `tcp(host:port)`, `unix(/path)`, `(host:port)` or nothing. */
function netAddress(net: string): { socket: string } | { address: string } {
  if (net === '') return { address: '127.0.0.1:3306' };
  const m = /^(tcp|unix)?\((.*)\)$/.exec(net);
  if (m === null) throw new Error(`network "${net}": want tcp(host:port) or unix(/path)`);
  const addr = m[2] ?? '';
  if (m[1] === 'unix') {
    if (addr === '') throw new Error('unix(): no socket path');
    return { socket: addr };
  }
  return { address: addr === '' ? '127.0.0.1:3306' : addr };
}
