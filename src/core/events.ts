/**
 * Events: Blip's only logging. Error events always reach stderr; info
 * events reach stdout with --log or --debug.
 */
export interface Events {
  info(event: string, monitorId: string, message?: string): void;
  error(event: string, monitorId: string, message: string): void;
  /** Free-form debug line, printed only while debugging is on. */
  debug(message: string): void;
}

/** An Events that drops everything (tests, tools). */
export const NO_EVENTS: Events = {
  info: () => undefined,
  error: () => undefined,
  debug: () => undefined,
};
