/**
 * The `datadog` sink's records: Datadog's public logs intake (`POST
 * https://http-intake.logs.<DD_SITE>/api/v2/logs`, header `DD-API-KEY`, a JSON array of log
 * entries, gzip when `api-compress` is on).
 *
 * Intake limits per request: at most 1000 entries, at most 5 MB uncompressed; entries are
 * packed into as few requests as fit both. One entry per record:
 *
 * | entry field | value |
 * |---|---|
 * | `ddsource`, `service` | `sonde` |
 * | `ddtags` | the monitor's tags and `monitor_id:<id>`, `k:v` comma-separated |
 * | `message` | the record's body, else its event name |
 * | `timestamp` | the record's time, Unix ms |
 * | `status` | the record's severity (`info`, `warn`, `error`, `debug`) |
 * | `evt.name` | the event name (`db.server.top_query`…) |
 * | `sonde.domain` | the domain |
 * | every record attribute | under its own name (`db.query.text`…) |
 *
 * Answers: 2xx is success; 408, 429 and 5xx (and transport errors) reject so the retry
 * buffer resends; any other status cannot succeed by resending and is reported as one
 * `sink-send-error` event, the entries dropped.
 */
import type { LogRecord, Records } from '../core/records.js';

/** Entries per request and uncompressed bytes per request the intake accepts. */
export const DATADOG_LOGS_MAX_ENTRIES = 1000;
export const DATADOG_LOGS_MAX_BYTES = 5 * 1024 * 1024;

/** `https://http-intake.logs.<site>/api/v2/logs`, site from `DD_SITE` (default `datadoghq.com`). */
export function datadogLogsUrl(env: NodeJS.ProcessEnv = process.env): string {
  const site = env['DD_SITE'] || 'datadoghq.com';
  return `https://http-intake.logs.${site}/api/v2/logs`;
}

/** One intake entry of one record. */
export function datadogLogEntry(
  domain: string,
  r: LogRecord,
  monitorId: string,
  tags: Readonly<Record<string, string>>,
): Record<string, unknown> {
  const ddtags = [
    ...Object.keys(tags)
      .sort()
      .map((k) => `${k}:${tags[k] ?? ''}`),
    `monitor_id:${monitorId}`,
  ].join(',');
  return {
    ...r.attributes,
    ddsource: 'sonde',
    service: 'sonde',
    ddtags,
    message: r.body ?? r.event,
    timestamp: r.time,
    status: r.severity,
    'evt.name': r.event,
    'sonde.domain': domain,
  };
}

/** The batch's entries as JSON array bodies, each within the intake's limits. */
export function datadogLogBodies(batch: Records, tags: Readonly<Record<string, string>>): string[] {
  const bodies: string[] = [];
  let chunk: string[] = [];
  let bytes = 2;
  const flush = (): void => {
    if (chunk.length > 0) bodies.push(`[${chunk.join(',')}]`);
    chunk = [];
    bytes = 2;
  };
  for (const domain of Object.keys(batch.records).sort()) {
    for (const r of batch.records[domain] ?? []) {
      const json = JSON.stringify(datadogLogEntry(domain, r, batch.monitorId, tags));
      const size = Buffer.byteLength(json) + 1;
      if (
        chunk.length >= DATADOG_LOGS_MAX_ENTRIES ||
        (chunk.length > 0 && bytes + size > DATADOG_LOGS_MAX_BYTES)
      )
        flush();
      chunk.push(json);
      bytes += size;
    }
  }
  flush();
  return bodies;
}

/** Statuses worth sending again. */
export function datadogLogsRetryable(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}
