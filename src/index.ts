/**
 * sonde as a library (`import { createAgent } from 'sonde'`): the agent, its options, hooks
 * and factories, and the types a custom collector, sink or hook works with. docs/library.md
 * has a complete example.
 */
import { loadJsonFormat } from './log/event-log.js';

// A user may ask for JSON log lines (`log: { format: 'json' }`): their writer comes with the library.
await loadJsonFormat();

export { Agent, createAgent, STOP_DEADLINE_MS, type AgentOptions } from './agent/agent.js';
export { BootError, VERSION } from './agent/boot.js';
export type {
  AgentFactories,
  AgentHooks,
  DbHandle,
  HttpClientContext,
  PlanDocument,
} from './agent/options.js';
export { CollectError } from './core/collector.js';
export type {
  CollectResult,
  Collector,
  CollectorContext,
  CollectorHelp,
  CollectorRegistration,
} from './core/collector.js';
export type {
  AwsClientConfig,
  AwsConfigContext,
  AwsConfigFactory,
  AwsCredentials,
  AwsService,
} from './core/aws.js';
export type { Config, FinalMonitorConfig, MonitorConfig } from './core/config.js';
export type { Db } from './core/db.js';
export { ALWAYS_ACTIVE, type HighAvailability } from './core/ha.js';
export {
  EVENT_NAMES,
  type AgentEvent,
  type EventLevel,
  type EventListener,
  type EventName,
  type EventReceiver,
} from './core/events.js';
export { MetricType, type Metrics, type MetricValue } from './core/metrics.js';
export type { Plan } from './core/plan.js';
export type { AttributeValue, LogRecord, Records, SeverityName } from './core/records.js';
export type { LoadedPlugin, PluginApi, SondePlugin } from './core/plugin.js';
export type { HttpAnswer, HttpClient, HttpPost, Sink, SinkContext, SinkRegistration } from './core/sink.js';
export type { TransformMetrics } from './monitor/level-collector.js';
export type { SinkTranslator } from './sinks/translators.js';
