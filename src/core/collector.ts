/**
 * The collector contract: one collector per metric domain.
 *
 * A collector is created once per plan activation for a monitor, prepared with the whole
 * plan, then asked to collect one level at a time. `help` is static data that drives plan
 * validation, `--print-domains` and the generated domain docs.
 */
import type { AwsConfigFactory } from './aws.js';
import type { Db } from './db.js';
import type { Events } from './events.js';
import type { StatusWriter } from './status.js';
import type { MetricType, MetricValue } from './metrics.js';
import type { Plan } from './plan.js';
import type { LogRecord } from './records.js';

export interface OptionHelp {
  name: string;
  description: string;
  /** Effective default, printed by --print-domains ('' = none). */
  default: string;
  /** Allowed values → description; absent means free-form. */
  values?: Record<string, string>;
}

export interface ErrorHelp {
  /** Policy name used under `errors:` in a plan, e.g. `access-denied`. */
  name: string;
  description: string;
  /**
   * MySQL/MariaDB error numbers this policy handles. The engine maps a collection error
   * carrying one of these errnos to this policy automatically.
   */
  errnos?: number[];
}

export interface MetricHelp {
  name: string;
  type: MetricType;
  description: string;
}

export interface CollectorHelp {
  domain: string;
  description: string;
  /** SQL or other sources, for docs. */
  sources: string[];
  options: OptionHelp[];
  errors: ErrorHelp[];
  groups: { key: string; description: string }[];
  meta: { key: string; description: string }[];
  /** Declared metrics; empty when the domain reports whatever the server has. */
  metrics: MetricHelp[];
}

/** What collect() hands back: values plus, optionally, an error (errors are data). */
export interface CollectResult {
  values: MetricValue[];
  error?: CollectError;
  /**
   * Text values kept under {@link ExporterReading} (lowercase name → value as the server
   * wrote it); only collectors that read global status or variables set it.
   */
  text?: Record<string, string>;
  /**
   * Records (the second signal, see records.ts): go to the sinks that accept records, never
   * into metric series. An error does not drop them.
   */
  records?: LogRecord[];
}

/**
 * How a collector reads values for the mysqld_exporter emulation instead of for Blip:
 * text values of global status and variables are read as mysqld_exporter reads them
 * (case-insensitive `on`/`yes`/`primary` → 1, `off`/`no`/`disabled`/`connecting`/
 * `non-primary`/`disconnected` → 0), the names in `keepText` are returned as text in
 * {@link CollectResult.text}, and innodb values carry the INNODB_METRICS `name`, `type` and
 * `comment` meta (see INNODB_META).
 */
export interface ExporterReading {
  /** Lowercase names of text values to hand back (`version`, `version_comment`, `wsrep_*`). */
  keepText: ReadonlySet<string>;
}

/**
 * A collection error. `policy` names the plan error policy that governs it (see
 * ErrorHelp); `zero` are the values to emit when that policy says `zero`.
 */
export class CollectError extends Error {
  readonly policy: string | undefined;
  readonly zero: MetricValue[] | undefined;
  readonly errno: number | undefined;
  /**
   * The domain cannot work on this server (a missing source, an unsupported flavor): the
   * engine reports it once and stops collecting the domain until the plan is re-activated.
   */
  readonly unsupported: boolean;
  /**
   * Nothing to report, but the values are not valid as collected: the engine applies only
   * the metric part of the policy (`drop`, or `zero` with the error's zero values).
   */
  readonly quiet: boolean;
  /**
   * Part of the domain cannot be read on this server until a setting or grant changes (the
   * message names it); the rest was collected. Unless the plan sets the error's policy, the
   * engine reports it once, keeps it as the domain's status line (`error:<domain>`) for as
   * long as the collector returns it, and counts the run as a success.
   */
  readonly partial: boolean;
  constructor(
    message: string,
    opts: {
      policy?: string;
      zero?: MetricValue[];
      errno?: number;
      cause?: unknown;
      unsupported?: boolean;
      quiet?: boolean;
      partial?: boolean;
    } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'CollectError';
    this.policy = opts.policy;
    this.zero = opts.zero;
    this.errno = opts.errno;
    this.unsupported = opts.unsupported === true;
    this.quiet = opts.quiet === true;
    this.partial = opts.partial === true;
  }
}

export interface Collector {
  readonly domain: string;
  /** Validate the domain's part of the plan and get ready (run trial queries, pick sources). */
  prepare(plan: Plan, signal: AbortSignal): Promise<void>;
  /** Collect one level. Must honour `signal` (the domain's deadline). */
  collect(level: string, signal: AbortSignal): Promise<CollectResult>;
  /** Release anything held; called when the plan is replaced or the monitor stops. */
  close?(): Promise<void>;
}

/** The monitor settings a collector calling AWS needs to pick its region (aws.rds). */
export interface AwsTarget {
  /** `aws.region` as configured: a region, `auto` (EC2 instance metadata) or '' (not set). */
  region: string;
  /** `aws.disable-auto-region`: with no region set, do not fall back to `auto`. */
  disableAutoRegion: boolean;
  /** The MySQL hostname (`host[:port]`): an RDS endpoint name carries its region. */
  hostname: string;
  /** The embedding program's AWS SDK settings (`factories.awsConfig`), when it gives them. */
  config?: AwsConfigFactory;
}

export interface CollectorContext {
  monitorId: string;
  db: Db;
  /** The monitor's status, for collectors with background work (e.g. `heartbeat-reader`). */
  status?: StatusWriter;
  events?: Events;
  /** Set when the collector serves the mysqld_exporter emulation; Blip's reading otherwise. */
  exporterReading?: ExporterReading;
  /** The monitor's AWS settings (collectors that call AWS APIs). */
  aws?: AwsTarget;
}

/** One registry entry: static help plus a factory. */
export interface CollectorRegistration {
  help: CollectorHelp;
  create(ctx: CollectorContext): Collector;
  /**
   * Replace the collector already registered for this domain (a built-in one, say), as
   * Blip's remove-then-register does. Without it a domain taken twice is an error; with it,
   * a domain nobody registered is an error too (a misspelt name).
   */
  replace?: boolean;
}
