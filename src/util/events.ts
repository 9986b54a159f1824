/**
 * The event printer: Blip's only logging.
 *
 *     2024/07/19 10:00:00.123456 [server-stopped           ] [] caught SIGTERM, stopping
 *
 * Error events always go to stderr. Info events go to stdout only with `--log` or while
 * debugging, else they are dropped. Debug lines go to stderr only while debugging, as
 * `YYYY/MM/DD HH:MM:SS.uuuuuu DEBUG <file>:<line> <message>` (Go's log.Lshortfile shape).
 *
 * Debug lines are plain text rather than pino: pino writes JSON, and bending it to this
 * line format would take a custom transport for what is one string template.
 */
import type { Events } from '../core/events.js';
import { formatEventTime } from './time.js';

/** A text sink for lines: process.stdout / process.stderr, or a collector in tests. */
export interface TextOutput {
  write(text: string): unknown;
}

export interface EventLogOptions {
  /** Info events (default process.stdout). */
  stdout?: TextOutput;
  /** Error events and debug lines (default process.stderr). */
  stderr?: TextOutput;
  /** `--log`: print info events. */
  log?: boolean;
  /** `--debug`: start with debugging on. */
  debug?: boolean;
  /** Clock for the line time (tests). */
  now?: () => Date;
  /** Strings scrubbed from every printed line (see `redact`). */
  secrets?: string[];
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
 * not cut (Go's `%-25s`); an empty message leaves the trailing space, as Blip does.
 */
export function formatEventLine(
  time: Date,
  event: string,
  monitorId: string,
  message: string,
  isError: boolean,
): string {
  return `${formatEventTime(time)} [${event.padEnd(25)}] [${monitorId}] ${isError ? 'ERROR: ' : ''}${message}`;
}

/**
 * `file:line` of the caller of `EventLog.debug`, read from a stack trace. Stack frame 0
 * is this function's caller (debug), frame 1 its caller. Empty when it cannot be read.
 */
function callerLocation(): string {
  const stack = new Error().stack?.split('\n') ?? [];
  // [0] "Error", [1] callerLocation, [2] EventLog.debug, [3] whoever called debug.
  const frame = stack[3] ?? '';
  const m = /([^/\\\s(]+):(\d+):\d+\)?\s*$/.exec(frame);
  return m ? `${m[1]}:${m[2]}` : '';
}

/** Events printed as Blip prints them; see the module comment for where each kind goes. */
export class EventLog implements Events {
  readonly #stdout: TextOutput;
  readonly #stderr: TextOutput;
  readonly #log: boolean;
  readonly #now: () => Date;
  readonly #secrets: string[];
  #debugging: boolean;

  constructor(opts: EventLogOptions = {}) {
    this.#stdout = opts.stdout ?? process.stdout;
    this.#stderr = opts.stderr ?? process.stderr;
    this.#log = opts.log ?? false;
    this.#debugging = opts.debug ?? false;
    this.#now = opts.now ?? (() => new Date());
    this.#secrets = [...(opts.secrets ?? [])];
  }

  /** Whether debug lines (and info events) are printed now. */
  get debugging(): boolean {
    return this.#debugging;
  }

  /** Turn debugging on or off (SIGUSR1 and POST /debug toggle it through this). */
  setDebug(on: boolean): void {
    this.#debugging = on;
  }

  /** Scrub `secret` from every line printed from now on (e.g. a password once loaded). */
  addSecret(secret: string): void {
    if (secret !== '' && !this.#secrets.includes(secret)) this.#secrets.push(secret);
  }

  info(event: string, monitorId: string, message = ''): void {
    if (!this.#log && !this.#debugging) return;
    this.#print(this.#stdout, formatEventLine(this.#now(), event, monitorId, message, false));
  }

  /**
   * An event printed whatever the log settings, as an info line (no `ERROR: `): what an
   * operator must see in a normal run, e.g. that a signal stopped or reloaded sonde.
   */
  notice(event: string, monitorId: string, message = ''): void {
    this.#print(this.#stdout, formatEventLine(this.#now(), event, monitorId, message, false));
  }

  error(event: string, monitorId: string, message: string): void {
    this.#print(this.#stderr, formatEventLine(this.#now(), event, monitorId, message, true));
  }

  debug(message: string): void {
    if (!this.#debugging) return;
    const where = callerLocation();
    const line = `${formatEventTime(this.#now())} DEBUG ${where === '' ? '' : where + ' '}${message}`;
    this.#print(this.#stderr, line);
  }

  /** One write per line; like Go's log, a newline is added unless the text ends with one. */
  #print(out: TextOutput, line: string): void {
    const text = redact(line, this.#secrets);
    out.write(text.endsWith('\n') ? text : text + '\n');
  }
}
