/**
 * Synchronous gzip for the exporter's answers and the sinks' payloads, with a small output
 * chunk.
 *
 * Node's `gzipSync` makes a compressor object per call. The object is tied to a native zlib
 * handle, so V8's young-generation collector does not free it: it waits for the next full
 * collection, and with it its last output buffer of `chunkSize` bytes (16 KiB at Node's
 * default; a call on small text left 16.5 KiB of buffer memory behind, 2.1 KiB with 2 KiB
 * chunks). Chunks under 4 KiB come from Node's shared buffer pool. On the exporter's answer
 * path, scraped back to back, this took full collections from 7.7–8.0 to 5.0–6.0 per 1,000
 * answers (`bench/gc-pressure.ts`). zlib's work does not change: the same bytes, and the same
 * CPU for a scrape's 186 KB of text with 1, 2, 3 and 16 KiB chunks.
 */
import { constants as zlibConstants, gzipSync } from 'node:zlib';

/** The output chunk: under Node's pooled-buffer limit (half its 8 KiB pool). */
export const GZIP_CHUNK_BYTES = 2048;

/** `body` gzipped at `level` (zlib's default when not given). */
export function gzipPayload(
  body: Uint8Array | string,
  level: number = zlibConstants.Z_DEFAULT_COMPRESSION,
): Buffer {
  return gzipSync(body, { level, chunkSize: GZIP_CHUNK_BYTES });
}
