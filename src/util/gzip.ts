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
 * has one more entry than versions). `versions[i]` names those bytes: a segment keeps its
 * number only while its bytes stay the same, and no two segments of one text source ever
 * share one (a segment that moves keeps it; its bytes are found by it). `stored[i]`, when
 * true, asks for the segment as it is, uncompressed: a few lines that change at almost every
 * call, which would cost more to compress again each time than their bytes save.
 */
export interface TextSegments {
  readonly bounds: readonly number[];
  readonly versions: readonly number[];
  readonly stored?: readonly boolean[];
}

/** The gzip header (RFC 1952): deflate, no name or time, made on Unix; XFL set per level. */
function gzipHeader(level: number): Buffer {
  const xfl = level === zlibConstants.Z_BEST_SPEED ? 4 : level === zlibConstants.Z_BEST_COMPRESSION ? 2 : 0;
  return Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, xfl, 3]);
}

/** An empty last deflate block (fixed codes: BFINAL, BTYPE 01, end of block). */
const LAST_BLOCK = Buffer.from([3, 0]);

/** The most bytes one stored deflate block holds (its length field has 16 bits). */
const STORED_MAX = 0xffff;

/**
 * `bytes` as stored deflate blocks (RFC 1951, 3.2.4), appended to `parts`, for a stream at a
 * byte boundary (each piece here ends on one). A block is a byte with BFINAL 0 and BTYPE 00
 * in its low bits (the rest padding to the boundary), LEN and its one's complement NLEN,
 * little-endian, then LEN bytes as they are.
 */
function pushStored(parts: Buffer[], bytes: Buffer): void {
  for (let at = 0; at < bytes.length; at += STORED_MAX) {
    const part = bytes.subarray(at, Math.min(bytes.length, at + STORED_MAX));
    const head = Buffer.allocUnsafe(5);
    head[0] = 0;
    head.writeUInt16LE(part.length, 1);
    head.writeUInt16LE(part.length ^ 0xffff, 3);
    parts.push(head, part);
  }
}

/**
 * gzip for a text that changes a few lines at a time (an exporter's answer), compressing
 * only the segments whose version it has not compressed at its last call, and sending the
 * segments marked stored as they are.
 *
 * Each segment is deflated on its own and ends on a byte boundary with a sync flush, so the
 * pieces join into one deflate stream, with stored blocks between them; a last empty block,
 * then the CRC-32 and length of the whole text (RFC 1952) make it a gzip member any gunzip
 * reads. A segment cannot refer to text before it, and stored bytes are not compressed, so
 * the answer is larger than one gzipSync call makes (about a sixth for an exporter's answer:
 * 22.6 against 19.6 KB), for a fifth of the CPU or less: a deflate call costs about 25 µs
 * before its first byte, so a few changed lines are cheaper sent as they are than
 * compressed again.
 * Node has no API for this framing: `gzipSync` always starts a new stream, and a zlib stream
 * object cannot be driven synchronously.
 *
 * One instance per text source: versions name segments of the same source only.
 * Without `zlib.crc32` (Node before 22.2) every call is a plain gzipPayload.
 */
export class SegmentedGzip {
  readonly #level: number;
  readonly #header: Buffer;
  /** The last call's compressed segments, by version. */
  #pieces = new Map<number, Buffer>();

  constructor(level: number) {
    this.#level = level;
    this.#header = gzipHeader(level);
  }

  /** gzip of `text`, using its `segments`. */
  gzip(text: Buffer, segments: TextSegments): Buffer {
    const { bounds, versions, stored } = segments;
    if (crc32 === undefined) return gzipPayload(text, this.#level);
    const kept = this.#pieces;
    const pieces = new Map<number, Buffer>();
    const parts = [this.#header];
    for (let i = 0; i < versions.length; i++) {
      if (stored?.[i] === true) {
        pushStored(parts, text.subarray(bounds[i], bounds[i + 1]));
        continue;
      }
      const version = versions[i] as number;
      const piece = kept.get(version) ?? this.#deflate(text.subarray(bounds[i], bounds[i + 1]));
      pieces.set(version, piece);
      parts.push(piece);
    }
    this.#pieces = pieces;
    const end = bounds[versions.length] ?? 0;
    const trailer = Buffer.allocUnsafe(8);
    trailer.writeUInt32LE(crc32(text.subarray(0, end)), 0);
    trailer.writeUInt32LE(end % 2 ** 32, 4);
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
