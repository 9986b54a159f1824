/**
 * Records: the second signal beside metrics. One record is one event the server showed
 * (a top query of the interval, a slow statement, a plan change, a lock wait), shaped as
 * the OpenTelemetry data model's log record with an event name: a time, a severity, an
 * optional body and typed attributes.
 *
 * Collectors return records beside their values (`CollectResult.records`); the level
 * collector hands them, in one {@link Records} batch per collection, to the sinks that
 * accept records (`SinkRegistration.records`); the other sinks are never asked. Records
 * never become metric series.
 *
 * Attribute values: a string, a boolean, or a number; an integer number is sent as an
 * integer (OTLP `intValue`), any other number as a double.
 */

/** An attribute value. */
export type AttributeValue = string | number | boolean;

/** OpenTelemetry severity numbers sonde uses, by name. */
export const Severity = {
  debug: 5,
  info: 9,
  warn: 13,
  error: 17,
} as const;
export type SeverityName = keyof typeof Severity;

/** One record. */
export interface LogRecord {
  /** The event name (`db.server.top_query`, `db.server.query_sample`…). */
  event: string;
  /** When the event happened (or was observed), Unix milliseconds. */
  time: number;
  severity: SeverityName;
  /** Free text, when the event has one (most carry everything in attributes). */
  body?: string;
  attributes: Record<string, AttributeValue>;
}

/** The records of one collection of one monitor: what a record-carrying sink receives. */
export interface Records {
  monitorId: string;
  plan: string;
  level: string;
  interval: number;
  /** When the collection started. */
  begin: Date;
  /** domain → its records, only domains that returned at least one. */
  records: Record<string, LogRecord[]>;
}

/** How many records a batch holds. */
export function recordCount(r: Records): number {
  return Object.values(r.records).reduce((n, list) => n + list.length, 0);
}
