/**
 * The standard OpenTelemetry exporter environment variables, as the `otlp` sink reads them.
 *
 * Each setting has a generic variable (`OTEL_EXPORTER_OTLP_<X>`) and a metrics one
 * (`OTEL_EXPORTER_OTLP_METRICS_<X>`); the metrics one wins when both are set. An empty
 * variable counts as unset. The endpoint rule: the metrics endpoint is the full URL and is
 * used as it is; the generic endpoint is a base URL and `v1/metrics` is appended to it.
 *
 * Errors name the variable and never repeat a header value (headers carry API keys).
 */

/** The environment as the sink reads it (process.env, or a test's map). */
export type Env = Readonly<Record<string, string | undefined>>;

/** The protocol the sink speaks by default. */
export const OTLP_PROTOCOL = 'http/protobuf';

/** The protocols the sink speaks: binary protobuf (default) or OTLP/JSON. */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** Settings found in the environment; a field is absent when no variable sets it. */
export interface OtlpEnvSettings {
  /** Full metrics URL. */
  url?: string;
  /** The variable the URL came from (for messages). */
  urlFrom?: string;
  /**
   * Full logs URL: OTEL_EXPORTER_OTLP_LOGS_ENDPOINT as it is, else OTEL_EXPORTER_OTLP_ENDPOINT
   * with `v1/logs` appended.
   */
  logsUrl?: string;
  headers?: Record<string, string>;
  timeoutMs?: number;
  compression?: 'none' | 'gzip';
  /** Raw protocol value and the variable that set it; validated by the sink. */
  protocol?: { value: string; from: string };
}

const PREFIX = 'OTEL_EXPORTER_OTLP_';

/** The first non-empty of the metrics and the generic variable `X`. */
function pick(env: Env, x: string): { value: string; from: string } | undefined {
  for (const name of [`${PREFIX}METRICS_${x}`, `${PREFIX}${x}`]) {
    const value = env[name]?.trim();
    if (value !== undefined && value !== '') return { value, from: name };
  }
  return undefined;
}

/** Percent-decode, keeping the text as it is when it is not valid percent-encoding. */
function percentDecode(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * Parse a `k1=v1,k2=v2` list (the convention of OTEL_EXPORTER_OTLP_HEADERS and
 * OTEL_RESOURCE_ATTRIBUTES): spaces around keys and values trimmed, values percent-decoded
 * (`%2C` is a comma), empty entries skipped. `what` names the input in the error, which
 * never echoes a value: `invalid <what>: entry <n> is not name=value`.
 */
export function parseKeyValueList(text: string, what: string): Record<string, string> {
  const out: Record<string, string> = {};
  let n = 0;
  for (const entry of text.split(',')) {
    n++;
    if (entry.trim() === '') continue;
    const eq = entry.indexOf('=');
    const key = eq < 0 ? '' : entry.slice(0, eq).trim();
    if (key === '') throw new Error(`invalid ${what}: entry ${n} is not name=value`);
    out[key] = percentDecode(entry.slice(eq + 1).trim());
  }
  return out;
}

/** `<base>/v1/metrics` of a base URL (one slash between them). */
export function metricsUrlOf(base: string): string {
  return `${base.replace(/\/+$/, '')}/v1/metrics`;
}

/** `<base>/v1/logs` of a base URL (one slash between them). */
export function logsUrlOf(base: string): string {
  return `${base.replace(/\/+$/, '')}/v1/logs`;
}

/** The logs URL the environment gives, if any. */
function envLogsUrl(env: Env): string | undefined {
  const full = env[`${PREFIX}LOGS_ENDPOINT`]?.trim();
  if (full !== undefined && full !== '') return full;
  const base = env[`${PREFIX}ENDPOINT`]?.trim();
  return base !== undefined && base !== '' ? logsUrlOf(base) : undefined;
}

/** Read the exporter variables of the environment. Throws on a value that cannot be used. */
export function otlpEnvSettings(env: Env): OtlpEnvSettings {
  const out: OtlpEnvSettings = {};
  const endpoint = pick(env, 'ENDPOINT');
  if (endpoint) {
    out.url = endpoint.from.includes('_METRICS_') ? endpoint.value : metricsUrlOf(endpoint.value);
    out.urlFrom = endpoint.from;
  }
  const logsUrl = envLogsUrl(env);
  if (logsUrl !== undefined) out.logsUrl = logsUrl;
  const headers = pick(env, 'HEADERS');
  if (headers) out.headers = parseKeyValueList(headers.value, headers.from);
  const timeout = pick(env, 'TIMEOUT');
  if (timeout) {
    if (!/^\d+$/.test(timeout.value) || Number(timeout.value) === 0) {
      throw new Error(`invalid ${timeout.from}: ${timeout.value}: want a positive number of milliseconds`);
    }
    out.timeoutMs = Number(timeout.value);
  }
  const compression = pick(env, 'COMPRESSION');
  if (compression) {
    const v = compression.value.toLowerCase();
    if (v !== 'gzip' && v !== 'none') {
      throw new Error(`invalid ${compression.from}: ${compression.value}: valid values: none, gzip`);
    }
    out.compression = v;
  }
  const protocol = pick(env, 'PROTOCOL');
  if (protocol) out.protocol = protocol;
  return out;
}

/**
 * Resource attributes of the environment: OTEL_RESOURCE_ATTRIBUTES (`k=v,…`, values
 * percent-decoded), then OTEL_SERVICE_NAME as `service.name`, which wins over a
 * `service.name` in the list.
 */
export function envResourceAttributes(env: Env): Record<string, string> {
  const raw = env['OTEL_RESOURCE_ATTRIBUTES']?.trim() ?? '';
  const out = raw === '' ? {} : parseKeyValueList(raw, 'OTEL_RESOURCE_ATTRIBUTES');
  const service = env['OTEL_SERVICE_NAME']?.trim() ?? '';
  if (service !== '') out['service.name'] = service;
  return out;
}
