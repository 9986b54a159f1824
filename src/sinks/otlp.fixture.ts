/**
 * The OTLP decoder of the otlp sink tests: the messages a receiver reads, written here from
 * opentelemetry-proto (collector/metrics/v1, metrics/v1, resource/v1, common/v1) and
 * independent of the sink's encoder.
 */
import protobuf from 'protobufjs';

const OTLP_PROTO = `
syntax = "proto3";
package otlp;
message ExportMetricsServiceRequest { repeated ResourceMetrics resource_metrics = 1; }
message ExportMetricsServiceResponse { ExportMetricsPartialSuccess partial_success = 1; }
message ExportMetricsPartialSuccess { int64 rejected_data_points = 1; string error_message = 2; }
message RpcStatus { int32 code = 1; string message = 2; }
message ResourceMetrics { Resource resource = 1; repeated ScopeMetrics scope_metrics = 2; string schema_url = 3; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message AnyValue {
  oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; bytes bytes_value = 7; }
}
message KeyValue { string key = 1; AnyValue value = 2; }
message InstrumentationScope { string name = 1; string version = 2; }
message ScopeMetrics { InstrumentationScope scope = 1; repeated Metric metrics = 2; string schema_url = 3; }
message Metric {
  string name = 1; string description = 2; string unit = 3;
  oneof data { Gauge gauge = 5; Sum sum = 7; }
}
message Gauge { repeated NumberDataPoint data_points = 1; }
message Sum { repeated NumberDataPoint data_points = 1; AggregationTemporality aggregation_temporality = 2; bool is_monotonic = 3; }
enum AggregationTemporality {
  AGGREGATION_TEMPORALITY_UNSPECIFIED = 0; AGGREGATION_TEMPORALITY_DELTA = 1; AGGREGATION_TEMPORALITY_CUMULATIVE = 2;
}
message NumberDataPoint {
  repeated KeyValue attributes = 7; fixed64 start_time_unix_nano = 2; fixed64 time_unix_nano = 3;
  oneof value { double as_double = 4; sfixed64 as_int = 6; }
  uint32 flags = 8;
}
`;
const root = protobuf.parse(OTLP_PROTO).root;
export const Request = root.lookupType('otlp.ExportMetricsServiceRequest');
export const Response = root.lookupType('otlp.ExportMetricsServiceResponse');
export const RpcStatus = root.lookupType('otlp.RpcStatus');

export interface Attr {
  key: string;
  value: { stringValue?: string };
}
export interface Point {
  attributes: Attr[];
  startTimeUnixNano: string;
  timeUnixNano: string;
  asDouble?: number;
  /** An `as_int` value, as a decimal string. */
  asInt?: string;
}
export interface DecodedMetric {
  name: string;
  unit: string;
  gauge?: { dataPoints: Point[] };
  sum?: { dataPoints: Point[]; aggregationTemporality: string; isMonotonic: boolean };
}
export interface Decoded {
  resourceMetrics: Array<{
    resource: { attributes: Attr[] };
    scopeMetrics: Array<{ scope: { name: string }; metrics: DecodedMetric[] }>;
  }>;
}

export function decode(body: Uint8Array): Decoded {
  return Request.toObject(Request.decode(body), {
    longs: String,
    enums: String,
    defaults: true,
    arrays: true,
  }) as Decoded;
}

/** `key=value` strings of decoded attributes, in wire order. */
export function attrs(list: Attr[]): string[] {
  return list.map((a) => `${a.key}=${a.value.stringValue ?? '<not a string>'}`);
}

/** One decoded metric in short: name, unit, shape, and each point as `attrs → value`. */
export interface MetricSummary {
  name: string;
  unit: string;
  /** `gauge`, or `sum <temporality> monotonic=<bool>`. */
  kind: string;
  /** `k=v,k=v → value` per point; value `int:<n>` or `double:<n>`. */
  points: string[];
}

/** The metrics of the first resource's first scope, summarized. */
export function summarize(d: Decoded): MetricSummary[] {
  const metrics = d.resourceMetrics[0]?.scopeMetrics[0]?.metrics ?? [];
  return metrics.map((m) => {
    const kind = m.gauge
      ? 'gauge'
      : `sum ${m.sum?.aggregationTemporality ?? '?'} monotonic=${String(m.sum?.isMonotonic)}`;
    const pts = (m.gauge ?? m.sum)?.dataPoints ?? [];
    return {
      name: m.name,
      unit: m.unit,
      kind,
      points: pts.map((p) => {
        const value = p.asInt !== undefined ? `int:${p.asInt}` : `double:${String(p.asDouble)}`;
        return `${attrs(p.attributes).join(',')} → ${value}`;
      }),
    };
  });
}

/** Resource attributes of the first resource as a map. */
export function resourceOf(d: Decoded): Record<string, string> {
  const list = d.resourceMetrics[0]?.resource.attributes ?? [];
  return Object.fromEntries(list.map((a) => [a.key, a.value.stringValue ?? '<not a string>']));
}
