/**
 * What the agent-wide probe listener (exporter/probe.ts) needs from the monitors, without
 * importing monitor/: the targets Prometheus discovers, one scrape source per probe, and the
 * collection counts it serves on its own `/metrics`.
 */
import type { ExporterSource } from './exporter.js';

/**
 * Finished collections of one reader of a monitor (its level collector or its scrape
 * reader), counted by the engine as each domain's run ends: plain counters the engine bumps
 * and `/metrics` reads, so counting costs nothing on the collection path.
 */
export interface CollectionTally {
  /** Domain runs that finished (values handed over or failed), fenced runs excluded. */
  collections: number;
  /** Of those, the runs that failed. */
  errors: number;
}

/**
 * Level collections (one level of the plan collected at its tick) by timing: on time, or
 * late (its tick fired more than LATE_TICK_MS after it was due, or it waited for the
 * previous collection to finish): how well the agent keeps up with its monitors.
 */
export interface LevelTiming {
  onTime: number;
  late: number;
}

/** How late a level collection may start and still count as on time. */
export const LATE_TICK_MS = 1000;

/** Both readers' counts of one monitor. */
export interface MonitorTallies {
  monitor: string;
  /** The level collector (sinks). */
  level: CollectionTally;
  /** The scrape reader (per-monitor exporter and probes). */
  scrape: CollectionTally;
}

/** One monitor as Prometheus' HTTP service discovery lists it. */
export interface ProbeTarget {
  /** The monitor id: the target Prometheus sends back as `?target=`. */
  id: string;
  /** Where it connects: `host:port`, or `unix://<path>` for a socket. */
  address: string;
  /** The monitor's `tags`. */
  tags: Readonly<Record<string, string>>;
}

/** The answer to a probe request: a source to scrape once, or why not (no connection made). */
export type ProbeOpen =
  | {
      ok: true;
      /** The monitor the target named. */
      id: string;
      /** The auth module in use ('' = the monitor's own credentials). */
      authModule: string;
      source: ExporterSource;
      /** Seconds taken off `X-Prometheus-Scrape-Timeout-Seconds` (the monitor's `timeout-offset`). */
      timeoutOffsetS: number;
      /** Called once the scrape is answered: closes what the probe opened for itself. */
      release(): Promise<void>;
    }
  | {
      ok: false;
      /** HTTP status: 4xx for a request naming nothing configured, 503 while the monitor is not running. */
      status: number;
      /** One line, no secret. */
      reason: string;
    };

export interface ProbeTargets {
  /** Every loaded monitor, sorted by id. */
  list(): ProbeTarget[];
  /**
   * Resolve `target` (a monitor id, or the `host:port` / `unix://<path>` of exactly one
   * monitor) and `authModule` ('' = none) from the config alone; only when both name
   * something configured is a source made. Never rejects.
   */
  open(target: string, authModule: string): Promise<ProbeOpen>;
  /** Collection counts of every loaded monitor, sorted by id. */
  tallies(): MonitorTallies[];
}

/** A source for one probe; release() closes what the probe opened for itself. */
export interface ProbeLease {
  source: ExporterSource;
  /** The monitor's `timeout-offset` exporter flag, in seconds. */
  timeoutOffsetS: number;
  release(): Promise<void>;
}

/** A probe of a monitor that is not running (stopped, or not started yet). */
export class MonitorNotRunning extends Error {}
