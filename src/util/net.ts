/**
 * Address parsing shared by every part of sonde that reads a `host:port`: MySQL hostnames,
 * listener addresses (API, exporter), sink endpoints (DogStatsD).
 */

export interface HostPort {
  host: string;
  /** The port as written; undefined when the address has none. */
  port: string | undefined;
}

/**
 * Split `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 literal (`::1`, which has
 * no port: two or more colons without brackets are all host). Never throws.
 */
export function splitHostPort(addr: string): HostPort {
  if (addr.startsWith('[')) {
    const m = /^\[([^\]]*)\](?::(.*))?$/.exec(addr);
    if (m) return { host: m[1] ?? '', port: m[2] };
    return { host: addr, port: undefined };
  }
  const first = addr.indexOf(':');
  if (first === -1) return { host: addr, port: undefined };
  if (addr.indexOf(':', first + 1) !== -1) return { host: addr, port: undefined };
  return { host: addr.slice(0, first), port: addr.slice(first + 1) };
}

/**
 * A listen or endpoint address that must have a port: `host:port`, `:port` or `[v6]:port`.
 * `host` is '' when the address names none (every interface, for a listener). Throws
 * `invalid <what> ${addr}: want host:port` for anything else, including ports above 65535.
 */
export function parseHostPort(addr: string, what = 'address'): { host: string; port: number } {
  const m = /^(?:\[([^\]]*)\]|([^:[\]]*)):(\d{1,5})$/.exec(addr.trim());
  const port = Number(m?.[3]);
  if (m === null || port > 65535) throw new Error(`invalid ${what} ${JSON.stringify(addr)}: want host:port`);
  return { host: m[1] ?? m[2] ?? '', port };
}

/**
 * The OS error under `err` (its `cause` chain included) when it says an address cannot be
 * listened on: in use, not local, or not allowed. A configuration problem no retry fixes.
 */
export function listenFailure(err: unknown): Error | undefined {
  for (let e: unknown = err, i = 0; e instanceof Error && i < 5; e = e.cause, i++) {
    const code = (e as { code?: unknown }).code;
    if (code === 'EADDRINUSE' || code === 'EADDRNOTAVAIL' || code === 'EACCES') return e;
  }
  return undefined;
}
