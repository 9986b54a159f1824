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
import * as zlib from 'node:zlib';
import { constants as zlibConstants, deflateRawSync, gzipSync } from 'node:zlib';

/** zlib's CRC-32, in Node since 22.2 (read from the namespace: a named import fails before). */
const crc32 = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;

/** The output chunk: under Node's pooled-buffer limit (half its 8 KiB pool). */
export const GZIP_CHUNK_BYTES = 2048;

/** `body` gzipped at `level` (zlib's default when not given). */
export function gzipPayload(
  body: Uint8Array | string,
  level: number = zlibConstants.Z_DEFAULT_COMPRESSION,
): Buffer {
  return gzipSync(body, { level, chunkSize: GZIP_CHUNK_BYTES });
}

/**
 * A text cut into segments: segment i is bytes `[bounds[i], bounds[i + 1])` of it (bounds
 * has one more entry than versions), and `versions[i]` is a number that differs from the
 * one it had at an earlier call whenever those bytes may differ from the ones they had then.
 */
export interface TextSegments {
  readonly bounds: readonly number[];
  readonly versions: readonly number[];
}

/** The gzip header (RFC 1952): deflate, no name or time, made on Unix; XFL set per level. */
function gzipHeader(level: number): Buffer {
  const xfl = level === zlibConstants.Z_BEST_SPEED ? 4 : level === zlibConstants.Z_BEST_COMPRESSION ? 2 : 0;
  return Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, xfl, 3]);
}

/** An empty last deflate block (fixed codes: BFINAL, BTYPE 01, end of block). */
const LAST_BLOCK = Buffer.from([3, 0]);

/**
 * gzip for a text that changes a few lines at a time (an exporter's answer), compressing
 * only the segments whose version changed since the last call.
 *
 * Each segment is deflated on its own and ends on a byte boundary with a sync flush, so the
 * pieces join into one deflate stream; a last empty block, then the CRC-32 and length of the
 * whole text (RFC 1952) make it a gzip member any gunzip reads. A segment cannot refer to
 * text before it, so the answer is a little larger than one gzipSync call makes (about 4 %
 * for an exporter's answer). Node has no API for this framing: `gzipSync` always starts a new
 * stream, and a zlib stream object cannot be driven synchronously.
 *
 * One instance per text source: the versions are only compared with the same source's.
 * Without `zlib.crc32` (Node before 22.2) every call is a plain gzipPayload.
 */
export class SegmentedGzip {
  readonly #level: number;
  readonly #header: Buffer;
  #pieces: Buffer[] = [];
  #versions: number[] = [];

  constructor(level: number) {
    this.#level = level;
    this.#header = gzipHeader(level);
  }

  /** gzip of `text` followed by `tail` (compressed at every call), using `segments` of `text`. */
  gzip(text: Buffer, segments: TextSegments, tail?: Buffer): Buffer {
    const { bounds, versions } = segments;
    if (crc32 === undefined)
      return gzipPayload(tail === undefined ? text : Buffer.concat([text, tail]), this.#level);
    const pieces = this.#pieces;
    const seen = this.#versions;
    pieces.length = Math.min(pieces.length, versions.length);
    seen.length = pieces.length;
    for (let i = 0; i < versions.length; i++) {
      if (seen[i] === versions[i]) continue;
      pieces[i] = this.#deflate(text.subarray(bounds[i], bounds[i + 1]));
      seen[i] = versions[i] as number;
    }
    const end = bounds[versions.length] ?? 0;
    let crc = crc32(text.subarray(0, end));
    let size = end;
    const parts = [this.#header, ...pieces];
    if (tail !== undefined && tail.length > 0) {
      parts.push(this.#deflate(tail));
      crc = crc32(tail, crc);
      size += tail.length;
    }
    const trailer = Buffer.allocUnsafe(8);
    trailer.writeUInt32LE(crc, 0);
    trailer.writeUInt32LE(size % 2 ** 32, 4);
    parts.push(LAST_BLOCK, trailer);
    return Buffer.concat(parts);
  }

  #deflate(bytes: Uint8Array): Buffer {
    return deflateRawSync(bytes, {
      level: this.#level,
      chunkSize: GZIP_CHUNK_BYTES,
      finishFlush: zlibConstants.Z_SYNC_FLUSH,
    });
  }
}
