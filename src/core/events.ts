/**
 * Events: sonde's log lines and its event stream. Every event has a name from the catalogue
 * below, a level, the monitor it concerns ('' for the agent itself) and a message.
 *
 * Levels: `error` events always print (stderr, `ERROR: `); `notice` events always print,
 * as info lines (a signal stopped or reloaded sonde); `warn` and `info` events print from
 * those levels (`--log` = info) and always while debugging. Debug lines are free-form text,
 * printed only while debugging; they are not events and never reach the stream.
 *
 * The catalogue (`EVENT_NAMES`) is the one list of names: emitting a name that is not in it
 * does not compile, a test checks that every name is emitted at the level it gives, and
 * docs/events.md is checked against it.
 */

/** An event's level; debug lines are not events. */
export type EventLevel = 'error' | 'warn' | 'notice' | 'info';

export interface EventSpec {
  /** The level the event is emitted at. */
  readonly level: EventLevel;
  /** Other levels the same name is emitted at, in other circumstances (rare). */
  readonly alsoAt?: readonly EventLevel[];
  /** An event of sonde's own: Blip has no event of that name. */
  readonly sondeOnly?: true;
  /** One line: when it is emitted and what its message says. */
  readonly description: string;
}

/**
 * Every event sonde emits, in the order of an agent's life: boot, run, monitors, plans,
 * collection, sinks, state. Names are Blip's where Blip has the event (including its
 * misspelt `repl-soruce-change`), sonde's own otherwise.
 */
export const EVENT_NAMES = {
  // Boot
  'boot-start': { level: 'info', description: 'sonde starts booting; the message is `sonde <version>`' },
  'boot-config-loading': { level: 'info', description: 'loading the config file' },
  'boot-config-loaded': { level: 'info', description: 'the config file is loaded and valid' },
  'boot-config-invalid': {
    level: 'error',
    description:
      'a config value is wrong (a file that cannot be found, read or decoded is `boot-error`); the message is the error, and the boot fails. The command line prints it once, as its `server.Boot failed: …` line',
  },
  'boot-error': {
    level: 'info',
    alsoAt: ['error'],
    description:
      'a boot step failed (e.g. the config file cannot be read); the message is the error. The CLI then exits with status 1; in the JSON log format its last line is this event at level error, `server.Boot failed: <error>`',
  },
  'boot-plugin-loaded': {
    level: 'info',
    sondeOnly: true,
    description:
      "a plugin of the config's `plugins` list registered its collectors, sinks and translators; the message names them",
  },
  'boot-fd-limit': {
    level: 'error',
    sondeOnly: true,
    description:
      'the limit on open files (RLIMIT_NOFILE) is below what the loaded monitors need (about 32 plus 5 per monitor); the message gives both and how to raise the limit. sonde runs on; monitors that hit EMFILE retry',
  },
  'boot-success': {
    level: 'info',
    description: 'boot finished: `booted in <duration>, loaded <n> monitors`',
  },
  'plans-load-shared': { level: 'info', description: 'loading the shared plans (config `plans`)' },
  'plans-load-monitor': { level: 'info', description: "loading a monitor's own plans" },
  'plan-freq-warning': {
    level: 'warn',
    sondeOnly: true,
    description: "a plan level's freq is not a whole number of seconds; it still runs",
  },
  'plan-warning': {
    level: 'notice',
    sondeOnly: true,
    description:
      'a plan file has a key sonde ignores (`<file>: line <n>: unknown key <level>.<key> (did you mean …?), ignored`) or lists a metric its domain does not have (`<file>: line <n>: at <level>/<domain>: unknown metric …`); printed at every log level, once per file and line; the plan still loads',
  },
  // Server
  'server-run': { level: 'info', description: 'boot is over, sonde runs its monitors and listeners' },
  'server-stopped': {
    level: 'error',
    alsoAt: ['notice'],
    description:
      'sonde stops: a notice `caught <signal>, stopping` on a signal; an error when it must exit before the graceful stop is done (deadline, second signal)',
  },
  'server-api-error': {
    level: 'error',
    description:
      'the API (or exporter) listener failed to listen or answer, or the API token file cannot be read',
  },
  'server-panic': {
    level: 'error',
    sondeOnly: true,
    description: 'an exception or promise rejection no part of sonde caught; sonde keeps running',
  },
  'server-output-closed': {
    level: 'error',
    alsoAt: ['notice'],
    sondeOnly: true,
    description:
      'stdout or stderr failed (its reader went away, e.g. `write EPIPE`): from then on sonde drops what it would print there. Reported once per stream on the other one: an error on stderr when stdout closed, a notice on stdout when stderr closed',
  },
  'server-probe': {
    level: 'info',
    sondeOnly: true,
    description: 'the probe listener (`/probe`) listens; the message is its address',
  },
  'server-probe-error': {
    level: 'error',
    sondeOnly: true,
    description: 'the probe listener failed to listen',
  },
  'server-reload': {
    level: 'notice',
    sondeOnly: true,
    description:
      'SIGHUP: reloading the monitors, the reload is done, or a setting that needs a restart changed',
  },
  'server-reload-error': {
    level: 'error',
    sondeOnly: true,
    description: 'SIGHUP: the reload failed; the running config and monitors are kept',
  },
  'server-debug': {
    level: 'notice',
    sondeOnly: true,
    description: 'SIGUSR1 switched debugging on or off (JSON format; the text format writes a plain line)',
  },
  'event-listener-error': {
    level: 'error',
    sondeOnly: true,
    description:
      'a subscriber of the event stream threw (reported the first time each subscriber throws); the others still get every event',
  },
  // Monitors
  'monitors-loading': { level: 'info', description: 'loading the monitors (config, files, discovery)' },
  'monitors-loaded': { level: 'info', description: 'the monitors are loaded; the message says how many' },
  'monitors-starting': { level: 'info', description: 'starting the loaded monitors' },
  'monitors-started': { level: 'info', description: 'every loaded monitor has been started' },
  'monitors-stoploss': {
    level: 'error',
    description: 'a reload would remove more monitors than the stop-loss allows; nothing is changed',
  },
  'monitors-shard': {
    level: 'info',
    sondeOnly: true,
    description: 'with `--shard`: how many monitors this shard keeps',
  },
  'monitors-autodetect': {
    level: 'info',
    sondeOnly: true,
    description: 'local auto-detection: which local server was chosen, or none',
  },
  'monitors-aws': {
    level: 'info',
    sondeOnly: true,
    description: 'RDS discovery: DB instances and monitors found in a region',
  },
  'monitors-aws-error': {
    level: 'error',
    sondeOnly: true,
    description: 'RDS discovery failed in a region that `auto` lists; it is skipped',
  },
  'monitors-warning': {
    level: 'error',
    sondeOnly: true,
    description: 'a monitor is kept but something about it is wrong (e.g. a my.cnf monitor without an id)',
  },
  'mycnf-warning': {
    level: 'warn',
    sondeOnly: true,
    description:
      'a my.cnf key sonde does not read: the file and the key are named, the key is ignored (once per file and key)',
  },
  'exporter-duplicate-series': {
    level: 'warn',
    sondeOnly: true,
    description:
      'a scrape had two series with the same name and labels: the later one is left out (counted in `sonde_exporter_duplicate_series_total`); told once per series',
  },
  'web-config-reload-error': {
    level: 'error',
    sondeOnly: true,
    description:
      'a changed web configuration file (or a certificate it names) cannot be used: the running configuration is kept (once per change)',
  },
  'monitor-started': {
    level: 'info',
    description: 'a monitor is running; the message is its DSN, password redacted',
  },
  'monitor-stopped': {
    level: 'info',
    description: 'a monitor stopped; the message is its id (the monitor field is empty)',
  },
  'monitor-reload': {
    level: 'info',
    sondeOnly: true,
    description:
      'POST /-/reload or SIGHUP: a monitor read its connection settings (my.cnf, password and TLS files) again',
  },
  'monitor-reload-error': {
    level: 'error',
    sondeOnly: true,
    description:
      'POST /-/reload or SIGHUP: the connection settings cannot be read (a broken my.cnf, a missing TLS file); the running ones are kept',
  },
  'monitor-error': {
    level: 'error',
    description: 'a monitor failed to start (connect, plans, exporter); it retries',
  },
  'db-reload-password-error': {
    level: 'info',
    description: 'reading a password again (file, command, AWS) after an access-denied error failed',
  },
  // Plans and the level collector
  'change-plan': {
    level: 'info',
    description: 'a plan change begins: `state:<s> plan:<p> -> state:<s> plan:<p>`',
  },
  'change-plan-success': { level: 'info', description: 'the new plan is active' },
  'change-plan-error': { level: 'info', description: 'the new plan cannot be looked up; retried every 2 s' },
  'lco-change-plan-error': {
    level: 'error',
    sondeOnly: true,
    description: 'a plan change failed unexpectedly and was abandoned',
  },
  'lco-paused': {
    level: 'info',
    description: 'the level collector paused (no plan active, or a plan change)',
  },
  'lco-collect-panic': {
    level: 'error',
    description: "the level collector's collect loop threw unexpectedly; the loop goes on at the next tick",
  },
  'lco-receiver-panic': {
    level: 'error',
    description:
      'the sink worker threw unexpectedly (a sink or a step before the sinks hit a programming error); the batch is dropped for that sink, the worker goes on with the next batches',
  },
  'lco-metrics-fault': {
    level: 'error',
    description: 'the sink queue (10 batches) is full: sinks are too slow, the batch is dropped',
  },
  'state-change-begin': {
    level: 'info',
    description:
      'the plan changer saw a new state (`standby` when the HA hook says so); waiting to confirm it. Also `standby` / `active` when the HA hook changes its answer while plan changing is off',
  },
  'state-change-end': {
    level: 'info',
    description:
      'the new state (or the first one observed) is confirmed and its plan is activated (or collection paused: `offline` or `standby` without a plan)',
  },
  'state-change-abort': {
    level: 'info',
    description: 'the server went back to the current state before the change',
  },
  'ha-error': {
    level: 'error',
    sondeOnly: true,
    description:
      'the HA hook threw, rejected or answered something else than a boolean: `HA isActive failed, staying <active|standby>: <error>`; the last answer is kept (standby before the first); once per run of failures',
  },
  'repl-soruce-change': {
    level: 'info',
    description:
      'the heartbeat reader sees a different source server id: `<old id> to <new id>` (name as Blip spells it)',
  },
  // The engine
  'engine-prepare': { level: 'info', description: 'preparing the collectors of a plan' },
  'engine-prepare-success': { level: 'info', description: 'the plan is prepared and swapped in' },
  'engine-prepare-error': { level: 'error', description: 'preparing the plan failed; retried with backoff' },
  'engine-collect-error': {
    level: 'error',
    description: 'a collection had errors: `<plan>/<level>/<interval>: partial success: …` or `failed: …`',
  },
  'collector-error': {
    level: 'error',
    description:
      'a domain failed: `<plan>/<level>/<interval>/<domain>: <error>` (after the plan’s error policy)',
  },
  'collector-panic': {
    level: 'error',
    description:
      'a collector threw a programming error (not a database, network or typed collector error): `<plan>/<level>/<interval>/<domain>: <error>`; recorded as the domain’s error, the other domains go on',
  },
  'collector-fault': {
    level: 'error',
    description: 'a domain is due while its previous run still runs: the previous run is cancelled',
  },
  'drop-metrics-fence': {
    level: 'error',
    description:
      'a cancelled run (collector-fault, plan stopped) finished after its collection: its values are dropped',
  },
  'drop-metrics-flush': {
    level: 'error',
    description:
      'values a domain returned late (after its collection was sent) could not go out with a later batch: plan changed, collector stopped, or no receiver; names the domain',
  },
  // Sinks
  'sink-send-error': {
    level: 'error',
    description: 'a sink failed to send: `<sink> :<error>` (space before the colon)',
  },
  'sink-server-error': {
    level: 'error',
    description: 'the receiver accepted the send but reported errors or rejected points',
  },
  'sink-invalid-metrics': {
    level: 'error',
    description: 'a sink made no data point out of a non-empty batch',
  },
} as const satisfies Record<string, EventSpec>;

/** Every event name sonde emits. */
export type EventName = keyof typeof EVENT_NAMES;

/** Whether `name` is in the catalogue. */
export function isEventName(name: string): name is EventName {
  return Object.hasOwn(EVENT_NAMES, name);
}

/** One event as the stream delivers it: secrets already scrubbed from the message. */
export interface AgentEvent {
  /** When it was emitted. */
  time: Date;
  name: EventName;
  level: EventLevel;
  /** The monitor it concerns; '' when it concerns the agent. */
  monitorId: string;
  message: string;
}

/**
 * A subscriber of the event stream. It runs synchronously where the event is emitted, so it
 * should be quick; a promise an async listener returns is not awaited, only watched for a
 * rejection.
 */
export type EventListener = (e: AgentEvent) => void;

/**
 * The agent's event output, replaced (Blip's event receiver): it gets every event, at every
 * level, instead of the printed lines. Like a listener it runs synchronously where the event
 * is emitted; a promise it returns is only watched for a rejection.
 */
export type EventReceiver = (e: AgentEvent) => void;

/** Something that delivers events to subscribers (the agent's event log). */
export interface EventStream {
  /** Receive every event, all levels, whatever is printed; returns the unsubscribe function. */
  subscribe(listener: EventListener): () => void;
}

/**
 * Events: emit by name. Error events always print; info events print from level info or
 * while debugging; debug lines only while debugging.
 */
export interface Events {
  info(event: EventName, monitorId: string, message?: string): void;
  /** A warning (printed from level `warn`); absent: the caller says it as a debug line. */
  warn?(event: EventName, monitorId: string, message?: string): void;
  error(event: EventName, monitorId: string, message: string): void;
  /**
   * Free-form debug line, printed only while debugging is on. Pass a function when the text
   * costs anything to build: it is called only while debugging.
   */
  debug(message: string | (() => string), monitorId?: string): void;
  /**
   * Deliver an event to the stream's subscribers without printing it: a line a print
   * throttle holds back (the monitor's error gate) is still an event. Absent: nothing to do.
   */
  unprinted?(level: EventLevel, event: EventName, monitorId: string, message: string): void;
}

/** An Events that drops everything (tests, tools). */
export const NO_EVENTS: Events = {
  info: () => undefined,
  error: () => undefined,
  debug: () => undefined,
};
