/**
 * The retry decorator: a LIFO buffer in front of a network sink. Newest data
 * goes out first, older buffered collections follow while the send-timeout allows, and
 * while the backend is down the oldest entries beyond `buffer-size` fall off. `send` never
 * fails; inner errors become `sink-send-error` events and the status key `error:<name>-send`.
 *
 *     send(m) ─► push m on the stack ─► (no drain running?) start a drain
 *     drain: L = now + send-timeout; loop { top entry; stop when none or L passed;
 *            sleep send-retry-wait except before the first attempt; inner.send(top, L);
 *            success → remove exactly that entry; failure → event, keep it }
 *
 * Differences from Blip, on purpose (sonde's choices, or required by sonde's caller):
 * - the retry options are stripped before the inner sink sees them (`parseRetryOptions`);
 * - the inner send gets the deadline L as an AbortSignal, and a send that ignores it is
 *   abandoned at L, so a hung request never blocks the drainer;
 * - `send` returns as soon as the entry is buffered and the drain runs in the background.
 *   sonde's level collector awaits each sink in turn from one worker, so a drain that took
 *   the whole send-timeout during an outage would back up its queue (which drops whole
 *   batches) and delay every other sink. Draining in the background keeps the loss to what
 *   the buffer itself drops: the oldest entries beyond buffer-size.
 */
import type { Events } from '../core/events.js';
import { errorMessage } from '../core/errors.js';
import type { Metrics } from '../core/metrics.js';
import type { Sink, SinkContext } from '../core/sink.js';
import type { StatusWriter } from '../core/status.js';
import { monitorKeyOf } from '../core/status-keys.js';
import { untilAborted, withDeadline } from '../util/abort.js';
import { sleep } from '../util/backoff.js';
import { DeltaSink } from './delta.js';
import { formatDuration, parseDuration } from '../util/duration.js';
import { formatTimestampMs } from '../util/time.js';

/** Option keys the retry decorator reads from the wrapped sink's option map. */
export const RETRY_OPTION_KEYS: readonly string[] = ['buffer-size', 'send-timeout', 'send-retry-wait'];

/** Parsed retry settings. */
export interface RetryConfig {
  /** Stack capacity (entries = whole `Metrics`). */
  bufferSize: number;
  /** Drain budget per send, and the inner send's deadline. */
  sendTimeoutMs: number;
  /** Pause between two inner sends of one drain. */
  sendRetryWaitMs: number;
}

/** Defaults: `buffer-size: 60`, `send-timeout: 5s`, `send-retry-wait: 200ms`. */
export const RETRY_DEFAULTS: Readonly<RetryConfig> = {
  bufferSize: 60,
  sendTimeoutMs: 5000,
  sendRetryWaitMs: 200,
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
        if (k === 'send-timeout') config.sendTimeoutMs = ms;
        else config.sendRetryWaitMs = ms;
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
  /** Resolve after `ms`. */
  sleep(ms: number): Promise<unknown>;
}

const REAL_CLOCK: RetryClock = { now: () => Date.now(), sleep: (ms) => sleep(ms) };

/** Settings and plumbing of one retry decorator. Unset settings take RETRY_DEFAULTS. */
export interface RetryOptions extends Partial<RetryConfig> {
  monitorId: string;
  events: Events;
  /** Where `error:<name>-send` is written and removed. */
  status?: StatusWriter;
  clock?: RetryClock;
}

interface Entry {
  readonly metrics: Metrics;
}

/** Status key holding the last inner error until the next inner success. */
export const retryErrorKey: (sinkName: string) => string = monitorKeyOf.sinkSendError;

/** A sink wrapped by the retry decorator; `name` is the inner sink's. */
export class RetrySink implements Sink {
  readonly name: string;
  readonly #inner: Sink;
  readonly #cfg: RetryConfig;
  readonly #opts: RetryOptions;
  readonly #clock: RetryClock;
  /** Bottom (oldest) first, top (newest) last. */
  #stack: Entry[] = [];
  #drain: Promise<void> | undefined;
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
    };
  }

  /** Settings in effect. */
  get config(): Readonly<RetryConfig> {
    return this.#cfg;
  }

  /** Collections waiting in the buffer (including one being sent). */
  get buffered(): number {
    return this.#stack.length;
  }

  /** Buffer `metrics` and start a drain unless one is running. Never fails, never waits. */
  async send(metrics: Metrics): Promise<void> {
    if (this.#closed.signal.aborted) return;
    this.#stack.push({ metrics });
    // Full: the bottom (oldest) entry falls off.
    while (this.#stack.length > this.#cfg.bufferSize) this.#stack.shift();
    if (this.#drain) return; // the running drain will get to it
    this.#drain = this.#run()
      .catch((err: unknown) => {
        // #run handles inner errors itself; this only guards against a broken clock.
        this.#opts.events.error('sink-send-error', this.#opts.monitorId, errorMessage(err));
      })
      .finally(() => {
        this.#drain = undefined;
      });
  }

  /** Resolves once no drain is running (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.#drain) await this.#drain;
  }

  /** Stop draining (the running inner send is aborted), drop the buffer, close the inner sink. */
  async close(): Promise<void> {
    this.#closed.abort(new Error('sink closed'));
    await this.idle();
    this.#stack = [];
    await this.#inner.close?.();
  }

  async #run(): Promise<void> {
    const { sendTimeoutMs, sendRetryWaitMs } = this.#cfg;
    const clock = this.#clock;
    const limit = clock.now() + sendTimeoutMs;
    // The inner send's deadline: L, or shutdown.
    const deadline = withDeadline(
      this.#closed.signal,
      sendTimeoutMs,
      `send-timeout ${formatDuration(sendTimeoutMs)} exceeded`,
    );
    const over = (): boolean => deadline.signal.aborted || clock.now() >= limit;
    try {
      let first = true;
      while (this.#stack.length > 0 && !over()) {
        if (!first) {
          await clock.sleep(sendRetryWaitMs);
          if (over()) break;
        }
        first = false;
        const entry = this.#stack.at(-1);
        if (!entry) break;
        try {
          await untilAborted(this.#inner.send(entry.metrics, deadline.signal), deadline.signal);
          // Remove that exact entry wherever it is now; gone if it was pushed off the bottom.
          const i = this.#stack.indexOf(entry);
          if (i >= 0) this.#stack.splice(i, 1);
          this.#opts.status?.delete(monitorKeyOf.sinkSendError(this.name));
        } catch (err) {
          if (this.#closed.signal.aborted) break;
          const text = errorMessage(err);
          this.#opts.events.error('sink-send-error', this.#opts.monitorId, text);
          this.#opts.status?.set(
            monitorKeyOf.sinkSendError(this.name),
            `at ${formatTimestampMs(new Date())}: ${text} (${this.#stack.length} buffered)`,
          );
        }
      }
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
 * keys, so its own unknown-key check stays strict.
 */
export function createRetried(ctx: SinkContext, build: (ctx: SinkContext) => Sink): RetrySink {
  const { config, rest } = parseRetryOptions(ctx.options);
  const inner = build({ ...ctx, options: rest });
  return withRetry(inner, { ...config, monitorId: ctx.monitorId, events: ctx.events, status: ctx.status });
}
