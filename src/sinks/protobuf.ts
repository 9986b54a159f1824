/**
 * A minimal Protocol Buffers wire-format writer and reader for the sinks that speak
 * protobuf (chronosphere's OpenMetrics MetricSet, OTLP metrics).
 *
 * The sinks encode a handful of fixed messages, so a schema-less writer is enough: the
 * caller writes each field with its number and wire type, in field order. The rules
 * (https://protobuf.dev/programming-guides/encoding/):
 *
 * - every field starts with a tag varint `(field << 3) | wireType`;
 * - wire type 0 (varint): int32/int64/uint32/uint64/bool/enum, 7 bits per byte, low
 *   group first, high bit = "more bytes follow"; a negative int64 is its 64-bit two's
 *   complement (10 bytes);
 * - wire type 1 (i64): double, fixed64, sfixed64 as 8 little-endian bytes;
 * - wire type 2 (len): string, bytes and embedded messages as a length varint + bytes.
 *
 * proto3 writers omit fields holding their default value; that is the caller's choice
 * here (a `oneof` member, e.g. a 0.0 gauge value, must be written even when zero).
 */

const WIRE_VARINT = 0;
const WIRE_I64 = 1;
const WIRE_LEN = 2;
const WIRE_I32 = 5;

const utf8 = new TextEncoder();

/** Appends protobuf fields to a growing byte list; `finish()` returns the message bytes. */
export class ProtoWriter {
  #chunks: Uint8Array[] = [];
  #length = 0;

  /** Bytes written so far. */
  get length(): number {
    return this.#length;
  }

  #push(bytes: Uint8Array): void {
    this.#chunks.push(bytes);
    this.#length += bytes.length;
  }

  #rawVarint(v: bigint): void {
    const out: number[] = [];
    let x = BigInt.asUintN(64, v);
    while (x >= 0x80n) {
      out.push(Number(x & 0x7fn) | 0x80);
      x >>= 7n;
    }
    out.push(Number(x));
    this.#push(Uint8Array.from(out));
  }

  #tag(field: number, wire: number): void {
    this.#rawVarint(BigInt((field << 3) | wire));
  }

  /**
   * A varint field: uint32, uint64, int64, enum. Negative values are written as 64-bit
   * two's complement (correct for int32/int64/enum; never pass a negative for sint*).
   */
  varint(field: number, value: number | bigint): this {
    const v = typeof value === 'bigint' ? value : BigInt(Math.trunc(value));
    this.#tag(field, WIRE_VARINT);
    this.#rawVarint(v);
    return this;
  }

  /** A bool field (varint 0/1). */
  bool(field: number, value: boolean): this {
    return this.varint(field, value ? 1 : 0);
  }

  /** A double field: IEEE 754 binary64, little-endian. */
  double(field: number, value: number): this {
    this.#tag(field, WIRE_I64);
    const b = new Uint8Array(8);
    new DataView(b.buffer).setFloat64(0, value, true);
    this.#push(b);
    return this;
  }

  /** A fixed64 / sfixed64 field: 8 little-endian bytes of the 64-bit two's complement. */
  fixed64(field: number, value: bigint): this {
    this.#tag(field, WIRE_I64);
    const b = new Uint8Array(8);
    new DataView(b.buffer).setBigUint64(0, BigInt.asUintN(64, value), true);
    this.#push(b);
    return this;
  }

  /** A fixed32 field: 4 little-endian bytes. */
  fixed32(field: number, value: number): this {
    this.#tag(field, WIRE_I32);
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, value >>> 0, true);
    this.#push(b);
    return this;
  }

  /** A bytes field. */
  bytes(field: number, value: Uint8Array): this {
    this.#tag(field, WIRE_LEN);
    this.#rawVarint(BigInt(value.length));
    this.#push(value);
    return this;
  }

  /** A string field, UTF-8 encoded. */
  string(field: number, value: string): this {
    return this.bytes(field, utf8.encode(value));
  }

  /** An embedded message field: `build` writes the sub-message's fields. */
  message(field: number, build: (w: ProtoWriter) => void): this {
    const sub = new ProtoWriter();
    build(sub);
    return this.bytes(field, sub.finish());
  }

  /** The encoded message. */
  finish(): Uint8Array {
    const out = new Uint8Array(this.#length);
    let at = 0;
    for (const c of this.#chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }
}

/** One field read back by {@link readFields}. */
export type ProtoField =
  | { field: number; wire: 0; varint: bigint }
  | { field: number; wire: 1; fixed64: bigint }
  | { field: number; wire: 2; bytes: Uint8Array }
  | { field: number; wire: 5; fixed32: number };

/**
 * The top-level fields of one encoded message, in wire order (sub-messages stay bytes:
 * call again on them). Throws on truncated input or an unsupported wire type (3/4, the
 * long-deprecated groups). Used to read small server answers (OTLP partial success,
 * google.rpc.Status), never on hot paths.
 */
export function readFields(buf: Uint8Array): ProtoField[] {
  const fields: ProtoField[] = [];
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let at = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (at >= buf.length) throw new Error('truncated protobuf varint');
      const b = buf[at++] ?? 0;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 63n) throw new Error('protobuf varint longer than 10 bytes');
    }
  };
  while (at < buf.length) {
    const tag = varint();
    const field = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    if (wire === WIRE_VARINT) {
      fields.push({ field, wire, varint: varint() });
    } else if (wire === WIRE_I64) {
      if (at + 8 > buf.length) throw new Error('truncated protobuf fixed64');
      fields.push({ field, wire, fixed64: view.getBigUint64(at, true) });
      at += 8;
    } else if (wire === WIRE_LEN) {
      const n = Number(varint());
      if (at + n > buf.length) throw new Error('truncated protobuf length-delimited field');
      fields.push({ field, wire, bytes: buf.subarray(at, at + n) });
      at += n;
    } else if (wire === WIRE_I32) {
      if (at + 4 > buf.length) throw new Error('truncated protobuf fixed32');
      fields.push({ field, wire, fixed32: view.getUint32(at, true) });
      at += 4;
    } else {
      throw new Error(`unsupported protobuf wire type ${wire}`);
    }
  }
  return fields;
}
