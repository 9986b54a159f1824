/**
 * Status reporting contract: flat string → string maps for the server and
 * for each monitor.
 */

/** A component's status: keys appear once set; `error:` keys are removed on success. */
export interface StatusWriter {
  set(key: string, value: string): void;
  delete(key: string): void;
}

export interface StatusReader {
  server(): Record<string, string>;
  monitors(): Record<string, Record<string, string>>;
}
