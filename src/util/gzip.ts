/**
 * Synchronous gzip for the exporter's answers and the sinks' payloads, with a small output
 * chunk.
 *
 * The buffer memory a `gzipSync` call allocates is not given back by V8's young-generation
 * collections, only by the next full one (measured in a loop with young garbage around it;
 * plain buffer allocations in the same loop are freed young). How much a call leaves depends
 * on its output chunk: on small text, 16.5 KiB per call at Node's default 16 KiB chunk and
 * 2.1 KiB with 2 KiB chunks, which come from Node's shared buffer pool (chunks under 4 KiB
 * do). On the exporter's answer path, scraped back to back, 2 KiB chunks took full
 * collections from 7.7–8.0 to 5.0–6.0 per 1,000 answers (`bench/gc-pressure.ts`). zlib's
 * work does not change: the same bytes, and the same CPU for a scrape's 186 KB of text with
 * 1, 2, 3 and 16 KiB chunks.
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
