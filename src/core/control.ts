/**
 * What the HTTP API (server/) and the exporter need from the agent, without importing
 * monitor/: the server reaches monitors only through the interfaces in core/.
 */
import type { Config } from './config.js';

export interface MonitorControl {
  /** id → redacted DSN ('' until built), all loaded monitors. */
  monitors(): Record<string, string>;
  /** Throws SondeError MONITOR_NOT_LOADED / MONITOR_START_FAILED. */
  start(id: string): Promise<void>;
  /** Throws SondeError MONITOR_NOT_LOADED. Blocks until stopped. */
  stop(id: string): Promise<void>;
  /** Throws SondeError RELOAD_FAILED or STOP_LOSS. */
  reload(): Promise<void>;
}

export interface AgentInfo {
  /** `1.2.3` without v */
  version: string;
  /** The server config as loaded (GET /config renders it, redacted). */
  config: Config;
  registered(): { collectors: string[]; sinks: string[] };
  /** Toggle debug; returns the new state. */
  toggleDebug(): boolean;
}
