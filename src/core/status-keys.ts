/**
 * Every status key sonde writes, declared once with its meaning. `GET /status` shows the
 * server keys, `GET /status/monitors` the monitor keys of each monitor. Writers take their
 * keys from here (lint refuses a string literal as a status key elsewhere), and a test
 * checks that docs/api.md documents exactly these keys.
 *
 * Keys starting with `error:` are set while a step fails and removed when it next
 * succeeds; the other keys keep their last value.
 */

/** Keys of `GET /status` (the agent). */
export const ServerKey = {
  started: 'started',
  version: 'version',
  server: 'server',
  monitorLoader: 'monitor-loader',
  monitors: 'monitors',
  monitorsHealth: 'monitors-health',
  uptime: 'uptime',
  collections: 'collections',
  shard: 'shard',
} as const;

/** Fixed keys of one monitor in `GET /status/monitors`. */
export const MonitorKey = {
  monitor: 'monitor',
  health: 'health',
  monitorError: 'error:monitor',
  dsn: 'dsn',
  state: 'state',
  statePending: 'state-pending',
  planChanger: 'plan-changer',
  planChangerError: 'error:plan-changer',
  ha: 'ha',
  haError: 'error:ha',
  levelCollector: 'level-collector',
  levelChangePlan: 'level-change-plan',
  levelState: 'level-state',
  levelPlan: 'level-plan',
  levelCollect: 'level-collect',
  levelSinks: 'level-sinks',
  enginePrepare: 'engine-prepare',
  enginePrepareError: 'error:engine-prepare',
  engineCollect: 'engine-collect',
  enginePlan: 'engine-plan',
  collectError: 'error:collect',
  exporter: 'exporter',
  heartbeatWriter: 'heartbeat-writer',
  heartbeatReader: 'heartbeat-reader',
  heartbeatReaderError: 'error:heartbeat-reader',
} as const;

/** Monitor keys made from a domain or sink name. */
export const monitorKeyOf = {
  /** `error:<domain>`: the domain's last collection failed. */
  domainError: (domain: string): string => `error:${domain}`,
  /** `domain:<domain>`: the domain's last run: when, how long, how many metrics, ok or failed. */
  domain: (domain: string): string => `domain:${domain}`,
  /** `<sink>`: what the sink last did (sending, last sent N metrics at …, error on last send …). */
  sink: (sink: string): string => sink,
  /** `error:<sink>`: the sink's last send failed (sinks without a retry buffer). */
  sinkError: (sink: string): string => `error:${sink}`,
  /** `error:<sink>-send`: the sink behind a retry buffer is failing; cleared on the next good send. */
  sinkSendError: (sink: string): string => `error:${sink}-send`,
} as const;

/** One documented key: `key` is literal or a pattern with `<domain>` / `<sink>`. */
export interface StatusKeyDoc {
  scope: 'server' | 'monitor';
  key: string;
  meaning: string;
}

const server = (key: string, meaning: string): StatusKeyDoc => ({ scope: 'server', key, meaning });
const monitor = (key: string, meaning: string): StatusKeyDoc => ({ scope: 'monitor', key, meaning });

/** The catalogue: every key above with its meaning, in the order docs/api.md lists them. */
export const STATUS_KEYS: readonly StatusKeyDoc[] = [
  server(ServerKey.started, 'when sonde started'),
  server(ServerKey.version, 'the version, without `v`'),
  server(ServerKey.server, 'boot progress, then `running since <ts>`'),
  server(ServerKey.monitorLoader, 'what the last monitor load found and started'),
  server(ServerKey.monitors, 'number of loaded monitors'),
  server(
    ServerKey.monitorsHealth,
    'the loaded monitors by health: `<n> ok, <n> failing (<ids>), <n> starting, <n> stopped`',
  ),
  server(ServerKey.uptime, 'whole seconds since sonde started running'),
  server(ServerKey.collections, 'level collections of the loaded monitors started on time and late'),
  server(ServerKey.shard, "this agent's shard `i/n`, only when started with `--shard`"),
  monitor(MonitorKey.monitor, 'the run loop: running since, stopped at, or the step being retried'),
  monitor(
    MonitorKey.health,
    'at a glance: `ok`, `failing: <why>` (cannot connect or prepare its plan, retrying its start, or its last collection failed), `starting` or `stopped`',
  ),
  monitor(MonitorKey.monitorError, 'why the run loop is retrying'),
  monitor(MonitorKey.dsn, 'the redacted DSN (password shown as `...`)'),
  monitor(MonitorKey.state, 'plan changer: current state, plan and since when'),
  monitor(MonitorKey.statePending, 'plan changer: a state change waiting for its `after` delay'),
  monitor(MonitorKey.planChanger, 'plan changer: what it is doing'),
  monitor(MonitorKey.planChangerError, 'plan changer: why its last check failed'),
  monitor(MonitorKey.ha, 'HA hook: this agent active or standby, and since when (only with an HA hook)'),
  monitor(MonitorKey.haError, 'HA hook: why its last answer failed (the previous one is kept)'),
  monitor(MonitorKey.levelCollector, 'level collector: running, paused or idle, and since when'),
  monitor(MonitorKey.levelChangePlan, 'level collector: a plan change in progress or being retried'),
  monitor(MonitorKey.levelState, 'level collector: the active state'),
  monitor(MonitorKey.levelPlan, 'level collector: the active plan'),
  monitor(MonitorKey.levelCollect, 'level collector: the last collection and its send'),
  monitor(MonitorKey.levelSinks, 'level collector: which sink is being sent to, or idle'),
  monitor(MonitorKey.enginePrepare, 'engine: the preparation step in progress'),
  monitor(MonitorKey.enginePrepareError, 'engine: why preparing the plan failed'),
  monitor(MonitorKey.engineCollect, 'engine: the current or last collection of a level'),
  monitor(MonitorKey.enginePlan, 'engine: the prepared plan'),
  monitor(MonitorKey.collectError, 'engine: the last collection had errors'),
  monitor(MonitorKey.exporter, 'exporter: listening, stopped, or why it is not running'),
  monitor(MonitorKey.heartbeatWriter, 'heartbeat writer: what it is doing'),
  monitor(MonitorKey.heartbeatReader, 'heartbeat reader: what it is doing'),
  monitor(MonitorKey.heartbeatReaderError, 'heartbeat reader: why it has no heartbeat'),
  monitor(monitorKeyOf.domain('<domain>'), "a domain's last run: time, duration, metric count, ok or error"),
  monitor(monitorKeyOf.domainError('<domain>'), "a domain's last collection failed"),
  monitor(monitorKeyOf.sink('<sink>'), "a sink's last send"),
  monitor(monitorKeyOf.sinkError('<sink>'), "a sink's last send failed"),
  monitor(monitorKeyOf.sinkSendError('<sink>'), 'a sink behind a retry buffer is failing'),
];
