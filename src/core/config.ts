/**
 * Config types, derived from the schema in ./config-schema.ts so that each key is
 * declared once. Property names are the YAML keys exactly, so the rendering of GET /config
 * and interpolation work key by key. `undefined` = not set, which keeps tri-state booleans
 * honest for inheritance.
 */
import type {
  ConfigShape,
  Out,
  apiSchema,
  awsSchema,
  exporterSchema,
  haSchema,
  heartbeatSchema,
  httpSchema,
  MonitorShape,
  monitorLoaderSchema,
  mysqlSchema,
  planChangeSchema,
  planChangeStateSchema,
  PlansShape,
  probeSchema,
  sinksSchema,
  tlsSchema,
} from './config-schema.js';

export type ApiConfig = Out<typeof apiSchema>;
export type HttpConfig = Out<typeof httpSchema>;
export type ProbeConfig = Out<typeof probeSchema>;
export type MonitorLoaderConfig = Out<typeof monitorLoaderSchema>;
/** sink name → option → value */
export type SinksConfig = Out<typeof sinksSchema>;
export type AwsConfig = Out<typeof awsSchema>;
export type ExporterConfig = Out<typeof exporterSchema>;
export type HeartbeatConfig = Out<typeof heartbeatSchema>;
/** Placeholder with no keys. */
export type HaConfig = Out<typeof haSchema>;
export type MysqlConfig = Out<typeof mysqlSchema>;
export type PlanChangeStateConfig = Out<typeof planChangeStateSchema>;
export type PlanChangeConfig = Out<typeof planChangeSchema>;
export type PlansConfig = PlansShape;
export type TlsConfig = Out<typeof tlsSchema>;
/** One monitor: mysql keys at top level plus sub-sections. */
export type MonitorConfig = MonitorShape;
export type Config = ConfigShape;

/** A monitor after inheritance, interpolation and id derivation: `id` is always set. */
export type FinalMonitorConfig = MonitorConfig & { id: string };
