/**
 * What the mysqld_exporter emulation (exporter/) needs from a monitor, without importing
 * monitor/: the exporter reaches monitors only through the interfaces in core/.
 */
import type { ServerInfo } from './db.js';
import type { Metrics } from './metrics.js';

/** One domain's outcome in a scrape (drives mysql_exporter_collector_* self-metrics). */
export interface ScrapeDomain {
  domain: string;
  ok: boolean;
  /** collection time in seconds */
  seconds: number;
}

export interface ScrapeResult {
  /** MySQL answered (drives `mysql_up`). */
  up: boolean;
  /** The values of the exporter plan's single level; undefined when nothing could be collected. */
  metrics: Metrics | undefined;
  domains: ScrapeDomain[];
  /** Why the scrape failed or was partial ('' when it did not). */
  error: string;
  /** Seconds spent reaching MySQL (the ping) before collecting: `collector="connection"`. */
  connectSeconds?: number;
  /**
   * Text (non-numeric) global variables and status values seen while collecting, lowercase
   * names (`version`, `version_comment`, `transaction_isolation`, `wsrep_*`): mysqld_exporter's
   * `mysql_version_info` and Galera info families. Without it the exporter takes the version
   * from serverInfo().
   */
  text?: Readonly<Record<string, string>>;
}

export interface ExporterSource {
  /**
   * Collect the exporter plan's single level now. The plan is prepared on first use and
   * re-prepared after a failure. `domains` restricts the collection (mysqld_exporter's
   * `collect[]`); undefined = every domain of the plan. Never rejects.
   */
  scrape(signal: AbortSignal, domains?: readonly string[]): Promise<ScrapeResult>;
  /** Flavor and version for `mysql_version_info`; undefined while MySQL is down. Never rejects. */
  serverInfo(signal: AbortSignal): Promise<ServerInfo | undefined>;
  /** Domains of the exporter plan. */
  domains(): string[];
}

/** A running exporter HTTP listener. */
export interface ExporterHandle {
  /** first bound address, `host:port` */
  address: string;
  /** every bound address, in the order of `web.listen-address` */
  addresses: readonly string[];
  close(): Promise<void>;
}
