/**
 * The config file's zod schemas. They live in core/config-schema.ts, where the config types
 * are inferred from them; this module keeps the config/ import path.
 */
export {
  apiSchema,
  awsSchema,
  configSchema,
  exporterSchema,
  haSchema,
  heartbeatSchema,
  httpSchema,
  monitorListFileSchema,
  monitorLoaderSchema,
  monitorSchema,
  mysqlSchema,
  planChangeSchema,
  planChangeStateSchema,
  plansSchema,
  sinksSchema,
  tlsSchema,
} from '../core/config-schema.js';
