/**
 * Config types, inferred from the zod schemas in ./config-schema.ts so that each key is
 * declared once. Property names are the YAML keys exactly, so the rendering of GET /config
 * and interpolation work key by key. `undefined` = not set, which keeps tri-state booleans
 * honest for inheritance.
 */
import type * as z from 'zod';
import type {
  apiSchema,
  awsSchema,
  configSchema,
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

export type ApiConfig = z.output<typeof apiSchema>;
export type HttpConfig = z.output<typeof httpSchema>;
export type ProbeConfig = z.output<typeof probeSchema>;
export type MonitorLoaderConfig = z.output<typeof monitorLoaderSchema>;
/** sink name → option → value */
export type SinksConfig = z.output<typeof sinksSchema>;
export type AwsConfig = z.output<typeof awsSchema>;
export type ExporterConfig = z.output<typeof exporterSchema>;
export type HeartbeatConfig = z.output<typeof heartbeatSchema>;
/** Placeholder with no keys. */
export type HaConfig = z.output<typeof haSchema>;
export type MysqlConfig = z.output<typeof mysqlSchema>;
export type PlanChangeStateConfig = z.output<typeof planChangeStateSchema>;
export type PlanChangeConfig = z.output<typeof planChangeSchema>;
export type PlansConfig = PlansShape;
export type TlsConfig = z.output<typeof tlsSchema>;
/** One monitor: mysql keys at top level plus sub-sections. */
export type MonitorConfig = MonitorShape;
export type Config = z.output<typeof configSchema>;

/** A monitor after inheritance, interpolation and id derivation: `id` is always set. */
export type FinalMonitorConfig = MonitorConfig & { id: string };
