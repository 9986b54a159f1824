/**
 * What an embedding program gives `createAgent()` besides the config: hooks that replace or
 * extend a step of the agent, and factories for its own collectors, sinks, translators and
 * HTTP clients. Each hook's failure is reported like a failure of the step it replaces.
 */
import type { ConnectionOptions } from 'mysql2';
import type { CollectorRegistration } from '../core/collector.js';
import type { Config, FinalMonitorConfig, MonitorConfig } from '../core/config.js';
import type { AwsConfigFactory } from '../core/aws.js';
import type { Db } from '../core/db.js';
import type { HttpClient, SinkRegistration } from '../core/sink.js';
import type { TransformMetrics } from '../monitor/level-collector.js';
import type { SinkTranslator } from '../sinks/translators.js';

/** A shared plan from the `loadPlans` hook: its name and its levels, as YAML text or as the parsed document. */
export interface PlanDocument {
  name: string;
  /** The plan file's content: level name → `{ freq, collect: { <domain>: { metrics, options, errors } } }`. */
  levels: string | Record<string, unknown>;
}

export interface AgentHooks {
  /**
   * Instead of reading a config file: given sonde's built-in defaults, return the config.
   * It is checked like a file (unknown keys, bad values), and a throw fails the boot.
   */
  loadConfig?: (defaults: Config) => Config | Promise<Config>;
  /**
   * Instead of the config's monitors, monitor files, RDS discovery and local
   * auto-detection, at boot and at each reload. The monitors go through the same defaults,
   * validation, shard, diff and stop-loss; a throw fails the load like an unreadable
   * monitor file (at boot: the boot; at a reload: that reload, the running monitors kept).
   */
  loadMonitors?: (config: Config) => MonitorConfig[] | Promise<MonitorConfig[]>;
  /**
   * Instead of the shared plans of `plans.files`, `plans.table` and the built-in defaults.
   * They are parsed and validated like plan files; an error fails the boot.
   */
  loadPlans?: (config: Config) => PlanDocument[] | Promise<PlanDocument[]>;
  /**
   * Change the mysql2 connection options of a monitor's pool (e.g. add `connectAttributes`,
   * a `stream` factory, TLS material from a vault). Given a copy; return the options to use
   * (or nothing to keep the copy as changed). A throw fails that connection like a connect error.
   */
  modifyDb?: (options: ConnectionOptions, ctx: { monitorId: string }) => ConnectionOptions | void;
  /**
   * Whether the loader starts this monitor (at boot and on each reload); false leaves it
   * loaded and stopped, startable by `POST /monitors/start`. A throw is reported
   * (`monitor-error`) and counts as false.
   */
  startMonitor?: (monitor: FinalMonitorConfig) => boolean | Promise<boolean>;
  /**
   * Change each batch of metrics before the sinks get it: in place, or return the records
   * to send. A throw drops the batch (`lco-metrics-fault`).
   */
  transformMetrics?: TransformMetrics;
}

/** What the agent is told when it builds a sink: the same fields a sink factory gets. */
export interface HttpClientContext {
  sinkName: string;
  monitorId: string;
  options: Record<string, string>;
  tags: Record<string, string>;
}

/** A database connection from the `db` factory: the handle and the DSN to show for it. */
export interface DbHandle {
  /** Queries of the monitor's collectors, heartbeat and plan changer; closed when the monitor stops. */
  db: Db & { close(): Promise<void> };
  /**
   * The DSN shown in the `dsn` status key and the `monitor-started` event, without a
   * password: sonde shows it as given (e.g. `user:...@tcp(db1:3306)/`).
   */
  dsn: string;
}

export interface AgentFactories {
  /** Collectors for more domains; a domain already registered is a boot error. */
  collectors?: readonly CollectorRegistration[];
  /** More sinks; a name already registered is a boot error. */
  sinks?: readonly SinkRegistration[];
  /** Sink translators (`metric-translator: <name>` of the datadog and signalfx sinks). */
  translators?: Readonly<Record<string, SinkTranslator>>;
  /**
   * The HTTP client of each sink that posts over HTTP (datadog, signalfx, otlp,
   * chronosphere, prom-pushgateway); undefined keeps the sink's own.
   */
  httpClient?: (ctx: HttpClientContext) => HttpClient | undefined;
  /**
   * The database connection of each monitor, and of `plans.monitor` (Blip's `DbConn`
   * factory), instead of sonde's own pool built from the monitor's config: given the
   * monitor's final config (defaults applied). Called each time the monitor starts; a throw
   * is reported like a config error of that monitor (`error making DB/DSN, sleep and
   * retry: …`, then retried). The `modifyDb` hook does not apply to these connections, and
   * an exporter probe with an `auth_module` still builds its own pool.
   */
  db?: (monitor: FinalMonitorConfig) => DbHandle | Promise<DbHandle>;
  /**
   * The AWS SDK settings of each AWS client sonde makes (Blip's `AWSConfig` factory):
   * Secrets Manager for `aws.password-secret`, the RDS IAM token signer for
   * `aws.iam-auth`, RDS for `monitor-loader.aws` discovery and CloudWatch for the `aws.rds`
   * domain. Told the service, the region sonde resolved and the monitor; returns
   * credentials, region and endpoint, each left out keeping sonde's choice (the SDK's
   * default credential chain). A throw fails that call like an AWS error of it.
   */
  awsConfig?: AwsConfigFactory;
}
