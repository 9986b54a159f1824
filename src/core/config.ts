/**
 * Config types (spec config.md §4). Property names are the YAML keys exactly, so the
 * rendering of GET /config and interpolation work key by key. `undefined` = not set,
 * which keeps tri-state booleans honest for inheritance.
 */

export interface ApiConfig {
  bind?: string;
  disable?: boolean;
}

export interface HttpConfig {
  proxy?: string;
}

export interface MonitorLoaderConfig {
  files?: string[];
  'stop-loss'?: string;
  aws?: { regions?: string[] };
  local?: { 'disable-auto'?: boolean; 'disable-auto-root'?: boolean };
}

/** sink name → option → value */
export type SinksConfig = Record<string, Record<string, string>>;

export interface AwsConfig {
  'iam-auth'?: boolean;
  'password-secret'?: string;
  region?: string;
  'disable-auto-region'?: boolean;
  'disable-auto-tls'?: boolean;
}

export interface ExporterConfig {
  mode?: string;
  plan?: string;
  flags?: Record<string, string>;
}

export interface HeartbeatConfig {
  freq?: string;
  'source-id'?: string;
  role?: string;
  table?: string;
}

/** Placeholder with no keys. */
export type HaConfig = Record<string, never>;

export interface MysqlConfig {
  hostname?: string;
  mycnf?: string;
  password?: string;
  'password-file'?: string;
  socket?: string;
  'timeout-connect'?: string;
  username?: string;
}

export interface PlanChangeStateConfig {
  after?: string;
  plan?: string;
}

export interface PlanChangeConfig {
  offline?: PlanChangeStateConfig;
  standby?: PlanChangeStateConfig;
  'read-only'?: PlanChangeStateConfig;
  active?: PlanChangeStateConfig;
}

export interface PlansConfig {
  files?: string[];
  table?: string;
  monitor?: MonitorConfig;
  'disable-default-plans'?: boolean;
  change?: PlanChangeConfig;
}

export interface TlsConfig {
  ca?: string;
  cert?: string;
  key?: string;
  'skip-verify'?: boolean;
  disable?: boolean;
}

/** One monitor: mysql keys at top level plus sub-sections (config.md §4.13). */
export interface MonitorConfig extends MysqlConfig {
  id?: string;
  tags?: Record<string, string>;
  meta?: Record<string, string>;
  plan?: string;
  aws?: AwsConfig;
  exporter?: ExporterConfig;
  ha?: HaConfig;
  heartbeat?: HeartbeatConfig;
  plans?: PlansConfig;
  sinks?: SinksConfig;
  tls?: TlsConfig;
}

export interface Config {
  api?: ApiConfig;
  http?: HttpConfig;
  'monitor-loader'?: MonitorLoaderConfig;
  sinks?: SinksConfig;
  aws?: AwsConfig;
  exporter?: ExporterConfig;
  ha?: HaConfig;
  heartbeat?: HeartbeatConfig;
  mysql?: MysqlConfig;
  plans?: PlansConfig;
  tags?: Record<string, string>;
  tls?: TlsConfig;
  monitors?: MonitorConfig[];
}

/** A monitor after inheritance, interpolation and id derivation: `id` is always set. */
export interface FinalMonitorConfig extends MonitorConfig {
  id: string;
}
