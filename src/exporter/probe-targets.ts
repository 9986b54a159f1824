/**
 * The probe listener's view of the loaded monitors (core ProbeTargets): which monitor a
 * `target` names, the auth module a probe asks for, and the sources probes scrape.
 *
 * Everything a request names is checked against the config before anything connects: a
 * target is a monitor id, or the address of exactly one monitor (`host:port` as the monitor
 * connects to it, the port 3306 when its config gives none; `unix://<path>` for a socket);
 * an auth module must be a `[client.<name>]` section of that monitor's my.cnf. Only then does
 * the monitor lend a source (its own pool, or a new one with the module's credentials).
 */
import type { FinalMonitorConfig } from '../core/config.js';
import { errorMessage } from '../core/errors.js';
import { MonitorNotRunning } from '../core/probe.js';
import type {
  CollectionTally,
  MonitorTallies,
  ProbeLease,
  ProbeOpen,
  ProbeTarget,
  ProbeTargets,
} from '../core/probe.js';
import { ConfigError } from '../config/errors.js';
import { monitorAddress } from '../config/connection.js';
import { splitHostPort } from '../util/net.js';

/** Longest piece of a request quoted back in a refusal. */
const QUOTE_MAX = 200;

/** A request value quoted in a one-line reason, cut when long. */
function quote(v: string): string {
  return JSON.stringify(v.length > QUOTE_MAX ? `${v.slice(0, QUOTE_MAX)}…` : v);
}

/** `host:port` as compared: host lower case without brackets or trailing dot, port as a number. */
function addressKey(addr: string): string | undefined {
  if (addr.startsWith('unix://')) return addr;
  const { host, port } = splitHostPort(addr);
  if (port === undefined || !/^\d{1,5}$/.test(port) || Number(port) > 65535 || host === '') return undefined;
  return `${host.toLowerCase().replace(/\.$/, '')}:${Number(port)}`;
}

/**
 * The auth module a request names: '' for none (`auth_module` absent, empty or `client`,
 * mysqld_exporter's default section), `<name>` for `<name>` and `client.<name>` alike;
 * undefined when the value cannot name a section.
 */
export function authModuleName(v: string): string | undefined {
  const name = v === 'client' ? '' : v.startsWith('client.') ? v.slice('client.'.length) : v;
  if (v.startsWith('client.') && name === '') return undefined;
  return /^[^\]\r\n[]*$/.test(name) && name.trim() === name ? name : undefined;
}

/** What the probe targets need of a loaded monitor (the loader's monitors are these). */
export interface ProbeableMonitor {
  readonly id: string;
  readonly config: FinalMonitorConfig;
  /** Both readers' counts, when the monitor keeps them. */
  readonly tally?: { level: CollectionTally; scrape: CollectionTally };
  /** A source for one probe; throws MonitorNotRunning when the monitor is not running. */
  probe?(authModule: string): Promise<ProbeLease>;
}

export interface ProbeTargetsOptions {
  /** The loaded monitors, sorted by id (Loader.loaded). */
  monitors(): readonly ProbeableMonitor[];
  /** Base of relative my.cnf paths; default process.cwd(). */
  cwd?: string;
}

class Targets implements ProbeTargets {
  readonly #opts: ProbeTargetsOptions;
  /** A monitor's address, per finalized config (a reload that changes a monitor makes a new one). */
  readonly #addresses = new WeakMap<FinalMonitorConfig, string>();

  constructor(opts: ProbeTargetsOptions) {
    this.#opts = opts;
  }

  #address(m: ProbeableMonitor): string {
    let a = this.#addresses.get(m.config);
    if (a === undefined) {
      a = monitorAddress(m.config, this.#opts.cwd === undefined ? {} : { cwd: this.#opts.cwd });
      this.#addresses.set(m.config, a);
    }
    return a;
  }

  list(): ProbeTarget[] {
    return this.#opts
      .monitors()
      .map((m) => ({ id: m.id, address: this.#address(m), tags: { ...m.config.tags } }));
  }

  tallies(): MonitorTallies[] {
    return this.#opts
      .monitors()
      .flatMap((m) => (m.tally === undefined ? [] : [{ monitor: m.id, ...m.tally }]));
  }

  /** The monitor `target` names, or the refusal. */
  #resolve(target: string): ProbeableMonitor | { status: number; reason: string } {
    const monitors = this.#opts.monitors();
    const byId = monitors.find((m) => m.id === target);
    if (byId !== undefined) return byId;
    const key = addressKey(target);
    if (key === undefined)
      return { status: 400, reason: `invalid target ${quote(target)}: want a monitor id or host:port` };
    const found = monitors.filter((m) => addressKey(this.#address(m)) === key);
    if (found.length === 0)
      return { status: 404, reason: `unknown target ${quote(target)}: no monitor has this id or address` };
    if (found.length > 1)
      return {
        status: 400,
        reason: `target ${quote(target)} is the address of monitors ${found.map((m) => m.id).join(', ')}: use a monitor id`,
      };
    return found[0] as ProbeableMonitor;
  }

  async open(target: string, authModule: string): Promise<ProbeOpen> {
    const m = this.#resolve(target);
    if ('status' in m) return { ok: false, ...m };
    const module = authModuleName(authModule);
    if (module === undefined)
      return { ok: false, status: 400, reason: `invalid auth_module ${quote(authModule)}` };
    if (m.probe === undefined) return { ok: false, status: 503, reason: `monitor ${m.id} cannot be probed` };
    try {
      const lease = await m.probe(module);
      return { ok: true, id: m.id, authModule: module, ...lease };
    } catch (err) {
      if (err instanceof ConfigError && err.key === 'auth_module')
        return { ok: false, status: 400, reason: err.message };
      if (err instanceof MonitorNotRunning) return { ok: false, status: 503, reason: err.message };
      return {
        ok: false,
        status: 500,
        reason: `monitor ${m.id}: ${errorMessage(err).replace(/[\r\n]+/g, ' ')}`,
      };
    }
  }
}

/** The probe targets of the loaded monitors. */
export function probeTargets(opts: ProbeTargetsOptions): ProbeTargets {
  return new Targets(opts);
}
