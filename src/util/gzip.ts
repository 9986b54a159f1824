/**
 * Synchronous gzip for the exporter's answers and the sinks' payloads, with a small output
 * chunk.
 *
 * Node's `gzipSync` makes a compressor object per call. The object is tied to a native zlib
 * handle, so V8's young-generation collector does not free it: it lives until the next full
 * collection, and with it its last output buffer of `chunkSize` bytes. At Node's default of
 * 16 KiB each call left about 16 KiB of buffer memory for the full collector, and the
 * exporter, scraped back to back, ran a full collection every ~110 scrapes instead of every
 * ~150 (`bench/gc-pressure.ts`). Output buffers under 4 KiB come from Node's shared buffer
 * pool, so a call now leaves about 2 KiB. zlib's work does not change: compressing a scrape's
 * 186 KB of text took the same CPU with 1, 2, 3 and 16 KiB chunks, and the bytes are the same.
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
