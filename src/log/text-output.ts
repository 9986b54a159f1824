/** A text sink for lines: process.stdout / process.stderr, or a collector in tests. */
export interface TextOutput {
  write(text: string): unknown;
}
