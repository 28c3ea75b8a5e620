/**
 * Page content in S3-compatible object storage, content-addressed (content-key.ts).
 *
 * - An object is written once: put() asks HEAD first and writes only what is missing, so the same
 *   page fetched by any number of jobs is one object. Two writers racing on a new hash both PUT the
 *   same bytes under the same key, which leaves one object, identical either way. write() skips the
 *   HEAD, for callers whose bodies are mostly new (the HTTP cache): one request instead of two, and
 *   a body already there is rewritten with the same bytes.
 * - An object is whole or absent: S3 makes a PUT visible only once complete, so a writer killed
 *   mid-upload leaves nothing, and its retry writes it.
 * - Bodies are stored gzip-compressed (Content-Encoding stays unset, so no client or proxy
 *   decompresses them on the way: get() does) with the media type of their format in metadata.
 * - The bucket is created on start when missing (ensureBucket), so a fresh S3Proxy or MinIO needs
 *   no setup step.
 * - The per-page requests (has, put, write, get: HEAD, PUT, GET of one object) are signed and sent
 *   by s3-object-requests.ts over kept-alive sockets, with the SDK's credentials; the rare ones
 *   (bucket, list, delete) go through the SDK's client. The SDK's pipeline cost ~1 ms of CPU a
 *   request, eight requests a scraped page (s3-object-requests.ts).
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { contentHash, hashOfKey, objectKey } from './content-key.ts';
import { contentStoreConfig, type ContentStoreConfig } from './content-config.ts';
import { ContentNotFoundError, ContentStoreUnavailableError } from './errors.ts';
import { S3ObjectRequests } from './s3-object-requests.ts';

export interface PutResult {
  readonly hash: string;
  /** Uncompressed size. */
  readonly bytes: number;
  /** False when the object was there already. */
  readonly written: boolean;
}

export interface StoredObject {
  readonly hash: string;
  readonly body: Buffer;
  readonly mediaType: string | undefined;
}

const MEDIA_TYPE_META = 'media-type';
/** The header S3 gives user metadata under. */
const MEDIA_TYPE_HEADER = `x-amz-meta-${MEDIA_TYPE_META}`;

function statusOf(err: unknown): number | undefined {
  return err instanceof S3ServiceException ? err.$metadata.httpStatusCode : undefined;
}

export class ContentStore {
  readonly bucket: string;
  private readonly s3: S3Client;
  private readonly objects: S3ObjectRequests;

  constructor(config: ContentStoreConfig = contentStoreConfig()) {
    this.bucket = config.bucket;
    this.s3 = new S3Client({
      endpoint: config.endpoint,
      region: config.region,
      // S3Proxy and MinIO serve buckets as paths; AWS accepts both.
      forcePathStyle: true,
      ...(config.accessKeyId && config.secretAccessKey ? { credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } } : {}),
      // A checksum header on every PUT is not understood by every S3-compatible server.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    this.objects = new S3ObjectRequests(config, () => this.s3.config.credentials());
  }

  /** Creates the bucket unless it exists. */
  async ensureBucket(): Promise<void> {
    try {
      await this.s3.send(new HeadBucketCommand({ Bucket: this.bucket }));
      return;
    } catch (err) {
      if (statusOf(err) !== 404) throw new ContentStoreUnavailableError(`bucket ${this.bucket} cannot be checked`, { cause: err });
    }
    try {
      await this.s3.send(new CreateBucketCommand({ Bucket: this.bucket }));
    } catch (err) {
      // Another process created it meanwhile.
      if (statusOf(err) !== 409) throw new ContentStoreUnavailableError(`bucket ${this.bucket} cannot be created`, { cause: err });
    }
  }

  async has(hash: string): Promise<boolean> {
    return (await this.head(hash)) !== undefined;
  }

  /** The bytes an object takes in the store (gzip), or undefined when there is none. */
  async storedBytes(hash: string): Promise<number | undefined> {
    return this.head(hash);
  }

  /** Stores `body` under its hash unless an object has it already. */
  async put(body: Uint8Array, mediaType: string): Promise<PutResult> {
    const hash = contentHash(body);
    if (await this.has(hash)) return { hash, bytes: body.byteLength, written: false };
    return this.write(body, mediaType, hash);
  }

  /** Stores `body` under its hash without asking first whether it is there. */
  async write(body: Uint8Array, mediaType: string, hash: string = contentHash(body)): Promise<PutResult> {
    const key = objectKey(hash);
    const res = await this.objects.send({ method: 'PUT', key, body: gzipSync(body), headers: { 'content-type': 'application/gzip', [MEDIA_TYPE_HEADER]: mediaType } });
    if (res.status !== 200) throw new ContentStoreUnavailableError(`PUT ${key} failed: HTTP ${res.status}`);
    return { hash, bytes: body.byteLength, written: true };
  }

  /** The uncompressed bytes of an object; ContentNotFoundError when there is none. `signal` aborts the request. */
  async get(hash: string, options: { signal?: AbortSignal } = {}): Promise<StoredObject> {
    const key = objectKey(hash);
    const res = await this.objects.send({ method: 'GET', key, signal: options.signal });
    if (res.status === 404) throw new ContentNotFoundError(`no object ${hash}`);
    if (res.status !== 200) throw new ContentStoreUnavailableError(`GET ${key} failed: HTTP ${res.status}`);
    const mediaType = res.headers[MEDIA_TYPE_HEADER];
    return { hash, body: gunzipSync(res.body), mediaType: Array.isArray(mediaType) ? mediaType[0] : mediaType };
  }

  /** HEAD of an object: its stored size, or undefined when there is none. */
  private async head(hash: string): Promise<number | undefined> {
    const key = objectKey(hash);
    const res = await this.objects.send({ method: 'HEAD', key });
    if (res.status === 404) return undefined;
    if (res.status !== 200) throw new ContentStoreUnavailableError(`HEAD ${key} failed: HTTP ${res.status}`);
    return Number(res.headers['content-length'] ?? 0);
  }

  /**
   * Deletes the objects of these hashes (absent ones are no error). One DELETE per object, a few at
   * a time: the batch call (DeleteObjects) needs a request checksum that S3Proxy does not implement.
   */
  async delete(hashes: readonly string[]): Promise<void> {
    const queue = [...hashes];
    const worker = async (): Promise<void> => {
      for (let h = queue.pop(); h !== undefined; h = queue.pop()) {
        try {
          await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: objectKey(h) }));
        } catch (err) {
          throw new ContentStoreUnavailableError(`DELETE ${objectKey(h)} failed`, { cause: err });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(8, queue.length) }, worker));
  }

  /** Every hash in the bucket (for tests and an operator's audit). */
  async list(): Promise<string[]> {
    const out: string[] = [];
    let token: string | undefined;
    do {
      const res = await this.s3.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: 'sha256/', ContinuationToken: token }));
      for (const o of res.Contents ?? []) {
        const h = o.Key ? hashOfKey(o.Key) : undefined;
        if (h) out.push(h);
      }
      token = res.IsTruncated ? res.NextContinuationToken : undefined;
    } while (token);
    return out;
  }

  close(): void {
    this.s3.destroy();
    this.objects.close();
  }
}
