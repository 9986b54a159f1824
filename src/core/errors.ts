/**
 * Stable error codes: callers and API clients match on them, so a code keeps its meaning
 * for good and a retired code's name is never given to another error.
 * Each code that reaches the HTTP API carries its status, and the API answers with it.
 */
export const ErrorCodes = {
  CONFIG_INVALID: { code: 'SONDE_CONFIG_INVALID', http: 500 },
  MONITOR_ID_MISSING: { code: 'SONDE_MONITOR_ID_MISSING', http: 400 },
  MONITOR_NOT_LOADED: { code: 'SONDE_MONITOR_NOT_LOADED', http: 404 },
  MONITOR_START_FAILED: { code: 'SONDE_MONITOR_START_FAILED', http: 409 },
  MONITOR_STOP_FAILED: { code: 'SONDE_MONITOR_STOP_FAILED', http: 500 },
  RELOAD_FAILED: { code: 'SONDE_RELOAD_FAILED', http: 409 },
  STOP_LOSS: { code: 'SONDE_STOP_LOSS', http: 412 },
  PLAN_INVALID: { code: 'SONDE_PLAN_INVALID', http: 500 },
  NOT_SUPPORTED: { code: 'SONDE_NOT_SUPPORTED', http: 501 },
} as const;

export type ErrorCode = keyof typeof ErrorCodes;

/** An error with a stable code; `message` is safe to show (never holds a password). */
export class SondeError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SondeError';
    this.code = code;
  }
  get httpStatus(): number {
    return ErrorCodes[this.code].http;
  }
}

/** Message of anything thrown, as text. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/** The MySQL error number carried by a driver error (`errno`), if any. */
export function errnoOf(err: unknown): number | undefined {
  const errno = (err as { errno?: unknown } | null | undefined)?.errno;
  return typeof errno === 'number' ? errno : undefined;
}
