/**
 * Events: Blip's only logging. Error events always reach stderr; info events are printed
 * from level info (`--log`) or while debugging; debug lines only while debugging.
 */
export interface Events {
  info(event: string, monitorId: string, message?: string): void;
  error(event: string, monitorId: string, message: string): void;
  /**
   * Free-form debug line, printed only while debugging is on. Pass a function when the text
   * costs anything to build: it is called only while debugging.
   */
  debug(message: string | (() => string), monitorId?: string): void;
}

/** An Events that drops everything (tests, tools). */
export const NO_EVENTS: Events = {
  info: () => undefined,
  error: () => undefined,
  debug: () => undefined,
};
