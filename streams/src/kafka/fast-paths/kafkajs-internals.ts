/**
 * The pieces of kafkajs's internals the fast paths build on, loaded from kafkajs's own files so
 * that the bytes they write follow kafkajs's rules (its `Long`, its CRC-32C, its Encoder class).
 */

export interface LongValue {
  getHighBits(): number;
  getLowBits(): number;
  add(other: LongValue): LongValue;
  toString(): string;
}

export interface KafkajsDecoder {
  offset: number;
  readonly buffer: Buffer;
  readInt8(): number;
  readVarInt(): number;
  readVarLong(): LongValue;
  readVarIntString(): string | null;
  readVarIntBytes(): Buffer | null;
}

export interface KafkajsInternals {
  readonly Long: { fromValue(v: unknown): LongValue; fromInt(v: number): LongValue };
  /** CRC-32C as an unsigned 32-bit number. */
  readonly crc32C: (buffer: Buffer) => number;
  /** A kafkajs Encoder holding exactly these bytes (what request framing expects from `encode()`). */
  readonly encoderOf: (bytes: Buffer) => unknown;
  readonly LOG_APPEND_TIME: number;
}

/** kafkajs's files, by path inside the package. */
export const KAFKAJS_FILES = {
  long: 'kafkajs/src/utils/long.js',
  crc32C: 'kafkajs/src/protocol/recordBatch/crc32C/index.js',
  encoder: 'kafkajs/src/protocol/encoder.js',
  timestampTypes: 'kafkajs/src/protocol/timestampTypes.js',
} as const;

export function loadInternals(require: NodeJS.Require): KafkajsInternals {
  const Encoder = require(KAFKAJS_FILES.encoder) as { prototype: object };
  return {
    Long: require(KAFKAJS_FILES.long) as KafkajsInternals['Long'],
    crc32C: require(KAFKAJS_FILES.crc32C) as KafkajsInternals['crc32C'],
    encoderOf: (bytes) => Object.assign(Object.create(Encoder.prototype) as object, { buf: bytes, offset: bytes.length }),
    LOG_APPEND_TIME: (require(KAFKAJS_FILES.timestampTypes) as { LOG_APPEND_TIME: number }).LOG_APPEND_TIME,
  };
}
