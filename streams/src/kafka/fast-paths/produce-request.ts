/**
 * kafkajs's Produce request body (v3, which v4–v7 extend) written in one pass into one buffer.
 *
 * Why: kafkajs builds a request from an Encoder per record and per header — each starting with a
 * zero-filled 512-byte buffer — a fresh Buffer per varint, `Long` arithmetic per record and a copy
 * of every level into the next. At 15,000 events/s that was a quarter of a producing process's
 * CPU, plus much of its garbage collection (streams/README.md, "kafkajs fast paths"). Here the
 * sizes are computed first and the bytes written once: the same bytes, which the tests check
 * against kafkajs's own encoder.
 *
 * Only the common case is taken: no compression, no per-message timestamps, keys, values and
 * header values that are strings or Buffers. Anything else is encoded by kafkajs as before.
 *
 * Upstream: a size-first, single-buffer path in `src/protocol/requests/produce/v3/request.js`
 * (falling back to the Encoder path as here), with fast-paths.test.ts's byte-for-byte comparison
 * as its test. It replaces that module whole (install-fast-paths.ts), on kafkajs 2.2.4 only.
 */
import type { KafkajsInternals } from './kafkajs-internals.ts';

interface ProduceMessage {
  readonly key?: unknown;
  readonly value?: unknown;
  readonly headers?: Readonly<Record<string, unknown>>;
  readonly timestamp?: unknown;
}

interface PartitionData {
  readonly partition: number;
  readonly firstSequence?: number;
  readonly messages: readonly ProduceMessage[];
}

export interface ProduceRequestArgs {
  readonly acks: number;
  readonly timeout: number;
  readonly transactionalId?: string | null;
  readonly producerId?: unknown;
  readonly producerEpoch?: number;
  readonly compression?: number;
  readonly topicData: readonly { readonly topic: string; readonly partitions: readonly PartitionData[] }[];
}

export interface ProduceRequest {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly apiName: string;
  expectResponse(): boolean;
  encode(): Promise<unknown>;
}

export type ProduceRequestFactory = (args: ProduceRequestArgs) => ProduceRequest;

const NO_COMPRESSION = 0;
const TRANSACTIONAL_FLAG = 16;
const MAGIC_BYTE = 2;
/** attributes … record count: int16 + int32 + int64 × 3 + int16 + int32 + int32. */
const BATCH_BODY_HEADER = 40;
/** partition leader epoch, magic byte, CRC. */
const BATCH_HEADER = 9;
/** partition id, record-batch size, first offset, batch length. */
const PARTITION_HEADER = 20;

const zigzag = (v: number): number => (v << 1) ^ (v >> 31);

function uvarintSize(u: number): number {
  let n = 1;
  while ((u & 0xffffff80) !== 0) {
    n += 1;
    u >>>= 7;
  }
  return n;
}

const varintSize = (v: number): number => uvarintSize(zigzag(v));

function writeVarInt(buf: Buffer, pos: number, v: number): number {
  let u = zigzag(v);
  while ((u & 0xffffff80) !== 0) {
    buf[pos++] = (u & 0x7f) | 0x80;
    u >>>= 7;
  }
  buf[pos++] = u & 0x7f;
  return pos;
}

/** Bytes of a string or Buffer; -1 for null/undefined; undefined for anything kafkajs would stringify. */
function byteLengthOf(v: unknown): number | undefined {
  if (v === null || v === undefined) return -1;
  if (typeof v === 'string') return Buffer.byteLength(v, 'utf8');
  if (Buffer.isBuffer(v)) return v.length;
  return undefined;
}

const varBytesSize = (len: number): number => (len < 0 ? 1 : varintSize(len) + len);

function writeVarBytes(buf: Buffer, pos: number, v: unknown, len: number): number {
  pos = writeVarInt(buf, pos, len);
  if (len <= 0) return pos;
  if (typeof v === 'string') buf.write(v, pos, len, 'utf8');
  else (v as Buffer).copy(buf, pos);
  return pos + len;
}

/** Headers' encoded size (count included), or undefined when one is not a string or Buffer. */
function headersSize(headers: Readonly<Record<string, unknown>> | undefined): number | undefined {
  if (headers === null) return undefined; // kafkajs throws on it; let it say so
  let count = 0;
  let size = 0;
  for (const key in headers) {
    if (!Object.hasOwn(headers, key)) continue;
    const v = headers[key];
    const keyLen = Buffer.byteLength(key, 'utf8');
    for (const item of Array.isArray(v) ? v : [v]) {
      const len = byteLengthOf(item);
      if (len === undefined || len < 0) return undefined;
      size += varintSize(keyLen) + keyLen + varintSize(len) + len;
      count += 1;
    }
  }
  return varintSize(count) + size;
}

function writeHeaders(buf: Buffer, pos: number, headers: Readonly<Record<string, unknown>> | undefined): number {
  let count = 0;
  for (const key in headers) if (Object.hasOwn(headers, key)) count += Array.isArray(headers[key]) ? (headers[key] as unknown[]).length : 1;
  pos = writeVarInt(buf, pos, count);
  for (const key in headers) {
    if (!Object.hasOwn(headers, key)) continue;
    const v = headers[key];
    for (const item of Array.isArray(v) ? v : [v]) {
      pos = writeVarBytes(buf, pos, key, Buffer.byteLength(key, 'utf8'));
      pos = writeVarBytes(buf, pos, item, byteLengthOf(item)!);
    }
  }
  return pos;
}

/** Size of a record's body (what its length varint counts), or undefined when not plain. */
function recordBodySize(m: ProduceMessage, offsetDelta: number): number | undefined {
  if (m.timestamp !== undefined && m.timestamp !== null) return undefined;
  const keyLen = byteLengthOf(m.key);
  const valueLen = byteLengthOf(m.value);
  const headers = headersSize(m.headers);
  if (keyLen === undefined || valueLen === undefined || headers === undefined) return undefined;
  // attributes (1) and a timestamp delta of 0 (1): every message takes the batch's timestamp.
  return 2 + varintSize(offsetDelta) + varBytesSize(keyLen) + varBytesSize(valueLen) + headers;
}

function writeInt64(buf: Buffer, pos: number, value: unknown, Long: KafkajsInternals['Long']): number {
  const long = Long.fromValue(value);
  buf.writeInt32BE(long.getHighBits(), pos);
  buf.writeInt32BE(long.getLowBits(), pos + 4);
  return pos + 8;
}

/**
 * The request body kafkajs's v3 `encode()` would produce, or undefined when the request is not
 * the plain case (the caller then uses kafkajs's encoder).
 */
export function encodeProduceRequest(args: ProduceRequestArgs, internals: KafkajsInternals, now: number = Date.now()): Buffer | undefined {
  const { acks, timeout, transactionalId = null, producerId = internals.Long.fromInt(-1), producerEpoch = 0, compression = NO_COMPRESSION, topicData } = args;
  if (compression !== NO_COMPRESSION) return undefined;

  // Pass 1: sizes (and the check that every message is plain).
  const bodySizes: number[] = [];
  let total = (transactionalId === null ? 2 : 2 + Buffer.byteLength(transactionalId, 'utf8')) + 2 + 4 + 4;
  for (const { topic, partitions } of topicData) {
    total += 2 + Buffer.byteLength(topic, 'utf8') + 4;
    for (const { messages } of partitions) {
      let records = 0;
      for (let i = 0; i < messages.length; i++) {
        const body = recordBodySize(messages[i]!, i);
        if (body === undefined) return undefined;
        bodySizes.push(body);
        records += varintSize(body) + body;
      }
      total += PARTITION_HEADER + BATCH_HEADER + BATCH_BODY_HEADER + records;
    }
  }

  // Pass 2: the bytes.
  const buf = Buffer.allocUnsafe(total);
  let pos = 0;
  if (transactionalId === null) pos = buf.writeInt16BE(-1, pos);
  else {
    pos = buf.writeInt16BE(Buffer.byteLength(transactionalId, 'utf8'), pos);
    pos += buf.write(transactionalId, pos, 'utf8');
  }
  pos = buf.writeInt16BE(acks, pos);
  pos = buf.writeInt32BE(timeout, pos);
  pos = buf.writeInt32BE(topicData.length, pos);
  let record = 0;
  for (const { topic, partitions } of topicData) {
    pos = buf.writeInt16BE(Buffer.byteLength(topic, 'utf8'), pos);
    pos += buf.write(topic, pos, 'utf8');
    pos = buf.writeInt32BE(partitions.length, pos);
    for (const { partition, firstSequence, messages } of partitions) {
      pos = buf.writeInt32BE(partition, pos);
      const sizeAt = pos; // record-batch size and batch length, filled in below
      pos += 4;
      pos = writeInt64(buf, pos, 0, internals.Long); // first offset: the broker assigns it
      pos += 4;
      const batchStart = pos;
      pos = buf.writeInt32BE(0, pos); // partition leader epoch
      pos = buf.writeInt8(MAGIC_BYTE, pos);
      const crcAt = pos;
      pos += 4;
      const bodyStart = pos;
      pos = buf.writeInt16BE(NO_COMPRESSION | (transactionalId ? TRANSACTIONAL_FLAG : 0), pos);
      pos = buf.writeInt32BE(messages.length - 1, pos);
      pos = writeInt64(buf, pos, now, internals.Long); // first timestamp
      pos = writeInt64(buf, pos, now, internals.Long); // max timestamp
      pos = writeInt64(buf, pos, producerId, internals.Long);
      pos = buf.writeInt16BE(producerEpoch, pos);
      pos = buf.writeInt32BE(firstSequence as number, pos);
      pos = buf.writeInt32BE(messages.length, pos);
      for (let i = 0; i < messages.length; i++) {
        const m = messages[i]!;
        pos = writeVarInt(buf, pos, bodySizes[record++]!);
        buf[pos++] = 0; // record attributes
        buf[pos++] = 0; // timestamp delta (zigzag varlong of 0)
        pos = writeVarInt(buf, pos, i);
        pos = writeVarBytes(buf, pos, m.key, byteLengthOf(m.key)!);
        pos = writeVarBytes(buf, pos, m.value, byteLengthOf(m.value)!);
        pos = writeHeaders(buf, pos, m.headers);
      }
      buf.writeUInt32BE(internals.crc32C(buf.subarray(bodyStart, pos)), crcAt);
      const batchLength = pos - batchStart;
      buf.writeInt32BE(batchLength + 12, sizeAt);
      buf.writeInt32BE(batchLength, sizeAt + 12);
    }
  }
  if (pos !== total) throw new Error(`produce request encoded ${pos} bytes, expected ${total}`);
  return buf;
}

/** kafkajs's v3 request factory with its `encode` taken over for the plain case. */
export function fastProduceRequest(original: ProduceRequestFactory, internals: KafkajsInternals): ProduceRequestFactory {
  return (args) => {
    const request = original(args);
    return {
      ...request,
      encode: async () => {
        const body = encodeProduceRequest(args, internals);
        return body === undefined ? request.encode() : internals.encoderOf(body);
      },
    };
  };
}
