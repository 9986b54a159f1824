/**
 * The process families every Prometheus exporter serves beside its own, and
 * mysqld_exporter's build-info gauge. The agent-wide probe listener serves them on its
 * `/metrics`; mysqld_exporter's command line adds them to its endpoint, as mysqld_exporter
 * does.
 *
 * The families are those of Go's process collector (`process_cpu_seconds_total`,
 * `process_resident_memory_bytes`, `process_virtual_memory_bytes`,
 * `process_virtual_memory_max_bytes`, `process_open_fds`, `process_max_fds`,
 * `process_start_time_seconds`) and those Node's Prometheus client, prom-client, serves by
 * default (the `nodejs_*` families and `process_cpu_user_seconds_total`,
 * `process_cpu_system_seconds_total`, `process_heap_bytes`), under the same names, HELP,
 * types and labels, so dashboards built for either read them. They are sonde's own samples,
 * rendered with the rest of an answer, because prom-client's registry costs about as much
 * CPU as a whole scrape's parsing (see docs/performance.md).
 *
 * One part is left out unless asked for: the event-loop delay statistics
 * (`nodejs_eventloop_lag_{min,max,mean,stddev,p50,p90,p99}_seconds`). Node measures them with
 * a timer that wakes the process every 10 ms, about 4–5 ms of CPU per second on an idle
 * agent, more than the scrapes themselves at a 15 s interval; and reading the standard
 * deviation walks the whole histogram (about 0.2 ms per scrape). SONDE_EVENT_LOOP_STATS=on
 * serves them. `nodejs_eventloop_lag_seconds` (the delay of one callback queued at each
 * scrape) is always served.
 */
import { closeSync, openSync, readFileSync, readSync, readdirSync, statSync } from 'node:fs';
import {
  PerformanceObserver,
  constants,
  monitorEventLoopDelay,
  type IntervalHistogram,
} from 'node:perf_hooks';
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import type { Distribution } from '../core/metrics.js';
import type { PromSample, PromType } from '../prom/exposition.js';
import { envSwitch } from '../util/env-switch.js';
import { readRegularTextSync } from '../util/read-file.js';

/** Go's value of an unlimited address space: the largest 64-bit unsigned number. */
const UNLIMITED = 2 ** 64;

/** One soft limit of /proc/self/limits, unlimited as Go reads it (2^64); undefined if absent. */
function softLimit(limits: string, name: string): number | undefined {
  const m = new RegExp(`^${name}\\s+(\\S+)`, 'm').exec(limits);
  if (m === null) return undefined;
  if (m[1] === 'unlimited') return UNLIMITED;
  const n = Number(m[1]);
  return Number.isFinite(n) ? n : undefined;
}

/** The two limits the families serve. */
interface Limits {
  files: number | undefined;
  address: number | undefined;
}

function parseLimits(limits: string): Limits {
  return { files: softLimit(limits, 'Max open files'), address: softLimit(limits, 'Max address space') };
}

/** /proc/self/limits, or undefined where there is no such file. */
function readLimits(): string | undefined {
  try {
    return readRegularTextSync('/proc/self/limits');
  } catch {
    return undefined;
  }
}

/**
 * The soft limit of the address space (`Max address space` in /proc/self/limits), as Go's
 * process collector reads it (unlimited is 2^64); undefined where there is no such file.
 */
export function addressSpaceLimit(limits: string | undefined = readLimits()): number | undefined {
  return limits === undefined ? undefined : parseLimits(limits).address;
}

/**
 * How long a reading of /proc/self/limits (the address space and open files limits) is
 * served again. The limits change only when something sets them (`prlimit`), and reading
 * the file costs about 0.2 ms of CPU, a twentieth of a whole scrape of mysqld_exporter's
 * default collectors.
 */
export const ADDRESS_LIMIT_TTL_MS = 60_000;

/** What the process families read /proc/self/limits with, and their clock (tests give their own). */
export interface ProcessFamiliesOptions {
  readLimits?: () => string | undefined;
  now?: () => number;
  /** Serve the event-loop delay statistics (default: SONDE_EVENT_LOOP_STATS is `on`). */
  eventLoopStats?: boolean;
}

/** The bucket bounds of `nodejs_gc_duration_seconds`, prom-client's. */
export const GC_BUCKETS: readonly number[] = [0.001, 0.01, 0.1, 1, 2, 5];

/** The GC kinds of `nodejs_gc_duration_seconds`, by Node's performance entry kind. */
const GC_KINDS: ReadonlyMap<number, string> = new Map([
  [constants.NODE_PERFORMANCE_GC_MAJOR, 'major'],
  [constants.NODE_PERFORMANCE_GC_MINOR, 'minor'],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, 'incremental'],
  [constants.NODE_PERFORMANCE_GC_WEAKCB, 'weakcb'],
]);

/** The durations of one GC kind: counts per bucket (not cumulative), sum and count. */
interface GcKind {
  buckets: number[];
  sum: number;
  count: number;
}

/**
 * The garbage collections of the process, per kind, since the first set of process
 * families was made: one observer for the whole process, however many sets read it.
 */
class GcDurations {
  readonly kinds = new Map<string, GcKind>();

  constructor() {
    const observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) this.add((e as { detail?: unknown }).detail, e.duration / 1000);
    });
    observer.observe({ entryTypes: ['gc'] });
  }

  add(detail: unknown, seconds: number): void {
    const kind = GC_KINDS.get((detail as { kind?: number } | null)?.kind ?? -1);
    if (kind === undefined) return;
    let k = this.kinds.get(kind);
    if (k === undefined) {
      k = { buckets: GC_BUCKETS.map(() => 0), sum: 0, count: 0 };
      this.kinds.set(kind, k);
    }
    const i = GC_BUCKETS.findIndex((b) => seconds <= b);
    if (i >= 0) k.buckets[i] = (k.buckets[i] ?? 0) + 1;
    k.sum += seconds;
    k.count++;
  }

  distribution(k: GcKind): Distribution {
    let cumulative = 0;
    const points = GC_BUCKETS.map((b, i): [number, number] => [b, (cumulative += k.buckets[i] ?? 0)]);
    return { kind: 'histogram', points, sum: k.sum, count: k.count };
  }
}

let gcDurations: GcDurations | undefined;
let eventLoopDelay: IntervalHistogram | undefined;

/** The delay of the last callback queued at a reading (seconds), once one ran. */
let lastLag: number | undefined;
let lagPending = false;

/** Queue a callback and keep how long the event loop took to run it. */
function measureLag(): void {
  if (lagPending) return;
  lagPending = true;
  const start = process.hrtime.bigint();
  setImmediate(() => {
    lastLag = Number(process.hrtime.bigint() - start) / 1e9;
    lagPending = false;
  });
}

/** The start of the process in Unix seconds, to the hundredth, as Go's clock ticks give it. */
const START_SECONDS = Math.round((Date.now() / 1000 - process.uptime()) * 100) / 100;

/** `nodejs_version_info`'s labels. */
const VERSION_LABELS: Readonly<Record<string, string>> = (() => {
  const [major = '', minor = '', patch = ''] = process.version.slice(1).split('.');
  return { version: process.version, major, minor, patch };
})();

/** The three sizes prom-client reads from /proc/self/status (kB there), in bytes. */
interface Sizes {
  rss: number | undefined;
  size: number | undefined;
  data: number | undefined;
}

function statusSizes(status: string): Sizes {
  const kb = (key: string): number | undefined => {
    const at = status.indexOf(`\n${key}:`);
    if (at < 0) return undefined;
    const n = Number.parseInt(status.slice(at + key.length + 2, status.indexOf('\n', at + 1)), 10);
    return Number.isFinite(n) ? n * 1024 : undefined;
  };
  return { rss: kb('VmRSS'), size: kb('VmSize'), data: kb('VmData') };
}

const NO_SIZES: Sizes = { rss: undefined, size: undefined, data: undefined };

/** Counts per type name (a handle's or request's class, a resource's name). */
function countByName(names: Iterable<string>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
  return counts;
}

/** Node's undocumented lists of libuv handles and requests, where this Node has them. */
interface ActiveLists {
  _getActiveHandles?: () => unknown[];
  _getActiveRequests?: () => unknown[];
}

function classNames(list: unknown[]): string[] {
  const names: string[] = [];
  for (const o of list) {
    const name = (o as { constructor?: { name?: unknown } } | null)?.constructor?.name;
    if (typeof name === 'string') names.push(name);
  }
  return names;
}

/** The variable that asks for the event-loop delay statistics. */
export const EVENT_LOOP_STATS_ENV = 'SONDE_EVENT_LOOP_STATS';

/**
 * Whether SONDE_EVENT_LOOP_STATS asks for the event-loop delay statistics (a value that is
 * neither on nor off is refused at boot by the command line; here it reads as off).
 */
export function eventLoopStatsWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  return envSwitch(env, EVENT_LOOP_STATS_ENV) === true;
}

/** A sample list builder: one family's HELP and TYPE given once. */
type Add = (
  name: string,
  help: string,
  type: PromType,
  value: number | undefined,
  labels?: Readonly<Record<string, string>>,
) => void;

/**
 * The process families, read at each call of samples(). Readings of the whole process (GC
 * durations, event-loop delays) are shared by every set.
 */
export class ProcessFamilies {
  readonly #readLimits: () => string | undefined;
  readonly #now: () => number;
  readonly #stats: boolean;
  #limits: Limits | undefined;
  #limitsAt: number;

  constructor(opts: ProcessFamiliesOptions = {}) {
    this.#readLimits = opts.readLimits ?? readLimits;
    this.#now = opts.now ?? Date.now;
    this.#stats = opts.eventLoopStats ?? eventLoopStatsWanted();
    this.#limits = this.#parsedLimits();
    this.#limitsAt = this.#now();
    gcDurations ??= new GcDurations();
    if (this.#stats && eventLoopDelay === undefined) {
      eventLoopDelay = monitorEventLoopDelay({ resolution: 10 });
      eventLoopDelay.enable();
    }
    measureLag();
  }

  /** The current values, appended to `out` (returned). */
  samples(out: PromSample[] = []): PromSample[] {
    const add: Add = (name, help, type, value, labels) => {
      if (value !== undefined && !Number.isNaN(value))
        out.push(labels === undefined ? { name, help, type, value } : { name, help, type, value, labels });
    };
    this.#process(add);
    this.#eventLoop(add);
    this.#active(add);
    this.#heap(add);
    add('nodejs_version_info', 'Node.js version info.', 'gauge', 1, VERSION_LABELS);
    this.#gc(out);
    return out;
  }

  /** The `process_*` families. */
  #process(add: Add): void {
    const cpu = process.cpuUsage();
    add('process_cpu_user_seconds_total', 'Total user CPU time spent in seconds.', 'counter', cpu.user / 1e6);
    add(
      'process_cpu_system_seconds_total',
      'Total system CPU time spent in seconds.',
      'counter',
      cpu.system / 1e6,
    );
    add(
      'process_cpu_seconds_total',
      'Total user and system CPU time spent in seconds.',
      'counter',
      (cpu.user + cpu.system) / 1e6,
    );
    add(
      'process_start_time_seconds',
      'Start time of the process since unix epoch in seconds.',
      'gauge',
      START_SECONDS,
    );
    const sizes =
      process.platform === 'linux' ? this.#status() : { ...NO_SIZES, rss: process.memoryUsage.rss() };
    add('process_resident_memory_bytes', 'Resident memory size in bytes.', 'gauge', sizes.rss);
    add('process_virtual_memory_bytes', 'Virtual memory size in bytes.', 'gauge', sizes.size);
    add('process_heap_bytes', 'Process heap size in bytes.', 'gauge', sizes.data);
    add('process_open_fds', 'Number of open file descriptors.', 'gauge', openFds());
    const limits = this.#currentLimits();
    add('process_max_fds', 'Maximum number of open file descriptors.', 'gauge', limits?.files);
    add(
      'process_virtual_memory_max_bytes',
      'Maximum amount of virtual memory available in bytes.',
      'gauge',
      limits?.address,
    );
  }

  #status(): Sizes {
    try {
      return statusSizes(readProcFile('/proc/self/status'));
    } catch {
      return NO_SIZES;
    }
  }

  /** /proc/self/limits read and parsed, undefined where there is no such file. */
  #parsedLimits(): Limits | undefined {
    const text = this.#readLimits();
    return text === undefined ? undefined : parseLimits(text);
  }

  /** The limits, read again once ADDRESS_LIMIT_TTL_MS has passed since the last reading. */
  #currentLimits(): Limits | undefined {
    if (this.#now() - this.#limitsAt >= ADDRESS_LIMIT_TTL_MS) {
      this.#limits = this.#parsedLimits();
      this.#limitsAt = this.#now();
    }
    return this.#limits;
  }

  /** The callback delay, and the delay statistics since the last reading when served. */
  #eventLoop(add: Add): void {
    add('nodejs_eventloop_lag_seconds', 'Lag of event loop in seconds.', 'gauge', lastLag);
    measureLag();
    const h = this.#stats ? eventLoopDelay : undefined;
    if (h === undefined || h.count === 0) return;
    const s = (ns: number): number => ns / 1e9;
    const g = (name: string, help: string, ns: number): void =>
      add(`nodejs_eventloop_lag_${name}_seconds`, help, 'gauge', s(ns));
    g('min', 'The minimum recorded event loop delay.', h.min);
    g('max', 'The maximum recorded event loop delay.', h.max);
    g('mean', 'The mean of the recorded event loop delays.', h.mean);
    g('stddev', 'The standard deviation of the recorded event loop delays.', h.stddev);
    g('p50', 'The 50th percentile of the recorded event loop delays.', h.percentile(50));
    g('p90', 'The 90th percentile of the recorded event loop delays.', h.percentile(90));
    g('p99', 'The 99th percentile of the recorded event loop delays.', h.percentile(99));
    h.reset();
  }

  /** What keeps the event loop alive: resources, libuv handles and requests, by type. */
  #active(add: Add): void {
    const lists = process as unknown as ActiveLists;
    const family = (name: string, help: string, totalHelp: string, names: string[]): void => {
      for (const [type, n] of countByName(names)) add(name, help, 'gauge', n, { type });
      add(`${name}_total`, totalHelp, 'gauge', names.length);
    };
    family(
      'nodejs_active_resources',
      'Number of active resources that are currently keeping the event loop alive, grouped by async resource type.',
      'Total number of active resources.',
      process.getActiveResourcesInfo(),
    );
    if (lists._getActiveHandles !== undefined)
      family(
        'nodejs_active_handles',
        'Number of active libuv handles grouped by handle type. Every handle type is C++ class name.',
        'Total number of active handles.',
        classNames(lists._getActiveHandles()),
      );
    if (lists._getActiveRequests !== undefined)
      family(
        'nodejs_active_requests',
        'Number of active libuv requests grouped by request type. Every request type is C++ class name.',
        'Total number of active requests.',
        classNames(lists._getActiveRequests()),
      );
  }

  /** V8's heap: totals, external memory, and each space's sizes. */
  #heap(add: Add): void {
    const h = getHeapStatistics();
    add(
      'nodejs_heap_size_total_bytes',
      'Process heap size from Node.js in bytes.',
      'gauge',
      h.total_heap_size,
    );
    add(
      'nodejs_heap_size_used_bytes',
      'Process heap size used from Node.js in bytes.',
      'gauge',
      h.used_heap_size,
    );
    add('nodejs_external_memory_bytes', 'Node.js external memory size in bytes.', 'gauge', h.external_memory);
    const spaces = getHeapSpaceStatistics();
    const each = (
      what: 'total' | 'used' | 'available',
      pick: (s: (typeof spaces)[number]) => number,
    ): void => {
      for (const s of spaces)
        add(
          `nodejs_heap_space_size_${what}_bytes`,
          `Process heap space size ${what} from Node.js in bytes.`,
          'gauge',
          pick(s),
          { space: s.space_name.replace(/_space$/, '') },
        );
    };
    each('total', (s) => s.space_size);
    each('used', (s) => s.space_used_size);
    each('available', (s) => s.space_available_size);
  }

  /** `nodejs_gc_duration_seconds`, one series per kind seen so far. */
  #gc(out: PromSample[]): void {
    const gc = gcDurations;
    if (gc === undefined) return;
    for (const [kind, k] of gc.kinds)
      out.push({
        name: 'nodejs_gc_duration_seconds',
        help: 'Garbage collection duration by kind, one of major, minor, incremental or weakcb.',
        type: 'histogram',
        value: k.count,
        labels: { kind },
        dist: gc.distribution(k),
      });
  }
}

/** One buffer for the small files of /proc read at each scrape. */
const PROC_BUFFER = Buffer.alloc(8192);

/**
 * A file of /proc in one read into PROC_BUFFER (half the CPU of readFileSync, which asks
 * the size first and gets 0 from /proc); a file that fills the buffer is read whole again.
 */
function readProcFile(path: string): string {
  const fd = openSync(path, 'r');
  let n: number;
  try {
    n = readSync(fd, PROC_BUFFER, 0, PROC_BUFFER.length, 0);
  } finally {
    closeSync(fd);
  }
  return n < PROC_BUFFER.length ? PROC_BUFFER.toString('latin1', 0, n) : readFileSync(path, 'latin1');
}

/**
 * Open descriptors; undefined off Linux. Linux 6.2 and later give their number as the size
 * of /proc/self/fd (a stat, 7 µs); older kernels say 0 there, and the entries are counted,
 * less the one the listing holds (17 µs).
 */
function openFds(): number | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    const size = statSync('/proc/self/fd').size;
    return size > 0 ? size : readdirSync('/proc/self/fd').length - 1;
  } catch {
    return undefined;
  }
}

/** Go's names of Node's architectures and platforms (`GOARCH`, `GOOS`). */
const GOARCH: Readonly<Record<string, string>> = { x64: 'amd64', ia32: '386' };
const GOOS: Readonly<Record<string, string>> = { win32: 'windows' };

/**
 * `mysqld_exporter_build_info`, value 1, with the labels mysqld_exporter gives it: `version`
 * is sonde's, `goversion` Node's, `goos` and `goarch` the platform's under Go's names;
 * `branch` and `revision` are empty.
 */
export function buildInfoSample(version: string): PromSample {
  return {
    name: 'mysqld_exporter_build_info',
    help: "A metric with a constant '1' value labeled by version, revision, branch, goversion from which mysqld_exporter was built, and the goos and goarch for the build.",
    type: 'gauge',
    value: 1,
    labels: {
      branch: '',
      goarch: GOARCH[process.arch] ?? process.arch,
      goos: GOOS[process.platform] ?? process.platform,
      goversion: `node${process.version}`,
      revision: '',
      version,
    },
  };
}

/** What the command line's endpoint adds to each scrape, and the reloads it counts. */
export interface CommandLineSelfMetrics {
  /** Process families, `mysqld_exporter_build_info` and the reload gauges. */
  samples: () => PromSample[];
  /** A reload of my.cnf (`/-/reload`, SIGHUP) succeeded or failed. */
  reloaded: (ok: boolean) => void;
}

/**
 * The command line's extra families: the process ones, `mysqld_exporter_build_info`, and
 * mysqld_exporter's `mysqld_exporter_config_last_reload_successful` and
 * `mysqld_exporter_config_last_reload_success_timestamp_seconds` (my.cnf was read at start:
 * 1 and the start time).
 */
export function commandLineSelfMetrics(
  version: string,
  opts: ProcessFamiliesOptions = {},
): CommandLineSelfMetrics {
  const families = new ProcessFamilies(opts);
  const build = buildInfoSample(version);
  let ok = 1;
  let at = 0;
  const reloaded = (success: boolean): void => {
    ok = success ? 1 : 0;
    if (success) at = Date.now() / 1000;
  };
  reloaded(true);
  return {
    samples: () => {
      const out = families.samples();
      out.push(
        build,
        {
          name: 'mysqld_exporter_config_last_reload_successful',
          help: 'Mysqld exporter config loaded successfully.',
          type: 'gauge',
          value: ok,
        },
        {
          name: 'mysqld_exporter_config_last_reload_success_timestamp_seconds',
          help: 'Timestamp of the last successful configuration reload.',
          type: 'gauge',
          value: at,
        },
      );
      return out;
    },
    reloaded,
  };
}
