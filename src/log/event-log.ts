/**
 * The event printer: Blip's event lines, levels, and JSON lines.
 *
 *     2024/07/19 10:00:00.123456 [server-stopped           ] [] caught SIGTERM, stopping
 *
 * Text format (the default, Blip's): error events always go to stderr; warn and info events
 * go to stdout when the level lets them through; debug lines go to stderr only while
 * debugging, as `YYYY/MM/DD HH:MM:SS.uuuuuu DEBUG <file>:<line> [<monitor>] <message>` (Go's
 * log.Lshortfile shape). Notices (a signal stopped or reloaded sonde) print at every level.
 *
 * Levels, from the quietest: `error` (the default, as Blip: errors and notices), `warn`
 * (+ warnings), `info` (+ info events; `--log`), `debug` (+ debug lines; `--debug`).
 * Debugging is a switch on top of the level (`--debug`, SIGUSR1, POST /debug): switched off,
 * the configured level applies again; `--log.level=debug` starts it on over level `info`.
 *
 * JSON format: one object per line, written by pino synchronously to stderr, every kind of
 * line on that one stream: `time` (RFC 3339, milliseconds, numeric offset), `level`
 * (`error`, `warn`, `notice`, `info`, `debug`), `event`, `monitor` (absent when none),
 * `message`, and `caller` (`file:line`) on debug lines. Secrets are scrubbed from every field.
 *
 * The event stream: `subscribe` gets every event (not the debug lines) at every level,
 * whatever the level lets print, after it is printed, as an `AgentEvent` with the secrets
 * scrubbed. While nobody subscribes, an event that is not printed costs a level check.
 */
import type { Logger } from 'pino';
import type {
  AgentEvent,
  EventLevel,
  EventListener,
  EventName,
  EventReceiver,
  Events,
  EventStream,
} from '../core/events.js';
import { guardedStderr, guardedStdout } from '../util/std-streams.js';
import type { TextOutput } from './text-output.js';
import { oneLine } from '../util/text.js';
import { formatEventTime } from '../util/time.js';

/** `--log.level`: the quietest first is `error`. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

/** `--log.format`: Blip's text lines, or JSON lines. */
export type LogFormat = 'text' | 'json';
export const LOG_FORMATS: readonly LogFormat[] = ['text', 'json'];

export interface EventLogOptions {
  /** Info and warn events, notices, in the text format (default the guarded process.stdout). */
  stdout?: TextOutput;
  /** Error events and debug lines; every JSON line (default the guarded process.stderr). */
  stderr?: TextOutput;
  /** `--log.level`; wins over `log`. `debug` = level info with debugging on. */
  level?: LogLevel;
  /** `--log`: level info (when no `level`). */
  log?: boolean;
  /** `--debug`: start with debugging on. */
  debug?: boolean;
  /** `--log.format` (default text). */
  format?: LogFormat;
  /** Clock for the line time (tests). */
  now?: () => Date;
  /** Strings scrubbed from every printed line (see `redact`). */
  secrets?: string[];
  /**
   * Replace the printed output (Blip's event receiver): every event, at every level and
   * whatever the level, goes to this function instead of stdout/stderr, secrets scrubbed.
   * Debug lines still print to stderr while debugging (they are not events). Listeners
   * added with `subscribe` get the events as before. If it throws, the first failure is
   * printed to stderr as `event-listener-error` and the receiver keeps getting events.
   */
  receiver?: EventReceiver;
  /**
   * Events that are not printed (still given to the receiver and the listeners). The
   * command line hides `boot-config-invalid`: its boot failure line prints the same message.
   */
  hide?: readonly EventName[];
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Replace every occurrence of any secret in `text` with `...`: defensive scrubbing before
 * anything is printed. Empty secrets are ignored; a secret's URL-encoded form (as it may
 * appear in a DSN) is scrubbed too. One pass, longest match first, so a secret inside
 * another never leaves a fragment behind.
 */
export function redact(text: string, secrets: readonly string[]): string {
  const forms = new Set<string>();
  for (const s of secrets) {
    if (s === '') continue;
    forms.add(s);
    forms.add(encodeURIComponent(s));
  }
  if (forms.size === 0) return text;
  const alternatives = [...forms].sort((a, b) => b.length - a.length).map(escapeRegExp);
  return text.replace(new RegExp(alternatives.join('|'), 'g'), '...');
}

/**
 * One event line, without the trailing newline:
 * `<time> [<event padded to 25>] [<monitor id>] [ERROR: ]<message>`. Longer event names are
 * not cut (Go's `%-25s`); an empty message leaves the trailing space, as Blip does. Trailing
 * newlines of the message are dropped and every other control character in the monitor id
 * or the message is escaped (`oneLine`), so the event is one line whatever text it carries.
 */
export function formatEventLine(
  time: Date,
  event: string,
  monitorId: string,
  message: string,
  isError: boolean,
): string {
  const text = oneLine(message.replace(/\n+$/, ''));
  return `${formatEventTime(time)} [${event.padEnd(25)}] [${oneLine(monitorId)}] ${isError ? 'ERROR: ' : ''}${text}`;
}

/**
 * `file:line` of whoever called `EventLog.debug`, read from a stack trace: the first frame
 * below it that is not another `debug` passing the line on (the monitor's error gate, a
 * wrapper object). Empty when it cannot be read. Only runs while debugging.
 */
function callerLocation(): string {
  const stack = new Error().stack?.split('\n') ?? [];
  // [0] "Error", [1] callerLocation, [2] EventLog.debug, [3…] its callers.
  const frame = stack.slice(3).find((f) => !/\.debug \(/.test(f)) ?? '';
  const m = /([^/\\\s(]+):(\d+):\d+\)?\s*$/.exec(frame);
  return m ? `${m[1]}:${m[2]}` : '';
}

/** Pino's numbers for the levels; `notice` sits between info and warn, as in syslog. */
const RANK = { debug: 20, info: 30, notice: 35, warn: 40, error: 50 } as const;
type LineLevel = keyof typeof RANK;

/** One parsed level or format, or undefined when `text` is none of them. */
export function parseLogLevel(text: string): LogLevel | undefined {
  return (LOG_LEVELS as readonly string[]).includes(text) ? (text as LogLevel) : undefined;
}

export function parseLogFormat(text: string): LogFormat | undefined {
  return (LOG_FORMATS as readonly string[]).includes(text) ? (text as LogFormat) : undefined;
}

/** Makes the JSON writer (log/json-lines.ts), once loadJsonFormat imported it. */
let jsonLogger:
  ((out: TextOutput | undefined, now: () => Date, noticeRank: number) => Logger<'notice'>) | undefined;

/**
 * Import the JSON format's writer (pino). An EventLog with `format: 'json'` needs it loaded
 * first; the text format never does (sonde's library entry loads it for its users).
 */
export async function loadJsonFormat(): Promise<void> {
  jsonLogger ??= (await import('./json-lines.js')).jsonLogger;
}

/** One subscription; `failed` once its listener threw (reported once). */
interface Subscriber {
  readonly listener: EventListener;
  failed: boolean;
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof (v as { then?: unknown } | null | undefined)?.then === 'function';
}

/** Events printed as Blip prints them, or as JSON lines; see the module comment. */
export class EventLog implements Events, EventStream {
  readonly #stdout: TextOutput;
  readonly #stderr: TextOutput;
  readonly #json: Logger<'notice'> | undefined;
  /** The configured level's rank (never debug: debugging is the switch). */
  readonly #rank: number;
  readonly #now: () => Date;
  readonly #secrets: string[];
  #debugging: boolean;
  readonly #receiver: EventReceiver | undefined;
  readonly #hidden: ReadonlySet<EventName>;
  #receiverFailed = false;
  /** Replaced, never changed in place: a delivery in progress keeps its snapshot. */
  #listeners: readonly Subscriber[] = [];

  constructor(opts: EventLogOptions = {}) {
    this.#stdout = opts.stdout ?? guardedStdout();
    this.#stderr = opts.stderr ?? guardedStderr();
    this.#now = opts.now ?? (() => new Date());
    const level = opts.level ?? (opts.log === true ? 'info' : 'error');
    this.#rank = RANK[level === 'debug' ? 'info' : level];
    this.#debugging = opts.debug === true || level === 'debug';
    if (opts.format === 'json' && jsonLogger === undefined) {
      throw new Error('EventLog: the JSON format is not loaded (await loadJsonFormat() first)');
    }
    this.#json = opts.format === 'json' ? jsonLogger?.(opts.stderr, this.#now, RANK.notice) : undefined;
    this.#secrets = [...(opts.secrets ?? [])];
    this.#receiver = opts.receiver;
    this.#hidden = new Set(opts.hide ?? []);
  }

  /** Whether debug lines (and info events) are printed now. */
  get debugging(): boolean {
    return this.#debugging;
  }

  /** The output format. */
  get format(): LogFormat {
    return this.#json ? 'json' : 'text';
  }

  /** Turn debugging on or off (SIGUSR1 and POST /debug toggle it through this). */
  setDebug(on: boolean): void {
    this.#debugging = on;
  }

  /** Scrub `secret` from every line printed from now on (e.g. a password once loaded). */
  addSecret(secret: string): void {
    if (secret !== '' && !this.#secrets.includes(secret)) this.#secrets.push(secret);
  }

  /** Whether a line of this level is printed now (errors and notices always are). */
  #shows(level: LineLevel): boolean {
    return level === 'notice' || RANK[level] >= (this.#debugging ? RANK.debug : this.#rank);
  }

  info(event: EventName, monitorId: string, message = ''): void {
    this.#emit('info', event, monitorId, message);
  }

  /**
   * A warning: something works, but not as the operator may think (printed from level
   * `warn`). In the text format it is an info line on stdout, as Blip has no warnings.
   */
  warn(event: EventName, monitorId: string, message = ''): void {
    this.#emit('warn', event, monitorId, message);
  }

  /**
   * An event printed at every level, as an info line (no `ERROR: `; JSON level `notice`):
   * what an operator must see in a normal run, e.g. that a signal stopped or reloaded sonde.
   */
  notice(event: EventName, monitorId: string, message = ''): void {
    this.#emit('notice', event, monitorId, message);
  }

  error(event: EventName, monitorId: string, message: string): void {
    this.#emit('error', event, monitorId, message);
  }

  /** An event for the subscribers only: a print throttle held its line back. */
  unprinted(level: EventLevel, event: EventName, monitorId: string, message: string): void {
    if (this.#listeners.length > 0) this.#deliver(level, event, monitorId, message);
  }

  /**
   * Receive every event from now on: all levels, printed or not, after it is printed, with
   * secrets scrubbed from its message and monitor id. Debug lines are not events. A listener
   * that throws (or whose promise rejects) does not stop the others; the first time each one
   * fails, an `event-listener-error` event says so. Returns the unsubscribe function.
   */
  subscribe(listener: EventListener): () => void {
    const entry: Subscriber = { listener, failed: false };
    this.#listeners = [...this.#listeners, entry];
    return () => {
      this.#listeners = this.#listeners.filter((e) => e !== entry);
    };
  }

  /**
   * Print the event if its level lets it through (or hand it to the receiver that replaces
   * the printing), then hand it to the subscribers.
   */
  #emit(level: EventLevel, event: EventName, monitorId: string, message: string): void {
    if (this.#receiver !== undefined) this.#receive(this.#receiver, level, event, monitorId, message);
    else if (this.#shows(level) && !this.#hidden.has(event)) this.#event(level, event, monitorId, message);
    // Nothing is built for the stream while nobody listens.
    if (this.#listeners.length > 0) this.#deliver(level, event, monitorId, message);
  }

  #agentEvent(level: EventLevel, name: EventName, monitorId: string, message: string): AgentEvent {
    return {
      time: this.#now(),
      name,
      level,
      monitorId: redact(monitorId, this.#secrets),
      message: redact(message.replace(/\n+$/, ''), this.#secrets),
    };
  }

  /** One event to the receiver; its first failure is printed (not sent to it: no loop). */
  #receive(
    receiver: EventReceiver,
    level: EventLevel,
    name: EventName,
    monitorId: string,
    message: string,
  ): void {
    const failed = (err: unknown): void => {
      if (this.#receiverFailed) return;
      this.#receiverFailed = true;
      const what = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      this.#event(
        'error',
        'event-listener-error',
        '',
        `the event receiver threw (later failures not reported): ${what}`,
      );
    };
    try {
      const back: unknown = receiver(this.#agentEvent(level, name, monitorId, message));
      if (isThenable(back)) back.then(undefined, failed);
    } catch (err) {
      failed(err);
    }
  }

  /** One AgentEvent to every subscriber (a snapshot: (un)subscribing meanwhile waits). */
  #deliver(level: EventLevel, name: EventName, monitorId: string, message: string): void {
    const e = this.#agentEvent(level, name, monitorId, message);
    // Failures are reported after every listener has this event, so none sees the report first.
    let failures: [Subscriber, unknown][] | undefined;
    for (const entry of this.#listeners) {
      try {
        const back: unknown = entry.listener(e);
        if (isThenable(back)) back.then(undefined, (err: unknown) => this.#listenerFailed(entry, err));
      } catch (err) {
        (failures ??= []).push([entry, err]);
      }
    }
    for (const [entry, err] of failures ?? []) this.#listenerFailed(entry, err);
  }

  /**
   * Report a subscriber's first failure as an error event (printed, and delivered to the
   * subscribers). Later failures of the same subscriber are not reported, so a listener that
   * throws on every event cannot double the log, and reporting can never loop.
   */
  #listenerFailed(entry: Subscriber, err: unknown): void {
    if (entry.failed) return;
    entry.failed = true;
    const what = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    this.error('event-listener-error', '', `an event listener threw (later failures not reported): ${what}`);
  }

  /** A debug line while debugging; `message` may be a function, called only then. */
  debug(message: string | (() => string), monitorId = ''): void {
    if (!this.#debugging) return;
    const text = typeof message === 'function' ? message() : message;
    const where = callerLocation();
    if (this.#json) {
      this.#writeJson('debug', 'debug', monitorId, text, where);
      return;
    }
    const id = monitorId === '' ? '' : `[${oneLine(monitorId)}] `;
    const line = `${formatEventTime(this.#now())} DEBUG ${where === '' ? '' : where + ' '}${id}${oneLine(text.replace(/\n+$/, ''))}`;
    this.#print(this.#stderr, line);
  }

  #event(level: EventLevel, event: EventName, monitorId: string, message: string): void {
    if (this.#json) {
      this.#writeJson(level, event, monitorId, message, '');
      return;
    }
    const isError = level === 'error';
    const line = formatEventLine(this.#now(), event, monitorId, message, isError);
    this.#print(isError ? this.#stderr : this.#stdout, line);
  }

  /** One JSON line; every field scrubbed, a trailing newline of the message dropped. */
  #writeJson(level: LineLevel, event: string, monitorId: string, message: string, caller: string): void {
    const scrub = (t: string): string => redact(t, this.#secrets);
    const fields: Record<string, string> = { event: scrub(event) };
    if (monitorId !== '') fields.monitor = scrub(monitorId);
    if (caller !== '') fields.caller = caller;
    this.#json?.[level](fields, scrub(message.replace(/\n+$/, '')));
  }

  /** One write per line (its control characters already escaped), ending with a newline. */
  #print(out: TextOutput, line: string): void {
    out.write(`${redact(line, this.#secrets)}\n`);
  }
}
