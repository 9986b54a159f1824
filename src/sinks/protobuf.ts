/**
 * The Protocol Buffers writer of the sinks that speak protobuf (chronosphere's OpenMetrics
 * MetricSet, signalfx's DataPointUploadMessage, OTLP metrics), on protobufjs's Writer.
 *
 * The sinks encode a handful of fixed messages, so no schema is compiled: the caller writes
 * each field with its number, in field order, and the method picks the wire type (varint,
 * 64-bit, length-delimited, 32-bit). Embedded messages are written in place (protobufjs's
 * fork/ldelim), not built apart and copied.
 *
 * proto3 writers omit fields holding their default value; that is the caller's choice
 * here (a `oneof` member, e.g. a 0.0 gauge value, must be written even when zero).
 */
import protobuf from 'protobufjs/minimal.js';

const WIRE_VARINT = 0;
const WIRE_I64 = 1;
const WIRE_LEN = 2;
const WIRE_I32 = 5;

/** A 64-bit value as protobufjs takes it: the two's complement of `v`, unsigned. */
function long(v: bigint): protobuf.Long {
  const u = BigInt.asUintN(64, v);
  return new protobuf.util.LongBits(Number(u & 0xffffffffn), Number(u >> 32n)).toLong(true);
}

/** Appends protobuf fields to one message; `finish()` returns its bytes. */
export class ProtoWriter {
  readonly #w: protobuf.Writer = protobuf.Writer.create();

  #tag(field: number, wire: number): protobuf.Writer {
    return this.#w.uint32(((field << 3) | wire) >>> 0);
  }

  /**
   * A varint field: uint32, uint64, int64, enum. Negative values are written as 64-bit
   * two's complement (correct for int32/int64/enum; never pass a negative for sint*).
   * A fractional number is truncated.
   */
  varint(field: number, value: number | bigint): this {
    const w = this.#tag(field, WIRE_VARINT);
    if (typeof value === 'bigint') w.uint64(long(value));
    else if (Number.isInteger(value) && value >= 0 && value <= 0xffffffff) w.uint32(value);
    else w.uint64(long(BigInt(Math.trunc(value))));
    return this;
  }

  /** A bool field (varint 0/1). */
  bool(field: number, value: boolean): this {
    this.#tag(field, WIRE_VARINT).bool(value);
    return this;
  }

  /** A double field: IEEE 754 binary64, little-endian. */
  double(field: number, value: number): this {
    this.#tag(field, WIRE_I64).double(value);
    return this;
  }

  /** A fixed64 / sfixed64 field: 8 little-endian bytes of the 64-bit two's complement. */
  fixed64(field: number, value: bigint): this {
    this.#tag(field, WIRE_I64).fixed64(long(value));
    return this;
  }

  /** A fixed32 field: 4 little-endian bytes. */
  fixed32(field: number, value: number): this {
    this.#tag(field, WIRE_I32).fixed32(value >>> 0);
    return this;
  }

  /** A bytes field. */
  bytes(field: number, value: Uint8Array): this {
    this.#tag(field, WIRE_LEN).bytes(value);
    return this;
  }

  /** A string field, UTF-8 encoded. */
  string(field: number, value: string): this {
    this.#tag(field, WIRE_LEN).string(value);
    return this;
  }

  /** An embedded message field: `build` writes the sub-message's fields on this writer. */
  message(field: number, build: (w: this) => void): this {
    this.#tag(field, WIRE_LEN).fork();
    build(this);
    this.#w.ldelim();
    return this;
  }

  /** The encoded message. */
  finish(): Uint8Array {
    return this.#w.finish();
  }
}
