/**
 * kafkajs's record decoder (record batch v2 records) without `Long` arithmetic.
 *
 * kafkajs parses the batch's first offset and timestamp from their decimal strings into `Long`s
 * again for every record, adds the deltas in `Long`s and prints the sums back to strings, and
 * rebuilds the headers object once per header. Offsets and timestamps are far below 2^53, so
 * plain numbers give the same strings; a value that is not (a varlong of more than 7 bytes, a sum
 * past 2^53) takes kafkajs's `Long` path. The result is the same object, field for field.
 *
 * Upstream: the same number path in `src/protocol/recordBatch/record/v0/decoder.js`, the `Long`
 * path kept for what does not fit, with fast-paths.test.ts's comparison as its test. It replaces
 * that module whole (install-fast-paths.ts), on kafkajs 2.2.4 only.
 */
import type { KafkajsDecoder, KafkajsInternals } from './kafkajs-internals.ts';

export interface RecordBatchContext {
  readonly firstOffset: string;
  readonly firstTimestamp: string;
  readonly maxTimestamp?: string;
  readonly magicByte?: number;
  readonly isControlBatch?: boolean;
  readonly timestampType?: number;
}

export type RecordDecoder = (decoder: KafkajsDecoder, batchContext?: RecordBatchContext) => unknown;

/** A zigzag varlong that fits in 7 bytes (|v| < 2^48), as a number; undefined (nothing read) otherwise. */
function readSmallVarLong(decoder: KafkajsDecoder): number | undefined {
  const buf = decoder.buffer;
  let pos = decoder.offset;
  let u = 0;
  let scale = 1;
  for (let i = 0; i < 7; i++) {
    const byte = buf[pos++]!;
    u += (byte & 0x7f) * scale;
    if (byte < 0x80) {
      decoder.offset = pos;
      return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
    }
    scale *= 128;
  }
  return undefined;
}

/** The same decimal string kafkajs's `Long.fromValue(base).add(delta).toString()` gives. */
function addToDecimal(base: string, delta: number, Long: KafkajsInternals['Long']): string {
  const start = Number(base);
  const sum = start + delta;
  return Number.isSafeInteger(start) && Number.isSafeInteger(sum) ? String(sum) : Long.fromValue(base).add(Long.fromValue(delta)).toString();
}

export function fastRecordDecoder(internals: KafkajsInternals): RecordDecoder {
  const { Long, LOG_APPEND_TIME } = internals;
  return (decoder, batchContext = {} as RecordBatchContext) => {
    const { firstOffset, firstTimestamp, magicByte, isControlBatch = false, timestampType, maxTimestamp } = batchContext;
    const attributes = decoder.readInt8();

    const smallDelta = readSmallVarLong(decoder);
    const longDelta = smallDelta === undefined ? decoder.readVarLong() : undefined;
    const timestamp =
      timestampType === LOG_APPEND_TIME && maxTimestamp
        ? maxTimestamp
        : longDelta !== undefined
          ? Long.fromValue(firstTimestamp).add(longDelta).toString()
          : addToDecimal(firstTimestamp, smallDelta!, Long);

    const offset = addToDecimal(firstOffset, decoder.readVarInt(), Long);
    const key = decoder.readVarIntBytes();
    const value = decoder.readVarIntBytes();

    // As kafkajs: a repeated header key collects its values into an array, in order.
    const headers: Record<string, unknown> = {};
    const count = decoder.readVarInt();
    for (let i = 0; i < count; i++) {
      const name = decoder.readVarIntString() as string;
      const item = decoder.readVarIntBytes();
      const previous = headers[name];
      const next = previous === undefined ? item : Array.isArray(previous) ? previous.concat([item]) : [previous, item];
      // kafkajs builds the object with computed keys, which make "__proto__" an own property.
      if (name === '__proto__') Object.defineProperty(headers, name, { value: next, enumerable: true, writable: true, configurable: true });
      else headers[name] = next;
    }

    return { magicByte, attributes, timestamp, offset, key, value, headers, isControlRecord: isControlBatch, batchContext };
  };
}
