/**
 * What the command line uses once sonde is to boot, in one module so that it loads as one
 * piece: the agent (which imports the optional parts where they are used), the config and
 * monitors printers, the plans printer, the shard parser and the event log.
 */
export { Agent, STOP_DEADLINE_MS } from '../agent/agent.js';
export { renderConfigYaml, renderMonitorsYaml } from '../config/render.js';
export { printPlans } from '../plan/store.js';
export { parseShard, processOrdinalSource } from '../monitor/shard.js';
export { EventLog } from '../log/event-log.js';
