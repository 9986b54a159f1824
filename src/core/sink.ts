/**
 * The sink contract.
 */
import type { Events } from './events.js';
import type { Metrics } from './metrics.js';
import type { Records } from './records.js';
import type { StatusWriter } from './status.js';

export interface Sink {
  /** Lowercase name used in status keys and events. */
  readonly name: string;
  send(metrics: Metrics, signal?: AbortSignal): Promise<void>;
  /**
   * Send one collection's records; present exactly when the sink's registration says
   * `records: true`. A sink without it is never given records.
   */
  sendRecords?(records: Records, signal?: AbortSignal): Promise<void>;
  close?(): Promise<void>;
}

export interface SinkContext {
  sinkName: string;
  monitorId: string;
  /** Option values, already interpolated. */
  options: Record<string, string>;
  /** The monitor's resolved tags. */
  tags: Record<string, string>;
  status: StatusWriter;
  events: Events;
  /** http.proxy, for sinks that make outbound HTTP requests */
  httpProxy?: string;
  /** The monitor's address (`host:port` or `unix://<path>`), e.g. otlp's `mysql.instance.endpoint`. */
  monitorAddress?: string;
  /**
   * The agent's sink translators (`metric-translator`: built-in, plugins' and the embedding
   * program's); absent: the process-wide registry.
   */
  translators?: ReadonlyMap<string, SinkTranslator>;
  /**
   * The HTTP client this sink posts with, when the embedding program's HTTP client factory
   * made one for it; else the sinks' own (`httpPost` in sinks/http.ts).
   */
  httpClient?: HttpClient;
}

/** One outbound HTTP POST; the answer has any status (the sink decides what counts as success). */
export interface HttpPost {
  url: string;
  headers?: Record<string, string>;
  /** `Basic <base64>`, sent as `Authorization`. */
  authorization?: string;
  body: Uint8Array | string;
  /** Aborts the request (the sink's retry deadline). */
  signal?: AbortSignal;
  /** Give up after this many milliseconds. */
  timeoutMs?: number;
}

/** What came back from an {@link HttpPost}. */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** `Content-Type` in lowercase, '' when absent. */
  contentType: string;
  body: Uint8Array;
}

/** An HTTP client for sinks: POST a request, resolve with the answer, reject on a transport error. */
export type HttpClient = (req: HttpPost) => Promise<HttpAnswer>;

export interface SinkRegistration {
  name: string;
  description: string;
  /** The sink carries records (see records.ts) as well as metrics: its sinks have `sendRecords`. */
  records?: boolean;
  /** Build the sink; throws with a clear message on bad options. */
  create(ctx: SinkContext): Sink;
  /**
   * Replace the sink already registered under this name (a built-in one, say). Without it a
   * name taken twice is an error; with it, a name nobody registered is an error too.
   */
  replace?: boolean;
}

/**
 * A sink metric translator: maps a domain and a metric name to the full metric name the
 * datadog and signalfx sinks send (their `metric-translator` option names one).
 */
export type SinkTranslator = (domain: string, metric: string) => string;
