/**
 * Which targets the command line's `/probe` (and `/metrics?target=`) may connect to. Any
 * target by default, as mysqld_exporter; `--probe.allowed-targets` restricts them to the
 * hosts and networks it lists:
 *
 * - `a.b.c.d/n` or `v6::/n`: a network; a target whose host is an IP address in it;
 * - an IP address or a host name: that host, on any port (names compared without case);
 * - `host:port` (`[v6]:port`): that host on that port only;
 * - `unix://<path>`: that socket.
 *
 * A host name target is matched by name only (it is not resolved), so a network entry
 * never lets a name through.
 */
import { BlockList, isIP } from 'node:net';
import { splitHostPort } from '../util/net.js';

/** Whether a target may be probed. */
export type TargetFilter = (target: string) => boolean;

/** `host` lower case, without brackets or a trailing dot. */
function normHost(h: string): string {
  return h
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
}

/** The filter of `--probe.allowed-targets` entries (each may hold several, comma-separated). Throws on a bad entry. */
export function allowedTargets(entries: readonly string[]): TargetFilter | undefined {
  const list = entries
    .flatMap((e) => e.split(','))
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (list.length === 0) return undefined;
  const nets = new BlockList();
  const hosts = new Set<string>();
  const hostPorts = new Set<string>();
  const sockets = new Set<string>();
  for (const e of list) {
    if (e.startsWith('unix://')) {
      sockets.add(e);
      continue;
    }
    const slash = e.indexOf('/');
    if (slash !== -1) {
      const ip = e.slice(0, slash);
      const bits = Number(e.slice(slash + 1));
      const v = isIP(ip);
      if (v === 0 || !Number.isInteger(bits) || bits < 0 || bits > (v === 4 ? 32 : 128))
        throw new Error(`invalid network ${JSON.stringify(e)}: want address/prefix`);
      nets.addSubnet(ip, bits, v === 4 ? 'ipv4' : 'ipv6');
      continue;
    }
    if (isIP(normHost(e)) !== 0) {
      hosts.add(normHost(e));
      continue;
    }
    const { host, port } = splitHostPort(e);
    if (host === '' || (port !== undefined && !/^\d{1,5}$/.test(port)))
      throw new Error(
        `invalid target ${JSON.stringify(e)}: want a host, host:port, a network or unix://<path>`,
      );
    if (port === undefined) hosts.add(normHost(host));
    else hostPorts.add(`${normHost(host)}:${Number(port)}`);
  }
  return (target) => {
    if (target.startsWith('unix://')) return sockets.has(target);
    const { host, port } = splitHostPort(target);
    const h = normHost(host);
    if (hosts.has(h) || (port !== undefined && hostPorts.has(`${h}:${Number(port)}`))) return true;
    const v = isIP(h);
    return v !== 0 && nets.check(h, v === 4 ? 'ipv4' : 'ipv6');
  };
}
