/**
 * The retry decorator: a LIFO buffer in front of a network sink. Newest data goes out
 * first, older buffered collections follow, and while the backend is down the oldest
 * entries beyond `buffer-size` fall off (counted, and shown in status). `send` never fails
 * and never waits; inner errors become one `sink-send-error` event per attempt and the
 * status key `error:<name>-send`.
 *
 *     send(m) ─► push m on the stack (count what falls off) ─► start the loop unless running
 *     loop: while the stack is not empty and the sink is open {
 *             wait (0 after an idle spell, send-retry-wait between two good sends,
 *                   the next backoff step after a failure);
 *             inner.send(top, deadline now + send-timeout);
 *             success → remove exactly that entry, reset the backoff;
 *             failure → one event, status text, keep the entry }
 *
 * Differences from Blip, on purpose:
 * - the retry options are stripped before the inner sink sees them (`parseRetryOptions`);
 * - each inner send gets send-timeout as an AbortSignal, and a send that ignores it is
 *   abandoned then, so a hung request never blocks the loop;
 * - `send` returns as soon as the entry is buffered and the loop runs in the background,
 *   so a failing sink never delays the monitor's other sinks nor its queue of collections;
 * - after a failure the loop waits with exponential backoff (500 ms ×1.5, ±50 % jitter,
 *   capped at 30 s, or at send-retry-wait when that is set) instead of retrying every
 *   send-retry-wait, so a sink that keeps failing logs one line per backoff step; Blip's
 *   fixed pace logs several lines a second per refusing sink.
 */
import type { Events } from '../core/events.js';
import { errorMessage } from '../core/errors.js';
import type { Metrics } from '../core/metrics.js';
import { recordCount, type Records } from '../core/records.js';
import type { Sink, SinkContext } from '../core/sink.js';
import type { StatusWriter } from '../core/status.js';
import { monitorKeyOf } from '../core/status-keys.js';
import { untilAborted, withDeadline } from '../util/abort.js';
import { Backoff } from '../util/backoff.js';
import { DeltaSink } from './delta.js';
import { formatDuration, parseDuration } from '../util/duration.js';
import { formatTimestampMs } from '../util/time.js';

/** Option keys the retry decorator reads from the wrapped sink's option map. */
export const RETRY_OPTION_KEYS: readonly string[] = ['buffer-size', 'send-timeout', 'send-retry-wait'];

/** Parsed retry settings. */
export interface RetryConfig {
  /** Stack capacity (entries = whole `Metrics`). */
  bufferSize: number;
  /** Deadline of each inner send. */
  sendTimeoutMs: number;
  /** Pause between two good inner sends while a backlog drains. */
  sendRetryWaitMs: number;
  /** Longest wait after a failure: 30 s, or send-retry-wait when that option is set. */
  backoffCapMs: number;
}

/** First wait after a failure; each further failure waits 1.5 times longer, up to the cap. */
export const RETRY_BACKOFF_FIRST_MS = 500;

/** Defaults: `buffer-size: 60`, `send-timeout: 5s`, `send-retry-wait: 200ms`, backoff cap 30 s. */
export const RETRY_DEFAULTS: Readonly<RetryConfig> = {
  bufferSize: 60,
  sendTimeoutMs: 5000,
  sendRetryWaitMs: 200,
  backoffCapMs: 30_000,
};

/**
 * Split a sink's options into the retry settings and the rest (which the inner sink gets).
 * Throws on a bad value: `invalid retry buffer-size: <n>: must be greater than zero`,
 * `invalid retry buffer-size: <v>: not an integer`, `invalid retry send-timeout: <parse error>`.
 */
export function parseRetryOptions(options: Record<string, string>): {
  config: RetryConfig;
  rest: Record<string, string>;
} {
  const config: RetryConfig = { ...RETRY_DEFAULTS };
  const rest: Record<string, string> = {};
  for (const [k, v] of Object.entries(options)) {
    switch (k) {
      case 'buffer-size': {
        if (!/^[+-]?\d+$/.test(v)) throw new Error(`invalid retry buffer-size: ${v}: not an integer`);
        const n = Number.parseInt(v, 10);
        if (n < 0) throw new Error(`invalid retry buffer-size: ${n}: must be greater than zero`);
        config.bufferSize = n === 0 ? RETRY_DEFAULTS.bufferSize : n;
        break;
      }
      case 'send-timeout':
      case 'send-retry-wait': {
        let ms: number;
        try {
          ms = parseDuration(v);
        } catch (err) {
          throw new Error(`invalid retry ${k}: ${errorMessage(err)}`);
        }
        if (k === 'send-timeout') {
          config.sendTimeoutMs = ms;
        } else {
          config.sendRetryWaitMs = ms;
          config.backoffCapMs = ms;
        }
        break;
      }
      default:
        rest[k] = v;
    }
  }
  return { config, rest };
}

/** Time source of the decorator; tests pass a fake one. */
export interface RetryClock {
  /** Milliseconds, monotonic enough for deadlines. */
  now(): number;
  /** Resolve after `ms`, or early when `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<unknown>;
}

/** Sleep on a timer that does not keep the process alive: a retry loop alone never should. */
function unrefSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    timer.unref();
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

const REAL_CLOCK: RetryClock = { now: () => Date.now(), sleep: unrefSleep };

/** Settings and plumbing of one retry decorator. Unset settings take RETRY_DEFAULTS. */
export interface RetryOptions extends Partial<RetryConfig> {
  monitorId: string;
  events: Events;
  /** Where `error:<name>-send` is written and removed. */
  status?: StatusWriter;
  /** The inner sink's status writer, which shows the drop count in `<name>` (see {@link DropNoteStatus}). */
  sinkStatus?: DropNoteStatus;
  clock?: RetryClock;
  /** Jitter source of the backoff (0 ≤ x < 1); default Math.random. */
  random?: () => number;
}

/** One buffered collection: its metrics, or its records (record-carrying sinks). */
type Entry = { readonly metrics: Metrics } | { readonly records: Records };

/** Status key holding the last inner error until the next inner success. */
export const retryErrorKey: (sinkName: string) => string = monitorKeyOf.sinkSendError;

/**
 * The status writer handed to the inner sink: passes every key through and appends the
 * decorator's note (`<n> collections dropped since <ts>`) to the inner sink's `<name>` text,
 * so the drop count stays visible after the sink recovers.
 */
export class DropNoteStatus implements StatusWriter {
  readonly #base: StatusWriter;
  readonly #key: string;
  #last: string | undefined;
  #note = '';

  constructor(base: StatusWriter, sinkName: string) {
    this.#base = base;
    this.#key = monitorKeyOf.sink(sinkName);
  }

  set(key: string, value: string): void {
    if (key !== this.#key) {
      this.#base.set(key, value);
      return;
    }
    this.#last = value;
    this.#write();
  }

  delete(key: string): void {
    if (key === this.#key) this.#last = undefined;
    this.#base.delete(key);
  }

  /** Set the note and rewrite the `<name>` key with it. */
  note(text: string): void {
    this.#note = text;
    this.#write();
  }

  #write(): void {
    if (this.#last === undefined && this.#note === '') return;
    const parts = [this.#last, this.#note].filter((p) => p !== undefined && p !== '');
    this.#base.set(this.#key, parts.join('; '));
  }
}

/** A sink wrapped by the retry decorator; `name` is the inner sink's. */
export class RetrySink implements Sink {
  readonly name: string;
  /** Present when the inner sink takes records: they share the buffer with the metrics. */
  readonly sendRecords?: (records: Records) => Promise<void>;
  readonly #inner: Sink;
  readonly #cfg: RetryConfig;
  readonly #opts: RetryOptions;
  readonly #clock: RetryClock;
  readonly #backoff: Backoff;
  /** Bottom (oldest) first, top (newest) last. */
  #stack: Entry[] = [];
  #loop: Promise<void> | undefined;
  /** Wait before the loop's next attempt. */
  #wait = 0;
  /** The last attempt failed: the loop is backing off. */
  #failing = false;
  /** True while the loop waits out a backoff step after a failure. */
  #resting = false;
  #settled: Array<() => void> = [];
  #dropped = 0;
  #droppedSince: Date | undefined;
  #closed = new AbortController();

  constructor(inner: Sink, options: RetryOptions) {
    // Retry resends out of order; deltas computed behind it would be wrong.
    if (inner instanceof DeltaSink) throw new Error('retry sink cannot wrap a delta sink');
    this.#inner = inner;
    this.name = inner.name;
    this.#opts = options;
    this.#clock = options.clock ?? REAL_CLOCK;
    this.#cfg = {
      bufferSize: options.bufferSize ?? RETRY_DEFAULTS.bufferSize,
      sendTimeoutMs: options.sendTimeoutMs ?? RETRY_DEFAULTS.sendTimeoutMs,
      sendRetryWaitMs: options.sendRetryWaitMs ?? RETRY_DEFAULTS.sendRetryWaitMs,
      backoffCapMs: options.backoffCapMs ?? RETRY_DEFAULTS.backoffCapMs,
    };
    const first = Math.min(RETRY_BACKOFF_FIRST_MS, this.#cfg.backoffCapMs);
    this.#backoff = new Backoff(this.#cfg.backoffCapMs, first, 1.5, options.random);
    if (inner.sendRecords !== undefined) this.sendRecords = async (records) => this.#push({ records });
  }

  /** Settings in effect. */
  get config(): Readonly<RetryConfig> {
    return this.#cfg;
  }

  /** Collections waiting in the buffer (including one being sent). */
  get buffered(): number {
    return this.#stack.length;
  }

  /** Collections that fell off the bottom of a full buffer since the sink was made. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Buffer `metrics` and start the loop unless it runs. Never fails, never waits. */
  async send(metrics: Metrics): Promise<void> {
    this.#push({ metrics });
  }

  #push(entry: Entry): void {
    if (this.#closed.signal.aborted) return;
    this.#stack.push(entry);
    // Full: the bottom (oldest) entry falls off, and is counted.
    if (this.#stack.length > this.#cfg.bufferSize) {
      this.#dropped += this.#stack.length - this.#cfg.bufferSize;
      this.#stack.splice(0, this.#stack.length - this.#cfg.bufferSize);
      this.#droppedSince ??= new Date();
      this.#opts.sinkStatus?.note(this.#dropNote());
    }
    if (this.#loop) return; // the running loop will get to it
    this.#loop = this.#run()
      .catch((err: unknown) => {
        // #attempt handles inner errors itself; this only guards against a broken clock.
        this.#opts.events.error(
          'sink-send-error',
          this.#opts.monitorId,
          `${this.name} :${errorMessage(err)}`,
        );
      })
      .finally(() => {
        this.#loop = undefined;
        this.#wake();
      });
  }

  /**
   * Resolves once nothing is in flight: the loop has emptied the buffer, or it is waiting
   * out a backoff step after a failure (tests, shutdown).
   */
  async idle(): Promise<void> {
    while (this.#loop && !this.#resting) {
      await new Promise<void>((resolve) => this.#settled.push(resolve));
    }
  }

  /** Stop the loop (the running inner send is aborted), drop the buffer, close the inner sink. */
  async close(): Promise<void> {
    this.#closed.abort(new Error('sink closed'));
    await this.#loop;
    this.#stack = [];
    await this.#inner.close?.();
  }

  #wake(): void {
    const waiting = this.#settled;
    this.#settled = [];
    for (const resolve of waiting) resolve();
  }

  /** `<n> collections dropped since <ts>`, or '' before the first drop. */
  #dropNote(): string {
    if (!this.#droppedSince) return '';
    return `${this.#dropped} collections dropped since ${formatTimestampMs(this.#droppedSince)}`;
  }

  async #run(): Promise<void> {
    const closed = this.#closed.signal;
    while (this.#stack.length > 0 && !closed.aborted) {
      if (this.#wait > 0) {
        this.#resting = this.#failing;
        if (this.#resting) this.#wake();
        await this.#clock.sleep(this.#wait, closed);
        this.#resting = false;
        if (closed.aborted) break;
      }
      const entry = this.#stack.at(-1);
      if (!entry) break;
      this.#failing = !(await this.#attempt(entry));
      if (this.#failing) {
        this.#wait = this.#backoff.next();
      } else {
        this.#backoff.reset();
        this.#wait = this.#cfg.sendRetryWaitMs;
      }
    }
    // The buffer is empty: the next collection goes out at once.
    if (!this.#failing) this.#wait = 0;
  }

  /** The debug line of one good inner send. */
  #sentLine(e: Entry, ms: number): string {
    const m = 'metrics' in e ? e.metrics : e.records;
    const what =
      'metrics' in e
        ? `${Object.values(e.metrics.values).reduce((n, list) => n + list.length, 0)} values`
        : `${recordCount(e.records)} records`;
    return `sink ${this.name}: delivered ${m.plan}/${m.level}/${m.interval}: ${what} in ${formatDuration(ms)}, ${this.#stack.length} buffered`;
  }

  /** The inner send of one entry. */
  #innerSend(e: Entry, signal: AbortSignal): Promise<void> {
    if ('metrics' in e) return this.#inner.send(e.metrics, signal);
    // Only record entries of an inner sink that takes records are ever buffered.
    return this.#inner.sendRecords?.(e.records, signal) ?? Promise.resolve();
  }

  /** One inner send of `entry` under send-timeout; true on success. */
  async #attempt(entry: Entry): Promise<boolean> {
    const { sendTimeoutMs } = this.#cfg;
    const errorKey = monitorKeyOf.sinkSendError(this.name);
    const deadline = withDeadline(
      this.#closed.signal,
      sendTimeoutMs,
      `send-timeout ${formatDuration(sendTimeoutMs)} exceeded`,
    );
    const t0 = Date.now();
    try {
      await untilAborted(this.#innerSend(entry, deadline.signal), deadline.signal);
      // Remove that exact entry wherever it is now; gone if it was pushed off the bottom.
      const i = this.#stack.indexOf(entry);
      if (i >= 0) this.#stack.splice(i, 1);
      const ms = Date.now() - t0;
      this.#opts.events.debug(() => this.#sentLine(entry, ms), this.#opts.monitorId);
      this.#opts.status?.delete(errorKey);
      return true;
    } catch (err) {
      if (this.#closed.signal.aborted) return false;
      const text = `${this.name} :${errorMessage(err)}`;
      this.#opts.events.error('sink-send-error', this.#opts.monitorId, text);
      const notes = [`${this.#stack.length} buffered`, this.#dropNote()].filter((n) => n !== '');
      this.#opts.status?.set(errorKey, `at ${formatTimestampMs(new Date())}: ${text} (${notes.join('; ')})`);
      return false;
    } finally {
      deadline.done();
    }
  }
}

/** Wrap `inner` in the retry decorator. */
export function withRetry(inner: Sink, options: RetryOptions): RetrySink {
  return new RetrySink(inner, options);
}

/**
 * The factory step for a retried sink: read and strip the retry options from `ctx.options`,
 * build the inner sink from the rest, wrap it. `build` sees the options without the retry
 * keys, so its own unknown-key check stays strict, and a status writer that adds the drop
 * count to its `<name>` text.
 */
export function createRetried(ctx: SinkContext, build: (ctx: SinkContext) => Sink): RetrySink {
  const { config, rest } = parseRetryOptions(ctx.options);
  const sinkStatus = new DropNoteStatus(ctx.status, ctx.sinkName);
  const inner = build({ ...ctx, options: rest, status: sinkStatus });
  return withRetry(inner, {
    ...config,
    monitorId: ctx.monitorId,
    events: ctx.events,
    status: ctx.status,
    sinkStatus,
  });
}
