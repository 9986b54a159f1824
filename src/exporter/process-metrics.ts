/**
 * The process families every Prometheus exporter serves beside its own (prom-client's
 * process and Node.js metrics), and mysqld_exporter's build-info gauge. The agent-wide
 * probe listener serves them on its `/metrics`; mysqld_exporter's command line adds them to
 * its endpoint, as mysqld_exporter does.
 */
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { readRegularTextSync } from '../util/read-file.js';

/** Go's value of an unlimited address space: the largest 64-bit unsigned number. */
const UNLIMITED = 2 ** 64;

/**
 * The soft limit of the address space (`Max address space` in /proc/self/limits), as Go's
 * process collector reads it; undefined where there is no such file.
 */
export function addressSpaceLimit(limits?: string): number | undefined {
  let text = limits;
  if (text === undefined) {
    try {
      text = readRegularTextSync('/proc/self/limits');
    } catch {
      return undefined;
    }
  }
  const m = /^Max address space\s+(\S+)/m.exec(text);
  if (m === null) return undefined;
  if (m[1] === 'unlimited') return UNLIMITED;
  const n = Number(m[1]);
  return Number.isFinite(n) ? n : undefined;
}

/**
 * How long a reading of the address space limit is served again. The limit changes only
 * when something sets it (`prlimit`), and reading `/proc/self/limits` costs about 0.2 ms of
 * CPU, a twentieth of a whole scrape of mysqld_exporter's default collectors.
 */
export const ADDRESS_LIMIT_TTL_MS = 60_000;

/** What processRegistry() reads the limit with, and its clock (tests give their own). */
export interface ProcessRegistryOptions {
  readLimit?: () => number | undefined;
  now?: () => number;
}

/**
 * A registry with prom-client's default metrics (`process_*`, `nodejs_*`) and, on Linux,
 * `process_virtual_memory_max_bytes`, which Go's process collector serves too (read again
 * once ADDRESS_LIMIT_TTL_MS has passed since the last reading, not at every collection).
 */
export function processRegistry(opts: ProcessRegistryOptions = {}): Registry {
  const readLimit = opts.readLimit ?? (() => addressSpaceLimit());
  const now = opts.now ?? Date.now;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  let limit = readLimit();
  let readAt = now();
  if (limit !== undefined) {
    new Gauge({
      name: 'process_virtual_memory_max_bytes',
      help: 'Maximum amount of virtual memory available in bytes.',
      registers: [registry],
      collect() {
        if (now() - readAt >= ADDRESS_LIMIT_TTL_MS) {
          limit = readLimit();
          readAt = now();
        }
        if (limit !== undefined) this.set(limit);
      },
    });
  }
  return registry;
}

/** Go's names of Node's architectures and platforms (`GOARCH`, `GOOS`). */
const GOARCH: Readonly<Record<string, string>> = { x64: 'amd64', ia32: '386' };
const GOOS: Readonly<Record<string, string>> = { win32: 'windows' };

/**
 * `mysqld_exporter_build_info`, value 1, with the labels mysqld_exporter gives it: `version`
 * is sonde's, `goversion` Node's, `goos` and `goarch` the platform's under Go's names;
 * `branch` and `revision` are empty.
 */
export function addBuildInfo(registry: Registry, version: string): void {
  const g = new Gauge({
    name: 'mysqld_exporter_build_info',
    help: "A metric with a constant '1' value labeled by version, revision, branch, goversion from which mysqld_exporter was built, and the goos and goarch for the build.",
    labelNames: ['branch', 'goarch', 'goos', 'goversion', 'revision', 'version'] as const,
    registers: [registry],
  });
  g.set(
    {
      branch: '',
      goarch: GOARCH[process.arch] ?? process.arch,
      goos: GOOS[process.platform] ?? process.platform,
      goversion: `node${process.version}`,
      revision: '',
      version,
    },
    1,
  );
}

/** What the command line's endpoint appends to each scrape, and the reloads it counts. */
export interface CommandLineSelfMetrics {
  /** Process families, `mysqld_exporter_build_info` and the reload gauges, as exposition text. */
  text: () => Promise<string>;
  /** A reload of my.cnf (`/-/reload`, SIGHUP) succeeded or failed. */
  reloaded: (ok: boolean) => void;
}

/**
 * The command line's extra families: the process ones, `mysqld_exporter_build_info`, and
 * mysqld_exporter's `mysqld_exporter_config_last_reload_successful` and
 * `mysqld_exporter_config_last_reload_success_timestamp_seconds` (my.cnf was read at start:
 * 1 and the start time).
 */
export function commandLineSelfMetrics(version: string): CommandLineSelfMetrics {
  const registry = processRegistry();
  addBuildInfo(registry, version);
  const ok = new Gauge({
    name: 'mysqld_exporter_config_last_reload_successful',
    help: 'Mysqld exporter config loaded successfully.',
    registers: [registry],
  });
  const at = new Gauge({
    name: 'mysqld_exporter_config_last_reload_success_timestamp_seconds',
    help: 'Timestamp of the last successful configuration reload.',
    registers: [registry],
  });
  const reloaded = (success: boolean): void => {
    ok.set(success ? 1 : 0);
    if (success) at.set(Date.now() / 1000);
  };
  reloaded(true);
  return { text: () => registry.metrics(), reloaded };
}
