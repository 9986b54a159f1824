/**
 * OTLP logs: the encoding of the `otlp` sink's records (see core/records.ts) as an
 * `ExportLogsServiceRequest` (opentelemetry/proto/collector/logs/v1), in binary protobuf or
 * in OTLP/JSON, and the OTLP/JSON helpers the sink's metrics share.
 *
 * | sonde | OTLP |
 * |---|---|
 * | monitor | one ResourceLogs with the same resource attributes as the metrics |
 * | — | one ScopeLogs, scope name `sonde` |
 * | record | LogRecord: `event_name`, `time_unix_nano` and `observed_time_unix_nano`, `severity_number` and `severity_text`, `body` (string, when set), `attributes` |
 * | domain | attribute `sonde.domain` |
 * | string / boolean / integer / other number | AnyValue `string_value` / `bool_value` / `int_value` / `double_value` |
 *
 * OTLP/JSON follows the protobuf JSON mapping of the OTLP specification: lowerCamelCase
 * field names, 64-bit integers as decimal strings, enums as numbers.
 */
import type { AttributeValue, LogRecord, Records } from '../core/records.js';
import { Severity } from '../core/records.js';
import { ProtoWriter } from './protobuf.js';

/** `KeyValue` in OTLP/JSON. */
export interface JsonKeyValue {
  key: string;
  value: Record<string, string | number | boolean>;
}

/** The OTLP/JSON AnyValue of an attribute value. */
export function jsonAnyValue(v: AttributeValue): Record<string, string | number | boolean> {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (Number.isSafeInteger(v)) return { intValue: String(v) };
  return { doubleValue: v };
}

/** Attributes in OTLP/JSON, keys in the given order. */
export function jsonAttributes(attrs: Readonly<Record<string, AttributeValue>>): JsonKeyValue[] {
  return Object.entries(attrs).map(([key, v]) => ({ key, value: jsonAnyValue(v) }));
}

/** `KeyValue{key 1, value 2: AnyValue}` in protobuf. */
function writeKeyValue(w: ProtoWriter, field: number, key: string, v: AttributeValue): void {
  w.message(field, (kv) => {
    kv.string(1, key);
    kv.message(2, (any) => {
      if (typeof v === 'string') any.string(1, v);
      else if (typeof v === 'boolean') any.bool(2, v);
      else if (Number.isSafeInteger(v)) any.varint(3, BigInt(v));
      else any.double(4, v);
    });
  });
}

const nanos = (ms: number): bigint => BigInt(Math.trunc(ms)) * 1_000_000n;

/** The records of a batch in order (domains by name), each with its domain. */
function flat(batch: Records): Array<{ domain: string; r: LogRecord }> {
  const out: Array<{ domain: string; r: LogRecord }> = [];
  for (const domain of Object.keys(batch.records).sort())
    for (const r of batch.records[domain] ?? []) out.push({ domain, r });
  return out;
}

/** The attributes sent for one record: the domain first, then the record's own. */
function recordAttributes(domain: string, r: LogRecord): Record<string, AttributeValue> {
  return { 'sonde.domain': domain, ...r.attributes };
}

/** An encoded request and how many log records it holds. */
export interface OtlpLogsPayload {
  body: Uint8Array;
  records: number;
}

/** Encode a batch as a protobuf `ExportLogsServiceRequest`. */
export function encodeOtlpLogs(batch: Records, resource: Record<string, string>): OtlpLogsPayload {
  const list = flat(batch);
  const observed = nanos(Date.now());
  const req = new ProtoWriter();
  req.message(1, (rl) => {
    rl.message(1, (res) => {
      for (const [k, v] of Object.entries(resource)) writeKeyValue(res, 1, k, v);
    });
    rl.message(2, (sl) => {
      sl.message(1, (scope) => scope.string(1, 'sonde'));
      for (const { domain, r } of list) {
        // LogRecord: 1 time, 2 severity_number, 3 severity_text, 5 body, 6 attributes,
        // 11 observed_time, 12 event_name.
        sl.message(2, (lr) => {
          lr.fixed64(1, nanos(r.time));
          lr.varint(2, Severity[r.severity]);
          lr.string(3, r.severity.toUpperCase());
          if (r.body !== undefined) lr.message(5, (any) => any.string(1, r.body ?? ''));
          for (const [k, v] of Object.entries(recordAttributes(domain, r))) writeKeyValue(lr, 6, k, v);
          lr.fixed64(11, observed);
          lr.string(12, r.event);
        });
      }
    });
  });
  return { body: req.finish(), records: list.length };
}

/** Encode a batch as an OTLP/JSON `ExportLogsServiceRequest`. */
export function encodeOtlpLogsJson(batch: Records, resource: Record<string, string>): OtlpLogsPayload {
  const list = flat(batch);
  const observed = String(nanos(Date.now()));
  const logRecords = list.map(({ domain, r }) => ({
    timeUnixNano: String(nanos(r.time)),
    observedTimeUnixNano: observed,
    severityNumber: Severity[r.severity],
    severityText: r.severity.toUpperCase(),
    ...(r.body !== undefined ? { body: { stringValue: r.body } } : {}),
    attributes: jsonAttributes(recordAttributes(domain, r)),
    eventName: r.event,
  }));
  const json = {
    resourceLogs: [
      {
        resource: { attributes: jsonAttributes(resource) },
        scopeLogs: [{ scope: { name: 'sonde' }, logRecords }],
      },
    ],
  };
  return { body: new TextEncoder().encode(JSON.stringify(json)), records: list.length };
}
